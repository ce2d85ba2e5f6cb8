// SPDX-License-Identifier: GPL-2.0
/*
 * What `p2pctl report` (and its --capture) replaces unless --full: one
 * table of kinds, each with its pattern and placeholder, applied in order
 * (a UUID or a signing key id first, so that the MAC address pattern does
 * not eat part of one; home directories before user names, so that
 * /data/users/NAME goes whole).  The docs (docs/p2pctl.md, p2pctl.8) list
 * the same kinds; the report's header is made from this table.
 *
 * Each pattern is compiled once; each pass appends to one open_memstream
 * buffer while regexec moves along each line (REG_STARTEND), so redaction
 * is linear in the text for every rule (under the sanitizers, for lines of
 * bounded length: re_line).  A capture's text (p2pctl_redact_capture)
 * names every home /home/userN, numbered as p2pctl_redact_path names the
 * files, so that doctor replays it.
 */
#include <ctype.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "redact.h"

enum {
	K_UUID, K_SERIAL, K_PDI, K_GUID, K_HOST_ID, K_KEY, K_SIGNER, K_MAC, K_IPV6, K_IPV4,
	K_USERHOST, K_HOME, K_HOST, K_USER, K_KINDS
};

/* name: the JSON twin's key; what: the header's words */
static const struct { const char *name, *what; } kinds[K_KINDS] = {
	[K_UUID]	= { "uuid", "UUIDs (<uuid>)" },
	[K_SERIAL]	= { "serial_number", "serial numbers (<serial>)" },
	[K_PDI]		= { "gpu_pdi", "GPU PDIs (<pdi>)" },
	[K_GUID]	= { "fabric_guid", "fabric GUIDs (<guid>)" },
	[K_HOST_ID]	= { "host_id", "host ids (<host-id>)" },
	[K_KEY]		= { "signing_key_id", "signing key ids (<key>)" },
	[K_SIGNER]	= { "module_signer", "module signers (<signer>)" },
	[K_MAC]		= { "mac_address", "MAC addresses (<mac>)" },
	[K_IPV6]	= { "ipv6_address", "IPv6 addresses (<ipv6>)" },
	[K_IPV4]	= { "ipv4_address", "IPv4 addresses (<ipv4>)" },
	[K_USERHOST]	= { "user@host", "user@host (<user>@<host>)" },
	[K_HOME]	= { "home_directory", "home directories (/home/<user>, <home>)" },
	[K_HOST]	= { "host_name", "host names (<host>)" },
	[K_USER]	= { "user_name", "user names (<user>)" },
};

#define HEX "[0-9A-Fa-f]"
#define H4 HEX "{1,4}"
#define OCTET "(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
/* an address's first octet: not 0 (0.0.0.0, this network), 127 (loopback), 255 (masks) */
#define OCTET1 "(25[0-4]|2[0-4][0-9]|1[01][0-9]|12[0-689]|1[3-9][0-9]|[1-9][0-9]|[1-9])"
#define V4 "(" OCTET "\\.){3}" OCTET
/* a command line's field (ip=): an [IPv6] or up to the next colon */
#define FIELD "(\\[[^] \t\n]*\\]|[^]:[ \t\n]*)"

/*
 * The patterns (POSIX extended, line by line).  @pre: group 1 is a prefix
 * that stays; @post: the last group is a suffix that stays (a boundary);
 * @not_after: a word that, just before the match (blanks, ':' or '='
 * between), makes it something else (a version, not an address).
 */
