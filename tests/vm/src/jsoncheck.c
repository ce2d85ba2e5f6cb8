// SPDX-License-Identifier: GPL-2.0
/*
 * jsoncheck [KEY...]: read JSON on stdin, exit 0 if it parses as one JSON
 * object (or a sequence of them, one per line with --lines) holding every
 * KEY; print what is wrong otherwise.  A KEY is a name at the top level or a
 * dotted path into nested objects (sections.status.output.state), and
 * KEY=VALUE also wants that member's value, as a string, to be VALUE.
 */
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

static int check(const char *text, int argc, char **argv)
{
	enum json_tokener_error err;
	json_object *o = json_tokener_parse_verbose(text, &err);
	int i, bad = 0;

	if (!o) {
		printf("jsoncheck: not JSON: %s\n", json_tokener_error_desc(err));
		return 1;
	}
	for (i = 0; i < argc; i++) {
		char path[256], *name, *save, *want;
		json_object *m = o;
		int found = 1;

		snprintf(path, sizeof(path), "%s", argv[i]);
		want = strchr(path, '=');
		if (want)
			*want++ = '\0';
		for (name = strtok_r(path, ".", &save); found && name; name = strtok_r(NULL, ".", &save))
			found = json_object_object_get_ex(m, name, &m);
		if (!found) {
			printf("jsoncheck: no key \"%s\"\n", argv[i]);
			bad = 1;
		} else if (want && strcmp(m ? json_object_get_string(m) : "null", want)) {
			printf("jsoncheck: \"%s\" is %s\n", argv[i], m ? json_object_get_string(m) : "null");
			bad = 1;
		}
	}
	json_object_put(o);
	return bad;
}

int main(int argc, char **argv)
{
	static char buf[1 << 20];
	size_t n = fread(buf, 1, sizeof(buf) - 1, stdin);
	int lines = argc > 1 && !strcmp(argv[1], "--lines");
	char *line, *save;
	int bad = 0, count = 0;

	buf[n] = '\0';
	if (!lines)
		return check(buf, argc - 1, argv + 1);
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		bad |= check(line, argc - 2, argv + 2);
		count++;
	}
	printf("jsoncheck: %d objects\n", count);
	return bad || !count;
}
