// SPDX-License-Identifier: GPL-2.0
/*
 * `p2pctl doctor`: the running kernel (release, config, kprobes, signing).
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "doctor.h"

static void kernel_release(struct dctx *c)
{
	char buf[512];
	struct p2ps_doctor_report *r = c->r;

	if (p2ps_root_line(&c->root, "/proc/sys/kernel/osrelease", buf, sizeof(buf)) && *buf) {
		p2ps_strlcpy(r->kernel_release, buf, sizeof(r->kernel_release));
		return;
	}
	if (p2ps_root_line(&c->root, "/proc/version", buf, sizeof(buf)) &&
	    !strncmp(buf, "Linux version ", 14)) {
		char *s = buf + 14, *e = s;

		while (*e && !isspace((unsigned char)*e))
			e++;
		*e = '\0';
		p2ps_strlcpy(r->kernel_release, s, sizeof(r->kernel_release));
		return;
	}
	if (c->root.live) {
		struct utsname u;

		if (!uname(&u))
			p2ps_strlcpy(r->kernel_release, u.release, sizeof(r->kernel_release));
	}
}

static void load_config(struct dctx *c)
{
	char path[256];

	c->config = p2ps_root_read(&c->root, "/proc/config.gz", NULL, true);
	if (c->config) {
		p2ps_strlcpy(c->config_src, "/proc/config.gz", sizeof(c->config_src));
		return;
	}
	if (!*c->r->kernel_release)
		return;
	snprintf(path, sizeof(path), "/boot/config-%s", c->r->kernel_release);
	c->config = p2ps_root_read(&c->root, path, NULL, true);
	if (c->config)
		p2ps_strlcpy(c->config_src, path, sizeof(c->config_src));
}

/* 1: =y or =m; 0: not set (or absent from a config that exists); -1: no config. */
static int cfg(const struct dctx *c, const char *name)
{
	const char *p = c->config;
	size_t n = strlen(name);

	if (!p)
		return -1;
	while ((p = strstr(p, name))) {
		bool bol = p == c->config || p[-1] == '\n';

		if (bol && p[n] == '=')
			return p[n + 1] == 'y' || p[n + 1] == 'm';
		p += n;
	}
	return 0;
}

static bool kallsyms_has(struct dctx *c, const char *sym)
{
	char *ks = p2ps_root_read_max(&c->root, "/proc/kallsyms", NULL, false, 64 << 20);
	char pat[128];
	bool found = false;

	if (!ks)
		return false;
	snprintf(pat, sizeof(pat), " %s\n", sym);
	found = strstr(ks, pat) != NULL;
	free(ks);
	return found;
}

/*
 * p2p-shim installed for this kernel and signed (DKMS signs with its MOK,
 * `make install` with the kernel's key where it has one): its path in
 * @path.  A signed module ends in "~Module signature appended~\n" (after
 * decompression, for .ko.zst/.xz/.gz).
 */
static bool signed_module(struct dctx *c, char *path, size_t len)
{
	static const char *const dirs[] = { "updates/dkms", "updates", "extra", "kernel/extra" };
	static const char *const exts[] = { "", ".zst", ".xz", ".gz" };
	static const char magic[] = "~Module signature appended~\n";
	size_t d, e;

	for (d = 0; d < sizeof(dirs) / sizeof(dirs[0]); d++) {
		for (e = 0; e < sizeof(exts) / sizeof(exts[0]); e++) {
			unsigned char *raw, tail[sizeof(magic) - 1];
			size_t rawlen = 0, taillen = 0;
			bool sig;

			snprintf(path, len, "/lib/modules/%s/%s/p2p-shim.ko%s", c->r->kernel_release,
				 dirs[d], exts[e]);
			raw = (unsigned char *)p2ps_root_read_max(&c->root, path, &rawlen, false, 32 << 20);
			if (!raw)
				continue;
			/* only the last bytes matter: never the whole image in memory */
			sig = !p2ps_decompress_tail(raw, rawlen, tail, sizeof(tail), &taillen) &&
			      taillen == sizeof(tail) && !memcmp(tail, magic, sizeof(tail));
			free(raw);
			if (sig)
				return true;
		}
	}
	return false;
}

/* An unsigned module under Secure Boot: the literal steps (README, Install, Secure Boot). */
/*
 * An unsigned module where the kernel wants signatures (Secure Boot,
 * forced lockdown, sig_enforce): the literal steps (README, Install,
 * Secure Boot).
 */
#define MOK_STEPS "install it through DKMS (the p2p-shim-dkms package), which signs it, " \
	"then enrol DKMS's key: mokutil --import /var/lib/dkms/mok.pub (a one-time password), " \
	"reboot, in MokManager Enroll MOK, Continue, Yes, the password"
