// SPDX-License-Identifier: GPL-2.0
/*
 * Stand-in nvidia-uvm.ko: the part of NVIDIA's UVM driver that turns a
 * peer pair into PTEs and copy-engine apertures (docs/uvm.md, sections 1
 * and 4).  An independent model written for tests, not NVIDIA code: it
 * keeps the real function names, prototypes, inlining (static noinline
 * where real builds keep a function out of line), enum values and bit
 * layouts of the peer path, per driver generation; the rest is reduced to
 * a few fields.
 *
 *   565-580  peers from UvmEnablePeerAccess (ioctl 29), link type PCIE;
 *            RM's peerIds land in NvU8 peer_ids[] and become
 *            UVM_APERTURE_PEER(id); for a BAR1 pair RM says 0xffffffff,
 *            so the aperture is 255, which make_pte_* encode as VIDEO
 *            and ce_aperture as PEERMEM with peer id 7
 *   590+     BAR1 pairs are static-link peers (PCIE_BAR1) found at GPU
 *            registration: SYS or SYS_NON_COHERENT at the BAR1 DMA base
 *
 * Control (/sys/kernel/debug/nvidia-uvm-standin/ctl), one command per
 * write, key=value answer on read:
 *   register A         UvmRegisterGpu for GPU instance A
 *   enable A B         UvmEnablePeerAccess (ioctl 29) for A and B
 *   disable A B        UvmDisablePeerAccess
 *   map A B OFFSET     map the page of B's memory at OFFSET into A (a
 *                      managed-memory peer mapping): the PTE A gets
 *   copy A B OFFSET    a CE copy on A whose source is B's memory at OFFSET:
 *                      SET_SRC_PHYS_MODE and the address, or the identity
 *                      mapping's PTE in virtual copy mode
 */
#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/mutex.h>
#include <linux/rwsem.h>
#include <linux/debugfs.h>
#include <linux/uaccess.h>
#include <linux/seq_buf.h>

#include "nv-uvm-standin.h"
#include "standin-ctl.h"
#include "standin-hold.h"

#define UVM_AT_LEAST(major)	(NV_STANDIN_MAJOR >= (major))
/* 565 and older: the peer addresses come from the PMM (uvm_pmm_gpu.c). */
#define UVM_PMM_PEER_ADDRESS	(!UVM_AT_LEAST(570))

typedef u8 NvU8;
typedef u32 NvU32;
typedef u64 NvU64;
typedef u32 NV_STATUS;

#define NV_OK			0x00000000
#define NV_ERR_INVALID_DEVICE	0x00000026
#define NV_ERR_INVALID_STATE	0x00000040
#define NV_ERR_NOT_SUPPORTED	0x00000056

#define UVM_MAX_GPUS		8

/* uvm_hal_types.h */
typedef enum {
	UVM_APERTURE_PEER_0,
	UVM_APERTURE_PEER_1,
	UVM_APERTURE_PEER_2,
	UVM_APERTURE_PEER_3,
	UVM_APERTURE_PEER_4,
	UVM_APERTURE_PEER_5,
	UVM_APERTURE_PEER_6,
	UVM_APERTURE_PEER_7,
	UVM_APERTURE_PEER_MAX,
	UVM_APERTURE_SYS,
#if UVM_AT_LEAST(580)
	UVM_APERTURE_SYS_NON_COHERENT,
#endif
	UVM_APERTURE_VID,
	UVM_APERTURE_DEFAULT,
	UVM_APERTURE_MAX
} uvm_aperture_t;

static_assert(UVM_APERTURE_SYS == 9);

/* A plain cast: its UVM_ASSERT is compiled out in release builds. */
#define UVM_APERTURE_PEER(id)		((uvm_aperture_t)(id))
#define UVM_APERTURE_PEER_ID(aperture)	((NvU32)(aperture))

/* 16 bytes: returned in rax (address) and rdx (aperture). */
typedef struct {
	NvU64 address;
	uvm_aperture_t aperture;
} uvm_gpu_phys_address_t;

typedef struct {
	NvU64 address;
	uvm_aperture_t aperture;
	bool is_virtual;
	bool is_unprotected;
} uvm_gpu_address_t;

static uvm_gpu_phys_address_t uvm_gpu_phys_address(uvm_aperture_t aperture, NvU64 address)
{
	return (uvm_gpu_phys_address_t){ address, aperture };
}

static uvm_gpu_address_t uvm_gpu_address_from_phys(uvm_gpu_phys_address_t phys)
{
	return (uvm_gpu_address_t){ .address = phys.address, .aperture = phys.aperture };
}

typedef enum {
	UVM_PROT_NONE,
	UVM_PROT_READ_ONLY,
	UVM_PROT_READ_WRITE,
	UVM_PROT_READ_WRITE_ATOMIC,
} uvm_prot_t;

#define UVM_MMU_PTE_FLAGS_NONE		0
#define UVM_MMU_PTE_FLAGS_CACHED	1

/* uvm_gpu.h */
typedef enum {
	UVM_GPU_LINK_INVALID,
	UVM_GPU_LINK_PCIE,
#if UVM_AT_LEAST(590)
	UVM_GPU_LINK_PCIE_BAR1,
#endif
	UVM_GPU_LINK_NVLINK_1,
	UVM_GPU_LINK_NVLINK_2,
	UVM_GPU_LINK_NVLINK_3,
	UVM_GPU_LINK_NVLINK_4,
	UVM_GPU_LINK_NVLINK_5,
	UVM_GPU_LINK_C2C,
} uvm_gpu_link_type_t;

static const char *const link_names[] = {
	[UVM_GPU_LINK_INVALID] = "invalid",
	[UVM_GPU_LINK_PCIE] = "pcie",
#if UVM_AT_LEAST(590)
	[UVM_GPU_LINK_PCIE_BAR1] = "pcie_bar1",
#endif
	[UVM_GPU_LINK_NVLINK_1] = "nvlink",
	[UVM_GPU_LINK_NVLINK_2] = "nvlink",
	[UVM_GPU_LINK_NVLINK_3] = "nvlink",
	[UVM_GPU_LINK_NVLINK_4] = "nvlink",
	[UVM_GPU_LINK_NVLINK_5] = "nvlink",
	[UVM_GPU_LINK_C2C] = "c2c",
};

