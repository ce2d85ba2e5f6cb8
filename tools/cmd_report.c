// SPDX-License-Identifier: GPL-2.0
/*
 * p2pctl report: everything a bug report or a hardware result needs, in
 * one text file with a JSON twin.  It runs the other commands in-process
 * (their output captured), reads the driver's and the shim's kernel log
 * lines, and says what it could not read.  Each section reaches the
 * file (fsync'd, the JSON twin rewritten) as soon as it is gathered: P2P
 * tests have hard-reset hosts.  Identifiers (the kinds of redact.c) are
 * replaced unless --full; control characters never pass.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <regex.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <pwd.h>

#include "p2pctl.h"
#include "capture.h"
#include "redact.h"

static const char help[] =
	"Usage: p2pctl report [-o FILE] [--json] [--root DIR] [--full] [--capture DIR]\n"
	"                     [--cuda]\n\n"
	"Gather what a bug report or a hardware result needs into one text file\n"
	"with a JSON twin: p2pctl, library and module versions; /proc/version; the\n"
	"driver; /proc/cmdline; `doctor`, `check` and `status`; nvidia's params\n"
	"and modprobe.d lines; modinfo of p2p_shim and nvidia (signer); `dkms\n"
	"status`; the libcuda a program loads; nvidia-smi -L, topo -m and -q;\n"
	"lspci -tv, and lspci -vvv of the GPUs and the bridges above them;\n"
	"/proc/iomem; the kernel log lines of p2p-shim, NVRM, the IOMMU (DMAR,\n"
	"AMD-Vi, faults), AER and BARs not assigned; and, only with --cuda and\n"
	"last, `verify` and `bench` summaries (P2P traffic). Each section is on\n"
	"disk as soon as it is gathered. Runs as a normal user: what it could not\n"
	"read is listed, not an error. Replaced (the header says so): UUIDs,\n"
	"serial numbers, GPU PDIs, fabric GUIDs, host ids, signing key ids and\n"
	"module signers, MAC, IPv4 and IPv6 addresses, user@host, home\n"
	"directories, host and user names; control characters are dropped.\n\n"
	"  -o, --output FILE  write the text to FILE and the JSON to FILE.json\n"
	"                     (default: the text on standard output)\n"
	"  -j, --json         JSON on standard output instead of the text\n"
	"  -r, --root DIR     report on a captured tree: files under DIR, command\n"
	"                     outputs from DIR/../cmd/, kallsyms from\n"
	"                     DIR/../driver/; nothing live is run\n"
	"  -f, --full         keep the identifiers\n"
	"  -C, --capture DIR  also write what doctor read as a tree that\n"
	"                     `doctor --root DIR/root` replays (DIR/root, cmd,\n"
	"                     driver, MISSING; redacted unless --full)\n"
	"  -c, --cuda         run verify and bench last (P2P traffic, GPU time;\n"
	"                     off by default)\n"
	"  -n, --no-cuda      the default; kept for old scripts\n"
	"  -h, --help         this help\n\n"
	"Exit status 0 when the report was written (whatever it says).\n"
	P2PCTL_EXIT_CODES_HELP;


struct rep {
	const char *root;		/* NULL: live */
	bool full;
	json_object *top;		/* the twin: generated, root, sections, ... */
	json_object *sections;		/* name -> {command, exit_status, output, note} */
	json_object *missing;		/* array of strings */
	FILE *tf;			/* the text as it is gathered, or NULL (--json) */
	bool tf_file;			/* tf is the -o file: fsync it */
	const char *jpath;		/* the twin's file, or NULL */
	struct p2pctl_redact red;	/* what is replaced unless --full (redact.c) */
	struct p2ps_doctor_report *dr;	/* doctor's GPUs, for lspci; or NULL */
	struct p2pctl_capture *cap;	/* --capture, or NULL */
	struct p2ps_root *fs;		/* the root: every file read through it, confined */
	struct p2ps_root *kit;		/* ROOT/.. (a capture's cmd/, driver/), or NULL live */
};

/* ---------------------------------------------------------------- redaction */

/* Control characters and invalid UTF-8 out, line by line (newlines and tabs stay). */
static void strip_controls(char *s)
{
	while (*s) {
		char *e = strchrnul(s, '\n'), save = *e;

		*e = '\0';
		p2ps_sanitize(s);
		*e = save;
		s = *e ? e + 1 : e;
	}
}

