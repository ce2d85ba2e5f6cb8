/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface between the stand-in driver's two halves, as in the real
 * nvidia.ko: nv.c is the kernel interface layer (module parameters, procfs,
 * debugfs), nv-kernel.c is the OS-agnostic "resource manager" (RM) core
 * whose internal functions the shim hooks.  Only the rm_standin_* entry
 * points and nv_standin_* callbacks cross between them.
 */
#ifndef NV_STANDIN_H
#define NV_STANDIN_H

#include <linux/types.h>
#include <linux/seq_buf.h>

#include "standin-hold.h"

#define NV_STANDIN_MAX_GPUS	8

/* One simulated GPU, as parsed from the gpus= module parameter. */
struct nv_standin_gpu_desc {
	char chip[8];		/* "AD102", "GH100", ... */
	u32 domain;
	u8 bus, dev, fn;
	u64 vram_size;		/* client-visible FB (what nvidia-smi shows) */
	u64 fb_size;		/* FB address space (fbAddrSpaceSizeMb), 0: vram_size */
	u64 console_size;	/* boot console preserved in BAR1, 0: none */
	u64 bar1_base;		/* bus address of BAR1 */
	u64 bar1_size;
	int pcie_switch;	/* GPUs with the same id >= 0 share a switch */
};

struct nv_standin_config {
	struct nv_standin_gpu_desc gpu[NV_STANDIN_MAX_GPUS];
	unsigned int num_gpus;
	/* nvlink[a] has bit b set when GPU a and GPU b share NVLink. */
	u32 nvlink[NV_STANDIN_MAX_GPUS];
	int cpu_type;		/* NV_STANDIN_CPU_* */
	const char *fail_gh100;	/* _GH100 body to fail, or "" */
	bool unload_destroys;	/* unload tears live P2P objects down first */
};

/*
 * GPU instances whose next attach fails after the registry reads, as
 * gpuPostConstruct failing does (nv.c's fail_post_construct, writable).
 */
extern unsigned int nv_standin_fail_post_construct;
/*
 * GPU instances whose attach argument carries no readable PCI address
 * (nvDomainBusDeviceFunc all ones): nv.c's attach_no_pci, a test knob.
 */
extern unsigned int nv_standin_attach_no_pci;

#define NV_STANDIN_CPU_OTHER	0
#define NV_STANDIN_CPU_RYZEN	1
#define NV_STANDIN_CPU_XEON_SPR	2

/* Connection types a "create --type" may force (P2P_CONNECTIVITY values). */
#define NV_STANDIN_TYPE_FROM_CAPS	(-1)

/* RM core entry points (nv-kernel.c).  Each returns 0 or a -errno for a
 * request the RM cannot even parse (unknown GPU, object...); RM statuses
 * are reported in the output as status=0x... lines. */
/*
 * Locking (nv-kernel.c): every rm_standin_* entry point takes the RM API
 * lock and the GPU locks the real path takes; its caller holds neither.
 * The interface layer takes the API lock only around what the real one
 * does under it (the registry): rm_standin_api_acquire(write).
 */
void rm_standin_api_acquire(bool write);
void rm_standin_api_release(bool write);
int rm_standin_init(const struct nv_standin_config *cfg);
void rm_standin_shutdown(void);
const char *rm_standin_version_id(void);
void rm_standin_registry_clear(void);
int rm_standin_registry_write(const char *key, u32 value);
int rm_standin_registry_write_dev(int gpu, const char *key, u32 value);
void rm_standin_registry_show(struct seq_buf *out);
int rm_standin_caps(u32 a, u32 b, struct seq_buf *out);
int rm_standin_create(u32 a, u32 b, int type, struct seq_buf *out);
int rm_standin_map(u32 obj, u64 offset, u64 page_size, bool uvm,
		   struct seq_buf *out);
int rm_standin_unmap(u32 map, struct seq_buf *out);
int rm_standin_destroy(u32 obj, struct seq_buf *out);
int rm_standin_reinit(u32 gpu, bool unseen, struct seq_buf *out);
int rm_standin_local(u32 gpu, u64 offset, u64 page_size, struct seq_buf *out);
int rm_standin_sysmem(u32 gpu, u64 addr, u64 page_size, struct seq_buf *out);
/* BAR1 mapping of video memory (a CPU mapping), its removal, and a video
 * memory allocation: what static BAR1 changes beyond P2P. */
int rm_standin_bar1map(u32 gpu, u64 offset, u64 size, bool contig,
		       struct seq_buf *out);
int rm_standin_bar1unmap(u32 gpu, u64 bar1_offset, u64 size, struct seq_buf *out);
int rm_standin_window(u32 a, u32 b, u64 offset, u64 length, u64 page_size,
		      struct seq_buf *out);
int rm_standin_winfree(u32 w, struct seq_buf *out);
int rm_standin_winsoak(u32 a, u32 b, u64 length, u64 page_size, u32 n,
		       struct seq_buf *out);
int rm_standin_alloc(u32 gpu, u64 size, bool compressed, struct seq_buf *out);
void rm_standin_state(struct seq_buf *out);
int rm_standin_bench(u32 a, u32 b, u32 n, struct seq_buf *out);
void rm_standin_stubs(struct seq_buf *out);

#endif /* NV_STANDIN_H */