typedef enum {
	UVM_GPU_PEER_COPY_MODE_UNSUPPORTED,
	UVM_GPU_PEER_COPY_MODE_VIRTUAL,
	UVM_GPU_PEER_COPY_MODE_PHYSICAL,
} uvm_gpu_peer_copy_mode_t;

static char *uvm_peer_copy = "phys";
module_param(uvm_peer_copy, charp, 0444);
MODULE_PARM_DESC(uvm_peer_copy, "Peer copy mode on Ampere and newer: phys (default) or virt");

struct uvm_mmu_mode_hal {
	NvU64 (*make_pte)(uvm_aperture_t aperture, NvU64 address, uvm_prot_t prot, NvU64 flags);
};

struct uvm_ce_hal {
	/* Returns SET_SRC_PHYS_MODE for a physical source (the push, reduced). */
	NvU32 (*phys_mode)(uvm_gpu_address_t dst, uvm_gpu_address_t src);
};

typedef struct uvm_parent_gpu {
	NvU32 id;
	NvU32 arch;
	uvmGpuDeviceHandle rm_device;
	uvm_gpu_peer_copy_mode_t peer_copy_mode;
	const struct uvm_mmu_mode_hal *mmu;
	const struct uvm_ce_hal *ce;
} uvm_parent_gpu_t;

typedef struct uvm_gpu uvm_gpu_t;

typedef struct {
	uvm_gpu_t *gpu;
} uvm_pmm_gpu_t;

typedef struct {
	NvU64 address;
} uvm_gpu_chunk_t;

/* The identity mapping of a peer's memory, for virtual copy mode. */
typedef struct {
	bool ready;
	NvU64 base;			/* VA */
	uvm_aperture_t aperture;	/* of every PTE */
	NvU64 phys_offset;		/* added to the offset in the peer */
} uvm_gpu_identity_mapping_t;

struct uvm_gpu {
	uvm_parent_gpu_t parent_storage;
	uvm_parent_gpu_t *parent;
	NvU32 id;
	bool registered;
	uvm_pmm_gpu_t pmm;
	uvm_gpu_identity_mapping_t peer_mappings[UVM_MAX_GPUS];
};

typedef struct {
	NvU32 ref_count;
	NvU32 p2p_handle;
	uvm_gpu_link_type_t link_type;
	NvU32 total_link_line_rate_mbyte_per_s;
	NvU8 peer_ids[2];	/* NvU8 in every tag: RM's 0xffffffff becomes 0xff */
	NvU8 egm_peer_ids[2];
#if UVM_AT_LEAST(590)
	NvU64 bar1_p2p_dma_base_address[2];
	NvU64 bar1_p2p_dma_size[2];
	bool bar1_p2p_pcie_atomics_enabled[2];
#endif
} uvm_parent_gpu_peer_t;

/* Global in real builds (uvm_gpu.h, uvm_pmm_gpu.h, uvm_mmu.h, uvm_hal.h). */
uvm_aperture_t uvm_gpu_peer_aperture(uvm_gpu_t *local_gpu, uvm_gpu_t *remote_gpu);
#if UVM_PMM_PEER_ADDRESS
uvm_gpu_phys_address_t uvm_pmm_gpu_peer_phys_address(uvm_pmm_gpu_t *pmm, uvm_gpu_chunk_t *chunk,
						     uvm_gpu_t *accessing_gpu);
uvm_gpu_address_t uvm_pmm_gpu_peer_copy_address(uvm_pmm_gpu_t *pmm, uvm_gpu_chunk_t *chunk,
						uvm_gpu_t *accessing_gpu);
#else
uvm_gpu_phys_address_t uvm_gpu_peer_phys_address(uvm_gpu_t *owning_gpu, NvU64 address,
						 uvm_gpu_t *accessing_gpu);
uvm_gpu_address_t uvm_gpu_peer_copy_address(uvm_gpu_t *owning_gpu, NvU64 address,
					    uvm_gpu_t *accessing_gpu);
#endif
NV_STATUS uvm_mmu_create_peer_identity_mappings(uvm_gpu_t *gpu, uvm_gpu_t *peer);
NV_STATUS uvm_gpu_retain_pcie_peer_access(uvm_gpu_t *gpu0, uvm_gpu_t *gpu1);
NvU32 uvm_hal_ampere_ce_phys_mode(uvm_gpu_address_t dst, uvm_gpu_address_t src);
NvU32 uvm_hal_hopper_ce_phys_mode(uvm_gpu_address_t dst, uvm_gpu_address_t src);

static uvm_gpu_t uvm_gpus[UVM_MAX_GPUS];
static uvm_parent_gpu_peer_t parent_peers[UVM_MAX_GPUS][UVM_MAX_GPUS];	/* [lo][hi] */
/* Per (accessing, owning): peer access enabled in the VA space. */
static bool can_access[UVM_MAX_GPUS][UVM_MAX_GPUS];

/*
 * Locking, as nvidia-uvm's (uvm_lock.h): g_uvm_global.global_lock for GPU
 * registration and peer set-up (uvm_api_enable_peer_access takes it, then
 * the VA space lock for writing); the VA space lock for reading around
 * mappings and copies (uvm_va_block.c builds PTEs under it and the block
 * lock), so PTE builds run on several CPUs at once.  None of this is RM's
 * lock: RM's locks are taken only inside the nvUvmInterface* calls.
 */
static DEFINE_MUTEX(uvm_global_lock);
static DECLARE_RWSEM(uvm_va_space_lock);

#if UVM_PMM_PEER_ADDRESS
static uvm_gpu_t *uvm_pmm_to_gpu(uvm_pmm_gpu_t *pmm)
{
	return pmm->gpu;
}
#endif

static NvU32 uvm_parent_id_value(const uvm_parent_gpu_t *parent)
{
	return parent->id;
}

static uvm_parent_gpu_peer_t *parent_gpu_peer_caps(const uvm_parent_gpu_t *a,
						   const uvm_parent_gpu_t *b)
{
	NvU32 lo = min(a->id, b->id), hi = max(a->id, b->id);

	return &parent_peers[lo][hi];
}

/* ------------------------------------------------------------------ */
/* PTE encoders: dev_mmu.h's VER2 (Turing..Ada) and VER3 (Hopper+) layouts */

#define HWVALUE64(lo, hi, v)	(((NvU64)(v) & GENMASK_ULL((hi) - (lo), 0)) << (lo))