#define MOK_REMEDY MOK_STEPS "\nor disable Secure Boot in the firmware setup"

#define KPROBES_ENABLED "/sys/kernel/debug/kprobes/enabled"

/*
 * The value of kernel parameter @name on the command line (the last one
 * counts, as the kernel parses it): "" for a bare word, NULL if absent.
 */
static const char *cmdline_param(const char *cmdline, const char *name, char *out, size_t len)
{
	size_t n = strlen(name);
	const char *p = cmdline, *found = NULL;

	if (!p)
		return NULL;
	while (*p) {
		const char *e;

		p += strspn(p, " \t\n");
		e = p + strcspn(p, " \t\n");
		if ((size_t)(e - p) >= n && !strncmp(p, name, n) && (p + n == e || p[n] == '=')) {
			snprintf(out, len, "%.*s", p + n == e ? 0 : (int)(e - p - n - 1), p + n + 1);
			found = out;
		}
		p = e;
	}
	return found;
}

/*
 * Where kernel parameter @token is taken off, literally: Debian's and
 * Ubuntu's /etc/default/grub (it may sit in the _DEFAULT line as well),
 * update-grub there, grub2-mkconfig elsewhere.
 */
static void grub_remove(char *buf, size_t len, const char *token)
{
	snprintf(buf, len, "in /etc/default/grub delete %s from GRUB_CMDLINE_LINUX=\"...\" "
		 "(and GRUB_CMDLINE_LINUX_DEFAULT=\"...\"), then update-grub "
		 "(grub2-mkconfig -o /boot/grub2/grub.cfg elsewhere) and reboot", token);
}

#define SIGNED_REMEDY "make sure its key is enrolled (mokutil --list-enrolled; DKMS: " \
	"mokutil --import /var/lib/dkms/mok.pub, then reboot) or trusted by the kernel"