/* @in without control characters and, unless --full, identifiers (a new string). */
static char *redact(struct rep *r, const char *in)
{
	char *s = p2pctl_redact_text(&r->red, in);

	if (s)
		strip_controls(s);
	return s;
}

/* ---------------------------------------------------------------- helpers */

/*
 * A regular file of at most 8 MiB (no FIFO, no device), or NULL: @path
 * under the report's root, resolved inside it as doctor does (an absolute
 * link in a tree points into the tree, never out of it).
 */
static char *rread(const struct rep *r, const char *path)
{
	return p2ps_root_read_max(r->fs, path, NULL, false, 8 << 20);
}

/* A file of the capture kit around the tree (ROOT/../@path), confined to the kit. */
static char *kread(const struct rep *r, const char *path)
{
	return r->kit ? p2ps_root_read_max(r->kit, path, NULL, false, 8 << 20) : NULL;
}

/* The first line of @path (under the root) in @buf; empty when it cannot be read. */
static void first_line(const struct rep *r, const char *path, char *buf, size_t size)
{
	char *s = rread(r, path);

	snprintf(buf, size, "%.*s", s ? (int)strcspn(s, "\n") : 0, s ? s : "");
	free(s);
}

/*
 * The owners of the processes whose maps a capture keeps (what doctor
 * reads of them): live, each owner's account (getpwuid: LDAP's too);
 * live or in a tree, the home of each kept file by where it sits.
 */
