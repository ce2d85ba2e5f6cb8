// SPDX-License-Identifier: GPL-2.0
/*
 * `p2pctl doctor`: the IOMMU mode, from facts: the type of each GPU's
 * IOMMU group (/sys/kernel/iommu_groups/N/type: "identity" passes DMA
 * through, "DMA"/"DMA-FQ" translate it); where no GPU has a group (old
 * kernels, captured trees without them), the kernel command line read
 * whole as tokens, then the kernel's built-in default.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "doctor.h"

/* No group type read (old kernel, captured tree): translation per GPU is not known. */
#define REMEDY_PT_IF "if a GPU's /sys/kernel/iommu_groups/N/type is DMA or DMA-FQ, " \
	P2PS_DR_PT_GRUB ": under translation the driver's own BAR1 peer mappings fault"
#define BOGUS_PT "amd_iommu=pt/intel_iommu=pt are not kernel options: "
#define REMEDY_PT P2PS_DR_PT_GRUB ": with a translating IOMMU, peer mappings the driver makes " \
	"itself through BAR1 windows use the raw bus address and fault; CUDA peer mappings " \
	"through UVM use the IOMMU address and work"

/* Is @v one of the kernel's true words (kstrtobool: 1 y Y on)? -1 if neither. */
static int kbool(const char *v)
{
	if (!strcmp(v, "1") || !strcasecmp(v, "y") || !strcasecmp(v, "yes") || !strcasecmp(v, "on"))
		return 1;
	if (!strcmp(v, "0") || !strcasecmp(v, "n") || !strcasecmp(v, "no") || !strcasecmp(v, "off"))
		return 0;
	return -1;
}

void p2ps_dr_cmdline_iommu(const char *cmdline, struct p2ps_dr_cmdline_iommu *o)
{
	const char *p = cmdline ? cmdline : "";

	memset(o, 0, sizeof(*o));
	o->passthrough = -1;
	while (*p) {
		char tok[512], *eq;
		size_t n = 0;
		bool quoted = false;

		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		/* one token: spaces inside "..." belong to it, as the kernel reads it */
		while (*p && (quoted || !isspace((unsigned char)*p))) {
			if (*p == '"')
				quoted = !quoted;
			else if (n < sizeof(tok) - 1)
				tok[n++] = *p;
			p++;
		}
		tok[n] = '\0';
		if (!strcmp(tok, "--"))
			break;		/* the rest is for init */
		eq = strchr(tok, '=');
		if (!eq)
			continue;
		*eq++ = '\0';
		/* later tokens override earlier ones, as for the kernel */
		if (!strcmp(tok, "iommu")) {
			char *opt, *save;

			for (opt = strtok_r(eq, ",", &save); opt; opt = strtok_r(NULL, ",", &save)) {
				if (!strcmp(opt, "pt"))
					o->passthrough = 1;
				else if (!strcmp(opt, "nopt"))
					o->passthrough = 0;
				else if (!strcmp(opt, "off"))
					o->off = true;
			}
		} else if (!strcmp(tok, "iommu.passthrough")) {
			int b = kbool(eq);

			if (b >= 0)
				o->passthrough = b;
		} else if (!strcmp(tok, "intel_iommu") || !strcmp(tok, "amd_iommu")) {
			char *opt, *save;

			for (opt = strtok_r(eq, ",", &save); opt; opt = strtok_r(NULL, ",", &save)) {
				if (!strcmp(opt, "off"))
					o->off = true;
				else if (!strcmp(opt, "pt"))
					o->bogus_pt = true;	/* not an option of either */
			}
		}
	}
}

/* The type of @g's IOMMU group ("identity", "DMA-FQ", ...), or false. */
static bool group_type(struct dctx *c, const struct p2ps_gpu *g, char *type, size_t len)
{
	char link[64], grp[PATH_MAX], path[PATH_MAX + 16];

	snprintf(link, sizeof(link), "/sys/bus/pci/devices/%s/iommu_group", g->bdf);
	if (!p2ps_root_realpath(&c->root, link, grp, sizeof(grp)))
		return false;
	snprintf(path, sizeof(path), "%s/type", grp);
	return p2ps_root_line(&c->root, path, type, len) && *type;
}

