// SPDX-License-Identifier: GPL-2.0
/*
 * What `p2pctl report` (and its --capture) replaces unless --full: one
 * table of kinds, each with its pattern and placeholder, applied in order
 * (a UUID or a signing key id first, so that the MAC address pattern does
 * not eat part of one; home directories before user names, so that
 * /data/users/NAME goes whole).  The docs (docs/p2pctl.md, p2pctl.8) list
 * the same kinds; the report's header is made from this table.
 */
#include <ctype.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/*
 * The patterns (POSIX extended, line by line).  @pre: group 1 is a prefix
 * that stays; @post: the last group is a suffix that stays (a boundary).
 */
static const struct rule {
	int kind;
	const char *pat;
	bool pre, post;
	const char *repl;
} rules[] = {
	{ K_UUID, HEX "{8}-" HEX "{4}-" HEX "{4}-" HEX "{4}-" HEX "{12}", false, false, "<uuid>" },
	/* lspci's Device Serial Number and VPD [SN]; nvidia-smi -q's Serial Number */
	{ K_SERIAL, "([Ss]erial [Nn]umber[ \t]*:?[ \t]*)[^ \t\n\"][^\n\"]*", true, false, "<serial>" },
	{ K_SERIAL, "(\"serial\"[ \t]*:[ \t]*\")[^\"]+", true, false, "<serial>" },
	/* nvidia-smi -q; N/A and "Not Supported" stay */
	{ K_PDI, "(GPU PDI[ \t]*:[ \t]*)0x" HEX "+", true, false, "<pdi>" },
	{ K_GUID, "([Ff]abric GUID[ \t]*:[ \t]*)[^N \t\n][^ \t\n]*", true, false, "<guid>" },
	{ K_HOST_ID, "(Host ID[ \t]*:[ \t]*)[^N \t\n][^ \t\n]*", true, false, "<host-id>" },
	/* modinfo */
	{ K_KEY, "(sig_key:[ \t]*)[0-9A-Fa-f:]+", true, false, "<key>" },
	{ K_SIGNER, "(signer:[ \t]*)[^ \t\n][^\n]*", true, false, "<signer>" },
	/* aa:bb:cc:dd:ee:ff, aa-bb-..., and longer (BOOTIF=01-...) */
	{ K_MAC, "(^|[^0-9A-Fa-f])(" HEX "{2}[:-]){5,}" HEX "{2}([^0-9A-Fa-f:-]|$)", true, true, "<mac>" },
	/* eight groups, or :: with at least one group beside it */
	{ K_IPV6, "(^|[^0-9A-Za-z:.])(" H4 "(:" H4 "){7}|" H4 "(:" H4 "){0,6}::(" H4 "(:" H4 "){0,6})?|::"
		  H4 "(:" H4 "){0,6})([^0-9A-Za-z:.]|$)", true, true, "<ipv6>" },
	/* four octets, not part of a longer dotted number (a version) */
	{ K_IPV4, "(^|[^0-9A-Za-z.])(" OCTET "\\.){3}" OCTET "(\\.?[^0-9A-Za-z.]|\\.?$)", true, true, "<ipv4>" },
	{ K_USERHOST, "[A-Za-z0-9._+-]+@[A-Za-z0-9.-]*", false, false, "<user>@<host>" },
	{ K_HOME, "/home/[^/ \t\n\"':,;()<>]+", false, false, "/home/<user>" },
};

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
	list[*n] = strndup(name, len);
	if (list[*n])
		(*n)++;
}

void p2pctl_redact_add_host(struct p2pctl_redact *red, const char *name)
{
	add_name(red->hosts, &red->nr_hosts, name, strcspn(name, " \t\n"));
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
		"/run/", "/etc/", "/tmp/", "/bin/", "/sbin/", "/lib/",
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

/* Replace every match of @r in *@s (keeping its prefix and suffix groups); count them. */
static void re_replace(struct p2pctl_redact *red, char **s, const struct rule *r)
{
	regmatch_t m[16];
	size_t off = 0, rl = strlen(r->repl);
	regex_t re;

	if (regcomp(&re, r->pat, REG_EXTENDED | REG_NEWLINE))
		return;
	while (*s && off <= strlen(*s) && !regexec(&re, *s + off, re.re_nsub + 1 < 16 ? re.re_nsub + 1 : 16,
						    m, off ? REG_NOTBOL : 0)) {
		size_t start = off + (size_t)m[0].rm_so, end = off + (size_t)m[0].rm_eo, nl;
		size_t k = r->pre && m[1].rm_so >= 0 ? (size_t)(m[1].rm_eo - m[1].rm_so) : 0;
		size_t last = re.re_nsub < 16 ? re.re_nsub : 15;
		size_t t = r->post && m[last].rm_so >= 0 ? (size_t)(m[last].rm_eo - m[last].rm_so) : 0;
		char *out;

		if (end - start <= k + t) {	/* nothing between prefix and suffix */
			off = end + 1;
			continue;
		}
		nl = strlen(*s) - (end - start) + k + rl + t + 1;
		out = malloc(nl);
		if (!out)
			break;
		snprintf(out, nl, "%.*s%s%s", (int)(start + k), *s, r->repl, *s + end - t);
		free(*s);
		*s = out;
		off = start + k + rl;		/* the suffix may be the next one's prefix */
		red->counts[r->kind]++;
	}
	regfree(&re);
}

static bool word_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* Replace the whole word @w (not inside a longer name) by @repl. */
static void word_replace(struct p2pctl_redact *red, char **s, const char *w, const char *repl, int kind)
{
	size_t wl = strlen(w), rl = strlen(repl), off = 0;
	char *p;

	while ((p = strstr(*s + off, w))) {
		size_t at = (size_t)(p - *s), nl;
		char *out;

		if ((at && word_char((*s)[at - 1])) || word_char(p[wl])) {
			off = at + 1;
			continue;
		}
		nl = strlen(*s) - wl + rl + 1;
		out = malloc(nl);
		if (!out)
			return;
		snprintf(out, nl, "%.*s%s%s", (int)at, *s, repl, p + wl);
		free(*s);
		*s = out;
		off = at + rl;
		red->counts[kind]++;
	}
}

char *p2pctl_redact_text(struct p2pctl_redact *red, const char *in)
{
	char *s = strdup(in ? in : "");
	size_t i;

	if (!s || red->full)
		return s;
	for (i = 0; i < sizeof(rules) / sizeof(rules[0]) && s; i++)
		re_replace(red, &s, &rules[i]);
	for (i = 0; s && i < red->nr_homes; i++)
		word_replace(red, &s, red->homes[i], "<home>", K_HOME);
	for (i = 0; s && i < red->nr_hosts; i++)
		word_replace(red, &s, red->hosts[i], "<host>", K_HOST);
	for (i = 0; s && i < red->nr_users; i++)
		word_replace(red, &s, red->users[i], "<user>", K_USER);
	return s;
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
