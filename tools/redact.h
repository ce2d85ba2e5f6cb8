/* SPDX-License-Identifier: GPL-2.0 */
/* What p2pctl report and report --capture replace unless --full (redact.c). */
#ifndef P2PCTL_REDACT_H
#define P2PCTL_REDACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RED_MAX_NAMES 32
#define RED_MAX_IDS 256

struct p2pctl_redact {
	bool full;				/* --full: nothing replaced */
	char *hosts[RED_MAX_NAMES];		/* host names */
	char *users[RED_MAX_NAMES];		/* user names */
	char *homes[RED_MAX_NAMES];		/* home directories outside /home */
	size_t nr_hosts, nr_users, nr_homes;
	char *ids[RED_MAX_IDS];			/* a capture's homes: ids[N - 1] is /home/userN */
	size_t nr_ids;
	unsigned int *counts;			/* one per kind (p2pctl_redact_kinds()) */
	size_t scanned;				/* bytes of string regexec was given: the work */
};

/* The number of kinds; their names (the JSON twin's "redacted" keys) by index. */
size_t p2pctl_redact_kinds(void);
const char *p2pctl_redact_kind_name(size_t kind);
/* "replaced: ...; --full keeps them": every kind and what it becomes. */
const char *p2pctl_redact_header(void);

int p2pctl_redact_init(struct p2pctl_redact *red, bool full);
void p2pctl_redact_free(struct p2pctl_redact *red);
/* Names to replace: a host name (an FQDN: its labels too), a user name (not root, nobody, ...). */
void p2pctl_redact_add_host(struct p2pctl_redact *red, const char *name);
void p2pctl_redact_add_user(struct p2pctl_redact *red, const char *name);
/* A domain name (domainname(2)): replaced whole, its labels not alone. */
void p2pctl_redact_add_domain(struct p2pctl_redact *red, const char *name);
/* A home directory: /home/NAME is a pattern already, /root stays, others are learnt. */
void p2pctl_redact_add_home(struct p2pctl_redact *red, const char *dir);
/* Every person's account in /etc/passwd text (uid 1000 up): the name and the home. */
void p2pctl_redact_learn_passwd(struct p2pctl_redact *red, const char *passwd);
/* Every name on a hosts(5) line that names a known host (its FQDN). */
void p2pctl_redact_learn_hosts(struct p2pctl_redact *red, const char *hosts);
/* The home of a Python environment's file, by where it sits (DIR/venvs/..., ...). */
void p2pctl_redact_learn_env_path(struct p2pctl_redact *red, const char *path);

/* @in without identifiers (a new string; a copy when --full), or NULL. */
char *p2pctl_redact_text(struct p2pctl_redact *red, const char *in);
/*
 * The same for a capture's file (@len bytes, NUL-separated pieces each
 * redacted; *@out_len set), every home (/home/NAME, a learnt one) named
 * /home/userN as p2pctl_redact_path names it; NULL on failure.
 */
char *p2pctl_redact_capture(struct p2pctl_redact *red, const char *in, size_t len, size_t *out_len);
/* A capture's path name: a home at its start as /home/userN (unless --full). */
void p2pctl_redact_path(struct p2pctl_redact *red, const char *in, char *out, size_t size);
/* PCI config space (@len bytes): the Device Serial Number capability's serial zeroed. */
void p2pctl_redact_pci_config(struct p2pctl_redact *red, uint8_t *cfg, size_t len);

#endif
