// SPDX-License-Identifier: GPL-2.0
/*
 * libp2pshim: host checks (`p2pctl doctor`).  Reads procfs/sysfs/boot files
 * under a root prefix, so that the unit tests run on captured fixture trees.
 *
 * This file: the order of the checks and the one answer.  The findings
 * store is findings.c, the helpers the families share doctor_util.c and
 * doctor_registry.c.  One file a check family, sharing struct dctx
 * (doctor.h); no family calls another:
 *   doctor_kernel.c    kernel release, config, kprobes, module signing
 *   doctor_driver.c    the nvidia driver and its profile
 *   doctor_gpus.c      GPUs: ids, VRAM, BAR1, Resizable BAR
 *   doctor_iommu.c     IOMMU mode
 *   doctor_static_bar1.c static BAR1 per GPU (rules/sb1rule.c, sb1predict.c)
 *   doctor_topo.c      GPU pairs: PCIe path, NVLink, I/O hubs, P2P verdict
 *   doctor_platform.c  ACS, links, NUMA and host bridges
 *   doctor_host.c      VM, displays
 *   doctor_software.c  NCCL
 *   doctor_vllm.c      the vLLM P2P cache
 *   doctor_read.c      the driver's BAR1 peer-read rule (rules/readrule.c)
 *   doctor_module.c    p2p-shim's state
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "doctor.h"

/*
 * The one answer: usable GPUs (fewer than two: a blocker), and the pairs
 * that can have P2P: native ones always, bar1 ones only where nothing on
 * the host keeps p2p-shim from loading or arming (kprobes, lockdown,
 * Secure Boot, signing, modules_disabled, the driver, its profile).
 */
static bool is_host_blocker(const char *check)
{
	static const char *const host[] = {
		"kprobes", "lockdown", "secure-boot", "sig-enforce", "modules-disabled", "nvidia", "profile",
		"nvml",
	};
	size_t i;

	for (i = 0; i < sizeof(host) / sizeof(host[0]); i++)
		if (!strcmp(check, host[i]))
			return true;
	return false;
}

/* Is @bdf in the list "A, B, C"? */
static bool in_list(const char *list, const char *bdf)
{
	size_t n = strlen(bdf);
	const char *p = list;

	while ((p = strstr(p, bdf))) {
		if ((p == list || p[-1] == ' ') && (!p[n] || p[n] == ','))
			return true;
		p += n;
	}
	return false;
}

/*
 * A bar1 pair with a GPU whose IOMMU group translates DMA: the driver's
 * own BAR1 peer mappings use the raw bus address and fault.  A blocker
 * for that pair (doctor_iommu.c warns for the host).
 */
static bool pair_translated(struct dctx *c, const struct p2ps_pair *p)
{
	const struct p2ps_doctor_report *r = c->r;
	char subj[40];

	if (p->p2p != P2PS_P2P_BAR1 || !*c->iommu_dma ||
	    (!in_list(c->iommu_dma, r->gpus[p->a].bdf) && !in_list(c->iommu_dma, r->gpus[p->b].bdf)))
		return false;
	snprintf(subj, sizeof(subj), "%s %s", r->gpus[p->a].bdf, r->gpus[p->b].bdf);
	p2ps_dr_add(c, "iommu", subj, P2PS_V_FAIL,
		    c->iommu_by_cmdline ? "/proc/cmdline" : "/sys/kernel/iommu_groups/*/type",
		    c->iommu_by_cmdline ? P2PS_DR_NOPT_GRUB P2PS_DR_PT_GRUB :
		    P2PS_DR_PT_GRUB "\nor set the GPUs' iommu_group type to identity",
		    "BAR1 P2P under IOMMU translation (%s): the driver's peer mappings through BAR1 use the raw bus address and fault",
		    c->iommu_dma);
	return true;
}

/*
 * A bar1 pair the summary counts as blocked says so in its own row and
 * in pairs[].p2p: none, with what blocks it before what it would be.
 */
static void block_pair(struct p2ps_pair *p, const char *by, const char *what)
{
	char why[sizeof(p->p2p_why) + 256];

	/* cut to the row's size: what blocks it comes first */
	snprintf(why, sizeof(why), "blocked: %s%s (else bar1: %s)", by, what, p->p2p_why);
	p2ps_strlcpy(p->p2p_why, why, sizeof(p->p2p_why));
	p->p2p = P2PS_P2P_NONE;
}