#define VER2_APERTURE_VIDEO_MEMORY			0
#define VER2_APERTURE_PEER_MEMORY			1
#define VER2_APERTURE_SYSTEM_COHERENT_MEMORY		2
#define VER2_APERTURE_SYSTEM_NON_COHERENT_MEMORY	3
#define VER2_ADDRESS_VID_BITS				25	/* 32:8 */
#define PTE_KIND_GENERIC_MEMORY				0x6

/* Reached only through uvm_mmu_mode_hal_t.make_pte, as in real builds. */
static NvU64 make_pte_turing(uvm_aperture_t aperture, NvU64 address, uvm_prot_t prot, NvU64 flags)
{
	NvU8 aperture_bits = 0;
	NvU64 pte_bits = 0;

	pte_bits |= HWVALUE64(0, 0, 1);				/* valid 0:0 */
	if (aperture == UVM_APERTURE_SYS)
		aperture_bits = VER2_APERTURE_SYSTEM_COHERENT_MEMORY;
	else if (aperture == UVM_APERTURE_VID)
		aperture_bits = VER2_APERTURE_VIDEO_MEMORY;
	else if (aperture >= UVM_APERTURE_PEER_0 && aperture <= UVM_APERTURE_PEER_7)
		aperture_bits = VER2_APERTURE_PEER_MEMORY;
	/* else: UVM_ASSERT_MSG, a no-op in release builds; VIDEO (0) stays */
	pte_bits |= HWVALUE64(1, 2, aperture_bits);		/* aperture 2:1 */
	pte_bits |= HWVALUE64(3, 3, !(flags & UVM_MMU_PTE_FLAGS_CACHED)); /* vol 3:3 */
	pte_bits |= HWVALUE64(6, 6, prot == UVM_PROT_READ_ONLY);	/* read only 6:6 */
	pte_bits |= HWVALUE64(7, 7, prot != UVM_PROT_READ_WRITE_ATOMIC); /* atomic disable */

	address >>= 12;
	if (aperture == UVM_APERTURE_SYS) {
		pte_bits |= HWVALUE64(8, 53, address);		/* ADDRESS_SYS 53:8 */
	} else {
		NvU64 addr_lo = address & GENMASK_ULL(VER2_ADDRESS_VID_BITS - 1, 0);
		NvU64 addr_hi = address >> VER2_ADDRESS_VID_BITS;

		pte_bits |= HWVALUE64(8, 32, addr_lo);		/* ADDRESS_VID 32:8 */
		pte_bits |= HWVALUE64(36, 53, addr_hi);		/* COMPTAGLINE 53:36 */
		if (aperture != UVM_APERTURE_VID)		/* VID_PEER 35:33 */
			pte_bits |= HWVALUE64(33, 35, UVM_APERTURE_PEER_ID(aperture));
	}
	pte_bits |= HWVALUE64(56, 63, PTE_KIND_GENERIC_MEMORY);	/* kind 63:56 */
	return pte_bits;
}

#define VER3_APERTURE_VIDEO_MEMORY			0
#define VER3_APERTURE_PEER_MEMORY			1
#define VER3_APERTURE_SYSTEM_COHERENT_MEMORY		2
#define VER3_APERTURE_SYSTEM_NON_COHERENT_MEMORY	3
/* NV_MMU_VER3_PTE_PCF_REGULAR_RW_NO_ATOMIC_UNCACHED_ACD and friends, reduced */
#define VER3_PCF_RW_ATOMIC_UNCACHED			0x1
#define VER3_PCF_RW_NO_ATOMIC_UNCACHED			0x5

static NvU64 make_pte_hopper(uvm_aperture_t aperture, NvU64 address, uvm_prot_t prot, NvU64 flags)
{
	NvU8 aperture_bits = 0;
	NvU64 pte_bits = 0;

	pte_bits |= HWVALUE64(0, 0, 1);				/* valid 0:0 */
	if (aperture == UVM_APERTURE_SYS)
		aperture_bits = VER3_APERTURE_SYSTEM_COHERENT_MEMORY;
#if UVM_AT_LEAST(580)
	else if (aperture == UVM_APERTURE_SYS_NON_COHERENT)
		aperture_bits = VER3_APERTURE_SYSTEM_NON_COHERENT_MEMORY;
#endif
	else if (aperture == UVM_APERTURE_VID)
		aperture_bits = VER3_APERTURE_VIDEO_MEMORY;
	else if (aperture >= UVM_APERTURE_PEER_0 && aperture <= UVM_APERTURE_PEER_7)
		aperture_bits = VER3_APERTURE_PEER_MEMORY;
	pte_bits |= HWVALUE64(1, 2, aperture_bits);		/* aperture 2:1 */
	pte_bits |= HWVALUE64(3, 7, prot == UVM_PROT_READ_WRITE_ATOMIC ?
			      VER3_PCF_RW_ATOMIC_UNCACHED : VER3_PCF_RW_NO_ATOMIC_UNCACHED);
	pte_bits |= HWVALUE64(8, 11, PTE_KIND_GENERIC_MEMORY);	/* kind 11:8 */

	address >>= 12;
	if (aperture == UVM_APERTURE_VID) {
		pte_bits |= HWVALUE64(12, 39, address);		/* ADDRESS_VID 39:12 */
	} else {
		pte_bits |= HWVALUE64(12, 51, address);		/* ADDRESS 51:12 */
		if (aperture >= UVM_APERTURE_PEER_0 && aperture <= UVM_APERTURE_PEER_7)
			pte_bits |= HWVALUE64(61, 63, UVM_APERTURE_PEER_ID(aperture));
	}
	return pte_bits;
}

static const struct uvm_mmu_mode_hal turing_mmu_mode_hal = { .make_pte = make_pte_turing };
static const struct uvm_mmu_mode_hal hopper_mmu_mode_hal = { .make_pte = make_pte_hopper };

/* ------------------------------------------------------------------ */
/* CE: SET_SRC_PHYS_MODE (clc6b5.h / clc8b5.h: TARGET 1:0, PEER_ID 8:6, FLA 9:9) */

#define CE_TARGET_LOCAL_FB		0
#define CE_TARGET_COHERENT_SYSMEM	1
#define CE_TARGET_NONCOHERENT_SYSMEM	2
#define CE_TARGET_PEERMEM		3
#define CE_PEER_ID(id)			(((NvU32)(id) & 7) << 6)

