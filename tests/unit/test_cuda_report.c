// SPDX-License-Identifier: GPL-2.0
/* Matrix text, JSON shape and SVG well-formedness of p2pctl bench. */
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "report.h"
#include "../../tests/unit/fakecuda/harness.h"

static const char *const names[] = { "ce", "ce-pull", "sm-write" };

static struct matrix *sample_matrix(void)
{
	static struct matrix m;

	matrix_init(&m, "uni_p2p_on", "Unidirectional <P2P> & \"more\"", "GB/s", 2);
	for (int i = 0; i < 4; i++) {
		const double v[3] = { 100.0 + i, 90.0 + i, 110.0 + i };

		if (i == 2)
			continue;	/* 1->0 not measured */
		m.c[i].present = 1;
		m.c[i].method = i == 1 ? 2 : 0;
		stats_compute(v, 3, &m.c[i].st);
		m.c[i].cal[0] = 50;
		m.c[i].cal[2] = 60;
	}
	return &m;
}

static char *to_text(const struct matrix *m, const char *const *nm)
{
	FILE *f = tmpfile();

	matrix_print(f, m, nm);
	return slurp(f);
}

static void text_layout(void **st)
{
	char *s = to_text(sample_matrix(), names);

	(void)st;
	assert_non_null(strstr(s, "Unidirectional <P2P> & \"more\" Matrix (GB/s)\n"));
	assert_non_null(strstr(s, "   D\\D        0        1\n"));
	assert_non_null(strstr(s, "     0   100.00   101.00\n"));
	assert_non_null(strstr(s, "     1      n/a   103.00\n"));
	assert_non_null(strstr(s, "90.00..110.00"));
	assert_non_null(strstr(s, "     0       ce sm-write\n"));
	assert_non_null(strstr(s, "     1        -       ce\n"));
	free(s);
	s = to_text(sample_matrix(), NULL);
	assert_null(strstr(s, "method"));
	free(s);
}

static void timeout_warning(void **st)
{
	struct matrix *m = sample_matrix();
	char *s;

	(void)st;
	m->c[1].timeouts = 2;
	s = to_text(m, names);
	assert_non_null(strstr(s, "warning: 2 run(s) of cell 0->1"));
	m->c[1].timeouts = 0;
	free(s);
}

static void json_shape(void **st)
{
	json_object *o = matrix_json(sample_matrix(), names, 3), *v, *row;
	const char *keys[] = { "median", "min", "max", "q1", "q3", "mean", "n", "method", "calibration" };

	(void)st;
	assert_true(json_object_object_get_ex(o, "unit", &v));
	assert_string_equal(json_object_get_string(v), "GB/s");
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		assert_true(json_object_object_get_ex(o, keys[k], &v));
		assert_int_equal(json_object_array_length(v), 2);
		row = json_object_array_get_idx(v, 1);
		assert_int_equal(json_object_array_length(row), 2);
		assert_null(json_object_array_get_idx(row, 0));	/* absent cell: null */
	}
	json_object_object_get_ex(o, "median", &v);
	assert_true(json_object_get_double(json_object_array_get_idx(json_object_array_get_idx(v, 0), 1)) == 101.0);
	json_object_object_get_ex(o, "min", &v);
	assert_true(json_object_get_double(json_object_array_get_idx(json_object_array_get_idx(v, 0), 0)) == 90.0);
	json_object_object_get_ex(o, "n", &v);
	assert_int_equal(json_object_get_int(json_object_array_get_idx(json_object_array_get_idx(v, 0), 0)), 3);
	json_object_object_get_ex(o, "method", &v);
	assert_string_equal(json_object_get_string(json_object_array_get_idx(json_object_array_get_idx(v, 0), 1)), "sm-write");
	json_object_object_get_ex(o, "calibration", &v);
	row = json_object_array_get_idx(json_object_array_get_idx(v, 0), 0);
	assert_true(json_object_object_get_ex(row, "ce", &v));
	assert_true(json_object_get_double(v) == 50);
	assert_false(json_object_object_get_ex(row, "ce-pull", &v));
	/* round trip through text */
	{
		json_object *back = json_tokener_parse(json_object_to_json_string(o));

		assert_non_null(back);
		json_object_put(back);
	}
	json_object_put(o);
}

/*
 * A small XML well-formedness check: one root, balanced and properly nested
 * tags, quoted attributes, only the five predefined entities, no raw '<' or
 * '&' in text.
 */