/* From the groups of the GPUs; false when none has one. */
static bool iommu_from_groups(struct dctx *c, const struct p2ps_dr_cmdline_iommu *cl)
{
	const struct p2ps_doctor_report *r = c->r;
	char dma[256] = "", other[256] = "", types[64] = "", type[32];
	size_t i, od = 0, oo = 0, ot = 0, seen = 0;

	for (i = 0; i < r->nr_gpus; i++) {
		if (!group_type(c, &r->gpus[i], type, sizeof(type)))
			continue;
		seen++;
		if (!strcmp(type, "identity"))
			continue;
		if (!strncmp(type, "DMA", 3)) {
			p2ps_catf(dma, sizeof(dma), &od, ", ", "%s", r->gpus[i].bdf);
			if (!strstr(types, type))
				p2ps_catf(types, sizeof(types), &ot, "/", "%s", type);
		} else {
			p2ps_catf(other, sizeof(other), &oo, ", ", "%s (%s)", r->gpus[i].bdf, type);
		}
	}
	if (!seen)
		return false;
	p2ps_strlcpy(c->iommu_dma, dma, sizeof(c->iommu_dma));
	if (*dma)
		p2ps_dr_add(c, "iommu", NULL, P2PS_V_WARN, "/sys/kernel/iommu_groups/*/type",
			    cl->bogus_pt ? BOGUS_PT REMEDY_PT :
			    REMEDY_PT,
			    "IOMMU translates DMA for %s (group type %s)", dma, types);
	else if (*other)
		p2ps_dr_add(c, "iommu", NULL, P2PS_V_WARN, "/sys/kernel/iommu_groups/*/type",
			    "a GPU in a blocked or unmanaged group (vfio) is not the host's: no P2P with it",
			    "IOMMU group not in DMA use: %s", other);
	else
		p2ps_dr_add(c, "iommu", NULL, P2PS_V_OK, "/sys/kernel/iommu_groups/*/type", NULL,
			    "IOMMU passthrough for %s GPU (group type identity)",
			    seen == 1 ? "the" : "every");
	return true;
}

void p2ps_dr_iommu(struct dctx *c)
{
	struct p2ps_dr_cmdline_iommu cl;
	char **names;
	size_t n = 0;
	char *cmdline = p2ps_root_read(&c->root, "/proc/cmdline", NULL, false);

	p2ps_dr_cmdline_iommu(cmdline, &cl);
	free(cmdline);
	if (iommu_from_groups(c, &cl))
		return;
	if (p2ps_root_list(&c->root, "/sys/class/iommu", &names, &n))
		n = 0;
	else
		p2ps_free_list(names, n);
	if (n == 0) {
		p2ps_dr_add(c, "iommu", NULL, P2PS_V_OK, "/sys/class/iommu", NULL,
		    "IOMMU off (no IOMMU registered)");
	} else if (cl.passthrough == 0) {
		/*
		 * iommu=nopt or iommu.passthrough=0: every group's default
		 * domain translates, the GPUs' included; their pairs are
		 * blocked as for a DMA group type.
		 */
		size_t i, o = 0;

		for (i = 0; i < c->r->nr_gpus; i++)
			p2ps_catf(c->iommu_dma, sizeof(c->iommu_dma), &o, ", ", "%s", c->r->gpus[i].bdf);
		c->iommu_by_cmdline = true;
		p2ps_dr_add(c, "iommu", NULL, P2PS_V_WARN, "/proc/cmdline", P2PS_DR_NOPT_GRUB REMEDY_PT,
		    "IOMMU translates DMA for every GPU (passthrough turned off on the command line)");
	} else if (cl.passthrough == 1) {
		p2ps_dr_add(c, "iommu", NULL, P2PS_V_OK, "/proc/cmdline", NULL,
		    "IOMMU in passthrough mode (%zu unit%s)", n, n == 1 ? "" : "s");
	} else if (cl.passthrough == -1 && c->config &&
		   strstr(c->config, "\nCONFIG_IOMMU_DEFAULT_PASSTHROUGH=y")) {
		p2ps_dr_add(c, "iommu", NULL, P2PS_V_OK, c->config_src, NULL,
		    "IOMMU in passthrough mode (%zu unit%s; the kernel's default)", n, n == 1 ? "" : "s");
	} else {
		/*
		 * UVM/CUDA peer PTEs use the peer BAR1 as the IOMMU maps it
		 * (kbusGetBar1P2PDmaInfo), but RM's own BAR1 windows
		 * (dmaAllocBar1P2PMapping_GH100) describe the raw bus address:
		 * under translation those DMAs fault.  Without a group type
		 * no GPU is known to be translated: a warning, no pair
		 * blocked (pair_translated() blocks only known ones).
		 */
		p2ps_dr_add(c, "iommu", NULL, P2PS_V_WARN, "/sys/class/iommu",
		    cl.bogus_pt ? BOGUS_PT REMEDY_PT_IF : REMEDY_PT_IF,
		    "IOMMU on (%zu unit%s), DMA translation unknown per GPU (no IOMMU group type)",
		    n, n == 1 ? "" : "s");
	}
}