static void summarize(struct dctx *c)
{
	struct p2ps_doctor_report *r = c->r;
	char host[128] = "", why[256] = "";
	size_t i, ho = 0, wo = 0, blocked = 0;

	for (i = 0; i < r->nr_gpus; i++)
		if (!r->gpus[i].driver_known || !strcmp(r->gpus[i].driver, "nvidia") ||
		    (!*r->gpus[i].driver && !*r->driver_version))
			r->nr_usable_gpus++;
	if (r->nr_usable_gpus < 2)
		p2ps_dr_add(c, "gpus", NULL, P2PS_V_FAIL, "/sys/bus/pci/devices",
			    "P2P needs two NVIDIA GPUs driven by nvidia on this host",
			    "%u usable GPU%s (%zu found): no pair for P2P", r->nr_usable_gpus,
			    r->nr_usable_gpus == 1 ? "" : "s", r->nr_gpus);
	for (i = 0; i < r->nr_findings; i++) {
		const struct p2ps_finding *f = &r->findings[i];

		if (f->verdict == P2PS_V_FAIL && !*f->subject && is_host_blocker(f->check) &&
		    !strstr(host, f->check))
			p2ps_catf(host, sizeof(host), &ho, ", ", "%s", f->check);
	}
	for (i = 0; i < r->nr_pairs; i++) {
		struct p2ps_pair *p = &r->pairs[i];

		if (pair_translated(c, p)) {
			block_pair(p, "", "IOMMU translates its DMA (iommu=pt)");
			blocked++;
			if (!strstr(why, "IOMMU translates") &&
			    !p2ps_catf(why, sizeof(why), &wo, "; ", "IOMMU translates its DMA (iommu=pt)"))
				p2ps_catf(why, sizeof(why), &wo, "; ", "...");
			continue;
		}
		if (p->p2p == P2PS_P2P_NATIVE || (p->p2p == P2PS_P2P_BAR1 && !*host)) {
			r->nr_p2p_possible++;
			continue;
		}
		blocked++;
		if (p->p2p == P2PS_P2P_BAR1) {
			block_pair(p, "host: ", host);
			continue;	/* blocked by the host: named once below */
		}
		if (!strstr(why, p->p2p_why) && !p2ps_catf(why, sizeof(why), &wo, "; ", "%s", p->p2p_why))
			p2ps_catf(why, sizeof(why), &wo, "; ", "...");
	}
	if (*host)
		p2ps_catf(why, sizeof(why), &wo, "; ", "host: %s", host);
	if (!r->nr_pairs)
		snprintf(r->summary, sizeof(r->summary), "P2P possible for 0 pairs: %u usable GPU%s",
			 r->nr_usable_gpus, r->nr_usable_gpus == 1 ? "" : "s");
	else if (blocked)
		snprintf(r->summary, sizeof(r->summary), "P2P possible for %u of %zu pair%s (%zu blocked: %s)",
			 r->nr_p2p_possible, r->nr_pairs, r->nr_pairs == 1 ? "" : "s", blocked, why);
	else
		snprintf(r->summary, sizeof(r->summary), "P2P possible for %u of %zu pair%s",
			 r->nr_p2p_possible, r->nr_pairs, r->nr_pairs == 1 ? "" : "s");
}

int p2ps_doctor(const struct p2ps_doctor_opts *opts, struct p2ps_doctor_report **out)
{
	struct dctx c;
	int err;

	*out = NULL;
	memset(&c, 0, sizeof(c));
	c.opts = opts;
	err = p2ps_root_init(&c.root, opts ? opts->root : NULL);
	if (err)
		return err;
	if (opts) {
		c.root.trace = opts->trace;
		c.root.trace_arg = opts->trace_arg;
	}
	c.r = calloc(1, sizeof(*c.r));
	if (!c.r) {
		p2ps_root_fini(&c.root);
		return -ENOMEM;
	}
	p2ps_dr_kernel(&c);
	p2ps_dr_driver(&c);
	if (opts && opts->smi_error && strstr(opts->smi_error, "Driver/library version mismatch"))
		/* the loaded nvidia.ko is not the installed libnvidia-ml/libcuda: nothing CUDA runs */
		p2ps_dr_add(&c, "nvml", NULL, P2PS_V_FAIL, "nvidia-smi",
			    "reboot (the driver was upgraded without one)\n"
			    "or stop every GPU user and rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia, then modprobe nvidia",
			    "%s: the loaded kernel module and the installed user-space driver differ",
			    opts->smi_error);
	else if (opts && opts->smi_error)
		p2ps_dr_add(&c, "nvidia-smi", NULL, P2PS_V_WARN, "nvidia-smi",
			    "a GPU may be off the bus or hung: look for Xid in dmesg; reboot before P2P tests",
			    "%s", opts->smi_error);
	err = p2ps_dr_find_gpus(&c);
	if (!err) {
		p2ps_dr_gpus(&c);
		p2ps_dr_static_bar1(&c);
		p2ps_dr_iommu(&c);
		err = p2ps_dr_pairs(&c);
		if (!err) {
			p2ps_dr_vm(&c);
			p2ps_dr_platform(&c);
			p2ps_dr_display(&c);
			p2ps_dr_bar1_reads(&c);
			p2ps_dr_software(&c);
			p2ps_dr_vllm(&c);
		}
	}
	if (!err) {
		p2ps_dr_module(&c);
		p2ps_dr_initramfs(&c);
	}
	if (!err)
		summarize(&c);
	if (!err) {
		size_t i;

		p2ps_sanitize(c.r->kernel_release);
		p2ps_sanitize(c.r->driver_version);
		p2ps_sanitize(c.r->summary);
		for (i = 0; i < c.r->nr_gpus; i++) {
			p2ps_sanitize(c.r->gpus[i].name);
			p2ps_sanitize(c.r->gpus[i].static_bar1_why);
		}
		for (i = 0; i < c.r->nr_pairs; i++)
			p2ps_sanitize(c.r->pairs[i].p2p_why);
	}
	if (!err)
		err = c.err;
	free(c.config);
	p2ps_root_fini(&c.root);
	if (err) {
		p2ps_doctor_free(c.r);
		return err;
	}
	*out = c.r;
	return 0;
}

void p2ps_doctor_free(struct p2ps_doctor_report *r)
{
	if (!r)
		return;
	free(r->findings);
	free(r->gpus);
	free(r->pairs);
	free(r);
}