static const struct rule {
	int kind;
	const char *pat;
	bool pre, post;
	const char *repl;
	const char *not_after;
} rules[] = {
	{ K_UUID, HEX "{8}-" HEX "{4}-" HEX "{4}-" HEX "{4}-" HEX "{12}", false, false, "<uuid>", NULL },
	/* lspci's Device Serial Number and VPD [SN]; nvidia-smi -q's Serial Number */
	{ K_SERIAL, "([Ss]erial [Nn]umber[ \t]*:?[ \t]*)[^ \t\n\"][^\n\"]*", true, false, "<serial>", NULL },
	{ K_SERIAL, "(\"serial\"[ \t]*:[ \t]*\")[^\"]+", true, false, "<serial>", NULL },
	/* nvidia-smi -q; N/A and "Not Supported" stay, any other value goes (0x or not) */
	{ K_PDI, "(GPU PDI[ \t]*:[ \t]*)[^N \t\n][^ \t\n]*", true, false, "<pdi>", NULL },
	{ K_GUID, "([Ff]abric GUID[ \t]*:[ \t]*)[^N \t\n][^ \t\n]*", true, false, "<guid>", NULL },
	{ K_HOST_ID, "(Host ID[ \t]*:[ \t]*)[^N \t\n][^ \t\n]*", true, false, "<host-id>", NULL },
	/* modinfo */
	{ K_KEY, "(sig_key:[ \t]*)[0-9A-Fa-f:]+", true, false, "<key>", NULL },
	{ K_SIGNER, "(signer:[ \t]*)[^ \t\n][^\n]*", true, false, "<signer>", NULL },
	/* aa:bb:cc:dd:ee:ff, aa-bb-..., and longer (BOOTIF=01-...), before a ':' or '-' too */
	{ K_MAC, "(^|[^0-9A-Fa-f])(" HEX "{2}[:-]){5,}" HEX "{2}([:-]?[^0-9A-Fa-f:-]|[:-]?$)", true, true,
	  "<mac>", NULL },
	/* aabb.ccdd.eeff (Cisco) */
	{ K_MAC, "(^|[^0-9A-Za-z.])" HEX "{4}\\." HEX "{4}\\." HEX "{4}(\\.?[^0-9A-Za-z.]|\\.?$)", true, true,
	  "<mac>", NULL },
	/*
	 * eight groups, or :: with at least one group beside it, or either
	 * ending in an IPv4 address; after a label such as gid: too, and
	 * before a sentence's '.' or a ':'
	 */
	{ K_IPV6, "(^|[^0-9A-Za-z:.]|[A-Za-z]*[G-Zg-z][A-Za-z]*:)("
		  H4 "(:" H4 "){7}|" H4 "(:" H4 "){0,6}::(" H4 "(:" H4 "){0,6})?|::" H4 "(:" H4 "){0,6}|"
		  "(" H4 ":){6}" V4 "|" H4 "(:" H4 "){0,5}::(" H4 ":){0,5}" V4 "|::(" H4 ":){0,5}" V4
		  ")([.:]?[^0-9A-Za-z:.]|[.:]?$)", true, true, "<ipv6>", NULL },
	/* four octets, not part of a longer dotted number, nor a version */
	{ K_IPV4, "(^|[^0-9A-Za-z.])" OCTET1 "(\\." OCTET "){3}(\\.?[^0-9A-Za-z.]|\\.?$)", true, true, "<ipv4>",
	  "version" },
	/* the host name of ip= (its fifth field), hostname= and systemd.hostname= */
	{ K_HOST, "(ip=(" FIELD ":){4})[^]:[ \t\n]+", true, false, "<host>", NULL },
	{ K_HOST, "((^|[ \t\"])(systemd\\.)?hostname=)[^ \t\n\"]+", true, false, "<host>", NULL },
	{ K_USERHOST, "[A-Za-z0-9._+-]+@[A-Za-z0-9.-]*", false, false, "<user>@<host>", NULL },
	{ K_HOME, "/home/[^/ \t\n\"':,;()<>]+", false, false, "/home/<user>", NULL },
};

#define NR_RULES (sizeof(rules) / sizeof(rules[0]))
#define MAX_GROUPS 64

static regex_t compiled[NR_RULES];
static int compiled_state;		/* 0: not yet, 1: done, -1: a pattern failed */

/* Every pattern, once per process. */
static int compile_rules(void)
{
	size_t i;

	if (compiled_state)
		return compiled_state;
	compiled_state = 1;
	for (i = 0; i < NR_RULES; i++)
		if (regcomp(&compiled[i], rules[i].pat, REG_EXTENDED | REG_NEWLINE) ||
		    compiled[i].re_nsub >= MAX_GROUPS)
			compiled_state = -1;
	return compiled_state;
}

size_t p2pctl_redact_kinds(void)
{
	return K_KINDS;
}

const char *p2pctl_redact_kind_name(size_t kind)
{
	return kind < K_KINDS ? kinds[kind].name : NULL;
}