static void learn_processes(struct rep *r)
{
	char **names, path[64], *maps, *p;
	size_t n, i;

	if (p2ps_root_list(r->fs, "/proc", &names, &n))
		return;
	for (i = 0; i < n; i++) {
		bool kept = false;

		if (strspn(names[i], "0123456789") != strlen(names[i]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/maps", names[i]);
		maps = rread(r, path);
		for (p = maps; p && *p;) {
			char *e = strchrnul(p, '\n'), save = *e;

			if (p2pctl_capture_kept_line(p, (size_t)(e - p)) && strchr(p, '/')) {
				*e = '\0';
				p2pctl_redact_learn_env_path(&r->red, strchr(p, '/'));
				*e = save;
				kept = true;
			}
			p = *e ? e + 1 : e;
		}
		free(maps);
		if (kept && !r->root) {
			struct stat st;
			struct passwd *pw;

			snprintf(path, sizeof(path), "/proc/%s", names[i]);
			if (!stat(path, &st) && st.st_uid >= 1000 && (pw = getpwuid(st.st_uid))) {
				p2pctl_redact_add_user(&r->red, pw->pw_name);
				p2pctl_redact_add_home(&r->red, pw->pw_dir);
			}
		}
	}
	p2ps_free_list(names, n);
}

/*
 * The names whose identity the report replaces: host names (their FQDNs
 * and domain), users with a home or an account (/etc/passwd, a process's
 * owner), homes outside /home.
 */
static void learn_names(struct rep *r)
{
	char line[256], **homes, *passwd;
	size_t nh, i;

	if (r->root) {
		first_line(r, "/proc/sys/kernel/hostname", line, sizeof(line));
		p2pctl_redact_add_host(&r->red, line);
		first_line(r, "/etc/hostname", line, sizeof(line));
		p2pctl_redact_add_host(&r->red, line);
	} else {
		struct utsname u;
		struct passwd *pw = getpwuid(getuid());
		const char *e[] = { getenv("SUDO_USER"), getenv("USER"), getenv("LOGNAME") };

		if (!gethostname(line, sizeof(line))) {
			line[sizeof(line) - 1] = '\0';
			p2pctl_redact_add_host(&r->red, line);
		}
		if (!uname(&u))
			p2pctl_redact_add_host(&r->red, u.nodename);
		if (pw) {
			p2pctl_redact_add_user(&r->red, pw->pw_name);
			p2pctl_redact_add_home(&r->red, pw->pw_dir);
		}
		for (i = 0; i < sizeof(e) / sizeof(e[0]); i++)
			if (e[i])
				p2pctl_redact_add_user(&r->red, e[i]);
		p2pctl_redact_add_home(&r->red, getenv("HOME"));
	}
	first_line(r, "/proc/sys/kernel/domainname", line, sizeof(line));
	p2pctl_redact_add_domain(&r->red, line);
	passwd = rread(r, "/etc/hosts");
	if (passwd)
		p2pctl_redact_learn_hosts(&r->red, passwd);
	free(passwd);
	passwd = rread(r, "/etc/passwd");
	if (passwd)
		p2pctl_redact_learn_passwd(&r->red, passwd);
	free(passwd);
	learn_processes(r);
	if (!p2ps_root_list(r->fs, "/home", &homes, &nh)) {
		for (i = 0; i < nh; i++)
			if (homes[i][0] != '.')
				p2pctl_redact_add_user(&r->red, homes[i]);
		p2ps_free_list(homes, nh);
	}
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
	rc = p2pctl_run(argv, ms, 8 << 20, true, &out, true);
	if (rc)
		p2ps_run_describe(rc, ms, why, whylen);
	if (rc < 0 && rc != -ETIMEDOUT) {
		free(out);
		return NULL;
	}
	return out;
}

/*
 * A command's output saved by a capture (capture-host's or report
 * --capture's: "$ command", the output, "[exit status N]"): the output
 * alone, in place.
 */
static char *uncapture(char *s)
{
	char *e;
	size_t n;

	if (!s)
		return NULL;
	if (!strncmp(s, "$ ", 2)) {
		e = strchrnul(s, '\n');
		memmove(s, *e ? e + 1 : e, strlen(*e ? e + 1 : e) + 1);
	}
	n = strlen(s);
	while (n && s[n - 1] == '\n')
		n--;
	e = n ? memrchr(s, '\n', n) : NULL;
	e = e ? e + 1 : s;
	if (!strncmp(e, "[exit status ", 13))
		*e = '\0';
	return s;
}

static void missing(struct rep *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void missing(struct rep *r, const char *fmt, ...)
{
	char buf[512], *red;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	red = redact(r, buf);
	json_object_array_add(r->missing, json_object_new_string(red ? red : buf));
	free(red);
}

/* The twin's count of what was replaced, of each kind. */
static void twin_redacted(struct rep *r)
{
	json_object *red = json_object_new_object();
	size_t i;

	for (i = 0; i < p2pctl_redact_kinds(); i++)
		json_object_object_add(red, p2pctl_redact_kind_name(i),
				       json_object_new_int((int)r->red.counts[i]));
	json_object_object_add(r->top, "redacted", red);
}

/* The twin as it stands, in place of the last one (written aside, then renamed). */
static int write_twin(struct rep *r)
{
	char tmp[PATH_MAX + 16];

	if (!r->jpath)
		return 0;
	twin_redacted(r);
	snprintf(tmp, sizeof(tmp), "%s.tmp", r->jpath);
	if (json_object_to_file_ext(tmp, r->top, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE) ||
	    rename(tmp, r->jpath)) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* What was gathered so far, on disk: a hang or a reset from here loses nothing. */
static void flush_out(struct rep *r)
{
	if (r->tf) {
		fflush(r->tf);
		if (r->tf_file)
			fsync(fileno(r->tf));
	}
	/* no twin beside a text file that failed (-o /dev/full: no /dev/full.json) */
	if (!r->tf_file || !ferror(r->tf))
		write_twin(r);
}

/* Add a section: @text for the text file, @json (owned) or the text for the twin. */
static void section(struct rep *r, const char *name, const char *command, int rc, const char *text,
		    json_object *json, const char *note)
{
	json_object *o = json_object_new_object();
	char *red = redact(r, text);

	json_object_object_add(o, "command", command ? json_object_new_string(command) : NULL);
	json_object_object_add(o, "exit_status", rc >= 0 ? json_object_new_int(rc) : NULL);
	if (note)
		json_object_object_add(o, "note", json_object_new_string(note));
	json_object_object_add(o, "output", json ? json : json_object_new_string(red ? red : ""));
	json_object_object_add(r->sections, name, o);

	if (r->tf) {
		fprintf(r->tf, "== %s%s%s", name, command ? ": " : "", command ? command : "");
		if (rc > 0)
			fprintf(r->tf, " (exit status %d)", rc);
		fputc('\n', r->tf);
		if (note)
			fprintf(r->tf, "(%s)\n", note);
		if (red && *red)
			fprintf(r->tf, "%s%s", red, red[strlen(red) - 1] == '\n' ? "" : "\n");
		fputc('\n', r->tf);
	}
	free(red);
	flush_out(r);
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
static json_object *parse_json(struct rep *r, const char *text)
{
	char *red;
	json_object *o;

	if (!text || !strchr(text, '{'))
		return NULL;
	red = redact(r, strchr(text, '{'));
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
	section(r, name, command, rc, text, parse_json(r, j), NULL);
	free(text);
	free(j);
}

/* ---------------------------------------------------------------- sections */

static void versions(struct rep *r)
{
	char buf[512] = "", mod[128] = "";
	char *s = NULL;
	int rc;

	if (!r->root) {
		char *argv[] = { (char *)"version", NULL };

		rc = capture(cmd_version, argv, &s);
		section(r, "versions", "p2pctl version", rc, s, NULL, NULL);
		free(s);
		return;
	}
	first_line(r, "/sys/module/p2p_shim/version", mod, sizeof(mod));
	snprintf(buf, sizeof(buf), "p2pctl %s (libp2pshim %s, ABI %d)\np2p-shim module: %s\n",
		 P2PS_VERSION, p2ps_lib_version(), P2PS_ABI_VERSION,
		 *mod ? mod : "not loaded in the captured tree");
	section(r, "versions", NULL, -1, buf, NULL, "p2pctl here; the module of the captured tree");
}

static void kernel(struct rep *r)
{
	char *s;

	s = rread(r, "/proc/version");
	if (!s && !r->root) {
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
	section(r, "kernel", "cat /proc/version", -1, s ? s : "", NULL, NULL);
	free(s);
	s = rread(r, "/proc/driver/nvidia/version");
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
	char *s = NULL, ks[PATH_MAX], ver[64] = "";
	char *argv[8] = { (char *)"check", NULL };
	int n = 1, rc;

	if (r->root) {
		snprintf(ks, sizeof(ks), "%s/../driver/kallsyms-nvidia.txt.gz", r->root);
		if (access(ks, R_OK)) {
			missing(r, "check: no kallsyms in the captured tree (DIR/../driver/)");
			section(r, "check", NULL, -1, "", NULL, "not run: no kallsyms captured");
			return;
		}
		first_line(r, "/sys/module/nvidia/version", ver, sizeof(ver));
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

/*
 * A command's output: live under a deadline, or DIR/../cmd/CAPNAME.txt
 * from a capture; NULL (and *@why) when there is none.
 */
static char *command_output(struct rep *r, const char *cmd, const char *capname, char *why,
			    size_t whylen)
{
	char path[PATH_MAX], *s, *saved = NULL;

	*why = '\0';
	if (!r->root) {
		s = run_cmd(cmd, why, whylen);
		if (r->cap && s && asprintf(&saved, "$ %s\n%s%s%s%s", cmd, s,
					      *s && s[strlen(s) - 1] != '\n' ? "\n" : "",
					      *why ? why : "", *why ? "\n" : "") < 0)
			saved = NULL;
	} else {
		snprintf(path, sizeof(path), "/cmd/%s.txt", capname);
		s = kread(r, path);
		saved = s ? strdup(s) : NULL;
		uncapture(s);
	}
	if (r->cap && saved)
		p2pctl_capture_cmd(r->cap, capname, saved);
	free(saved);
	return s;
}

static void command_section(struct rep *r, const char *name, const char *cmd, const char *capname)
{
	char why[128] = "", note[160];
	char *s = command_output(r, cmd, capname, why, sizeof(why));

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

/* A file under the root as its own section. */
static void file_section(struct rep *r, const char *name, const char *file)
{
	char cmd[PATH_MAX + 8];
	char *s = rread(r, file);

	snprintf(cmd, sizeof(cmd), "cat %s", file);
	if (!s) {
		missing(r, "%s: %s", file, strerror(errno));
		section(r, name, cmd, -1, "", NULL, "not readable");
		return;
	}
	section(r, name, cmd, -1, s, NULL, NULL);
	free(s);
}

/* The lines of modprobe.d files that set something for nvidia or p2p-shim. */
static void modprobe_section(struct rep *r)
{
	static const char *const dirs[] = {
		"/etc/modprobe.d", "/run/modprobe.d", "/usr/local/lib/modprobe.d", "/usr/lib/modprobe.d",
		"/lib/modprobe.d",
	};
	char *out = NULL, file[PATH_MAX];
	size_t olen = 0, d, i;
	FILE *m = open_memstream(&out, &olen);

	for (d = 0; m && d < sizeof(dirs) / sizeof(dirs[0]); d++) {
		char **names;
		size_t n = 0;

		if (p2ps_root_list(r->fs, dirs[d], &names, &n))
			continue;
		for (i = 0; i < n && i < 256; i++) {	/* sorted by p2ps_root_list() */
			char *text, *line, *save;
			size_t nl = strlen(names[i]);

			if (nl <= 5 || strcmp(names[i] + nl - 5, ".conf"))
				continue;
			snprintf(file, sizeof(file), "%s/%s", dirs[d], names[i]);
			text = rread(r, file);
			for (line = text ? strtok_r(text, "\n", &save) : NULL; line;
			     line = strtok_r(NULL, "\n", &save)) {
				line = p2ps_trim(line);
				if (*line != '#' && (strcasestr(line, "nvidia") || strcasestr(line, "p2p")))
					fprintf(m, "%s: %s\n", file, line);
			}
			free(text);
		}
		p2ps_free_list(names, n);
	}
	if (m)
		fclose(m);
	section(r, "modprobe.d", "grep -i 'nvidia|p2p' /etc/modprobe.d/*.conf ...", -1,
		out && *out ? out : "(no line for nvidia or p2p-shim)\n", NULL, NULL);
	free(out);
}

/* "0000:01:00.0" or "01:00.0" at @s followed by a space. */
static bool block_for(const char *s, char *const *bdfs, size_t n)
{
	size_t i, len = strcspn(s, " \n");

	for (i = 0; i < n; i++)
		if ((len == 12 && !strncmp(s, bdfs[i], 12)) ||
		    (len == 7 && !strncmp(bdfs[i], "0000:", 5) && !strncmp(s, bdfs[i] + 5, 7)))
			return true;
	return false;
}

/*
 * `lspci -vvv` of the GPUs and of every bridge above them (ACS, link
 * state, BARs): the addresses on doctor's sysfs paths.
 */
static void lspci_section(struct rep *r)
{
	char *bdfs[256], why[128] = "", note[96] = "", *all, *out = NULL;
	const char *cmd = "lspci -D -vvv";
	size_t n = 0, olen = 0, i;
	FILE *m;
	const char *p;

	for (i = 0; r->dr && i < r->dr->nr_gpus; i++) {
		char path[512], *tok, *save;

		p2ps_strlcpy(path, r->dr->gpus[i].path, sizeof(path));
		for (tok = strtok_r(path, "/", &save); tok && n < 256; tok = strtok_r(NULL, "/", &save)) {
			unsigned int a, b, c, f;
			char end;

			if (strlen(tok) == 12 && sscanf(tok, "%4x:%2x:%2x.%1x%c", &a, &b, &c, &f, &end) == 4)
				bdfs[n++] = strdup(tok);
		}
	}
	all = command_output(r, cmd, "lspci-vvv", why, sizeof(why));
	if (!all && r->root) {
		all = kread(r, "/cmd/lspci-vvv-10de.txt");
		if (r->cap && all)
			p2pctl_capture_cmd(r->cap, "lspci-vvv", all);
		uncapture(all);
	}
	if (!all || *why || strstr(all, "not available:") || !n) {
		missing(r, "lspci -vvv: %s", !n ? "no GPU found" : r->root ? "not in the captured tree" :
			*why ? why : "lspci missing or failed");
		section(r, "lspci", cmd, -1, "", NULL, "not available");
		goto out;
	}
	m = open_memstream(&out, &olen);
	for (p = all; m && *p;) {
		const char *e = strstr(p, "\n\n");

		e = e ? e + 2 : p + strlen(p);
		if (!isspace((unsigned char)*p) && block_for(p, bdfs, n))
			fprintf(m, "%.*s", (int)(e - p), p);
		p = e;
	}
	if (m)
		fclose(m);
	if (out && strstr(out, "<access denied>"))
		snprintf(note, sizeof(note), "not root: lspci could not read the capabilities (ACS, link)");
	section(r, "lspci", "lspci -D -vvv (GPUs and the bridges above them)", -1, out ? out : "",
		NULL, *note ? note : NULL);
out:
	free(out);
	free(all);
	for (i = 0; i < n; i++)
		free(bdfs[i]);
}

/* modinfo of p2p-shim and nvidia: file, version, who signed them. */
static void modules_section(struct rep *r)
{
	static const char *const mods[] = { "p2p_shim", "nvidia" };
	static const char *const keys[] = {
		"filename:", "version:", "vermagic:", "signer:", "sig_key:", "sig_hashalgo:", "signature:",
	};
	char *out = NULL, cmd[64], cap[64], why[128];
	size_t olen = 0, i, k;
	FILE *m = open_memstream(&out, &olen);

	for (i = 0; m && i < sizeof(mods) / sizeof(mods[0]); i++) {
		char *s, *line, *save;
		bool any = false;

		snprintf(cmd, sizeof(cmd), "modinfo %s", mods[i]);
		snprintf(cap, sizeof(cap), "modinfo-%s", mods[i]);
		s = command_output(r, cmd, cap, why, sizeof(why));
		fprintf(m, "%s:\n", mods[i]);
		for (line = s ? strtok_r(s, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save))
			for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
				if (!strncmp(line, keys[k], strlen(keys[k]))) {
					fprintf(m, "%s\n", line);
					any = true;
				}
		if (!any) {
			fprintf(m, "(not found)\n");
			missing(r, "modinfo %s: %s", mods[i], *why ? why : "module not found");
		}
		free(s);
	}
	if (m)
		fclose(m);
	section(r, "modules", "modinfo p2p_shim nvidia (signer, version)", -1, out ? out : "", NULL, NULL);
	free(out);
}

/* Which libcuda a CUDA program loads: ldconfig's libcuda.so.1, its real file. */
static void libcuda_section(struct rep *r)
{
	char line[PATH_MAX * 2] = "", why[128], real[PATH_MAX];
	const char *env = getenv("P2PCTL_LIBCUDA");
	char *s = NULL;

	if (r->root) {
		s = command_output(r, "ldconfig -p", "libcuda", why, sizeof(why));
		if (s)
			snprintf(line, sizeof(line), "%s", s);
	} else if (env && *env) {
		snprintf(line, sizeof(line), "libcuda.so.1 (P2PCTL_LIBCUDA) => %s\n",
			 realpath(env, real) ? real : env);
	} else {
		const char *p;

		s = run_cmd("ldconfig -p", why, sizeof(why));
		if (!s)
			s = run_cmd("/sbin/ldconfig -p", why, sizeof(why));
		p = s ? strstr(s, "libcuda.so.1 (") : NULL;
		p = p ? strstr(p, "=> ") : NULL;
		if (p) {
			char lib[PATH_MAX];

			snprintf(lib, sizeof(lib), "%.*s", (int)strcspn(p + 3, "\n"), p + 3);
			snprintf(line, sizeof(line), "libcuda.so.1 => %s\n", realpath(lib, real) ? real : lib);
		}
	}
	if (r->cap && *line && !r->root)
		p2pctl_capture_cmd(r->cap, "libcuda", line);
	if (!*line)
		missing(r, "libcuda: %s", r->root ? "not in the captured tree" : "no libcuda.so.1 in ldconfig -p");
	section(r, "libcuda", NULL, -1, *line ? line : "", NULL, *line ? NULL : "not found");
	free(s);
}

/*
 * The kernel log lines that carry the evidence: p2p-shim and NVRM, the
 * IOMMU (faults, DMAR, AMD-Vi), AER, and BARs the kernel could not place.
 */
static bool kernel_line(const char *l, size_t n)
{
	static const char *const keys[] = {
		"p2p-shim", "p2p_shim", "NVRM", "DMAR", "AMD-Vi", "IO_PAGE_FAULT", "AER:",
		"PCIe Bus Error", "BAR 1", "can't assign", "no space for", "Xid",
	};
	char buf[1024];
	size_t i;

	if ((n >= 2 && !memcmp(l, "$ ", 2)) || (n >= 12 && !memcmp(l, "[exit status", 12)))
		return false;		/* a capture's command line and status */
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (memmem(l, n, keys[i], strlen(keys[i])))
			return true;
	snprintf(buf, sizeof(buf), "%.*s", (int)n, l);
	return strcasestr(buf, "iommu");
}

#define KLOG_CMD "dmesg | grep -E 'p2p-shim|NVRM|iommu|DMAR|AMD-Vi|AER|BAR 1|can.t assign|no space'"

static void kernel_log(struct rep *r)
{
	char *log = NULL, *out = NULL;
	size_t olen = 0;
	const char *p, *note = NULL;
	FILE *m;
	int len;

	if (r->root) {
		log = kread(r, "/cmd/dmesg-p2p.txt");
		if (!log)
			log = kread(r, "/cmd/dmesg-filtered.txt");
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
			"not readable (kernel.dmesg_restrict: run as root, or paste `sudo " KLOG_CMD "`)");
		section(r, "kernel-log", KLOG_CMD, -1, "", NULL, "not readable");
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
	if (r->cap && out)
		p2pctl_capture_cmd(r->cap, "dmesg-p2p", out);
	section(r, "kernel-log", KLOG_CMD, -1, out ? out : "", NULL, note);
	free(out);
	free(log);
}

/* doctor's findings, for the sections that follow its GPUs (lspci). */
static void run_doctor_lib(struct rep *r)
{
	struct p2ps_doctor_opts o = { 0 };
	struct p2pctl_doctor_in in;

	if (p2pctl_doctor_inputs(r->root, NULL, &in))
		return;
	o.root = r->root;
	o.topo_text = in.topo_text;
	o.topo_source = in.src;
	o.smi_query_text = in.smi_text;
	o.smi_error = *in.smi_err ? in.smi_err : NULL;
	if (r->cap) {
		/* what doctor reads besides files, as doctor --root reads it back */
		char *t = NULL, *q = NULL;

		o.trace = p2pctl_capture_trace;
		o.trace_arg = r->cap;
		if (in.topo_text && (r->root || asprintf(&t, "$ nvidia-smi topo -m\n%s", in.topo_text) > 0))
			p2pctl_capture_cmd(r->cap, "nvidia-smi-topo-m", t ? t : in.topo_text);
		if (in.smi_text && (r->root || asprintf(&q, "$ nvidia-smi " P2PCTL_SMI_QUERY "\n%s",
							 in.smi_text) > 0))
			p2pctl_capture_cmd(r->cap, "nvidia-smi-query", q ? q : in.smi_text);
		if (*in.smi_err)
			p2pctl_capture_cmd(r->cap, "nvidia-smi-error", in.smi_err);
		free(t);
		free(q);
	}
	if (p2ps_doctor(&o, &r->dr))
		r->dr = NULL;
	p2pctl_doctor_inputs_free(&in);
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
	section(r, "verify", "p2pctl verify --size 16M --json", rc, j, parse_json(r, j), NULL);
	free(j);
	argv[0] = (char *)"bench";
	argv[1] = (char *)"--size";
	argv[2] = (char *)"64M";
	argv[3] = (char *)"--reps";
	argv[4] = (char *)"3";
	argv[5] = (char *)"--json";
	argv[6] = NULL;
	rc = capture(cmd_bench, argv, &j);
	section(r, "bench", "p2pctl bench --size 64M --reps 3 --json", rc, j, parse_json(r, j), NULL);
	free(j);
}

static void rep_free(struct rep *r)
{
	p2pctl_redact_free(&r->red);
	p2ps_root_free(r->fs);
	p2ps_root_free(r->kit);
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
		{ "capture", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL, *capdir = NULL;
	bool json = false, want_cuda = false;
	struct rep r = { 0 };
	char stamp[32], jpath[PATH_MAX + 8], *hdr;
	time_t now = time(NULL);
	struct tm tm;
	int c, ret = 0;
	size_t i;

	p2pctl_getopt_reset();
	while ((c = getopt_long(argc, argv, "+o:jr:fncC:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'j': json = true; break;
		case 'r': r.root = optarg; break;
		case 'f': r.full = true; break;
		case 'n': want_cuda = false; break;
		case 'c': want_cuda = true; break;
		case 'C': capdir = optarg; break;
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
	/* "" would be the current directory's "" (-o) or "/root" (--capture) */
	if (out && !*out)
		return p2pctl_usage("report", "--output: empty file name");
	if (capdir && !*capdir)
		return p2pctl_usage("report", "--capture: empty directory name");

	{
		char kit[PATH_MAX + 8];
		int err = p2ps_root_new(&r.fs, r.root);

		snprintf(kit, sizeof(kit), "%s/..", r.root ? r.root : "");
		if (!err && r.root)
			err = p2ps_root_new(&r.kit, kit);
		if (err) {
			p2ps_root_free(r.fs);
			return p2pctl_usage("report", "--root %s: %s", r.root, strerror(-err));
		}
	}
	if (p2pctl_redact_init(&r.red, r.full)) {
		p2pctl_error("report", "%s", strerror(ENOMEM));
		rep_free(&r);
		return P2PCTL_EXIT_NOT_MET;
	}
	learn_names(&r);
	if (capdir) {
		int err = p2pctl_capture_new(capdir, r.root, &r.red, &r.cap);

		if (err == -EEXIST) {
			rep_free(&r);
			return p2pctl_usage("report", "--capture %s: %s/root exists already", capdir, capdir);
		}
		if (err) {
			p2pctl_error("report", "--capture %s: %s", capdir, strerror(-err));
			rep_free(&r);
			return P2PCTL_EXIT_NOT_MET;
		}
	}
	if (out) {
		r.tf = fopen(out, "w");
		if (!r.tf) {
			p2pctl_error("report", "%s: cannot write: %s", out, strerror(errno));
			rep_free(&r);
			return P2PCTL_EXIT_NOT_MET;
		}
		r.tf_file = true;
		snprintf(jpath, sizeof(jpath), "%s.json", out);
		r.jpath = jpath;
	} else if (!json) {
		r.tf = p2pctl_out;
	}
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
	r.top = json_object_new_object();
	r.sections = json_object_new_object();
	r.missing = json_object_new_array();
	json_object_object_add(r.top, "generated", json_object_new_string(stamp));
	hdr = redact(&r, r.root ? r.root : "");
	json_object_object_add(r.top, "root", r.root ? json_object_new_string(hdr ? hdr : "") : NULL);
	json_object_object_add(r.top, "identifiers_removed", json_object_new_boolean(!r.full));
	json_object_object_add(r.top, "sections", r.sections);
	json_object_object_add(r.top, "could_not_read", r.missing);
	if (r.tf)
		fprintf(r.tf, "p2pctl report, %s%s%s\n%s\n\n", stamp, r.root ? ", captured tree " : "",
			r.root ? hdr : "", r.full ? "identifiers kept (--full)" : p2pctl_redact_header());
	free(hdr);
	flush_out(&r);

	versions(&r);
	kernel(&r);
	file_section(&r, "cmdline", "/proc/cmdline");
	doctor(&r);
	check(&r);
	status(&r);
	run_doctor_lib(&r);
	file_section(&r, "nvidia-params", "/proc/driver/nvidia/params");
	modprobe_section(&r);
	modules_section(&r);
	command_section(&r, "dkms", "dkms status", "dkms-status");
	libcuda_section(&r);
	command_section(&r, "gpus", "nvidia-smi -L", "nvidia-smi-L");
	command_section(&r, "topology", "nvidia-smi topo -m", "nvidia-smi-topo-m");
	command_section(&r, "nvidia-smi-q", "nvidia-smi -q", "nvidia-smi-q");
	command_section(&r, "pci-tree", "lspci -tv", "lspci-tv");
	lspci_section(&r);
	file_section(&r, "iomem", "/proc/iomem");
	kernel_log(&r);
	/* last: P2P traffic has hard-reset hosts, and all else is on disk by then */
	if (!r.root && want_cuda)
		cuda(&r);
	else
		section(&r, "verify", NULL, -1, "", NULL, r.root ? "not run on a captured tree" :
			"not run (give --cuda)");

	if (r.cap) {
		char note[PATH_MAX + 64];
		int err = p2pctl_capture_finish(r.cap, r.root);

		snprintf(note, sizeof(note), "%s%s: replay with p2pctl doctor --root %s/root\n",
			 capdir, err ? " (incomplete: a write failed)" : "", capdir);
		section(&r, "capture", NULL, -1, note, NULL, NULL);
	}
	if (r.tf) {
		fprintf(r.tf, "== could not read\n");
		for (i = 0; i < json_object_array_length(r.missing); i++)
			fprintf(r.tf, "- %s\n", json_object_get_string(json_object_array_get_idx(r.missing, i)));
		if (!json_object_array_length(r.missing))
			fprintf(r.tf, "(nothing)\n");
		fprintf(r.tf, "\n== redacted\n");
		for (i = 0; i < p2pctl_redact_kinds(); i++)
			fprintf(r.tf, "%s%s %u", i ? ", " : "", p2pctl_redact_kind_name(i), r.red.counts[i]);
		fprintf(r.tf, "%s\n", r.full ? " (--full: nothing)" : "");
	}
	flush_out(&r);
	if (out) {
		/* ferror: what flush_out() could not write is gone by fclose */
		if ((ferror(r.tf) | fclose(r.tf)) || write_twin(&r)) {
			p2pctl_error("report", "%s: cannot write", out);
			ret = P2PCTL_EXIT_NOT_MET;
		} else {
			fprintf(p2pctl_out, "wrote %s and %s\n", out, jpath);
		}
		json_object_put(r.top);
	} else if (json) {
		twin_redacted(&r);
		p2pctl_json_print(r.top);
	} else {
		json_object_put(r.top);
	}
	p2ps_doctor_free(r.dr);
	rep_free(&r);
	return ret;
}