static int xml_wellformed(const char *s, char *why, size_t wl)
{
	char stack[64][32];
	int depth = 0, roots = 0;
	const char *p = s;

	if (!strncmp(p, "<?xml", 5)) {
		p = strstr(p, "?>");
		if (!p)
			return snprintf(why, wl, "unterminated declaration"), 0;
		p += 2;
	}
	while (*p) {
		if (*p == '&') {
			static const char *const ents[] = { "&amp;", "&lt;", "&gt;", "&quot;", "&apos;" };
			int ok = 0;

			for (int k = 0; k < 5; k++)
				ok |= !strncmp(p, ents[k], strlen(ents[k]));
			if (!ok)
				return snprintf(why, wl, "bad entity at %.10s", p), 0;
			p++;
			continue;
		}
		if (*p != '<') {
			if (!depth && !isspace((unsigned char)*p))
				return snprintf(why, wl, "text outside root"), 0;
			p++;
			continue;
		}
		if (p[1] == '/') {
			char name[32];
			int l = 0;

			p += 2;
			while (*p && *p != '>' && l < 31)
				name[l++] = *p++;
			name[l] = 0;
			if (*p != '>' || !depth || strcmp(stack[depth - 1], name))
				return snprintf(why, wl, "mismatched </%s>", name), 0;
			depth--;
			p++;
			continue;
		}
		{
			char name[32];
			int l = 0;

			p++;
			while (*p && (isalnum((unsigned char)*p) || *p == ':' || *p == '-') && l < 31)
				name[l++] = *p++;
			name[l] = 0;
			if (!l)
				return snprintf(why, wl, "bad tag"), 0;
			for (;;) {
				while (isspace((unsigned char)*p))
					p++;
				if (*p == '/' && p[1] == '>') {
					p += 2;
					if (!depth)
						roots++;
					break;
				}
				if (*p == '>') {
					p++;
					if (!depth)
						roots++;
					if (depth == 64)
						return snprintf(why, wl, "too deep"), 0;
					strcpy(stack[depth++], name);
					break;
				}
				/* attribute name="value" */
				if (!isalpha((unsigned char)*p))
					return snprintf(why, wl, "bad attribute in <%s>", name), 0;
				while (isalnum((unsigned char)*p) || *p == '-' || *p == ':')
					p++;
				if (*p++ != '=' || *p != '"')
					return snprintf(why, wl, "unquoted attribute in <%s>", name), 0;
				p = strchr(p + 1, '"');
				if (!p)
					return snprintf(why, wl, "unterminated attribute"), 0;
				p++;
			}
		}
	}
	if (depth)
		return snprintf(why, wl, "unclosed <%s>", stack[depth - 1]), 0;
	if (roots != 1)
		return snprintf(why, wl, "%d roots", roots), 0;
	return 1;
}

static void svg_wellformed(void **st)
{
	FILE *f = tmpfile();
	char *s, why[128] = "";

	(void)st;
	assert_int_equal(matrix_svg(f, sample_matrix(), "GPU <&> \"x\""), 0);
	s = slurp(f);
	assert_true(xml_wellformed(s, why, sizeof(why)));
	assert_non_null(strstr(s, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
	assert_non_null(strstr(s, "&lt;P2P&gt; &amp; &quot;more&quot;"));
	assert_non_null(strstr(s, ">n/a</text>"));
	assert_non_null(strstr(s, ">103.00</text>"));
	/* 3 present cells coloured, 1 grey */
	assert_non_null(strstr(s, "fill=\"#eeeeee\""));
	free(s);
}

static void checker_rejects(void **st)
{
	char why[128];

	(void)st;
	assert_false(xml_wellformed("<svg><g></svg></g>", why, sizeof(why)));
	assert_false(xml_wellformed("<svg a=1></svg>", why, sizeof(why)));
	assert_false(xml_wellformed("<svg>a & b</svg>", why, sizeof(why)));
	assert_false(xml_wellformed("<svg></svg><svg/>", why, sizeof(why)));
	assert_true(xml_wellformed("<?xml version=\"1.0\"?>\n<svg a=\"1\"><t>x &amp; y</t></svg>\n", why, sizeof(why)));
}

static void escape(void **st)
{
	char out[16];

	(void)st;
	xml_escape(out, sizeof(out), "a<b>&'\"");
	assert_string_equal(out, "a&lt;b&gt;&amp;");	/* truncated at an entity boundary */
	xml_escape(out, sizeof(out), "plain");
	assert_string_equal(out, "plain");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(text_layout),
		cmocka_unit_test(timeout_warning),
		cmocka_unit_test(json_shape),
		cmocka_unit_test(svg_wellformed),
		cmocka_unit_test(checker_rejects),
		cmocka_unit_test(escape),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