const char *p2pctl_redact_header(void)
{
	static char buf[768];
	size_t off, i;

	if (*buf)
		return buf;
	off = (size_t)snprintf(buf, sizeof(buf), "replaced: ");
	for (i = 0; i < K_KINDS && off < sizeof(buf); i++)
		off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%s", kinds[i].what,
					i + 1 < K_KINDS ? ", " : "; --full keeps them");
	return buf;
}

int p2pctl_redact_init(struct p2pctl_redact *red, bool full)
{
	memset(red, 0, sizeof(*red));
	red->full = full;
	if (compile_rules() < 0)
		return -1;
	red->counts = calloc(K_KINDS, sizeof(*red->counts));
	return red->counts ? 0 : -1;
}

void p2pctl_redact_free(struct p2pctl_redact *red)
{
	size_t i;

	for (i = 0; i < red->nr_hosts; i++)
		free(red->hosts[i]);
	for (i = 0; i < red->nr_users; i++)
		free(red->users[i]);
	for (i = 0; i < red->nr_homes; i++)
		free(red->homes[i]);
	for (i = 0; i < red->nr_ids; i++)
		free(red->ids[i]);
	free(red->counts);
	memset(red, 0, sizeof(*red));
}

/* @name (to its first blank, @len bytes) into @list unless there or too common to matter. */
static void add_name(char **list, size_t *n, const char *name, size_t len)
{
	static const char *const common[] = {
		"root", "localhost", "(none)", "nobody", "user", "nvidia", "ubuntu", "debian", "admin",
		"cuda",
	};
	size_t i;

	if (len < 3 || *n == RED_MAX_NAMES || name[0] == '<')
		return;
	for (i = 0; i < sizeof(common) / sizeof(common[0]); i++)
		if (strlen(common[i]) == len && !strncmp(name, common[i], len))
			return;
	for (i = 0; i < *n; i++)
		if (strlen(list[i]) == len && !strncmp(list[i], name, len))
			return;
	/* longest first: a whole FQDN (or home) before the names inside it */
	for (i = *n; i && strlen(list[i - 1]) < len; i--)
		;
	memmove(list + i + 1, list + i, (*n - i) * sizeof(*list));
	list[i] = strndup(name, len);
	if (list[i])
		(*n)++;
	else
		memmove(list + i, list + i + 1, (*n - i) * sizeof(*list));
}

void p2pctl_redact_add_domain(struct p2pctl_redact *red, const char *name)
{
	add_name(red->hosts, &red->nr_hosts, name, strcspn(name, " \t\n"));
}

/* A host name; of an FQDN also its first label and its domain (of two labels or more). */
void p2pctl_redact_add_host(struct p2pctl_redact *red, const char *name)
{
	size_t len = strcspn(name, " \t\n"), l1 = strcspn(name, ". \t\n");

	add_name(red->hosts, &red->nr_hosts, name, len);
	if (l1 < len) {
		add_name(red->hosts, &red->nr_hosts, name, l1);
		if (memchr(name + l1 + 1, '.', len - l1 - 1))
			add_name(red->hosts, &red->nr_hosts, name + l1 + 1, len - l1 - 1);
	}
}

/* Of hosts(5) text, every name on a line that names a host already known (its FQDN, aliases). */
void p2pctl_redact_learn_hosts(struct p2pctl_redact *red, const char *hosts)
{
	const char *p = hosts;

	while (p && *p) {
		const char *e = strchrnul(p, '\n'), *c = memchr(p, '#', (size_t)(e - p)), *w;
		const char *end = c ? c : e;
		bool known = false;
		size_t i, n;

		for (int pass = 0; pass < 2; pass++) {
			w = p + strspn(p, " \t");
			w += strcspn(w, " \t\n");	/* after the address */
			if (w > end)
				w = end;
			while (w < end) {
				w += strspn(w, " \t");
				n = strcspn(w, " \t\n#");
				if (w + n > end)
					n = (size_t)(end - w);
				if (!n)
					break;
				for (i = 0; !pass && i < red->nr_hosts; i++)
					known |= strlen(red->hosts[i]) == n && !strncmp(red->hosts[i], w, n);
				if (pass && strncmp(w, "localhost", 9) && strncmp(w, "ip6-", 4)) {
					char name[256];

					snprintf(name, sizeof(name), "%.*s", (int)n, w);
					p2pctl_redact_add_host(red, name);
				}
				w += n;
			}
			if (!known)
				break;
		}
		p = *e ? e + 1 : e;
	}
}