/* uvm_ampere_ce.c: static, inlined into the phys_mode HAL */
static inline NvU32 ampere_ce_aperture(uvm_aperture_t aperture)
{
	if (aperture == UVM_APERTURE_SYS)
		return CE_TARGET_COHERENT_SYSMEM;
	else if (aperture == UVM_APERTURE_VID)
		return CE_TARGET_LOCAL_FB;
	return CE_TARGET_PEERMEM | CE_PEER_ID(UVM_APERTURE_PEER_ID(aperture));
}

/* uvm_hopper_ce.c */
static inline NvU32 hopper_ce_aperture(uvm_aperture_t aperture)
{
	if (aperture == UVM_APERTURE_SYS)
		return CE_TARGET_COHERENT_SYSMEM;
#if UVM_AT_LEAST(590)
	else if (aperture == UVM_APERTURE_SYS_NON_COHERENT)
		return CE_TARGET_NONCOHERENT_SYSMEM;
#endif
	else if (aperture == UVM_APERTURE_VID)
		return CE_TARGET_LOCAL_FB;
	return CE_TARGET_PEERMEM | CE_PEER_ID(UVM_APERTURE_PEER_ID(aperture));
}

NvU32 uvm_hal_ampere_ce_phys_mode(uvm_gpu_address_t dst, uvm_gpu_address_t src)
{
	return ampere_ce_aperture(src.aperture);
}

NvU32 uvm_hal_hopper_ce_phys_mode(uvm_gpu_address_t dst, uvm_gpu_address_t src)
{
	return hopper_ce_aperture(src.aperture);
}

static const struct uvm_ce_hal ampere_ce_hal = { .phys_mode = uvm_hal_ampere_ce_phys_mode };
static const struct uvm_ce_hal hopper_ce_hal = { .phys_mode = uvm_hal_hopper_ce_phys_mode };

/* ------------------------------------------------------------------ */
/* Peers (uvm_gpu.c) */

static uvm_gpu_link_type_t get_gpu_link_type(NvU32 link)
{
	switch (link) {
	case UVM_LINK_TYPE_PCIE:
		return UVM_GPU_LINK_PCIE;
#if UVM_AT_LEAST(590)
	case UVM_LINK_TYPE_PCIE_BAR1:
		return UVM_GPU_LINK_PCIE_BAR1;
#endif
	case UVM_LINK_TYPE_NVLINK_4:
		return UVM_GPU_LINK_NVLINK_4;
	case UVM_LINK_TYPE_C2C:
		return UVM_GPU_LINK_C2C;
	default:
		return UVM_GPU_LINK_INVALID;
	}
}

/* Lower UVM id first, for both RM calls. */
static void rm_devices_in_id_order(uvm_parent_gpu_t *parent_gpu0, uvm_parent_gpu_t *parent_gpu1,
				   uvmGpuDeviceHandle *rm_device0, uvmGpuDeviceHandle *rm_device1)
{
	if (uvm_parent_id_value(parent_gpu0) > uvm_parent_id_value(parent_gpu1))
		swap(parent_gpu0, parent_gpu1);
	*rm_device0 = parent_gpu0->rm_device;
	*rm_device1 = parent_gpu1->rm_device;
}

static noinline NV_STATUS get_parent_p2p_caps(uvm_parent_gpu_t *parent_gpu0,
					      uvm_parent_gpu_t *parent_gpu1,
					      UvmGpuP2PCapsParams *p2p_caps_params)
{
	uvmGpuDeviceHandle rm_device0, rm_device1;

	rm_devices_in_id_order(parent_gpu0, parent_gpu1, &rm_device0, &rm_device1);
	memset(p2p_caps_params, 0, sizeof(*p2p_caps_params));
	return nvUvmInterfaceGetP2PCaps(rm_device0, rm_device1, p2p_caps_params);
}

static noinline NV_STATUS create_parent_p2p_object(uvm_parent_gpu_t *parent_gpu0,
						   uvm_parent_gpu_t *parent_gpu1,
						   NvU32 *p2p_handle)
{
	uvmGpuDeviceHandle rm_device0, rm_device1;

	rm_devices_in_id_order(parent_gpu0, parent_gpu1, &rm_device0, &rm_device1);
	*p2p_handle = 0;
	return nvUvmInterfaceP2pObjectCreate(rm_device0, rm_device1, p2p_handle);
}

static noinline NV_STATUS parent_peers_init(uvm_parent_gpu_t *parent_gpu0,
					    uvm_parent_gpu_t *parent_gpu1,
					    uvm_parent_gpu_peer_t *parent_peer_caps)
{
	UvmGpuP2PCapsParams p2p_caps_params;
	uvm_gpu_link_type_t link_type;
	NvU32 p2p_handle;
	NV_STATUS status;

	status = create_parent_p2p_object(parent_gpu0, parent_gpu1, &p2p_handle);
	if (status != NV_OK)
		return status;
	status = get_parent_p2p_caps(parent_gpu0, parent_gpu1, &p2p_caps_params);
	if (status != NV_OK)
		goto cleanup;
	link_type = get_gpu_link_type(p2p_caps_params.p2pLink);
	if (link_type == UVM_GPU_LINK_INVALID || link_type == UVM_GPU_LINK_C2C) {
		status = NV_ERR_NOT_SUPPORTED;
		goto cleanup;
	}
	parent_peer_caps->ref_count = 1;
	parent_peer_caps->p2p_handle = p2p_handle;
	parent_peer_caps->link_type = link_type;
	parent_peer_caps->total_link_line_rate_mbyte_per_s = p2p_caps_params.totalLinkLineRateMBps;
	/* Peer id from min(gpu_id0, gpu_id1) -> max(gpu_id0, gpu_id1), and back */
	parent_peer_caps->peer_ids[0] = p2p_caps_params.peerIds[0];
	parent_peer_caps->egm_peer_ids[0] = p2p_caps_params.egmPeerIds[0];
	parent_peer_caps->peer_ids[1] = p2p_caps_params.peerIds[1];
	parent_peer_caps->egm_peer_ids[1] = p2p_caps_params.egmPeerIds[1];
#if UVM_AT_LEAST(590)
	if (link_type == UVM_GPU_LINK_PCIE_BAR1) {
		int i;

		for (i = 0; i < 2; i++) {
			parent_peer_caps->bar1_p2p_dma_base_address[i] =
				p2p_caps_params.bar1DmaAddress[i];
			parent_peer_caps->bar1_p2p_dma_size[i] = p2p_caps_params.bar1DmaSize[i];
			parent_peer_caps->bar1_p2p_pcie_atomics_enabled[i] =
				p2p_caps_params.bar1PcieAtomics[i];
		}
	}
#endif
	return NV_OK;

cleanup:
	nvUvmInterfaceP2pObjectDestroy(NULL, p2p_handle);
	return status;
}

