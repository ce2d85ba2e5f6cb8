/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `p2pctl doctor`: what its check files (lib/doctor*.c, one check family
 * each) share: the state of one p2ps_doctor() run and a few helpers.
 */
#ifndef P2PS_DOCTOR_H
#define P2PS_DOCTOR_H

#include <p2p-shim/profile.h>
#include <p2p-shim/sb1rule.h>
#include "internal.h"

#define GiB ((uint64_t)1 << 30)
#define MiB ((uint64_t)1 << 20)

/*
 * The static-BAR1 rules' inputs on this host (doctor_static_bar1.c fills them):
 * @k with the user's keys of NVreg_RegistryDwords; p2ps_dr_gpu_keys() has
 * one GPU's, where NVreg_RegistryDwordsPerDevice sets its own.
 */
struct p2ps_dr_rules {
	struct p2ps_sb1_keys k;
	bool assumed;			/* no driver loaded: rules of 580+ assumed */
	char dwords[4096];		/* the two options, as /proc shows them */
	char per_device[4096];
	bool per_device_late;		/* 595+: see p2ps_dr_per_device_bdf() */
	bool init_on_probe;		/* GpuInitOnProbe=1 */
	char last_bdf[32];		/* the GPU probed last */
};

/* The state of one p2ps_doctor() run. */
struct dctx {
	struct p2ps_root root;
	const struct p2ps_doctor_opts *opts;
	struct p2ps_doctor_report *r;
	size_t cap_f;
	char *config;			/* kernel config text, or NULL */
	char config_src[96];
	int err;
	int vm;				/* doctor_platform.c: 1 in a VM, 0 not, -1 unknown */
	struct p2ps_dr_rules rules;	/* doctor_static_bar1.c, for doctor_topo.c */
	char iommu_dma[1024];		/* doctor_iommu.c: GPUs whose group translates DMA */
	bool iommu_by_cmdline;		/* ... known from /proc/cmdline, not from a group type */
};

/* ---- findings.c: the findings store */
/*
 * What turns passthrough off must go first, from both lines: GRUB puts
 * _DEFAULT after GRUB_CMDLINE_LINUX, and the kernel takes the last token.
 */
#define P2PS_DR_NOPT_GRUB "delete iommu=nopt and iommu.passthrough=0 (or =n, =no, =off) from " \
	"GRUB_CMDLINE_LINUX=\"...\" and GRUB_CMDLINE_LINUX_DEFAULT=\"...\" in /etc/default/grub; "
/* The literal edit for iommu=pt (doctor.c, doctor_iommu.c): one line. */
#define P2PS_DR_PT_GRUB "add iommu=pt inside GRUB_CMDLINE_LINUX=\"...\" in /etc/default/grub, then " \
	"update-grub (grub2-mkconfig -o /boot/grub2/grub.cfg elsewhere) and reboot"

/* Append a finding (no remedy kept for an ok verdict). */
__attribute__((format(printf, 7, 8)))
void p2ps_dr_add(struct dctx *c, const char *check, const char *subject, enum p2ps_verdict v,
		 const char *source, const char *remedy, const char *fmt, ...);

/* ---- doctor_util.c: helpers the check families share */
unsigned long p2ps_dr_read_hex(struct dctx *c, const char *dir, const char *attr, bool *ok);
/*
 * PCI addresses of the bridges and device on a sysfs path; its host bridge
 * ("pci0000:00").  A GPU's path (struct p2ps_gpu.path, 512 bytes) holds at
 * most 37 of them: deeper GPUs are named by a "gpu" warning, not checked.
 */
#define P2PS_DR_MAX_DEPTH 40
int p2ps_dr_split_path(const char *path, char comps[][16], int max, char *host, size_t hostlen);
/* Value of @key in /proc/driver/nvidia/params, or false. */
bool p2ps_dr_param(struct dctx *c, const char *key, char *out, size_t len);
/* "24 GiB", "256 MiB", "unknown" */
void p2ps_dr_fmt_size(uint64_t b, char *buf, size_t len);
/* The first CPU of the root's /proc/cpuinfo; false if not known. */
bool p2ps_dr_cpu(struct dctx *c, struct p2ps_host_cpu *cpu);
/* p2p-shim is loaded (/sys/module/p2p_shim, /proc/modules). */
bool p2ps_dr_shim_loaded(struct dctx *c);
/* @fn for /root/@suffix and /home/USER/@suffix. */
void p2ps_dr_each_home(struct dctx *c, const char *suffix,
		       void (*fn)(struct dctx *, void *, const char *), void *arg);

/* ---- doctor_registry.c: the user's registry keys, as the driver reads them */
/*
 * The user's value of registry key @key for the GPU at @bdf (NULL: the
 * global one), or -1; *@option (if not NULL) names the module option it
 * came from.
 */
long p2ps_dr_user_key(const char *dwords, const char *per_device, const char *bdf,
		      const char *key, const char **option);
/* @g's address where its own per-device entries reach it, else NULL. */
const char *p2ps_dr_per_device_bdf(const struct p2ps_dr_rules *r, const struct p2ps_gpu *g);
/* @g's static-BAR1 keys: @r's, with those @g's own per-device entries set. */
void p2ps_dr_gpu_keys(const struct p2ps_dr_rules *r, const struct p2ps_gpu *g, struct p2ps_sb1_keys *k);

/*
 * The check families, in the order p2ps_doctor() runs them.  Each calls
 * the store, the helpers above and the shared rules, never another family;
 * what one leaves for a later one is in struct dctx or the report.
 */
void p2ps_dr_kernel(struct dctx *c);		/* doctor_kernel.c */
void p2ps_dr_driver(struct dctx *c);		/* doctor_driver.c */
int p2ps_dr_find_gpus(struct dctx *c);		/* doctor_gpus.c */
void p2ps_dr_gpus(struct dctx *c);
void p2ps_dr_static_bar1(struct dctx *c);	/* doctor_static_bar1.c: fills c->rules */
void p2ps_dr_iommu(struct dctx *c);		/* doctor_iommu.c */
/* What the kernel command line says of the IOMMU (doctor_iommu.c). */
struct p2ps_dr_cmdline_iommu {
	int passthrough;	/* iommu=pt, iommu.passthrough=1: 1; =nopt, =0: 0; -1 not said */
	bool off;		/* iommu=off, intel_iommu=off, amd_iommu=off */
	bool bogus_pt;		/* amd_iommu=pt or intel_iommu=pt: not options, ignored */
};
void p2ps_dr_cmdline_iommu(const char *cmdline, struct p2ps_dr_cmdline_iommu *o);
int p2ps_dr_pairs(struct dctx *c);		/* doctor_topo.c */
void p2ps_dr_vm(struct dctx *c);		/* doctor_host.c: sets c->vm */
void p2ps_dr_platform(struct dctx *c);		/* doctor_platform.c: ACS, links */
/* ACS's permanent remedy naming @n ports (@more: and others) into @buf (doctor_platform.c). */
void p2ps_dr_acs_param(char *buf, size_t len, const char (*bdf)[16], int n, bool more);
void p2ps_dr_display(struct dctx *c);		/* doctor_host.c */
void p2ps_dr_bar1_reads(struct dctx *c);	/* doctor_read.c: the driver's peer-read rule */
void p2ps_dr_software(struct dctx *c);		/* doctor_software.c: NCCL */
void p2ps_dr_vllm(struct dctx *c);		/* doctor_vllm.c */
void p2ps_dr_module(struct dctx *c);		/* doctor_module.c */
void p2ps_dr_initramfs(struct dctx *c);		/* doctor_initramfs.c */

#endif