void p2pctl_redact_add_user(struct p2pctl_redact *red, const char *name)
{
	add_name(red->users, &red->nr_users, name, strcspn(name, " \t\n"));
}

void p2pctl_redact_add_home(struct p2pctl_redact *red, const char *dir)
{
	/* system directories, and those the /home pattern or nothing covers */
	static const char *const not[] = {
		"/home/", "/root/", "/nonexistent/", "/var/", "/usr/", "/proc/", "/sys/", "/dev/",
		"/run/", "/etc/", "/tmp/", "/bin/", "/sbin/", "/lib/", "/opt/", "/snap/", "/nix/",
	};
	char d[512];
	size_t len, i;

	if (!dir || dir[0] != '/' || strlen(dir) >= sizeof(d) - 1)
		return;
	snprintf(d, sizeof(d), "%s/", dir);
	while (strlen(d) > 1 && d[strlen(d) - 2] == '/')
		d[strlen(d) - 1] = '\0';
	for (i = 0; i < sizeof(not) / sizeof(not[0]); i++)
		if (!strncmp(d, not[i], strlen(not[i])))
			return;
	len = strlen(d) - 1;
	if (!memchr(d + 1, '/', len - 1))	/* one component (/opt, /srv): too common */
		return;
	add_name(red->homes, &red->nr_homes, d, len);
}

void p2pctl_redact_learn_passwd(struct p2pctl_redact *red, const char *passwd)
{
	const char *p = passwd;

	while (p && *p) {
		const char *e = strchrnul(p, '\n'), *f[7];
		size_t n = 1;
		char line[1024], home[512];

		f[0] = p;
		for (const char *q = p; q < e && n < 7; q++)
			if (*q == ':')
				f[n++] = q + 1;
		if (n == 7 && (size_t)(e - p) < sizeof(line)) {
			long uid = strtol(f[2], NULL, 10);

			if (uid >= 1000 && uid != 65534 && uid != 4294967294L) {
				snprintf(line, sizeof(line), "%.*s", (int)(f[1] - f[0] - 1), f[0]);
				p2pctl_redact_add_user(red, line);
				snprintf(home, sizeof(home), "%.*s", (int)(f[6] - f[5] - 1), f[5]);
				p2pctl_redact_add_home(red, home);
			}
		}
		p = *e ? e + 1 : e;
	}
}

/*
 * The home of a Python environment's file, by where it sits: DIR before
 * venvs/, .venv/, .local/, ... or DIR/ENV/lib/pythonX.Y/site-packages/
 * (for a user no passwd names, LDAP's say); system and one-component
 * directories are no home (p2pctl_redact_add_home).
 */
void p2pctl_redact_learn_env_path(struct p2pctl_redact *red, const char *path)
{
	static const char *const envs[] = {
		"/venv/", "/.venv/", "/venvs/", "/.virtualenvs/", "/envs/", "/.local/", "/.conda/",
		"/miniconda3/", "/anaconda3/", "/.pyenv/",
	};
	const char *hit = NULL, *p;
	char d[512];
	size_t i;

	for (i = 0; i < sizeof(envs) / sizeof(envs[0]); i++)
		if ((p = strstr(path, envs[i])) && (!hit || p < hit))
			hit = p;
	if (!hit && (p = strstr(path, "/site-packages/"))) {
		/* back over pythonX.Y, lib and ENV */
		for (i = 0, hit = p; i < 3 && hit > path; i++)
			for (hit--; hit > path && *hit != '/'; hit--)
				;
	}
	if (!hit || hit == path || (size_t)(hit - path) >= sizeof(d))
		return;
	snprintf(d, sizeof(d), "%.*s", (int)(hit - path), path);
	p2pctl_redact_add_home(red, d);
}