/* Static, inlined into uvm_gpu_peer_aperture in real builds. */
static inline uvm_aperture_t parent_gpu_peer_aperture(uvm_parent_gpu_t *local,
						      uvm_parent_gpu_t *remote,
						      uvm_parent_gpu_peer_t *parent_peer_caps)
{
	size_t peer_index;

	if (uvm_parent_id_value(local) < uvm_parent_id_value(remote))
		peer_index = 0;
	else
		peer_index = 1;
#if UVM_AT_LEAST(590)
	if (parent_peer_caps->link_type == UVM_GPU_LINK_PCIE_BAR1)
		return parent_peer_caps->bar1_p2p_pcie_atomics_enabled[peer_index] ?
		       UVM_APERTURE_SYS : UVM_APERTURE_SYS_NON_COHERENT;
#endif
	return UVM_APERTURE_PEER(parent_peer_caps->peer_ids[peer_index]);
}

noinline uvm_aperture_t uvm_gpu_peer_aperture(uvm_gpu_t *local_gpu, uvm_gpu_t *remote_gpu)
{
	uvm_parent_gpu_peer_t *parent_peer_caps;

	parent_peer_caps = parent_gpu_peer_caps(local_gpu->parent, remote_gpu->parent);
	return parent_gpu_peer_aperture(local_gpu->parent, remote_gpu->parent, parent_peer_caps);
}

#if UVM_PMM_PEER_ADDRESS
/* uvm_pmm_gpu.c (565 and before) */
static __always_inline uvm_gpu_phys_address_t pmm_peer_phys_address(uvm_pmm_gpu_t *pmm,
								    uvm_gpu_chunk_t *chunk,
								    uvm_gpu_t *accessing_gpu)
{
	uvm_gpu_t *gpu = uvm_pmm_to_gpu(pmm);
	uvm_aperture_t aperture = uvm_gpu_peer_aperture(accessing_gpu, gpu);

	return uvm_gpu_phys_address(aperture, chunk->address);
}

noinline __attribute__((__noclone__))
uvm_gpu_phys_address_t uvm_pmm_gpu_peer_phys_address(uvm_pmm_gpu_t *pmm,
						     uvm_gpu_chunk_t *chunk,
						     uvm_gpu_t *accessing_gpu)
{
	uvm_gpu_phys_address_t phys = pmm_peer_phys_address(pmm, chunk, accessing_gpu);

	/* Hold point "pte": inside the function the UVM peer set hooks on return. */
	nv_standin_hold(NV_STANDIN_HOLD_PTE);
	return phys;
}

/*
 * gcc 12 inlines uvm_pmm_gpu_peer_phys_address (same file) into the copy
 * address in the real 565.57.01 nvidia-uvm.ko, and calls it in 550.163.01
 * (tests/real builds): so does this model.
 */
#if NV_STANDIN_MAJOR == 565
#define PMM_COPY_PHYS_ADDRESS pmm_peer_phys_address
#else
#define PMM_COPY_PHYS_ADDRESS uvm_pmm_gpu_peer_phys_address
#endif

static uvm_gpu_identity_mapping_t *uvm_gpu_get_peer_mapping(uvm_gpu_t *gpu, NvU32 peer_id)
{
	return &gpu->peer_mappings[peer_id];
}

noinline __attribute__((__noclone__))
uvm_gpu_address_t uvm_pmm_gpu_peer_copy_address(uvm_pmm_gpu_t *pmm,
						uvm_gpu_chunk_t *chunk,
						uvm_gpu_t *accessing_gpu)
{
	uvm_gpu_t *gpu = uvm_pmm_to_gpu(pmm);
	uvm_gpu_identity_mapping_t *gpu_peer_mapping;

	if (accessing_gpu->parent->peer_copy_mode == UVM_GPU_PEER_COPY_MODE_PHYSICAL)
		return uvm_gpu_address_from_phys(PMM_COPY_PHYS_ADDRESS(pmm, chunk, accessing_gpu));
	gpu_peer_mapping = uvm_gpu_get_peer_mapping(accessing_gpu, gpu->id);
	return (uvm_gpu_address_t){ .address = gpu_peer_mapping->base + chunk->address,
				    .is_virtual = true };
}
#else
/* uvm_gpu.c (570 and later) */
noinline __attribute__((__noclone__))
uvm_gpu_phys_address_t uvm_gpu_peer_phys_address(uvm_gpu_t *owning_gpu, NvU64 address,
						 uvm_gpu_t *accessing_gpu)
{
	uvm_aperture_t aperture = uvm_gpu_peer_aperture(accessing_gpu, owning_gpu);

#if UVM_AT_LEAST(590)
	if (aperture == UVM_APERTURE_SYS || aperture == UVM_APERTURE_SYS_NON_COHERENT) {
		uvm_parent_gpu_peer_t *parent_peer_caps =
			parent_gpu_peer_caps(accessing_gpu->parent, owning_gpu->parent);
		int peer_index = accessing_gpu->id < owning_gpu->id ? 0 : 1;

		address += parent_peer_caps->bar1_p2p_dma_base_address[peer_index];
	}
#endif
	/* Hold point "pte": inside the function the UVM peer set hooks on return. */
	nv_standin_hold(NV_STANDIN_HOLD_PTE);
	return uvm_gpu_phys_address(aperture, address);
}

static uvm_gpu_identity_mapping_t *uvm_gpu_get_peer_mapping(uvm_gpu_t *gpu, NvU32 peer_id)
{
	return &gpu->peer_mappings[peer_id];
}

/*
 * The fault-uvminline build inlines the phys-address computation here, as
 * a compiler may when both are in one file: a hook on
 * uvm_gpu_peer_phys_address then misses physical-mode copies.
 */
