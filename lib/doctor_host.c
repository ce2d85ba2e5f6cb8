// SPDX-License-Identifier: GPL-2.0
/*
 * libp2pshim: `p2pctl doctor`'s host checks (issue 23): virtual machines,
 * and GPUs that drive a display.  Run by p2ps_dr_platform()
 * (doctor_platform.c), from sysfs and procfs under the doctor's root.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <p2p-shim/vmguess.h>

#include "doctor.h"

/* ---------------------------------------------------------------- VM */

void p2ps_dr_vm(struct dctx *c)
{
	char why[200] = "", buf[128], real[300];
	size_t off = 0, i;
	bool any_source = false, vm = false;
	char *cpuinfo = p2ps_root_read(&c->root, "/proc/cpuinfo", NULL, false);

#define WHY(...) p2ps_catf(why, sizeof(why), &off, "; ", __VA_ARGS__)

	if (cpuinfo) {
		any_source = true;
		if (p2ps_vm_cpu_flag(cpuinfo)) {
			vm = true;
			WHY("CPU flag 'hypervisor'");
		}
		free(cpuinfo);
	}
	if (p2ps_root_line(&c->root, "/sys/hypervisor/type", buf, sizeof(buf)) && *buf) {
		any_source = vm = true;
		WHY("/sys/hypervisor/type %s", buf);
	}
	{
		const char *dmi[] = { "/sys/class/dmi/id/sys_vendor", "/sys/class/dmi/id/product_name" };

		for (i = 0; i < 2; i++) {
			if (!p2ps_root_line(&c->root, dmi[i], buf, sizeof(buf)))
				continue;
			any_source = true;
			if (p2ps_vm_vendor(buf)) {
				vm = true;
				WHY("DMI %s", buf);
			}
		}
	}
	/* the host bridge the driver's chipset check looks at: evidence only
	 * (emulated ones reuse ids of real chipsets, e.g. QEMU q35's 8086:29c0) */
	if (vm && p2ps_root_realpath(&c->root, "/sys/bus/pci/devices/0000:00:00.0", real, sizeof(real))) {
		bool ok1, ok2;
		unsigned long v = p2ps_dr_read_hex(c, real, "vendor", &ok1);
		unsigned long d = p2ps_dr_read_hex(c, real, "device", &ok2);

		if (ok1 && ok2)
			WHY("host bridge %04lx:%04lx", v, d);
	}
	c->vm = !any_source ? -1 : vm;
	if (!any_source)
		p2ps_dr_add(c, "vm", NULL, P2PS_V_SKIP, "/proc/cpuinfo", NULL,
			    "no CPU flags or DMI to tell");
	else if (!vm)
		p2ps_dr_add(c, "vm", NULL, P2PS_V_OK, "/proc/cpuinfo, DMI", NULL,
			    "bare metal: no hypervisor seen");
	else
		p2ps_dr_add(c, "vm", NULL, P2PS_V_WARN, "/proc/cpuinfo, DMI, host bridge",
			    "the driver's own PCIe P2P check does not know an emulated host bridge (CHIPSET_NOT_SUPPORTED); p2p-shim's ForceP2P skips it, but the host must map the peer BARs in its IOMMU with ACS redirect off (QEMU: x-nv-gpudirect-clique); BAR1 P2P in a VM is untested",
			    "virtual machine: %s", why);
#undef WHY
}

/* ---------------------------------------------------------------- display */

/* Whether /sys/class/@cls/@name lies below the GPU at @path; its real path in @real. */
static bool below_gpu(struct dctx *c, const char *cls, const char *name, const char *path,
		      char *real, size_t len)
{
	size_t plen = strlen(path);
	char link[600];

	snprintf(link, sizeof(link), "/sys/class/%s/%s", cls, name);
	return p2ps_root_realpath(&c->root, link, real, len) && !strncmp(real, path, plen) &&
	       real[plen] == '/';
}