/* A capture's number for the home @dir (@len bytes): its N of /home/userN. */
static size_t home_id(struct p2pctl_redact *red, const char *dir, size_t len)
{
	size_t i;

	for (i = 0; i < red->nr_ids; i++)
		if (strlen(red->ids[i]) == len && !strncmp(red->ids[i], dir, len))
			return i + 1;
	if (red->nr_ids == RED_MAX_IDS || !(red->ids[red->nr_ids] = strndup(dir, len)))
		return 0;
	return ++red->nr_ids;
}

/* @b .. @e of @s is right after @word (blanks, ':' or '=' between): not to be replaced. */
static bool after_word(const char *s, const char *b, const char *word)
{
	size_t wl = strlen(word);

	while (b > s && strchr(" \t:=", b[-1]))
		b--;
	return (size_t)(b - s) >= wl && !strncasecmp(b - wl, word, wl) &&
	       (b - wl == s || !isalnum((unsigned char)b[-wl - 1]));
}

/* The open_memstream buffer *@buf (set by fclose), or NULL (@s freed either way). */
static char *finish(FILE *f, char **buf, char *s)
{
	free(s);
	if (fclose(f)) {
		free(*buf);
		return NULL;
	}
	return *buf;
}

/*
 * The matches of rule @i in @line (@le its end, a NUL) replaced, written to
 * @f.  Each regexec is given this one line (REG_NEWLINE: no pattern
 * matches a newline, so no match spans two), NUL-terminated: the
 * sanitizers' regexec (the unit tests' build) takes the string's strlen on
 * every call, REG_STARTEND or not, which over the whole text would be
 * quadratic.
 */
static void re_line(struct p2pctl_redact *red, FILE *f, const char *line, const char *le, size_t i,
		    bool numbered)
{
	const struct rule *r = &rules[i];
	const regex_t *re = &compiled[i];
	size_t last = re->re_nsub;
	const char *p = line;
	regmatch_t m[MAX_GROUPS];
	char home[64];

	while (p < le) {
		const char *b, *e, *repl = r->repl;

		m[0].rm_so = 0;
		m[0].rm_eo = le - p;
		red->scanned += (size_t)(le - p);	/* a strlen's worth: what regexec may read */
		if (regexec(re, p, last + 1, m, REG_STARTEND | (p > line ? REG_NOTBOL : 0)))
			break;
		b = p + m[0].rm_so + (r->pre && m[1].rm_so >= 0 ? m[1].rm_eo - m[1].rm_so : 0);
		e = p + m[0].rm_eo - (r->post && m[last].rm_so >= 0 ? m[last].rm_eo - m[last].rm_so : 0);
		if (e <= b || (r->not_after && after_word(line, b, r->not_after))) {
			/* nothing between prefix and suffix, or not this kind: on past it */
			e = e > p + m[0].rm_so ? e : p + m[0].rm_so + 1;
			e = e < le ? e : le;
			fwrite(p, 1, (size_t)(e - p), f);
			p = e;
			continue;
		}
		if (numbered && r->kind == K_HOME) {
			snprintf(home, sizeof(home), "/home/user%zu", home_id(red, b, (size_t)(e - b)));
			repl = home;
		}
		fwrite(p, 1, (size_t)(b - p), f);
		fputs(repl, f);
		p = e;			/* the suffix may be the next one's prefix */
		red->counts[r->kind]++;
	}
	fwrite(p, 1, (size_t)(le - p), f);
}

/*
 * @s (freed) with every match of rule @i replaced (its prefix and suffix
 * groups kept), a new string: one pass, line by line (each line's newline
 * made its end while it is matched).
 */
static char *re_pass(struct p2pctl_redact *red, char *s, size_t i, bool numbered)
{
	char *buf = NULL, *line = s;
	size_t bl;
	FILE *f = open_memstream(&buf, &bl);

	if (!f) {
		free(s);
		return NULL;
	}
	for (;;) {
		char *le = strchrnul(line, '\n'), nl = *le;

		*le = '\0';
		re_line(red, f, line, le, i, numbered);
		if (!nl)
			break;
		fputc('\n', f);
		line = le + 1;
	}
	return finish(f, &buf, s);
}

static bool word_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/*
 * @s (freed) with the whole word @w (not inside a longer name) replaced by
 * @repl (NULL: the capture's /home/userN of @w), a new string: one pass.
 */
