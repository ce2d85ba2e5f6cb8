// SPDX-License-Identifier: GPL-2.0
/*
 * p2pctl report: everything a bug report or a hardware result needs, in
 * one text file with a JSON twin.  It runs the other commands in-process
 * (their output captured), reads the driver's and the shim's kernel log
 * lines, and says what it could not read.  GPU UUIDs and serial numbers
 * are replaced unless --full.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <regex.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "p2pctl.h"
#include "../lib/internal.h"

static const char help[] =
	"Usage: p2pctl report [-o FILE] [--json] [--root DIR] [--full] [--cuda]\n\n"
	"Gather what a bug report or a hardware result needs into one text file\n"
	"with a JSON twin: p2pctl, library and module versions; the kernel; the\n"
	"driver and its profile; `doctor` (verdicts and remedies); `check` (the\n"
	"profile's hooks against the running driver); `status` (module state,\n"
	"hooks, static BAR1 per GPU, mappings); the GPUs and their topology\n"
	"(nvidia-smi -L, nvidia-smi topo -m, lspci -tv); the kernel log lines of\n"
	"p2p-shim and NVRM; and, only with --cuda and last, `verify` and `bench`\n"
	"summaries (P2P traffic). Runs as a normal user: what it could not read (the\n"
	"kernel log under dmesg_restrict, a module not loaded) is listed, not an\n"
	"error. GPU UUIDs and serial numbers are replaced by placeholders.\n\n"
	"  -o, --output FILE  write the text to FILE and the JSON to FILE.json\n"
	"                     (default: the text on standard output)\n"
	"  -j, --json         JSON on standard output instead of the text\n"
	"  -r, --root DIR     report on a tree captured with capture-host: files\n"
	"                     under DIR, command outputs from DIR/../cmd/, kallsyms\n"
	"                     from DIR/../driver/; nothing live is run\n"
	"  -f, --full         keep GPU UUIDs and serial numbers\n"
	"  -c, --cuda         run verify and bench last (P2P traffic, GPU time;\n"
	"                     off by default)\n"
	"  -n, --no-cuda      the default; kept for old scripts\n"
	"  -h, --help         this help\n\n"
	"Exit status 0 when the report was written (whatever it says).\n"
	P2PCTL_EXIT_CODES_HELP;

struct rep {
	const char *root;		/* NULL: live */
	bool full;
	json_object *sections;		/* name -> {command, exit_status, output, note} */
	json_object *missing;		/* array of strings */
	char *text;
	size_t text_len;
	FILE *tf;			/* text, memstream */
};

/* ---------------------------------------------------------------- redaction */

static char *redact(const char *in, bool full)
{
	static const char *const pats[] = {
		"(GPU|MIG)-[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
		"(Serial Number[ \t]*:[ \t]*)[0-9A-Za-z]+",
		"(\"serial\"[ \t]*:[ \t]*\")[^\"]+",
	};
	static const char *const repl[] = { "GPU-<uuid>", "<serial>", "<serial>" };
	char *s = strdup(in ? in : "");
	size_t i;

	if (full || !s)
		return s;
	for (i = 0; i < sizeof(pats) / sizeof(pats[0]); i++) {
		regex_t re;
		regmatch_t m[2];
		char *out;
		size_t off = 0;

		if (regcomp(&re, pats[i], REG_EXTENDED))
			continue;
		while (!regexec(&re, s + off, 2, m, off ? REG_NOTBOL : 0)) {
			size_t keep = i && m[1].rm_so >= 0 ? (size_t)(m[1].rm_eo - m[1].rm_so) : 0;
			size_t start = off + (size_t)m[0].rm_so, end = off + (size_t)m[0].rm_eo;
			size_t nl = strlen(s) - (end - start) + keep + strlen(repl[i]) + 1;

			out = malloc(nl);
			if (!out)
				break;
			snprintf(out, nl, "%.*s%.*s%s%s", (int)start, s, (int)keep, s + start,
				 repl[i], s + end);
			off = start + keep + strlen(repl[i]);
			free(s);
			s = out;
			if (end == start)
				off++;
		}
		regfree(&re);
	}
	return s;
}

/* ---------------------------------------------------------------- helpers */

/* A regular file of at most 8 MiB (no FIFO, no device), or NULL. */
static char *read_file_str(const char *path)
{
	return p2ps_read_file_max(path, NULL, false, 8 << 20);
}