/* Framebuffers and connected DRM connectors that belong to the GPU at @path. */
static void displays_of(struct dctx *c, const char *path, char *fbs, size_t fblen, int *connected,
			bool *seen)
{
	char **names;
	size_t n, i, off = 0;
	char real[1024], file[1100], buf[64];

	*fbs = '\0';
	*connected = 0;
	if (!p2ps_root_list(&c->root, "/sys/class/graphics", &names, &n)) {
		*seen = *seen || n > 0;
		for (i = 0; i < n; i++) {
			if (strncmp(names[i], "fb", 2) ||
			    !below_gpu(c, "graphics", names[i], path, real, sizeof(real)))
				continue;
			snprintf(file, sizeof(file), "%s/name", real);
			if (!p2ps_root_line(&c->root, file, buf, sizeof(buf)))
				p2ps_strlcpy(buf, "?", sizeof(buf));
			if (!p2ps_catf(fbs, fblen, &off, ", ", "%s (%s)", names[i], buf))
				break;
		}
		p2ps_free_list(names, n);
	}
	if (!p2ps_root_list(&c->root, "/sys/class/drm", &names, &n)) {
		*seen = *seen || n > 0;
		for (i = 0; i < n; i++) {
			if (strncmp(names[i], "card", 4) || !strchr(names[i], '-') ||
			    !below_gpu(c, "drm", names[i], path, real, sizeof(real)))
				continue;
			snprintf(file, sizeof(file), "%s/status", real);
			if (p2ps_root_line(&c->root, file, buf, sizeof(buf)) && !strcmp(buf, "connected"))
				(*connected)++;
		}
		p2ps_free_list(names, n);
	}
}

static const char *console_rule(struct dctx *c)
{
	unsigned int major = p2ps_driver_major(c->r->driver_version);

	if (!major || major >= 580)
		return "580+ puts static BAR1 after the console at 512 MiB: BAR1 must hold VRAM + 512 MiB";
	if (major >= 570)
		return "570-575 put static BAR1 right after the console, not 512 MiB aligned: peers can't map it";
	return "550-565 decide static BAR1 before the console and map it at offset 0";
}

void p2ps_dr_display(struct dctx *c)
{
	size_t i;

	for (i = 0; i < c->r->nr_gpus; i++) {
		const struct p2ps_gpu *g = &c->r->gpus[i];
		char fbs[160], what[256];
		int connected = 0;
		bool seen = false;

		displays_of(c, g->path, fbs, sizeof(fbs), &connected, &seen);
		if (g->display < 0 && !seen) {
			p2ps_dr_add(c, "display", g->bdf, P2PS_V_SKIP, "boot_vga, /sys/class/graphics, /sys/class/drm",
				    NULL, "no boot_vga, framebuffer or DRM information");
			continue;
		}
		if (g->display != 1 && !*fbs && !connected) {
			p2ps_dr_add(c, "display", g->bdf, P2PS_V_OK, "boot_vga, /sys/class/graphics, /sys/class/drm",
				    NULL, "drives no display or console");
			continue;
		}
		{
			char conn[48] = "";

			if (connected)
				snprintf(conn, sizeof(conn), "%d connected DRM connector%s", connected,
					 connected == 1 ? "" : "s");
			snprintf(what, sizeof(what), "%s%s%s%s%s%s",
				 g->display == 1 ? "boot display (console in BAR1)" : "",
				 *fbs && g->display == 1 ? ", " : "", *fbs ? "framebuffer " : "", fbs,
				 *conn && (*fbs || g->display == 1) ? ", " : "", conn);
		}
		if (g->display != 1) {
			p2ps_dr_add(c, "display", g->bdf, P2PS_V_OK, "boot_vga, /sys/class/graphics, /sys/class/drm",
				    NULL, "%s; not the boot console: static BAR1 does not count it", what);
		} else if (g->static_bar1 == P2PS_SB_YES) {
			p2ps_dr_add(c, "display", g->bdf, P2PS_V_OK, "boot_vga, static BAR1 rules", NULL,
				    "%s; %s; static BAR1 still fits here", what, console_rule(c));
		} else {
			p2ps_dr_add(c, "display", g->bdf, P2PS_V_WARN, "boot_vga, static BAR1 rules",
				    "move the display and boot console to another GPU or the iGPU (firmware setup: primary display), then reboot",
				    "%s; %s; static BAR1 %s", what, console_rule(c),
				    p2ps_static_bar1_name(g->static_bar1));
		}
	}
}