#ifdef NV_STANDIN_FAULT_UVMINLINE
static __always_inline uvm_gpu_phys_address_t peer_phys_address_inline(uvm_gpu_t *owning_gpu,
									NvU64 address,
									uvm_gpu_t *accessing_gpu)
{
	return uvm_gpu_phys_address(uvm_gpu_peer_aperture(accessing_gpu, owning_gpu), address);
}
#define COPY_PHYS_ADDRESS peer_phys_address_inline
#else
#define COPY_PHYS_ADDRESS uvm_gpu_peer_phys_address
#endif

noinline __attribute__((__noclone__))
uvm_gpu_address_t uvm_gpu_peer_copy_address(uvm_gpu_t *owning_gpu, NvU64 address,
					    uvm_gpu_t *accessing_gpu)
{
	uvm_gpu_identity_mapping_t *gpu_peer_mapping;

	if (accessing_gpu->parent->peer_copy_mode == UVM_GPU_PEER_COPY_MODE_PHYSICAL)
		return uvm_gpu_address_from_phys(COPY_PHYS_ADDRESS(owning_gpu, address,
								   accessing_gpu));
	gpu_peer_mapping = uvm_gpu_get_peer_mapping(accessing_gpu, owning_gpu->id);
	return (uvm_gpu_address_t){ .address = gpu_peer_mapping->base + address,
				    .is_virtual = true };
}
#endif

/*
 * uvm_mmu.c: the identity mapping of @peer's whole memory in @gpu's VA
 * space; its PTEs come from make_pte with uvm_gpu_peer_aperture() and
 * physical offset 0 (590: from uvm_gpu_peer_phys_address(peer, 0, gpu)).
 * The model keeps the aperture and offset and builds a PTE on request.
 */
noinline NV_STATUS uvm_mmu_create_peer_identity_mappings(uvm_gpu_t *gpu, uvm_gpu_t *peer)
{
	uvm_gpu_identity_mapping_t *m = &gpu->peer_mappings[peer->id];

	if (gpu->parent->peer_copy_mode != UVM_GPU_PEER_COPY_MODE_VIRTUAL)
		return NV_OK;
#if UVM_AT_LEAST(590)
	{
		uvm_gpu_phys_address_t phys = uvm_gpu_peer_phys_address(peer, 0, gpu);

		m->aperture = phys.aperture;
		m->phys_offset = phys.address;
	}
#else
	m->aperture = uvm_gpu_peer_aperture(gpu, peer);
	m->phys_offset = 0;
#endif
	m->base = 0x100000000000ULL * (peer->id + 1);
	m->ready = true;
	return NV_OK;
}

static void peer_release_one(uvm_gpu_t *gpu0, uvm_gpu_t *gpu1)
{
	uvm_parent_gpu_peer_t *caps = parent_gpu_peer_caps(gpu0->parent, gpu1->parent);

	if (!caps->ref_count || --caps->ref_count)
		return;
	nvUvmInterfaceP2pObjectDestroy(NULL, caps->p2p_handle);
	memset(caps, 0, sizeof(*caps));
	memset(&gpu0->peer_mappings[gpu1->id], 0, sizeof(gpu0->peer_mappings[0]));
	memset(&gpu1->peer_mappings[gpu0->id], 0, sizeof(gpu1->peer_mappings[0]));
}

/* peers_retain: the parent pair's caps, then both identity mappings. */
static NV_STATUS peers_retain(uvm_gpu_t *gpu0, uvm_gpu_t *gpu1)
{
	uvm_parent_gpu_peer_t *caps = parent_gpu_peer_caps(gpu0->parent, gpu1->parent);
	NV_STATUS status;

	if (caps->ref_count) {
		caps->ref_count++;
		return NV_OK;
	}
	status = parent_peers_init(gpu0->parent, gpu1->parent, caps);
	if (status != NV_OK)
		return status;
	status = uvm_mmu_create_peer_identity_mappings(gpu0, gpu1);
	if (status == NV_OK)
		status = uvm_mmu_create_peer_identity_mappings(gpu1, gpu0);
	if (status != NV_OK)
		peer_release_one(gpu0, gpu1);
	return status;
}

static uvm_gpu_link_type_t uvm_parent_gpu_peer_link_type(uvm_parent_gpu_t *a, uvm_parent_gpu_t *b)
{
	uvm_parent_gpu_peer_t *caps = parent_gpu_peer_caps(a, b);

	return caps->ref_count ? caps->link_type : UVM_GPU_LINK_INVALID;
}

noinline NV_STATUS uvm_gpu_retain_pcie_peer_access(uvm_gpu_t *gpu0, uvm_gpu_t *gpu1)
{
	NV_STATUS status = peers_retain(gpu0, gpu1);

	if (status != NV_OK)
		return status;
	if (uvm_parent_gpu_peer_link_type(gpu0->parent, gpu1->parent) != UVM_GPU_LINK_PCIE) {
		peer_release_one(gpu0, gpu1);
		return NV_ERR_INVALID_DEVICE;
	}
	return NV_OK;
}

/*
 * 590: parent_peers_discover_static_link at registration: every pair whose
 * link is neither NONE nor PCIE becomes peers (NVLink, C2C, PCIE_BAR1),
 * enabled in the VA space by register_gpu_peers.  Before 590 it only
 * takes NVLink pairs, which this model does not have.
 */
static void parent_peers_discover_static_link(uvm_gpu_t *gpu)
{
#if UVM_AT_LEAST(590)
	UvmGpuP2PCapsParams p2p_caps_params;
	int i;

	for (i = 0; i < UVM_MAX_GPUS; i++) {
		uvm_gpu_t *other = &uvm_gpus[i];

		if (!other->registered || other == gpu)
			continue;
		if (get_parent_p2p_caps(gpu->parent, other->parent, &p2p_caps_params) != NV_OK)
			continue;
		if (p2p_caps_params.p2pLink == UVM_LINK_TYPE_NONE ||
		    p2p_caps_params.p2pLink == UVM_LINK_TYPE_PCIE)
			continue;
		if (peers_retain(gpu, other) == NV_OK) {
			can_access[gpu->id][other->id] = true;
			can_access[other->id][gpu->id] = true;
		}
	}
#endif
}

