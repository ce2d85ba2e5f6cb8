// SPDX-License-Identifier: GPL-2.0
/*
 * `p2pctl doctor`: the nvidia driver (version, flavour) and its profile.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "doctor.h"

static bool parse_nv_version(const char *s, char *out, size_t len)
{
	const char *start = s;

	/* the first token of the form N.N[.N] */
	while (*s) {
		if (isdigit((unsigned char)*s) && (s == start || !isalnum((unsigned char)s[-1]))) {
			const char *e = s;
			int dots = 0;

			while (isdigit((unsigned char)*e) || *e == '.') {
				dots += *e == '.';
				e++;
			}
			if (dots >= 1 && dots <= 2 && e[-1] != '.' && (size_t)(e - s) < len) {
				memcpy(out, s, e - s);
				out[e - s] = '\0';
				return true;
			}
			s = e;
			continue;
		}
		s++;
	}
	return false;
}

/*
 * The driver's own lock inversion (docs/support.md, known limits): from
 * 580.65.06, nvGpuOpsRmDeviceDestroy holds nvidia-uvm's devicesLock for
 * writing across an RM free that needs the UVM session's client lock,
 * while an external mapping of a BAR1 peer's memory takes devicesLock for
 * reading with that client lock held (nv_gpu_ops.c 595.45.04 L1135-1154,
 * L2125-2135, L4586).  Reported fixed in 610.57.04.
 */
static void devices_lock(struct dctx *c, const char *ver)
{
	unsigned int a, b, d;

	if (p2ps_parse_version(ver, &a, &b, &d) ||
	    !((a == 580 && (b > 65 || (b == 65 && d >= 6))) || (a > 580 && a < 610) ||
	      (a == 610 && (b < 57 || (b == 57 && d < 4)))))
		return;
	p2ps_dr_add(c, "driver-lock", NULL, P2PS_V_WARN, "the driver version (nv_gpu_ops.c)",
		    "start and stop multi-GPU jobs one at a time; 610.57.04 is reported to fix it",
		    "driver %s can hang BAR1 peer mappings: one process tearing a GPU down while "
		    "another maps a BAR1 peer's memory deadlock on nvidia-uvm's devicesLock "
		    "(580.65.06 to 610.57.03)", ver);
}

/*
 * nvidia-uvm beside a loaded nvidia: CUDA needs it.  libcuda loads it
 * through the setuid nvidia-modprobe on first use; where that is missing
 * or not setuid, CUDA finds no device at all.  Read where the tree lists
 * modules (/proc/modules).
 */
static void check_uvm(struct dctx *c)
{
	char *mods;

	if (p2ps_root_exists(&c->root, "/sys/module/nvidia_uvm"))
		return;
	mods = p2ps_root_read(&c->root, "/proc/modules", NULL, false);
	if (mods && strncmp(mods, "nvidia_uvm ", 11) && !strstr(mods, "\nnvidia_uvm "))
		p2ps_dr_add(c, "nvidia-uvm", NULL, P2PS_V_WARN, "/proc/modules",
		    "modprobe nvidia-uvm (and list it in /etc/modules-load.d/nvidia-uvm.conf); "
		    "a CUDA program loads it only through a setuid nvidia-modprobe",
		    "nvidia is loaded, nvidia-uvm is not: CUDA finds no device until it is");
	free(mods);
}

void p2ps_dr_driver(struct dctx *c)
{
	struct p2ps_doctor_report *r = c->r;
	const char *vf = "/proc/driver/nvidia/version";
	char line[512], ver[P2PS_NAME_LEN] = "";
	const struct p2ps_profile *p;

	if (!p2ps_root_line(&c->root, vf, line, sizeof(line))) {
		if (p2ps_root_line(&c->root, "/sys/module/nvidia/version", ver, sizeof(ver)))
			p2ps_dr_add(c, "nvidia", NULL, P2PS_V_WARN, "/sys/module/nvidia/version",
			    "check that the nvidia module finished loading (dmesg)",
			    "nvidia %s is loaded but %s is missing", ver, vf);
		else
			p2ps_dr_add(c, "nvidia", NULL, P2PS_V_WARN, vf,
			    "load the nvidia open kernel module (p2p-shim arms when it arrives)",
			    "nvidia driver not loaded");
		p2ps_dr_add(c, "profile", NULL, P2PS_V_SKIP, NULL, NULL, "no driver version to check");
		return;
	}
	{
		const char *m = strstr(line, "Module");
		char *tail = m ? (char *)m + 6 : line;

		if (!parse_nv_version(tail, ver, sizeof(ver)))
			p2ps_root_line(&c->root, "/sys/module/nvidia/version", ver, sizeof(ver));
	}
	p2ps_strlcpy(r->driver_version, ver, sizeof(r->driver_version));
	check_uvm(c);
	if (strstr(line, "Open Kernel Module")) {
		r->open_module = true;
		p2ps_dr_add(c, "nvidia", NULL, P2PS_V_OK, vf, NULL, "NVIDIA open kernel module %s loaded",
		    *ver ? ver : "(version unknown)");
	} else {
		p2ps_dr_add(c, "nvidia", NULL, P2PS_V_FAIL, vf,
		    "install the open kernel module flavour of the driver (e.g. nvidia-open, or the installer's -m=kernel-open)",
		    "proprietary nvidia kernel module %s: unsupported (p2p-shim needs the open module)",
		    *ver ? ver : "");
	}
	if (!*ver) {
		p2ps_dr_add(c, "profile", NULL, P2PS_V_WARN, vf, "check /proc/driver/nvidia/version",
		    "driver version not found");
		return;
	}
	if (!r->open_module) {
		/* no profile applies to it: never "profile OK" beside a proprietary module */
		p2ps_dr_add(c, "profile", NULL, P2PS_V_SKIP, vf, NULL,
		    "proprietary module: p2p-shim has no profile for it");
		return;
	}
	p = p2ps_profile_for_version(ver);
	if (p) {
		p2ps_strlcpy(r->profile, p->name, sizeof(r->profile));
		p2ps_dr_add(c, "profile", NULL, P2PS_V_OK, "p2ps_profile_for_version", NULL,
		    "driver %s: profile %s (%s)", ver, p->name, p->versions);
		devices_lock(c, ver);
	} else {
		const char *why = p2ps_unsupported_reason(ver);
		char vers[128];

		/* as `p2pctl check` and the module's refusal say it */
		p2ps_supported_versions(vers, sizeof(vers));
		if (why)	/* refused on purpose: --force would arm what is known not to fit */
			p2ps_dr_add(c, "profile", NULL, P2PS_V_FAIL, "p2ps_profile_for_version",
			    "use a supported driver branch (see `p2pctl check`)",
			    "no profile for driver %s: %s", ver, why);
		else
			p2ps_dr_add(c, "profile", NULL, P2PS_V_FAIL, "p2ps_profile_for_version",
			    "use a supported driver branch\nor check it with `p2pctl check` and arm with `p2pctl enable --force`",
			    "no profile for driver %s (supported: %s)", ver, vers);
	}
}