static char *word_pass(struct p2pctl_redact *red, char *s, const char *w, const char *repl, int kind)
{
	size_t wl = strlen(w), bl;
	const char *p = s, *q;
	char *buf = NULL, home[64];
	FILE *f = open_memstream(&buf, &bl);

	if (!f) {
		free(s);
		return NULL;
	}
	if (!repl) {
		snprintf(home, sizeof(home), "/home/user%zu", home_id(red, w, wl));
		repl = home;
	}
	while ((q = strstr(p, w))) {
		if ((q > s && word_char(q[-1])) || word_char(q[wl])) {
			fwrite(p, 1, (size_t)(q - p) + 1, f);
			p = q + 1;
			continue;
		}
		fwrite(p, 1, (size_t)(q - p), f);
		fputs(repl, f);
		p = q + wl;
		red->counts[kind]++;
	}
	fputs(p, f);
	return finish(f, &buf, s);
}

/* @in redacted: homes as the report names them, or (@numbered) as a capture does. */
static char *redact(struct p2pctl_redact *red, const char *in, bool numbered)
{
	char *s = strdup(in ? in : "");
	size_t i;

	if (!s || red->full)
		return s;
	for (i = 0; i < NR_RULES && s; i++)
		s = re_pass(red, s, i, numbered);
	for (i = 0; s && i < red->nr_homes; i++)
		s = word_pass(red, s, red->homes[i], numbered ? NULL : "<home>", K_HOME);
	for (i = 0; s && i < red->nr_hosts; i++)
		s = word_pass(red, s, red->hosts[i], "<host>", K_HOST);
	for (i = 0; s && i < red->nr_users; i++)
		s = word_pass(red, s, red->users[i], "<user>", K_USER);
	return s;
}

char *p2pctl_redact_text(struct p2pctl_redact *red, const char *in)
{
	return redact(red, in, false);
}

char *p2pctl_redact_capture(struct p2pctl_redact *red, const char *in, size_t len, size_t *out_len)
{
	char *buf = NULL;
	size_t bl, off = 0;
	FILE *f = open_memstream(&buf, &bl);

	if (!f)
		return NULL;
	/* NUL-separated text (an environ, a cmdline): each piece redacted */
	while (off < len || !off) {
		size_t n = strnlen(in + off, len - off);
		char *piece = strndup(in + off, n), *r = piece ? redact(red, piece, true) : NULL;

		free(piece);
		if (!r) {
			fclose(f);
			free(buf);
			return NULL;
		}
		fputs(r, f);
		free(r);
		off += n;
		if (off < len)
			fputc('\0', f);
		off++;
	}
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	*out_len = bl;
	return buf;
}

void p2pctl_redact_path(struct p2pctl_redact *red, const char *in, char *out, size_t size)
{
	size_t i, hl;

	if (!red->full) {
		for (i = 0; i < red->nr_homes; i++) {
			hl = strlen(red->homes[i]);
			if (!strncmp(in, red->homes[i], hl) && (in[hl] == '/' || !in[hl])) {
				snprintf(out, size, "/home/user%zu%s", home_id(red, in, hl), in + hl);
				return;
			}
		}
		if (!strncmp(in, "/home/", 6) && in[6] && in[6] != '/') {
			hl = 6 + strcspn(in + 6, "/");
			snprintf(out, size, "/home/user%zu%s", home_id(red, in, hl), in + hl);
			return;
		}
	}
	snprintf(out, size, "%s", in);
}

void p2pctl_redact_pci_config(struct p2pctl_redact *red, uint8_t *cfg, size_t len)
{
	size_t off = 0x100;
	int n = 0;

	if (red->full)
		return;
	/* the extended capabilities' list (PCIe r6.0 7.6.3); 0x0003: Device Serial Number */
	while (off >= 0x100 && off + 4 <= len && n++ < 1024) {
		uint32_t h = cfg[off] | cfg[off + 1] << 8 | cfg[off + 2] << 16 | (uint32_t)cfg[off + 3] << 24;

		if (!h || h == 0xffffffff)
			break;
		if ((h & 0xffff) == 0x0003 && off + 12 <= len) {
			memset(cfg + off + 4, 0, 8);
			red->counts[K_SERIAL]++;
		}
		off = (h >> 20) & 0xffc;
	}
}