static NV_STATUS uvm_register_gpu(u32 instance)
{
	uvm_gpu_t *gpu = &uvm_gpus[instance];
	uvm_parent_gpu_t *parent = &gpu->parent_storage;
	NV_STATUS status;

	if (gpu->registered)
		return NV_OK;
	memset(gpu, 0, sizeof(*gpu));
	status = nvUvmInterfaceDeviceCreate(instance, &parent->rm_device, &parent->arch);
	if (status != NV_OK)
		return status;
	gpu->parent = parent;
	gpu->id = instance;
	parent->id = instance;
	gpu->pmm.gpu = gpu;
	switch (parent->arch) {
	case NV_STANDIN_ARCH_GH100:
	case NV_STANDIN_ARCH_GB100:
	case NV_STANDIN_ARCH_GB200:
		parent->mmu = &hopper_mmu_mode_hal;
		parent->ce = &hopper_ce_hal;
		break;
	default:
		parent->mmu = &turing_mmu_mode_hal;
		parent->ce = &ampere_ce_hal;
		break;
	}
	/* uvm_peer_copy=phys applies from Ampere on; Turing is always virtual. */
	if (parent->arch == NV_STANDIN_ARCH_TU100 || !strcmp(uvm_peer_copy, "virt"))
		parent->peer_copy_mode = UVM_GPU_PEER_COPY_MODE_VIRTUAL;
	else
		parent->peer_copy_mode = UVM_GPU_PEER_COPY_MODE_PHYSICAL;
	gpu->registered = true;
	parent_peers_discover_static_link(gpu);
	return NV_OK;
}

/* ------------------------------------------------------------------ */
/* Mapping and copying (uvm_va_block.c) */

static noinline uvm_gpu_phys_address_t block_phys_page_address(uvm_gpu_t *owning_gpu,
							       NvU64 offset,
							       uvm_gpu_t *accessing_gpu)
{
#if UVM_PMM_PEER_ADDRESS
	uvm_gpu_chunk_t chunk = { .address = offset };

	return uvm_pmm_gpu_peer_phys_address(&owning_gpu->pmm, &chunk, accessing_gpu);
#else
	return uvm_gpu_peer_phys_address(owning_gpu, offset, accessing_gpu);
#endif
}

static noinline uvm_gpu_address_t block_phys_page_copy_address(uvm_gpu_t *owning_gpu,
							       NvU64 offset,
							       uvm_gpu_t *accessing_gpu)
{
#if UVM_PMM_PEER_ADDRESS
	uvm_gpu_chunk_t chunk = { .address = offset };

	return uvm_pmm_gpu_peer_copy_address(&owning_gpu->pmm, &chunk, accessing_gpu);
#else
	return uvm_gpu_peer_copy_address(owning_gpu, offset, accessing_gpu);
#endif
}

static void print_pte(struct seq_buf *out, const char *prefix, uvm_parent_gpu_t *parent,
		      NvU64 pte)
{
	seq_buf_printf(out, "%spte=0x%llx\n%spte_aperture=%llu\n", prefix, pte, prefix,
		       (pte >> 1) & 3);
	if (parent->mmu == &turing_mmu_mode_hal) {
		seq_buf_printf(out, "%spte_addr_sys=0x%llx\n%spte_addr_vid=0x%llx\n%spte_peer=%llu\n",
			       prefix, ((pte >> 8) & GENMASK_ULL(45, 0)) << 12,
			       prefix, ((pte >> 8) & GENMASK_ULL(24, 0)) << 12,
			       prefix, (pte >> 33) & 7);
	} else {
		seq_buf_printf(out, "%spte_addr_sys=0x%llx\n%spte_addr_vid=0x%llx\n%spte_peer=%llu\n",
			       prefix, ((pte >> 12) & GENMASK_ULL(39, 0)) << 12,
			       prefix, ((pte >> 12) & GENMASK_ULL(27, 0)) << 12,
			       prefix, (pte >> 61) & 7);
	}
	seq_buf_printf(out, "%spte_atomic_disable=%llu\n", prefix,
		       parent->mmu == &turing_mmu_mode_hal ? (pte >> 7) & 1 :
		       ((pte >> 3) & 0x1f) == VER3_PCF_RW_NO_ATOMIC_UNCACHED);
}

static int cmd_map(uvm_gpu_t *a, uvm_gpu_t *b, NvU64 offset, struct seq_buf *out)
{
	uvm_gpu_phys_address_t phys;
	NvU64 pte;

	if (!can_access[a->id][b->id]) {
		seq_buf_printf(out, "status=0x%x\n", NV_ERR_INVALID_DEVICE);
		return 0;
	}
	phys = block_phys_page_address(b, offset, a);
	/* PCIe peers have no native atomics: read-write, atomics disabled. */
	pte = a->parent->mmu->make_pte(phys.aperture, phys.address, UVM_PROT_READ_WRITE,
				       UVM_MMU_PTE_FLAGS_NONE);
	seq_buf_printf(out, "aperture=%u\naddress=0x%llx\n", phys.aperture, phys.address);
	print_pte(out, "", a->parent, pte);
	seq_buf_printf(out, "status=0x0\n");
	return 0;
}

static int cmd_copy(uvm_gpu_t *a, uvm_gpu_t *b, NvU64 offset, struct seq_buf *out)
{
	uvm_gpu_address_t src, dst = { .aperture = UVM_APERTURE_VID };
	uvm_gpu_identity_mapping_t *m;
	NvU32 word;

	if (!can_access[a->id][b->id]) {
		seq_buf_printf(out, "status=0x%x\n", NV_ERR_INVALID_DEVICE);
		return 0;
	}
	src = block_phys_page_copy_address(b, offset, a);
	if (src.is_virtual) {
		m = &a->peer_mappings[b->id];
		seq_buf_printf(out, "virtual=1\nva=0x%llx\n", src.address);
		print_pte(out, "identity_", a->parent,
			  a->parent->mmu->make_pte(m->aperture, m->phys_offset + offset,
						   UVM_PROT_READ_WRITE, UVM_MMU_PTE_FLAGS_NONE));
	} else {
		word = a->parent->ce->phys_mode(dst, src);
		seq_buf_printf(out, "virtual=0\nce_word=0x%x\nce_target=%u\nce_peer_id=%u\n"
			       "ce_address=0x%llx\n", word, word & 3, (word >> 6) & 7, src.address);
	}
	seq_buf_printf(out, "status=0x0\n");
	return 0;
}