static void check_kernel(struct dctx *c)
{
	const char *src = c->config_src;
	bool shim = p2ps_dr_shim_loaded(c);
	char buf[256], mod[512], fix[512], tok[40];
	char *cmdline = p2ps_root_read(&c->root, "/proc/cmdline", NULL, false);
	size_t off;
	int k;
	bool sig;

	/* kprobes */
	k = cfg(c, "CONFIG_KPROBES");
	if (k != 0 && p2ps_root_line(&c->root, KPROBES_ENABLED, buf, sizeof(buf)) && !strcmp(buf, "0"))
		/* registered but never armed: p2p-shim would load and hook nothing */
		p2ps_dr_add(c, "kprobes", NULL, P2PS_V_FAIL, KPROBES_ENABLED,
		    "echo 1 > " KPROBES_ENABLED " (as root; it stays until reboot)",
		    "kprobes are compiled in but disabled: every probe registers and none fires");
	else if (k == 1)
		p2ps_dr_add(c, "kprobes", NULL, P2PS_V_OK, src, NULL, "CONFIG_KPROBES=y");
	else if (k == 0)
		p2ps_dr_add(c, "kprobes", NULL, P2PS_V_FAIL, src,
		    "use a kernel built with CONFIG_KPROBES=y (stock Debian, Ubuntu and Fedora kernels have it)",
		    "kprobes missing: kernel %s built without CONFIG_KPROBES", c->r->kernel_release);
	else if (kallsyms_has(c, "register_kprobe"))
		p2ps_dr_add(c, "kprobes", NULL, P2PS_V_OK, "/proc/kallsyms", NULL,
		    "register_kprobe present (no kernel config found)");
	else if (p2ps_root_exists(&c->root, "/proc/kallsyms"))
		p2ps_dr_add(c, "kprobes", NULL, P2PS_V_FAIL, "/proc/kallsyms",
		    "use a kernel built with CONFIG_KPROBES=y",
		    "kprobes missing: no register_kprobe in /proc/kallsyms");
	else
		p2ps_dr_add(c, "kprobes", NULL, P2PS_V_WARN, "",
		    "make /proc/config.gz or /boot/config-$(uname -r) available",
		    "unknown: no kernel config and no /proc/kallsyms");

	/*
	 * What would refuse an unsigned module does not matter once p2p-shim
	 * is loaded: the kernel took it (signed by DKMS with an enrolled key,
	 * or loaded before the gate closed).  One line each, ok.
	 */
	if (shim) {
		p2ps_dr_add(c, "lockdown", NULL, P2PS_V_OK, "/sys/module/p2p_shim", NULL,
		    "p2p-shim is loaded: lockdown did not refuse it");
		p2ps_dr_add(c, "secure-boot", NULL, P2PS_V_OK, "/sys/module/p2p_shim", NULL,
		    "p2p-shim is loaded: Secure Boot did not refuse it");
		p2ps_dr_add(c, "sig-enforce", NULL, P2PS_V_OK, "/sys/module/p2p_shim", NULL,
		    "p2p-shim is loaded: the kernel accepted its signature (or needs none)");
		goto modules_disabled;
	}
	/*
	 * Installed and signed, not loaded yet: refused only if its key is not
	 * enrolled, which doctor cannot see.  A warning, not a blocker.
	 */
	sig = signed_module(c, mod, sizeof(mod));
	/* lockdown */
	if (p2ps_root_line(&c->root, "/sys/kernel/security/lockdown", buf, sizeof(buf))) {
		char *sel = strchr(buf, '['), *e = sel ? strchr(sel, ']') : NULL;

		if (sel && e) {
			*e = '\0';
			sel++;
		} else {
			sel = buf;
		}
		if (!strcmp(sel, "none"))
			p2ps_dr_add(c, "lockdown", NULL, P2PS_V_OK, "/sys/kernel/security/lockdown", NULL,
			    "lockdown: none");
		else if (sig)
			p2ps_dr_add(c, "lockdown", NULL, P2PS_V_WARN, mod, SIGNED_REMEDY,
			    "kernel lockdown '%s'; %s is signed: taken if its key is enrolled", sel, mod);
		else
			p2ps_dr_add(c, "lockdown", NULL, P2PS_V_FAIL, "/sys/kernel/security/lockdown",
			    MOK_REMEDY,
			    "kernel lockdown '%s' refuses unsigned modules", sel);
	} else if (cmdline_param(cmdline, "lockdown", buf, sizeof(buf)) &&
		   (!strcmp(buf, "integrity") || !strcmp(buf, "confidentiality"))) {
		/* securityfs not mounted (or not captured): the command line says it */
		if (sig)
			p2ps_dr_add(c, "lockdown", NULL, P2PS_V_WARN, mod, SIGNED_REMEDY,
			    "lockdown=%s on the kernel command line; %s is signed: taken if its key is enrolled",
			    buf, mod);
		else {
			snprintf(tok, sizeof(tok), "lockdown=%.20s", buf);
			grub_remove(fix, sizeof(fix), tok);
			off = strlen(fix);
			p2ps_catf(fix, sizeof(fix), &off, "\n", "or " MOK_STEPS);
			p2ps_dr_add(c, "lockdown", NULL, P2PS_V_FAIL, "/proc/cmdline", fix,
			    "lockdown=%s on the kernel command line refuses unsigned modules", buf);
		}
	} else if ((cfg(c, "CONFIG_LOCK_DOWN_KERNEL_FORCE_CONFIDENTIALITY") == 1 ||
		    cfg(c, "CONFIG_LOCK_DOWN_KERNEL_FORCE_INTEGRITY") == 1) && sig) {
		p2ps_dr_add(c, "lockdown", NULL, P2PS_V_WARN, mod, SIGNED_REMEDY,
		    "kernel config forces lockdown; %s is signed: taken if its key is enrolled", mod);
	} else if (cfg(c, "CONFIG_LOCK_DOWN_KERNEL_FORCE_CONFIDENTIALITY") == 1 ||
		   cfg(c, "CONFIG_LOCK_DOWN_KERNEL_FORCE_INTEGRITY") == 1) {
		p2ps_dr_add(c, "lockdown", NULL, P2PS_V_FAIL, src,
		    MOK_STEPS "\nor use a kernel without forced lockdown",
		    "kernel config forces lockdown: unsigned modules are refused");
	} else {
		p2ps_dr_add(c, "lockdown", NULL, P2PS_V_OK, src,
		    NULL, "no lockdown reported (securityfs absent; not forced by the kernel config)");
	}

	/* Secure Boot (efivars) */
	{
		char **names;
		size_t n, i;
		int sb = -1;

		if (!p2ps_root_exists(&c->root, "/sys/firmware/efi")) {
			p2ps_dr_add(c, "secure-boot", NULL, P2PS_V_OK, "/sys/firmware/efi", NULL,
			    "no EFI: no Secure Boot");
		} else if (!p2ps_root_list(&c->root, "/sys/firmware/efi/efivars", &names, &n)) {
			for (i = 0; i < n; i++) {
				if (!strncmp(names[i], "SecureBoot-", 11)) {
					char path[512];
					size_t len = 0;
					char *v;

					snprintf(path, sizeof(path), "/sys/firmware/efi/efivars/%s", names[i]);
					v = p2ps_root_read(&c->root, path, &len, false);
					if (v && len >= 5)
						sb = v[4] == 1;
					free(v);
				}
			}
			p2ps_free_list(names, n);
			if (sb == 1 && sig)
				p2ps_dr_add(c, "secure-boot", NULL, P2PS_V_WARN, mod, SIGNED_REMEDY,
				    "Secure Boot is on; %s is signed: taken if its key is enrolled", mod);
			else if (sb == 1)
				p2ps_dr_add(c, "secure-boot", NULL, P2PS_V_WARN, "efivars SecureBoot",
				    MOK_REMEDY,
				    "Secure Boot is on: distribution kernels then refuse unsigned modules");
			else if (sb == 0)
				p2ps_dr_add(c, "secure-boot", NULL, P2PS_V_OK, "efivars SecureBoot", NULL,
				    "Secure Boot is off");
			else
				p2ps_dr_add(c, "secure-boot", NULL, P2PS_V_SKIP, "efivars", NULL,
				    "EFI present but SecureBoot variable not readable");
		}
	}

	/* module signature enforcement */
	k = p2ps_root_line(&c->root, "/sys/module/module/parameters/sig_enforce", buf, sizeof(buf)) &&
	    (buf[0] == 'Y' || buf[0] == '1');
	if ((k || cfg(c, "CONFIG_MODULE_SIG_FORCE") == 1) && sig)
		p2ps_dr_add(c, "sig-enforce", NULL, P2PS_V_WARN, mod, SIGNED_REMEDY,
		    "module signatures enforced; %s is signed: taken if its key is enrolled", mod);
	else if (k) {
		/* from the command line (else the config): taken off where it is written */
		p2ps_strlcpy(fix, MOK_STEPS, sizeof(fix));
		if (cmdline_param(cmdline, "module.sig_enforce", buf, sizeof(buf))) {
			char grub[256];

			snprintf(tok, sizeof(tok), "module.sig_enforce%s%.16s", *buf ? "=" : "", buf);
			grub_remove(grub, sizeof(grub), tok);
			off = strlen(fix);
			p2ps_catf(fix, sizeof(fix), &off, "\n", "or %s", grub);
		}
		p2ps_dr_add(c, "sig-enforce", NULL, P2PS_V_FAIL, "/sys/module/module/parameters/sig_enforce",
		    fix, "module signatures enforced: an unsigned p2p-shim.ko is refused");
	} else if (cfg(c, "CONFIG_MODULE_SIG_FORCE") == 1)
		p2ps_dr_add(c, "sig-enforce", NULL, P2PS_V_FAIL, src, MOK_STEPS,
		    "CONFIG_MODULE_SIG_FORCE=y: an unsigned p2p-shim.ko is refused");
	else
		p2ps_dr_add(c, "sig-enforce", NULL, P2PS_V_OK, "/sys/module/module/parameters/sig_enforce",
		    NULL, "module signatures not enforced");

modules_disabled:
	/* modules_disabled; `nomodule` on the command line sets it from boot */
	if (!shim && cmdline_param(cmdline, "nomodule", buf, sizeof(buf)) &&
	    (!*buf || !strcmp(buf, "1") || !strcmp(buf, "y") || !strcmp(buf, "Y"))) {
		snprintf(tok, sizeof(tok), "nomodule%s%.20s", *buf ? "=" : "", buf);
		grub_remove(fix, sizeof(fix), tok);
		p2ps_dr_add(c, "modules-disabled", NULL, P2PS_V_FAIL, "/proc/cmdline", fix,
		    "%s on the kernel command line: module loading is disabled from boot", tok);
	} else if (p2ps_root_line(&c->root, "/proc/sys/kernel/modules_disabled", buf, sizeof(buf))) {
		if (buf[0] == '1' && shim)
			p2ps_dr_add(c, "modules-disabled", NULL, P2PS_V_OK, "/proc/sys/kernel/modules_disabled",
			    NULL, "module loading is disabled, p2p-shim already loaded (reloading it needs a reboot)");
		else if (buf[0] == '1')
			p2ps_dr_add(c, "modules-disabled", NULL, P2PS_V_FAIL, "/proc/sys/kernel/modules_disabled",
			    "load p2p-shim before kernel.modules_disabled is set (it stays 1 until reboot)",
			    "module loading is disabled (kernel.modules_disabled=1)");
		else
			p2ps_dr_add(c, "modules-disabled", NULL, P2PS_V_OK, "/proc/sys/kernel/modules_disabled",
			    NULL, "module loading allowed");
	} else {
		p2ps_dr_add(c, "modules-disabled", NULL, P2PS_V_SKIP, "/proc/sys/kernel/modules_disabled",
		    NULL, "not readable");
	}
	free(cmdline);
}

/* The kernel's release, config and hook support. */
void p2ps_dr_kernel(struct dctx *c)
{
	kernel_release(c);
	load_config(c);
	check_kernel(c);
}
