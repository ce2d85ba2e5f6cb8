// SPDX-License-Identifier: GPL-2.0
/* Matrix output: the sample's text layout, JSON, and an SVG heatmap. */
#include <math.h>
#include <string.h>

#include "report.h"

void matrix_init(struct matrix *m, const char *key, const char *title, const char *unit, int n)
{
	memset(m, 0, sizeof(*m));
	m->key = key;
	m->title = title;
	m->unit = unit;
	m->n = n;
	for (int i = 0; i < P2P_MAX_GPUS * P2P_MAX_GPUS; i++)
		for (int k = 0; k < CAL_MAX; k++)
			m->c[i].cal[k] = -1.0;
}

static void print_header(FILE *f, const char *corner, int n, int width)
{
	fprintf(f, "%6s", corner);
	for (int j = 0; j < n; j++)
		fprintf(f, " %*d", width, j);
	fputc('\n', f);
}

void matrix_print(FILE *f, const struct matrix *m, const char *const *names)
{
	int n = m->n;

	fprintf(f, "%s Matrix (%s)\n", m->title, m->unit);
	print_header(f, "D\\D", n, 8);
	for (int i = 0; i < n; i++) {
		fprintf(f, "%6d", i);
		for (int j = 0; j < n; j++) {
			const struct cell *c = &m->c[i * n + j];

			if (c->present && c->staged)
				fprintf(f, " %7.2f*", c->st.median);
			else if (c->present)
				fprintf(f, " %8.2f", c->st.median);
			else
				fprintf(f, " %8s", "n/a");
		}
		fputc('\n', f);
	}
	for (int i = 0; i < n * n; i++)
		if (m->c[i].present && m->c[i].staged) {
			fprintf(f, "  * no peer access: the driver staged these copies through host memory "
				"(not P2P)\n");
			break;
		}
	fprintf(f, "  spread (min..max over reps):\n");
	for (int i = 0; i < n; i++) {
		fprintf(f, "%6d", i);
		for (int j = 0; j < n; j++) {
			const struct cell *c = &m->c[i * n + j];
			char buf[48];

			if (c->present)
				snprintf(buf, sizeof(buf), "%.2f..%.2f", c->st.min, c->st.max);
			else
				snprintf(buf, sizeof(buf), "n/a");
			fprintf(f, " %17s", buf);
		}
		fputc('\n', f);
	}
	if (names) {
		fprintf(f, "  method:\n");
		for (int i = 0; i < n; i++) {
			fprintf(f, "%6d", i);
			for (int j = 0; j < n; j++) {
				const struct cell *c = &m->c[i * n + j];

				fprintf(f, " %8s", c->present ? names[c->method] : "-");
			}
			fputc('\n', f);
		}
	}
	for (int i = 0; i < n * n; i++)
		if (m->c[i].present && m->c[i].timeouts) {
			fprintf(f, "  warning: %d run(s) of cell %d->%d outlasted the stream-blocking kernel\n",
				m->c[i].timeouts, i / n, i % n);
		}
	fputc('\n', f);
}

static json_object *num(double v)
{
	/* Three decimals are plenty for GB/s and microseconds. */
	return json_object_new_double(round(v * 1000.0) / 1000.0);
}

json_object *matrix_json(const struct matrix *m, const char *const *names, int nnames)
{
	static const char *const fields[] = { "median", "min", "max", "q1", "q3", "mean" };
	json_object *o = json_object_new_object();
	int n = m->n;

	json_object_object_add(o, "title", json_object_new_string(m->title));
	json_object_object_add(o, "unit", json_object_new_string(m->unit));
	for (size_t k = 0; k < sizeof(fields) / sizeof(fields[0]); k++) {
		json_object *rows = json_object_new_array();

		for (int i = 0; i < n; i++) {
			json_object *row = json_object_new_array();

			for (int j = 0; j < n; j++) {
				const struct cell *c = &m->c[i * n + j];
				const double v[] = { c->st.median, c->st.min, c->st.max,
						     c->st.q1, c->st.q3, c->st.mean };

				json_object_array_add(row, c->present ? num(v[k]) : NULL);
			}
			json_object_array_add(rows, row);
		}
		json_object_object_add(o, fields[k], rows);
	}
	{
		json_object *rows = json_object_new_array();

		for (int i = 0; i < n; i++) {
			json_object *row = json_object_new_array();

			for (int j = 0; j < n; j++) {
				const struct cell *c = &m->c[i * n + j];

				json_object_array_add(row, c->present ? json_object_new_int(c->st.n) : NULL);
			}
			json_object_array_add(rows, row);
		}
		json_object_object_add(o, "n", rows);
	}
	{
		static const char *const keys[] = { "timeouts", "staged", "data_checked" };

		for (int k = 0; k < 3; k++) {
			json_object *rows = json_object_new_array();

			for (int i = 0; i < n; i++) {
				json_object *row = json_object_new_array();

				for (int j = 0; j < n; j++) {
					const struct cell *c = &m->c[i * n + j];

					json_object_array_add(row, !c->present ? NULL : k == 0 ?
							      json_object_new_int(c->timeouts) :
							      json_object_new_boolean(k == 1 ? c->staged :
										      c->checked));
				}
				json_object_array_add(rows, row);
			}
			json_object_object_add(o, keys[k], rows);
		}
	}
	if (names) {
		json_object *rows = json_object_new_array(), *cal = json_object_new_array();

		for (int i = 0; i < n; i++) {
			json_object *row = json_object_new_array(), *crow = json_object_new_array();

			for (int j = 0; j < n; j++) {
				const struct cell *c = &m->c[i * n + j];
				json_object *co = NULL;

				json_object_array_add(row, c->present ?
						      json_object_new_string(names[c->method]) : NULL);
				for (int k = 0; c->present && k < nnames && k < CAL_MAX; k++) {
					if (c->cal[k] < 0)
						continue;
					if (!co)
						co = json_object_new_object();
					json_object_object_add(co, names[k], num(c->cal[k]));
				}
				json_object_array_add(crow, co);
			}
			json_object_array_add(rows, row);
			json_object_array_add(cal, crow);
		}
		json_object_object_add(o, "method", rows);
		json_object_object_add(o, "calibration", cal);
	}
	return o;
}