/* uvm_api_enable_peer_access (ioctl 29) */
static int cmd_enable(uvm_gpu_t *a, uvm_gpu_t *b, struct seq_buf *out)
{
	uvm_parent_gpu_peer_t *caps = parent_gpu_peer_caps(a->parent, b->parent);
	NV_STATUS status = uvm_gpu_retain_pcie_peer_access(a, b);

	if (status == NV_OK) {
		can_access[a->id][b->id] = true;
		can_access[b->id][a->id] = true;
	}
	seq_buf_printf(out, "link=%s\npeer_ids=0x%x,0x%x\nstatus=0x%x\n",
		       link_names[uvm_parent_gpu_peer_link_type(a->parent, b->parent)],
		       caps->peer_ids[0], caps->peer_ids[1], status);
	return 0;
}

static int cmd_disable(uvm_gpu_t *a, uvm_gpu_t *b, struct seq_buf *out)
{
	if (!can_access[a->id][b->id] ||
	    uvm_parent_gpu_peer_link_type(a->parent, b->parent) != UVM_GPU_LINK_PCIE)
		return -ENOENT;
	can_access[a->id][b->id] = false;
	can_access[b->id][a->id] = false;
	peer_release_one(a, b);
	seq_buf_printf(out, "status=0x0\n");
	return 0;
}

static int run_cmd(int argc, char **argv, struct seq_buf *out)
{
	u32 a, b;
	u64 offset;

	if (argc == 2 && !strcmp(argv[0], "register")) {
		if (kstrtou32(argv[1], 0, &a) || a >= UVM_MAX_GPUS)
			return -EINVAL;
		seq_buf_printf(out, "status=0x%x\n", uvm_register_gpu(a));
		return 0;
	}
	if (argc < 3 || kstrtou32(argv[1], 0, &a) || kstrtou32(argv[2], 0, &b) ||
	    a >= UVM_MAX_GPUS || b >= UVM_MAX_GPUS || a == b ||
	    !uvm_gpus[a].registered || !uvm_gpus[b].registered)
		return -EINVAL;
	if (argc == 3 && !strcmp(argv[0], "enable"))
		return cmd_enable(&uvm_gpus[a], &uvm_gpus[b], out);
	if (argc == 3 && !strcmp(argv[0], "disable"))
		return cmd_disable(&uvm_gpus[a], &uvm_gpus[b], out);
	if (argc != 4 || kstrtou64(argv[3], 0, &offset))
		return -EINVAL;
	if (!strcmp(argv[0], "map"))
		return cmd_map(&uvm_gpus[a], &uvm_gpus[b], offset, out);
	if (!strcmp(argv[0], "copy"))
		return cmd_copy(&uvm_gpus[a], &uvm_gpus[b], offset, out);
	return -EINVAL;
}

/* ------------------------------------------------------------------ */
/* debugfs */

#define RESP_SIZE	2048

struct ctl_file {
	char resp[RESP_SIZE];
	size_t len;
};

static struct dentry *uvm_debugfs;

static int ctl_open(struct inode *inode, struct file *file)
{
	file->private_data = kzalloc(sizeof(struct ctl_file), GFP_KERNEL);
	return file->private_data ? nonseekable_open(inode, file) : -ENOMEM;
}

static int ctl_release(struct inode *inode, struct file *file)
{
	kfree(file->private_data);
	return 0;
}

static ssize_t ctl_write(struct file *file, const char __user *ubuf, size_t count,
			 loff_t *ppos)
{
	struct ctl_file *f = file->private_data;
	char cmd[128], *argv[6];
	struct seq_buf out;
	int argc, ret;
	bool build;

	argc = standin_ctl_words(cmd, sizeof(cmd), ubuf, count, argv, ARRAY_SIZE(argv));
	if (argc < 0)
		return argc;
	seq_buf_init(&out, f->resp, sizeof(f->resp));
	/* Mappings and copies share the VA space; the rest changes it. */
	build = !strcmp(argv[0], "map") || !strcmp(argv[0], "copy");
	if (build) {
		down_read(&uvm_va_space_lock);
	} else {
		mutex_lock(&uvm_global_lock);
		down_write(&uvm_va_space_lock);
	}
	ret = run_cmd(argc, argv, &out);
	if (build) {
		up_read(&uvm_va_space_lock);
	} else {
		up_write(&uvm_va_space_lock);
		mutex_unlock(&uvm_global_lock);
	}
	f->len = ret ? 0 : seq_buf_used(&out);
	return ret ? ret : count;
}

static ssize_t ctl_read(struct file *file, char __user *ubuf, size_t count, loff_t *ppos)
{
	struct ctl_file *f = file->private_data;

	return simple_read_from_buffer(ubuf, count, ppos, f->resp, f->len);
}

static const struct file_operations ctl_fops = {
	.owner = THIS_MODULE,
	.open = ctl_open,
	.release = ctl_release,
	.write = ctl_write,
	.read = ctl_read,
};

static int __init uvm_init(void)
{
	uvm_debugfs = debugfs_create_dir("nvidia-uvm-standin", NULL);
	debugfs_create_file("ctl", 0600, uvm_debugfs, NULL, &ctl_fops);
	return 0;
}

/* Peers go before their GPUs, as in uvm_gpu_release. */
static void __exit uvm_exit(void)
{
	int i, j;

	debugfs_remove_recursive(uvm_debugfs);
	mutex_lock(&uvm_global_lock);
	down_write(&uvm_va_space_lock);
	for (i = 0; i < UVM_MAX_GPUS; i++)
		for (j = i + 1; j < UVM_MAX_GPUS; j++)
			while (parent_peers[i][j].ref_count)
				peer_release_one(&uvm_gpus[i], &uvm_gpus[j]);
	for (i = 0; i < UVM_MAX_GPUS; i++)
		if (uvm_gpus[i].registered)
			nvUvmInterfaceDeviceDestroy(uvm_gpus[i].parent->rm_device);
	up_write(&uvm_va_space_lock);
	mutex_unlock(&uvm_global_lock);
}

module_init(uvm_init);
module_exit(uvm_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Stand-in for NVIDIA's nvidia-uvm.ko peer path, for p2p-shim tests");
MODULE_VERSION(NV_STANDIN_VERSION);