/* The first line of @path in @buf; empty when it cannot be read. */
static void first_line(const char *path, char *buf, size_t size)
{
	char *s = read_file_str(path);

	snprintf(buf, size, "%.*s", s ? (int)strcspn(s, "\n") : 0, s ? s : "");
	free(s);
}

/*
 * Run @cmd (words split at spaces) under the deadline, stderr with stdout;
 * its output (NULL if it could not run), *@why what went wrong or "".
 */
static char *run_cmd(const char *cmd, char *why, size_t whylen)
{
	char a[512], *argv[16], *save, *tok, *out = NULL;
	int n = 0, rc, ms = p2ps_run_timeout_ms();

	snprintf(a, sizeof(a), "%s", cmd);
	for (tok = strtok_r(a, " ", &save); tok && n < 15; tok = strtok_r(NULL, " ", &save))
		argv[n++] = tok;
	argv[n] = NULL;
	*why = '\0';
	rc = p2ps_run(argv, ms, 8 << 20, true, &out);
	if (rc)
		p2ps_run_describe(rc, ms, why, whylen);
	if (rc < 0 && rc != -ETIMEDOUT) {
		free(out);
		return NULL;
	}
	return out;
}

static void missing(struct rep *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void missing(struct rep *r, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	json_object_array_add(r->missing, json_object_new_string(buf));
}

/* Add a section: @text for the text file, @json (owned) or the text for the twin. */
static void section(struct rep *r, const char *name, const char *command, int rc, const char *text,
		    json_object *json, const char *note)
{
	json_object *o = json_object_new_object();
	char *red = redact(text, r->full);

	json_object_object_add(o, "command", command ? json_object_new_string(command) : NULL);
	json_object_object_add(o, "exit_status", rc >= 0 ? json_object_new_int(rc) : NULL);
	if (note)
		json_object_object_add(o, "note", json_object_new_string(note));
	json_object_object_add(o, "output", json ? json : json_object_new_string(red ? red : ""));
	json_object_object_add(r->sections, name, o);

	fprintf(r->tf, "== %s%s%s", name, command ? ": " : "", command ? command : "");
	if (rc > 0)
		fprintf(r->tf, " (exit status %d)", rc);
	fputc('\n', r->tf);
	if (note)
		fprintf(r->tf, "(%s)\n", note);
	if (red && *red)
		fprintf(r->tf, "%s%s", red, red[strlen(red) - 1] == '\n' ? "" : "\n");
	fputc('\n', r->tf);
	free(red);
}

/* Run a p2pctl command in-process; its standard output in *out (and errors appended). */
static int capture(int (*fn)(int, char **), char **argv, char **out)
{
	FILE *so = p2pctl_out, *se = p2pctl_err;
	char *buf = NULL, *ebuf = NULL;
	size_t len = 0, elen = 0;
	int argc = 0, rc;
	FILE *m, *e;

	while (argv[argc])
		argc++;
	m = open_memstream(&buf, &len);
	e = open_memstream(&ebuf, &elen);
	if (!m || !e) {
		if (m)
			fclose(m);
		if (e)
			fclose(e);
		*out = NULL;
		return -1;
	}
	p2pctl_out = m;
	p2pctl_err = e;
	rc = fn(argc, argv);
	fflush(stdout);
	p2pctl_out = so;
	p2pctl_err = se;
	fclose(m);
	fclose(e);
	if (elen) {
		size_t n = len + elen + 1;
		char *both = malloc(n);

		if (both) {
			snprintf(both, n, "%s%s", buf, ebuf);
			free(buf);
			buf = both;
		}
	}
	free(ebuf);
	*out = buf;
	return rc;
}

/* A command's --json output as an object, or NULL. */
static json_object *parse_json(const char *text, bool full)
{
	char *red;
	json_object *o;

	if (!text || !strchr(text, '{'))
		return NULL;
	red = redact(strchr(text, '{'), full);
	o = red ? json_tokener_parse(red) : NULL;
	free(red);
	return o;
}

/*
 * The section of a command already run as text (@rc, @text: freed here):
 * run it again with --json appended to @argv (room for two more entries
 * at @argc) for the twin.
 */
static void with_json_twin(struct rep *r, const char *name, const char *command,
			   int (*fn)(int, char **), char **argv, int argc, int rc, char *text)
{
	char *j = NULL;

	argv[argc] = (char *)"--json";
	argv[argc + 1] = NULL;
	capture(fn, argv, &j);
	section(r, name, command, rc, text, parse_json(j, r->full), NULL);
	free(text);
	free(j);
}

/* ---------------------------------------------------------------- sections */

static void versions(struct rep *r)
{
	char buf[512] = "", mod[128] = "", path[PATH_MAX];
	char *s = NULL;
	int rc;

	if (!r->root) {
		char *argv[] = { (char *)"version", NULL };

		rc = capture(cmd_version, argv, &s);
		section(r, "versions", "p2pctl version", rc, s, NULL, NULL);
		free(s);
		return;
	}
	snprintf(path, sizeof(path), "%s/sys/module/p2p_shim/version", r->root);
	first_line(path, mod, sizeof(mod));
	snprintf(buf, sizeof(buf), "p2pctl %s (libp2pshim %s, ABI %d)\np2p-shim module: %s\n",
		 P2PSHIM_LIB_VERSION, p2ps_lib_version(), P2PS_ABI_VERSION,
		 *mod ? mod : "not loaded in the captured tree");
	section(r, "versions", NULL, -1, buf, NULL, "p2pctl here; the module of the captured tree");
}

static void kernel(struct rep *r)
{
	char path[PATH_MAX];
	char *s;

	if (r->root) {
		snprintf(path, sizeof(path), "%s/proc/version", r->root);
		s = read_file_str(path);
	} else {
		struct utsname u;
		char buf[1024];

		s = NULL;
		if (!uname(&u)) {
			snprintf(buf, sizeof(buf), "%s %s %s %s\n", u.sysname, u.release, u.version, u.machine);
			s = strdup(buf);
		}
	}
	if (!s)
		missing(r, "kernel version (/proc/version)");
	section(r, "kernel", r->root ? "cat /proc/version" : "uname", -1, s ? s : "", NULL, NULL);
	free(s);
	snprintf(path, sizeof(path), "%s/proc/driver/nvidia/version", r->root ? r->root : "");
	s = read_file_str(path);
	if (!s)
		missing(r, "/proc/driver/nvidia/version (nvidia not loaded)");
	section(r, "driver", "cat /proc/driver/nvidia/version", -1, s ? s : "not loaded\n", NULL, NULL);
	free(s);
}

static void doctor(struct rep *r)
{
	char *argv[6] = { (char *)"doctor", NULL }, *s = NULL;
	int n = 1, rc;

	if (r->root) {
		argv[n++] = (char *)"--root";
		argv[n++] = (char *)r->root;
	}
	rc = capture(cmd_doctor, argv, &s);
	with_json_twin(r, "doctor", "p2pctl doctor", cmd_doctor, argv, n, rc, s);
}

static void check(struct rep *r)
{
	char *s = NULL, ks[PATH_MAX], ver[64] = "", vpath[PATH_MAX];
	char *argv[8] = { (char *)"check", NULL };
	int n = 1, rc;

	if (r->root) {
		snprintf(ks, sizeof(ks), "%s/../driver/kallsyms-nvidia.txt.gz", r->root);
		if (access(ks, R_OK)) {
			missing(r, "check: no kallsyms in the captured tree (DIR/../driver/)");
			section(r, "check", NULL, -1, "", NULL, "not run: no kallsyms captured");
			return;
		}
		snprintf(vpath, sizeof(vpath), "%s/sys/module/nvidia/version", r->root);
		first_line(vpath, ver, sizeof(ver));
		argv[n++] = (char *)"--kallsyms";
		argv[n++] = ks;
		if (*ver) {
			argv[n++] = (char *)"--driver-version";
			argv[n++] = ver;
		}
	}
	rc = capture(cmd_check, argv, &s);
	with_json_twin(r, "check", "p2pctl check", cmd_check, argv, n, rc, s);
}

static void status(struct rep *r)
{
	char *argv[3] = { (char *)"status", NULL, NULL }, *s = NULL;
	int rc;

	if (r->root) {
		missing(r, "status: needs the live module (not in a captured tree)");
		section(r, "status", NULL, -1, "", NULL, "not available in a captured tree");
		return;
	}
	rc = capture(cmd_status, argv, &s);
	if (rc == P2PCTL_EXIT_NOT_LOADED) {
		missing(r, "status: p2p-shim not loaded");
		section(r, "status", "p2pctl status", rc, s, NULL, "p2p-shim not loaded");
		free(s);
		return;
	}
	with_json_twin(r, "status", "p2pctl status", cmd_status, argv, 1, rc, s);
}

/* A command's output: live under a deadline, or DIR/../cmd/NAME.txt from a capture. */
static void command_section(struct rep *r, const char *name, const char *cmd, const char *capname)
{
	char path[PATH_MAX], why[128] = "", note[160];
	char *s;

	if (r->root) {
		snprintf(path, sizeof(path), "%s/../cmd/%s.txt", r->root, capname);
		s = read_file_str(path);
	} else {
		s = run_cmd(cmd, why, sizeof(why));
	}
	if (strstr(why, "timed out")) {
		missing(r, "%s: %s", name, why);
		snprintf(note, sizeof(note), "%s; its output so far follows", why);
		section(r, name, cmd, -1, s ? s : "", NULL, note);
	} else if (!s || *why || strstr(s, "not available:")) {
		missing(r, "%s: %s", name, r->root ? "not in the captured tree" :
			*why ? why : "command missing or failed");
		section(r, name, cmd, -1, "", NULL, "not available");
	} else {
		section(r, name, cmd, -1, s, NULL, NULL);
	}
	free(s);
}

static bool kernel_line(const char *l, size_t n)
{
	if ((n >= 2 && !memcmp(l, "$ ", 2)) || (n >= 12 && !memcmp(l, "[exit status", 12)))
		return false;		/* a capture's command line and status */
	return memmem(l, n, "p2p-shim", 8) || memmem(l, n, "p2p_shim", 8) || memmem(l, n, "NVRM", 4);
}

static void kernel_log(struct rep *r)
{
	char *log = NULL, *out = NULL, path[PATH_MAX];
	size_t olen = 0;
	const char *p, *note = NULL;
	FILE *m;
	int len;

	if (r->root) {
		snprintf(path, sizeof(path), "%s/../cmd/dmesg-p2p.txt", r->root);
		log = read_file_str(path);
		if (!log) {
			snprintf(path, sizeof(path), "%s/../cmd/dmesg-filtered.txt", r->root);
			log = read_file_str(path);
		}
		note = "from the capture";
	} else {
		len = klogctl(10, NULL, 0);		/* SYSLOG_ACTION_SIZE_BUFFER */
		if (len > 0 && (log = malloc((size_t)len + 1))) {
			len = klogctl(3, log, len);	/* SYSLOG_ACTION_READ_ALL */
			if (len < 0) {
				free(log);
				log = NULL;
			} else {
				log[len] = '\0';
			}
		}
	}
	if (!log) {
		missing(r, "kernel log: %s", r->root ? "no dmesg in the captured tree" :
			"not readable (kernel.dmesg_restrict: run as root, or paste `sudo dmesg | grep -E 'p2p-shim|NVRM'`)");
		section(r, "kernel-log", "dmesg | grep -E 'p2p-shim|NVRM'", -1, "", NULL, "not readable");
		return;
	}
	m = open_memstream(&out, &olen);
	for (p = log; m && *p;) {
		const char *e = strchrnul(p, '\n');

		if (kernel_line(p, (size_t)(e - p)))
			fprintf(m, "%.*s\n", (int)(e - p), p);
		p = *e ? e + 1 : e;
	}
	if (m)
		fclose(m);
	section(r, "kernel-log", "dmesg | grep -E 'p2p-shim|NVRM'", -1, out ? out : "", NULL, note);
	free(out);
	free(log);
}

static void cuda(struct rep *r)
{
	char *argv[10], *j = NULL;
	int rc;

	argv[0] = (char *)"verify";
	argv[1] = (char *)"--size";
	argv[2] = (char *)"16M";
	argv[3] = (char *)"--json";
	argv[4] = NULL;
	rc = capture(cmd_verify, argv, &j);
	if (rc == 3) {
		missing(r, "verify, bench: no CUDA driver or fewer than 2 GPUs");
		section(r, "verify", "p2pctl verify --size 16M --json", rc, j, NULL,
			"not run: no CUDA driver or fewer than 2 GPUs");
		free(j);
		return;
	}
	section(r, "verify", "p2pctl verify --size 16M --json", rc, j, parse_json(j, r->full), NULL);
	free(j);
	argv[0] = (char *)"bench";
	argv[1] = (char *)"--size";
	argv[2] = (char *)"64M";
	argv[3] = (char *)"--reps";
	argv[4] = (char *)"3";
	argv[5] = (char *)"--json";
	argv[6] = NULL;
	rc = capture(cmd_bench, argv, &j);
	section(r, "bench", "p2pctl bench --size 64M --reps 3 --json", rc, j, parse_json(j, r->full), NULL);
	free(j);
}

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "json", no_argument, NULL, 'j' },
		{ "root", required_argument, NULL, 'r' },
		{ "full", no_argument, NULL, 'f' },
		{ "no-cuda", no_argument, NULL, 'n' },
		{ "cuda", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL;
	bool json = false, want_cuda = false;
	struct rep r = { 0 };
	json_object *top;
	char stamp[32], jpath[PATH_MAX + 8];
	time_t now = time(NULL);
	struct tm tm;
	int c, ret = 0;

	p2pctl_getopt_reset();
	while ((c = getopt_long(argc, argv, "+o:jr:fnch", opts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'j': json = true; break;
		case 'r': r.root = optarg; break;
		case 'f': r.full = true; break;
		case 'n': want_cuda = false; break;
		case 'c': want_cuda = true; break;
		case 'h': fputs(help, p2pctl_out); return 0;
		default: return p2pctl_usage("report", "invalid option");
		}
	}
	if (optind < argc)
		return p2pctl_usage("report", "unexpected argument '%s'", argv[optind]);
	if (r.root && !strcmp(r.root, "/"))
		r.root = NULL;
	if (r.root && (!*r.root || access(r.root, R_OK)))
		return p2pctl_usage("report", "--root %s: not a readable directory", r.root);
	if (out && json)
		return p2pctl_usage("report", "--json and --output: -o writes both the text and FILE.json");

	r.sections = json_object_new_object();
	r.missing = json_object_new_array();
	r.tf = open_memstream(&r.text, &r.text_len);
	if (!r.tf)
		return P2PCTL_EXIT_NOT_MET;
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
	fprintf(r.tf, "p2pctl report, %s%s%s%s\n\n", stamp, r.root ? ", captured tree " : "",
		r.root ? r.root : "", r.full ? "" : " (GPU UUIDs and serial numbers replaced)");

	versions(&r);
	kernel(&r);
	doctor(&r);
	check(&r);
	status(&r);
	command_section(&r, "gpus", "nvidia-smi -L", "nvidia-smi-L");
	command_section(&r, "topology", "nvidia-smi topo -m", "nvidia-smi-topo-m");
	command_section(&r, "pci-tree", "lspci -tv", "lspci-tv");
	kernel_log(&r);
	/* last: P2P traffic has hard-reset hosts, and all else is gathered by then */
	if (!r.root && want_cuda)
		cuda(&r);
	else
		section(&r, "verify", NULL, -1, "", NULL, r.root ? "not run on a captured tree" :
			"not run (give --cuda)");

	fprintf(r.tf, "== could not read\n");
	for (c = 0; c < (int)json_object_array_length(r.missing); c++)
		fprintf(r.tf, "- %s\n", json_object_get_string(json_object_array_get_idx(r.missing, c)));
	if (!json_object_array_length(r.missing))
		fprintf(r.tf, "(nothing)\n");
	fclose(r.tf);

	top = json_object_new_object();
	json_object_object_add(top, "generated", json_object_new_string(stamp));
	json_object_object_add(top, "root", r.root ? json_object_new_string(r.root) : NULL);
	json_object_object_add(top, "identifiers_removed", json_object_new_boolean(!r.full));
	json_object_object_add(top, "sections", r.sections);
	json_object_object_add(top, "could_not_read", r.missing);

	if (out) {
		FILE *f = fopen(out, "w");

		snprintf(jpath, sizeof(jpath), "%s.json", out);
		if (!f || fputs(r.text, f) < 0 || fclose(f)) {
			p2pctl_error("report", "%s: cannot write", out);
			ret = P2PCTL_EXIT_NOT_MET;
		} else if (json_object_to_file_ext(jpath, top, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE)) {
			p2pctl_error("report", "%s: cannot write", jpath);
			ret = P2PCTL_EXIT_NOT_MET;
		} else {
			fprintf(p2pctl_out, "wrote %s and %s\n", out, jpath);
		}
		json_object_put(top);
	} else if (json) {
		p2pctl_json_print(top);
	} else {
		fputs(r.text, p2pctl_out);
		json_object_put(top);
	}
	free(r.text);
	return ret;
}