void xml_escape(char *out, size_t outlen, const char *s)
{
	size_t o = 0;

	if (!outlen)
		return;
	for (; *s; s++) {
		const char *rep = NULL;
		char one[2] = { *s, 0 };
		size_t l;

		switch (*s) {
		case '&': rep = "&amp;"; break;
		case '<': rep = "&lt;"; break;
		case '>': rep = "&gt;"; break;
		case '"': rep = "&quot;"; break;
		case '\'': rep = "&apos;"; break;
		default: rep = one; break;
		}
		l = strlen(rep);
		if (o + l >= outlen)
			break;
		memcpy(out + o, rep, l);
		o += l;
	}
	out[o] = '\0';
}

/* Sequential blue scale, light (low) to dark (high). */
static void heat_colour(double t, char *out, size_t len, int *dark)
{
	static const int lo[3] = { 0xf7, 0xfb, 0xff }, hi[3] = { 0x08, 0x30, 0x6b };
	int c[3];

	if (!(t >= 0))
		t = 0;
	if (t > 1)
		t = 1;
	for (int k = 0; k < 3; k++)
		c[k] = (int)lround(lo[k] + t * (hi[k] - lo[k]));
	snprintf(out, len, "#%02x%02x%02x", c[0], c[1], c[2]);
	*dark = t > 0.5;
}

int matrix_svg(FILE *f, const struct matrix *m, const char *subtitle)
{
	const int cw = 96, ch = 44, left = 90, top = 84;
	int n = m->n, w = left + n * cw + 30, h = top + n * ch + 60;
	double vmax = 0, vmin = INFINITY;
	char title[512], sub[512];

	/* The colour scale spans the cells between GPUs: the diagonal (copies
	 * within one GPU, several times faster) would wash them out. */
	for (int i = 0; i < n * n; i++)
		if (m->c[i].present && !(n > 1 && i / n == i % n)) {
			if (m->c[i].st.median > vmax)
				vmax = m->c[i].st.median;
			if (m->c[i].st.median < vmin)
				vmin = m->c[i].st.median;
		}
	snprintf(sub, sizeof(sub), "%s (%s)", m->title, m->unit);
	xml_escape(title, sizeof(title), sub);
	xml_escape(sub, sizeof(sub), subtitle ? subtitle : "");
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n", w, h, w, h);
	fprintf(f, "<title>%s</title>\n", title);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", w, h);
	fprintf(f, "<text x=\"10\" y=\"22\" font-size=\"15\" font-weight=\"bold\">%s</text>\n", title);
	fprintf(f, "<text x=\"10\" y=\"42\" font-size=\"11\" fill=\"#555555\">%s</text>\n", sub);
	fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\">destination GPU</text>\n",
		left + n * cw / 2, top - 26);
	fprintf(f, "<text x=\"18\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\" "
		"transform=\"rotate(-90 18 %d)\">source GPU</text>\n", top + n * ch / 2, top + n * ch / 2);
	for (int j = 0; j < n; j++)
		fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\">%d</text>\n",
			left + j * cw + cw / 2, top - 8, j);
	for (int i = 0; i < n; i++) {
		fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"end\">%d</text>\n",
			left - 8, top + i * ch + ch / 2 + 4, i);
		for (int j = 0; j < n; j++) {
			const struct cell *c = &m->c[i * n + j];
			char col[16] = "#eeeeee", val[32] = "n/a";
			int dark = 0;

			if (c->present) {
				if (n > 1 && i == j)
					snprintf(col, sizeof(col), "#dddddd");
				else
					heat_colour(vmax > 0 ? c->st.median / vmax : 0, col, sizeof(col), &dark);
				snprintf(val, sizeof(val), "%.2f", c->st.median);
			}
			fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" "
				"stroke=\"#ffffff\"><title>%d-&gt;%d: %s %s</title></rect>\n",
				left + j * cw, top + i * ch, cw, ch, col, i, j, val, c->present ? m->unit : "");
			fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"13\" text-anchor=\"middle\" fill=\"%s\">%s</text>\n",
				left + j * cw + cw / 2, top + i * ch + ch / 2 + 5,
				dark ? "#ffffff" : "#000000", val);
		}
	}
	if (vmin <= vmax)
		fprintf(f, "<text x=\"10\" y=\"%d\" font-size=\"11\" fill=\"#555555\">colour: 0 to %.2f %s "
			"(median over repetitions; min %.2f)%s</text>\n", top + n * ch + 30, vmax, m->unit, vmin,
			n > 1 ? "; the diagonal (copies within one GPU) is grey, off the scale" : "");
	fprintf(f, "</svg>\n");
	return ferror(f) ? -1 : 0;
}
