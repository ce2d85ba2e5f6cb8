// SPDX-License-Identifier: GPL-2.0
/*
 * Stand-in "RM core" of nvidia.ko: the OS-agnostic part that NVIDIA ships
 * prebuilt as nv-kernel.o and that p2p-shim hooks.
 *
 * This is an independent model written for tests, not NVIDIA code.  It keeps
 * the real driver's function names, C prototypes, constant values, HAL slot
 * layout and call order for the P2P paths (see docs/standin.md for the
 * source of each), so that probes placed by the shim see what they would see
 * in the real module.  Everything else is reduced to a few fields.
 *
 * Like the real core, every RM function is a local symbol, the stubs are
 * separate one-instruction functions, and this object is built without
 * ftrace, with endbr64 at entry and plain "ret" (see Kbuild).
 *
 * NV_STANDIN_MAJOR (545..999) selects the driver generation's behaviour.
 */
#include <linux/delay.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/bitops.h>
#include <linux/seq_buf.h>
#include <linux/sizes.h>
#include <linux/timekeeping.h>
#include <linux/rwsem.h>
#include <linux/mutex.h>

#include "nv-standin.h"

#ifndef NV_STANDIN_VERSION
#error "NV_STANDIN_VERSION must be set by the build"
#endif

/* The driver generations whose behaviour differs (docs/standin.md). */
#define NV_GEN_AT_LEAST(major)	(NV_STANDIN_MAJOR >= (major))
/*
 * Gen 0, 550.x and 560.x (the 545 build, there for its version string,
 * behaves the same): static BAR1 decided and set up through HAL slots
 * (stubs but on GH100), p2pGetCapsStatus without an atomics argument.
 */
#define NV_GEN_0		(!NV_GEN_AT_LEAST(565))

/* ---------------------------------------------------------------------
 * Basic RM types and status codes (values as in nvstatuscodes.h)
 */
typedef u8 NvU8;
typedef u16 NvU16;
typedef u32 NvU32;
typedef u64 NvU64;
typedef NvU8 NvBool;
typedef NvU32 NV_STATUS;
typedef NvU64 RmPhysAddr;

#define NV_TRUE		((NvBool)1)
#define NV_FALSE	((NvBool)0)
#define NV_U64_MAX	(~0ULL)

#define NV_OK				0x00000000
#define NV_ERR_IN_USE			0x00000017
#define NV_ERR_INSUFFICIENT_RESOURCES	0x0000001A
#define NV_ERR_INVALID_ADDRESS		0x0000001E
#define NV_ERR_INVALID_ARGUMENT		0x0000001F
#define NV_ERR_INVALID_REGISTRY_KEY	0x0000003E
#define NV_ERR_INVALID_STATE		0x00000040
#define NV_ERR_NO_MEMORY		0x00000051
#define NV_ERR_NOT_SUPPORTED		0x00000056
#define NV_ERR_OBJECT_NOT_FOUND		0x00000057
#define NV_ERR_STATE_IN_USE		0x00000063
#define NV_ERR_GENERIC			0x0000FFFF

static const struct {
	NV_STATUS status;
	const char *name;
} nvStatusNames[] = {
	{ NV_OK, "NV_OK" },
	{ NV_ERR_IN_USE, "NV_ERR_IN_USE" },
	{ NV_ERR_INSUFFICIENT_RESOURCES, "NV_ERR_INSUFFICIENT_RESOURCES" },
	{ NV_ERR_INVALID_ADDRESS, "NV_ERR_INVALID_ADDRESS" },
	{ NV_ERR_INVALID_ARGUMENT, "NV_ERR_INVALID_ARGUMENT" },
	{ NV_ERR_INVALID_REGISTRY_KEY, "NV_ERR_INVALID_REGISTRY_KEY" },
	{ NV_ERR_INVALID_STATE, "NV_ERR_INVALID_STATE" },
	{ NV_ERR_NO_MEMORY, "NV_ERR_NO_MEMORY" },
	{ NV_ERR_NOT_SUPPORTED, "NV_ERR_NOT_SUPPORTED" },
	{ NV_ERR_OBJECT_NOT_FOUND, "NV_ERR_OBJECT_NOT_FOUND" },
	{ NV_ERR_STATE_IN_USE, "NV_ERR_STATE_IN_USE" },
	{ NV_ERR_GENERIC, "NV_ERR_GENERIC" },
};

static const char *nvStatusToString(NV_STATUS status)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(nvStatusNames); i++)
		if (nvStatusNames[i].status == status)
			return nvStatusNames[i].name;
	return "NV_ERR_UNKNOWN";
}

/* RM's log lines: "NVRM: <function>: <message>". */
#define NV_PRINTF_ERROR(fmt, ...) \
	printk(KERN_ERR "NVRM: %s: " fmt, __func__, ##__VA_ARGS__)
#define NV_PRINTF_INFO(fmt, ...) \
	printk(KERN_INFO "NVRM: %s: " fmt, __func__, ##__VA_ARGS__)

/*
 * Every RM function is static (a local "t" symbol) and never inlined or
 * cloned, so that it keeps its name and C calling convention, as the
 * probed functions of the real nv-kernel.o do.
 */
#define RM_FN	static noinline __attribute__((__noclone__)) __used

/* ---------------------------------------------------------------------
 * Registry keys and values (nvrm_registry.h)
 */
#define NV_REG_STR_CL_FORCE_P2P			"ForceP2P"
#define NV_REG_STR_RM_FORCE_P2P_TYPE		"RMForceP2PType"
#define NV_REG_STR_RM_PCIEP2P_TYPE		"RMPcieP2PType"
#define NV_REG_STR_RM_FORCE_STATIC_BAR1		"RMForceStaticBar1"

/* ForceP2P fields: READ 1:0, WRITE 5:4, ATOMICS 9:8; 0 off, 1 on, 2 default */
#define FORCE_P2P_READ(v)	((v) & 0x3)
#define FORCE_P2P_WRITE(v)	(((v) >> 4) & 0x3)
#define FORCE_P2P_ATOMICS(v)	(((v) >> 8) & 0x3)
#define FORCE_P2P_DISABLE	0
#define FORCE_P2P_ENABLE	1
#define BIF_P2P_NOT_OVERRIDEN	((NvU32)~0)

#if NV_GEN_AT_LEAST(575)
#define NV_REG_STR_RM_FORCE_P2P_TYPE_DEFAULT	0
#define NV_REG_STR_RM_FORCE_P2P_TYPE_PCIEP2P	1
#define NV_REG_STR_RM_FORCE_P2P_TYPE_NVLINK	2
#define NV_REG_STR_RM_FORCE_P2P_TYPE_C2C	3
#define NV_REG_STR_RM_FORCE_P2P_TYPE_MAX	NV_REG_STR_RM_FORCE_P2P_TYPE_C2C
#else
#define NV_REG_STR_RM_FORCE_P2P_TYPE_DEFAULT	0
#define NV_REG_STR_RM_FORCE_P2P_TYPE_MAILBOXP2P	1
#define NV_REG_STR_RM_FORCE_P2P_TYPE_BAR1P2P	2
#define NV_REG_STR_RM_FORCE_P2P_TYPE_NVLINK	3
#define NV_REG_STR_RM_FORCE_P2P_TYPE_C2C	4
#define NV_REG_STR_RM_FORCE_P2P_TYPE_MAX	NV_REG_STR_RM_FORCE_P2P_TYPE_C2C
#endif

/* RMPcieP2PType exists from 575 on. */
#define NV_REG_STR_RM_PCIEP2P_TYPE_MAILBOX	0
#define NV_REG_STR_RM_PCIEP2P_TYPE_BAR1		1
#define NV_REG_STR_RM_PCIEP2P_TYPE_AUTO		2
#define NV_REG_STR_RM_PCIEP2P_TYPE_MAX		NV_REG_STR_RM_PCIEP2P_TYPE_AUTO

#define NV_REG_STR_RM_FORCE_STATIC_BAR1_DISABLE		0
#define NV_REG_STR_RM_FORCE_STATIC_BAR1_ENABLE		1
#define NV_REG_STR_RM_FORCE_STATIC_BAR1_AUTO		2
#if NV_GEN_AT_LEAST(575)
#define NV_REG_STR_RM_FORCE_STATIC_BAR1_MAX		3
#else
#define NV_REG_STR_RM_FORCE_STATIC_BAR1_ONLY_GPU	3
#define NV_REG_STR_RM_FORCE_STATIC_BAR1_MAX		4
#endif

#if NV_GEN_AT_LEAST(580)
#define STATIC_BAR1_DEFAULT	NV_REG_STR_RM_FORCE_STATIC_BAR1_AUTO
#elif NV_GEN_AT_LEAST(575)
#define STATIC_BAR1_DEFAULT	NV_REG_STR_RM_FORCE_STATIC_BAR1_DISABLE
#else
#define STATIC_BAR1_DEFAULT	NV_REG_STR_RM_FORCE_STATIC_BAR1_ONLY_GPU
#endif

/* NV0000 P2P capability statuses (ctrl0000system.h) */
#define NV0000_P2P_CAPS_STATUS_OK			0x00
#define NV0000_P2P_CAPS_STATUS_CHIPSET_NOT_SUPPORTED	0x01
#define NV0000_P2P_CAPS_STATUS_GPU_NOT_SUPPORTED	0x02
#define NV0000_P2P_CAPS_STATUS_IOH_TOPOLOGY_NOT_SUPPORTED 0x03
#define NV0000_P2P_CAPS_STATUS_DISABLED_BY_REGKEY	0x04
#define NV0000_P2P_CAPS_STATUS_NOT_SUPPORTED		0x05

typedef enum {
	P2P_CONNECTIVITY_UNKNOWN = 0,
	P2P_CONNECTIVITY_PCIE_PROPRIETARY = 1,
	P2P_CONNECTIVITY_PCIE_BAR1 = 2,
	P2P_CONNECTIVITY_NVLINK = 3,
	P2P_CONNECTIVITY_NVLINK_INDIRECT = 4,
	P2P_CONNECTIVITY_C2C = 5,
} P2P_CONNECTIVITY;

/* NV_P2PAPI_ATTRIBUTES_CONNECTION_TYPE is bits 3:0 of the attributes. */
#define P2PAPI_CONNECTION_TYPE(attr)	((attr) & 0xF)

static const char *const p2pConnectivityNames[] = {
	[P2P_CONNECTIVITY_UNKNOWN] = "unknown",
	[P2P_CONNECTIVITY_PCIE_PROPRIETARY] = "pcie",
	[P2P_CONNECTIVITY_PCIE_BAR1] = "pcie_bar1",
	[P2P_CONNECTIVITY_NVLINK] = "nvlink",
	[P2P_CONNECTIVITY_NVLINK_INDIRECT] = "nvlink_indirect",
	[P2P_CONNECTIVITY_C2C] = "c2c",
};

#define BUS_INVALID_PEER	0xffffffff
#define P2P_MAX_PEERS		8
#define NVLINK_INVALID_FABRIC_ADDR	NV_U64_MAX

/* ---------------------------------------------------------------------
 * Chips
 */
enum rmArch {
	ARCH_MAXWELL, ARCH_TURING, ARCH_AMPERE, ARCH_ADA, ARCH_HOPPER,
	ARCH_BLACKWELL_GB1XX, ARCH_BLACKWELL_GB2XX,
};

struct rmChip {
	const char *name;
	enum rmArch arch;
	NvBool bGeforce;	/* GSP answers "no PCIe P2P" to GeForce */
	NvBool bNvlink;		/* has NVLink (bridge or SXM) */
	NvBool bBar1P2PByDefault; /* PDB_PROP_KBUS_SUPPORT_BAR1_P2P_BY_DEFAULT */
	int firstMajor;		/* first driver branch that knows the chip */
};

static const struct rmChip rmChips[] = {
	{ "GA102", ARCH_AMPERE, NV_TRUE, NV_TRUE, NV_FALSE, 0 },
	{ "GA100", ARCH_AMPERE, NV_FALSE, NV_TRUE, NV_FALSE, 0 },
	{ "AD102", ARCH_ADA, NV_TRUE, NV_FALSE, NV_FALSE, 0 },
	{ "AD104", ARCH_ADA, NV_TRUE, NV_FALSE, NV_FALSE, 0 },
	{ "GH100", ARCH_HOPPER, NV_FALSE, NV_TRUE, NV_FALSE, 0 },
	{ "GB100", ARCH_BLACKWELL_GB1XX, NV_FALSE, NV_TRUE, NV_FALSE, 0 },
	{ "GB202", ARCH_BLACKWELL_GB2XX, NV_TRUE, NV_FALSE, NV_TRUE, 570 },
	{ "GB203", ARCH_BLACKWELL_GB2XX, NV_TRUE, NV_FALSE, NV_TRUE, 570 },
};

/* ---------------------------------------------------------------------
 * Objects.  Only the fields the modelled paths use.
 */
typedef struct OBJGPU OBJGPU;
typedef struct KernelBus KernelBus;
typedef struct KernelBif KernelBif;
typedef struct KernelGmmu KernelGmmu;
typedef struct VirtMemAllocator VirtMemAllocator;
typedef struct OBJVASPACE OBJVASPACE;
typedef struct OBJIOVASPACE OBJIOVASPACE;
typedef struct Memory Memory;
typedef struct MEMORY_DESCRIPTOR MEMORY_DESCRIPTOR, *PMEMORY_DESCRIPTOR;
typedef struct CLI_DMA_MAPPING_INFO CLI_DMA_MAPPING_INFO;

#define ADDR_SYSMEM	1
#define ADDR_FBMEM	2

/* NV_MEMORY_CACHED / NV_MEMORY_UNCACHED (nvos.h) */
#define NV_MEMORY_UNCACHED	0
#define NV_MEMORY_CACHED	1

/*
 * pGpu first, as in every real tag from 550 to 595 (the shim relies on
 * it).  Two cache attributes, as memdesc.h has them: how the owning GPU
 * caches the memory (vidmem: cached), and how a peer does (uncached unless
 * the allocation asked otherwise).
 */
struct MEMORY_DESCRIPTOR {
	OBJGPU *pGpu;		/* owner of FBMEM */
	NvU32 addressSpace;
	RmPhysAddr base;
	NvU64 size;
	NvBool bUncached;
	NvU32 gpuCacheAttrib;
	NvU32 gpuP2PCacheAttrib;
	NvBool bDiscontiguous;	/* more than one PTE array entry */
	NvU64 pageSize;		/* memdescGetPageSize(AT_GPU); 0: 64 KiB */
};

#define memdescGetGpuCacheAttrib(m)	((m)->gpuCacheAttrib)
#define memdescGetGpuP2PCacheAttrib(m)	((m)->gpuP2PCacheAttrib)

struct OBJVASPACE {
	OBJGPU *pGpu;
	NvU32 vaspaceId;
};

struct OBJIOVASPACE {
	OBJVASPACE base;
	NvU64 mappingCount;
};

struct CLI_DMA_MAPPING_INFO {
	MEMORY_DESCRIPTOR *pMemDesc;	/* what the PTEs point at */
	OBJGPU *pPeerGpu;
	NvU64 bar1Offset;		/* peer BAR1 offset of a BAR1 P2P map */
	NvU64 length;
	NvBool bBar1P2P;
	MEMORY_DESCRIPTOR bar1PhysMemDesc;	/* gen 0: the peer vidmem sub range */
};

/* The parameters for dmaAllocBar1P2PMapping (real field order). */
typedef struct {
	OBJVASPACE *pVas;
	OBJGPU *pPeerGpu;
	MEMORY_DESCRIPTOR *pPeerMemDesc;
	MEMORY_DESCRIPTOR *pMemDescOut;
	NvU32 flags;
	NvU32 flagsOut;
	NvU64 offset;
	NvU64 offsetOut;
	NvU64 length;
	CLI_DMA_MAPPING_INFO *pDmaMappingInfo;
} DMA_BAR1P2P_MAPPING_PRARAMS;

#define DMA_FLAGS_PHYSICAL_KIND		0x1
#define DMA_FLAGS_UNCACHED		0x2

struct KernelBif {
	NvU32 p2pOverride;
	NvU32 forceP2PType;
	NvU32 pcieP2PType;
};

/*
 * KernelBus with its NVOC HAL slots: function pointers filled per chip at
 * construction, called through the kbus*_HAL macros below.
 */
struct KernelBus {
	NV_STATUS (*__kbusCreateP2PMapping__)(OBJGPU *, KernelBus *, OBJGPU *,
					      KernelBus *, NvU32 *, NvU32 *, NvU32);
	NV_STATUS (*__kbusRemoveP2PMapping__)(OBJGPU *, KernelBus *, OBJGPU *,
					      KernelBus *, NvU32, NvU32, NvU32);
	NV_STATUS (*__kbusCreateP2PMappingForMailbox__)(OBJGPU *, KernelBus *,
							OBJGPU *, KernelBus *,
							NvU32 *, NvU32 *, NvU32);
	NV_STATUS (*__kbusRemoveP2PMappingForMailbox__)(OBJGPU *, KernelBus *,
							OBJGPU *, KernelBus *,
							NvU32, NvU32, NvU32);
	NV_STATUS (*__kbusCreateP2PMappingForNvlink__)(OBJGPU *, KernelBus *,
						       OBJGPU *, KernelBus *,
						       NvU32 *, NvU32 *, NvU32);
	NV_STATUS (*__kbusRemoveP2PMappingForNvlink__)(OBJGPU *, KernelBus *,
						       OBJGPU *, KernelBus *,
						       NvU32, NvU32, NvU32);
	NV_STATUS (*__kbusCreateP2PMappingForBar1P2P__)(OBJGPU *, KernelBus *,
							OBJGPU *, KernelBus *,
							NvU32);
	NV_STATUS (*__kbusRemoveP2PMappingForBar1P2P__)(OBJGPU *, KernelBus *,
							OBJGPU *, KernelBus *,
							NvU32);
	NV_STATUS (*__kbusGetBar1P2PDmaInfo__)(OBJGPU *, OBJGPU *, KernelBus *,
					       NvU64 *, NvU64 *);
	NvBool (*__kbusHasPcieBar1P2PMapping__)(OBJGPU *, KernelBus *, OBJGPU *,
						KernelBus *);
	NvBool (*__kbusIsPcieBar1P2PMappingSupported__)(OBJGPU *, KernelBus *,
							OBJGPU *, KernelBus *);
#if NV_GEN_AT_LEAST(580)
	NV_STATUS (*__kbusEnableStaticBar1Mapping__)(OBJGPU *, KernelBus *,
						     NvU32, NvU64);
#endif
#if NV_GEN_0
	NvBool (*__kbusIsBar1P2PCapable__)(OBJGPU *, KernelBus *, NvU32);
	NV_STATUS (*__kbusEnableStaticBar1Mapping__)(OBJGPU *, KernelBus *, NvU32);
	void (*__kbusDisableStaticBar1Mapping__)(OBJGPU *, KernelBus *, NvU32);
	NV_STATUS (*__kbusGetStaticFbAperture__)(OBJGPU *, KernelBus *,
						 MEMORY_DESCRIPTOR *, NvU64,
						 NvU64 *, NvU64 *, NvU32);
	NV_STATUS (*__kbusUpdateStaticBar1VAMapping__)(OBJGPU *, KernelBus *,
						       MEMORY_DESCRIPTOR *,
						       NvU64, NvU64, NvBool);
#endif
	/* The BAR1 VA space's dynamic mappings (rmBar1VaAlloc). */
	struct {
		NvU64 offset, size, pageSize;
	} bar1Maps[16];
	NvU32 bar1MapCount;
	NvBool bBar1Force64KBMapping;	/* kbusDetermineBar1Force64KBMapping */
	NvBool bSupportBar1P2PByDefault;

	NvU32 staticBar1ForceType;
	NvU64 bar1ApertureLength;	/* bar1[GPU_GFID_PF].apertureLength */
	struct {
		NvBool bStaticBar1Enabled;
		NvU64 startOffset;	/* BAR1 offset of the static map */
		NvU64 size;
		MEMORY_DESCRIPTOR dmaMemDesc;	/* SYSMEM: BAR1 bus range */
	} staticBar1;
	NvU64 writeMailboxTotalSize;	/* BAR1 reserved for mailbox P2P */
	struct {
		NvU32 busBar1PeerRefcount[NV_STANDIN_MAX_GPUS];
	} p2pPcieBar1;
	struct {
		NvU32 peerNumberMask[NV_STANDIN_MAX_GPUS];
	} p2pPcie;
	/* Peer ids (mailbox and NVLink): which GPU, how many users. */
	NvU32 peerGpuInstance[P2P_MAX_PEERS];
	NvU32 peerRefcount[P2P_MAX_PEERS];
};

#define kbusCreateP2PMapping_HAL(g0, b0, g1, b1, p0, p1, a) \
	((b0)->__kbusCreateP2PMapping__((g0), (b0), (g1), (b1), (p0), (p1), (a)))
#define kbusRemoveP2PMapping_HAL(g0, b0, g1, b1, p0, p1, a) \
	((b0)->__kbusRemoveP2PMapping__((g0), (b0), (g1), (b1), (p0), (p1), (a)))
#define kbusCreateP2PMappingForMailbox_HAL(g0, b0, g1, b1, p0, p1, a) \
	((b0)->__kbusCreateP2PMappingForMailbox__((g0), (b0), (g1), (b1), (p0), (p1), (a)))
#define kbusRemoveP2PMappingForMailbox_HAL(g0, b0, g1, b1, p0, p1, a) \
	((b0)->__kbusRemoveP2PMappingForMailbox__((g0), (b0), (g1), (b1), (p0), (p1), (a)))
#define kbusCreateP2PMappingForNvlink_HAL(g0, b0, g1, b1, p0, p1, a) \
	((b0)->__kbusCreateP2PMappingForNvlink__((g0), (b0), (g1), (b1), (p0), (p1), (a)))
#define kbusRemoveP2PMappingForNvlink_HAL(g0, b0, g1, b1, p0, p1, a) \
	((b0)->__kbusRemoveP2PMappingForNvlink__((g0), (b0), (g1), (b1), (p0), (p1), (a)))
#define kbusCreateP2PMappingForBar1P2P_HAL(g0, b0, g1, b1, a) \
	((b0)->__kbusCreateP2PMappingForBar1P2P__((g0), (b0), (g1), (b1), (a)))
#define kbusRemoveP2PMappingForBar1P2P_HAL(g0, b0, g1, b1, a) \
	((b0)->__kbusRemoveP2PMappingForBar1P2P__((g0), (b0), (g1), (b1), (a)))
/* Dispatched through the peer's KernelBus, as in the real macro. */
#define kbusGetBar1P2PDmaInfo_HAL(src, peer, peerBus, addr, size) \
	((peerBus)->__kbusGetBar1P2PDmaInfo__((src), (peer), (peerBus), (addr), (size)))
#define kbusHasPcieBar1P2PMapping_HAL(g0, b0, g1, b1) \
	((b0)->__kbusHasPcieBar1P2PMapping__((g0), (b0), (g1), (b1)))
#define kbusIsPcieBar1P2PMappingSupported_HAL(g0, b0, g1, b1) \
	((b0)->__kbusIsPcieBar1P2PMappingSupported__((g0), (b0), (g1), (b1)))
#if NV_GEN_0
#define kbusIsBar1P2PCapable(g, b, gfid) \
	((b)->__kbusIsBar1P2PCapable__((g), (b), (gfid)))
#define kbusEnableStaticBar1Mapping_HAL(g, b, gfid) \
	((b)->__kbusEnableStaticBar1Mapping__((g), (b), (gfid)))
#define kbusDisableStaticBar1Mapping_HAL(g, b, gfid) \
	((b)->__kbusDisableStaticBar1Mapping__((g), (b), (gfid)))
#define kbusGetStaticFbAperture_HAL(g, b, m, o, pa, pl, gfid) \
	((b)->__kbusGetStaticFbAperture__((g), (b), (m), (o), (pa), (pl), (gfid)))
#define kbusUpdateStaticBar1VAMapping_HAL(g, b, m, o, l, r) \
	((b)->__kbusUpdateStaticBar1VAMapping__((g), (b), (m), (o), (l), (r)))
#endif

/* VirtMemAllocator with its two BAR1 P2P HAL slots. */
struct VirtMemAllocator {
	NV_STATUS (*__dmaAllocBar1P2PMapping__)(OBJGPU *, VirtMemAllocator *,
						DMA_BAR1P2P_MAPPING_PRARAMS *);
	void (*__dmaFreeBar1P2PMapping__)(VirtMemAllocator *,
					  CLI_DMA_MAPPING_INFO *);
};

#define dmaAllocBar1P2PMapping_HAL(g, d, p) \
	((d)->__dmaAllocBar1P2PMapping__((g), (d), (p)))
#define dmaFreeBar1P2PMapping_HAL(d, i) ((d)->__dmaFreeBar1P2PMapping__((d), (i)))

/* ---------------------------------------------------------------------
 * GMMU PTE formats (dev_mmu.h: VER2 for Turing..Ada, VER3 for Hopper+)
 */
typedef enum {
	GMMU_APERTURE_INVALID = 0,
	GMMU_APERTURE_VIDEO = 1,
	GMMU_APERTURE_PEER = 2,
	GMMU_APERTURE_SYS_NONCOH = 3,
	GMMU_APERTURE_SYS_COH = 4,
} GMMU_APERTURE;

static const char *const gmmuApertureNames[] = {
	[GMMU_APERTURE_INVALID] = "INVALID",
	[GMMU_APERTURE_VIDEO] = "VIDEO",
	[GMMU_APERTURE_PEER] = "PEER",
	[GMMU_APERTURE_SYS_NONCOH] = "SYS_NONCOH",
	[GMMU_APERTURE_SYS_COH] = "SYS_COH",
};

/* The aperture field's hardware values (NV_MMU_VER{2,3}_PTE_APERTURE_*). */
#define PTE_APERTURE_VIDEO_MEMORY			0
#define PTE_APERTURE_PEER_MEMORY			1
#define PTE_APERTURE_SYSTEM_COHERENT_MEMORY		2
#define PTE_APERTURE_SYSTEM_NON_COHERENT_MEMORY		3

typedef struct {
	NvU32 lo;	/* first bit */
	NvU32 hi;	/* last bit */
} GMMU_FIELD;

typedef struct {
	GMMU_FIELD desc;
	NvU32 shift;	/* address bits dropped before storing */
} GMMU_FIELD_ADDRESS;

/* Field order as in the real GMMU_FMT_PTE. */
typedef struct {
	GMMU_FIELD fldValid;
	GMMU_FIELD fldAperture;
	GMMU_FIELD_ADDRESS fldAddrSysmem;
	GMMU_FIELD_ADDRESS fldAddrVidmem;
	GMMU_FIELD_ADDRESS fldAddrPeer;
	GMMU_FIELD fldPeerIndex;
	GMMU_FIELD fldVolatile;		/* VER2 VOL; VER3 uses PCF instead */
	GMMU_FIELD fldPcf;
	NvU32 version;
} GMMU_FMT_PTE;

static const GMMU_FMT_PTE gmmuFmtPteVer2 = {
	.fldValid = { 0, 0 },
	.fldAperture = { 1, 2 },
	.fldAddrSysmem = { { 8, 53 }, 12 },
	.fldAddrVidmem = { { 8, 32 }, 12 },
	.fldAddrPeer = { { 8, 32 }, 12 },
	.fldPeerIndex = { 33, 35 },
	.fldVolatile = { 3, 3 },
	.fldPcf = { 0, 0 },
	.version = 2,
};

static const GMMU_FMT_PTE gmmuFmtPteVer3 = {
	.fldValid = { 0, 0 },
	.fldAperture = { 1, 2 },
	.fldAddrSysmem = { { 12, 51 }, 12 },
	.fldAddrVidmem = { { 12, 51 }, 12 },
	.fldAddrPeer = { { 12, 51 }, 12 },
	.fldPeerIndex = { 61, 63 },
	.fldVolatile = { 0, 0 },
	.fldPcf = { 3, 7 },
	.version = 3,
};

/* NV_MMU_VER3_PTE_PCF_REGULAR_RW_ATOMIC_{CACHED,UNCACHED}_ACE */
#define PTE_PCF_CACHED		0
#define PTE_PCF_UNCACHED	1

struct KernelGmmu {
	const GMMU_FMT_PTE *pPteFmt;
};

/* ---------------------------------------------------------------------
 * OBJGPU
 */
struct OBJGPU {
	NvU32 gpuInstance;
	NvU32 gpuId;		/* domain << 16 | bus << 8 | device */
	const struct rmChip *pChip;
	struct nv_standin_gpu_desc desc;
	NvU8 bIsVirtual;	/* SR-IOV VF: never in this model */
	NvBool bInitialized;
	NV_STATUS initStatus;
	NvU32 nvlinkPeerMask;	/* gpuInstances linked by NVLink */
	KernelBus kernelBus;
	KernelBif kernelBif;
	KernelGmmu kernelGmmu;
	VirtMemAllocator dma;
	OBJVASPACE vas;		/* the client's GPU VA space */
	OBJIOVASPACE iovas;	/* IOMMU mappings made for this GPU */
	NvU32 liveObjects;
	NvU32 liveMappings;
};

#define GPU_GET_KERNEL_BUS(g)	(&(g)->kernelBus)
#define GPU_GET_KERNEL_BIF(g)	(&(g)->kernelBif)
#define GPU_GET_KERNEL_GMMU(g)	(&(g)->kernelGmmu)
#define GPU_GET_DMA(g)		(&(g)->dma)
#define IS_VIRTUAL(g)		((g)->bIsVirtual)

/*
 * OBJSYS and OBJGPUMGR (system.c, gpu_mgr.c): g_pSys is NULL until RM's
 * init builds the system object, in nvidia's module init; every gpumgr
 * function reads it without a check, so a call before init oopses, as the
 * real one does.
 */
typedef struct OBJGPUMGR {
	OBJGPU *pGpus[NV_STANDIN_MAX_GPUS];
	NvU32 attachedMask;
} OBJGPUMGR;

typedef struct OBJSYS {
	OBJGPUMGR *pGpuMgr;
} OBJSYS;

static OBJGPUMGR rmGpuMgr;
static OBJSYS rmSys;
static OBJSYS *g_pSys;

#define SYS_GET_INSTANCE()	(READ_ONCE(g_pSys))
#define SYS_GET_GPUMGR(s)	((s)->pGpuMgr)
#define gpumgrGpus		(SYS_GET_GPUMGR(SYS_GET_INSTANCE())->pGpus)
#define gpumgrAttachedMask	(SYS_GET_GPUMGR(SYS_GET_INSTANCE())->attachedMask)
static struct nv_standin_config rmConfig;

/* ---------------------------------------------------------------------
 * Locking, as RM has it (docs/standin.md, "Locking and hold points"):
 *
 *   the RM API lock   rmapiLockAcquire (rmapi/rmapi.c): one read/write
 *                     lock; controls flagged API_LOCK_READONLY take it
 *                     shared, allocations, frees and adapter init/teardown
 *                     (rm_init_adapter, rm_shutdown_adapter) exclusive
 *   the GPU locks     rmGpuLocksAcquire (core/locks.c): one lock per GPU,
 *                     all taken in instance order, after the API lock; by
 *                     every control and allocation without NO_GPUS_LOCK,
 *                     and around each GPU state phase of an init
 *                     (gpumgrStateInitGpu), not around gpumgrAttachGpu
 *
 * Each rm_standin_* entry point (an RM API call or an OS entry point in
 * the real driver) takes what its real path takes, and nothing else does.
 * nvidia-uvm's own work (PTE encoding, peer addresses) takes none of
 * them: only its calls into RM do (uvm.c).
 */
#define RMAPI_LOCK_FLAGS_NONE	0
#define RMAPI_LOCK_FLAGS_READ	1

static DECLARE_RWSEM(rmApiLock);
static struct mutex rmGpuLocks[NV_STANDIN_MAX_GPUS];

static void rmapiLockAcquire(NvU32 flags)
{
	if (flags & RMAPI_LOCK_FLAGS_READ)
		down_read(&rmApiLock);
	else
		down_write(&rmApiLock);
}

static void rmapiLockRelease(NvU32 flags)
{
	if (flags & RMAPI_LOCK_FLAGS_READ)
		up_read(&rmApiLock);
	else
		up_write(&rmApiLock);
}

static void rmGpuLocksInit(void)
{
	static bool done;
	unsigned int i;

	if (done)
		return;
	for (i = 0; i < NV_STANDIN_MAX_GPUS; i++)
		mutex_init(&rmGpuLocks[i]);
	done = true;
}

static void rmGpuLocksAcquire(void)
{
	unsigned int i;

	for (i = 0; i < NV_STANDIN_MAX_GPUS; i++)
		mutex_lock_nested(&rmGpuLocks[i], i);
}

static void rmGpuLocksRelease(void)
{
	unsigned int i = NV_STANDIN_MAX_GPUS;

	while (i--)
		mutex_unlock(&rmGpuLocks[i]);
}

/* An RM API call: the API lock (shared for a read-only control), then every GPU lock. */
static void rmApiEnter(NvU32 flags)
{
	rmapiLockAcquire(flags);
	rmGpuLocksAcquire();
}

static void rmApiExit(NvU32 flags)
{
	rmGpuLocksRelease();
	rmapiLockRelease(flags);
}

/* @call under the RM API lock (@flags) and every GPU lock: a control entry point. */
#define RM_API_CALL(flags, call) ({		\
	int ret_;				\
						\
	rmApiEnter(flags);			\
	ret_ = (call);				\
	rmApiExit(flags);			\
	ret_;					\
})

void rm_standin_api_acquire(bool write)
{
	rmapiLockAcquire(write ? RMAPI_LOCK_FLAGS_NONE : RMAPI_LOCK_FLAGS_READ);
}

void rm_standin_api_release(bool write)
{
	rmapiLockRelease(write ? RMAPI_LOCK_FLAGS_NONE : RMAPI_LOCK_FLAGS_READ);
}

/* ---------------------------------------------------------------------
 * Fault injection: fail_gh100=<name of a _GH100 body>
 */
static NvBool rmFaultInjected(const char *func)
{
	return rmConfig.fail_gh100 && !strcmp(rmConfig.fail_gh100, func);
}

#define RM_FAULT_POINT(ret)						\
	do {								\
		if (rmFaultInjected(__func__)) {			\
			NV_PRINTF_ERROR("injected failure\n");		\
			return ret;					\
		}							\
	} while (0)

/* ---------------------------------------------------------------------
 * Registry: what NVreg_RegistryDwords holds, written by the interface
 * layer, read by osReadRegistryDword at GPU initialisation.
 */
#define RM_REGISTRY_MAX		16
#define RM_REGISTRY_KEY_LEN	64

static struct {
	char key[RM_REGISTRY_KEY_LEN];
	NvU32 value;
	int gpu;		/* NVreg_RegistryDwordsPerDevice: its GPU; -1: every GPU */
} rmRegistry[RM_REGISTRY_MAX];
static unsigned int rmRegistryCount;

/* A GPU's own key (NVreg_RegistryDwordsPerDevice) wins over the global one. */
RM_FN NV_STATUS osReadRegistryDwordBase(OBJGPU *pGpu, const char *pRegParmStr,
					NvU32 *pData)
{
	unsigned int i;

	for (i = 0; pGpu && i < rmRegistryCount; i++) {
		if (rmRegistry[i].gpu == (int)pGpu->gpuInstance &&
		    !strcmp(rmRegistry[i].key, pRegParmStr)) {
			*pData = rmRegistry[i].value;
			return NV_OK;
		}
	}
	for (i = 0; i < rmRegistryCount; i++) {
		if (rmRegistry[i].gpu < 0 && !strcmp(rmRegistry[i].key, pRegParmStr)) {
			*pData = rmRegistry[i].value;
			return NV_OK;
		}
	}
	return NV_ERR_OBJECT_NOT_FOUND;
}

RM_FN NV_STATUS osReadRegistryDword(OBJGPU *pGpu, const char *pRegParmStr,
				    NvU32 *pData)
{
	if (!pRegParmStr || !pData)
		return NV_ERR_INVALID_ARGUMENT;
	return osReadRegistryDwordBase(pGpu, pRegParmStr, pData);
}

/* ---------------------------------------------------------------------
 * gpumgr
 */
RM_FN OBJGPU *gpumgrGetGpu(NvU32 gpuInstance)
{
	if (gpuInstance >= NV_STANDIN_MAX_GPUS)
		return NULL;
	return gpumgrGpus[gpuInstance];
}

RM_FN NV_STATUS gpumgrGetGpuAttachInfo(NvU32 *pGpuCnt, NvU32 *pGpuMask)
{
	if (pGpuCnt)
		*pGpuCnt = hweight32(gpumgrAttachedMask);
	if (pGpuMask)
		*pGpuMask = gpumgrAttachedMask;
	return NV_OK;
}

static OBJGPU *gpumgrGetNextGpu(NvU32 gpuMask, NvU32 *pStart)
{
	while (*pStart < NV_STANDIN_MAX_GPUS) {
		NvU32 i = (*pStart)++;

		if ((gpuMask & BIT(i)) && gpumgrGpus[i])
			return gpumgrGpus[i];
	}
	return NULL;
}

RM_FN RmPhysAddr gpumgrGetGpuPhysFbAddr(OBJGPU *pGpu)
{
	return pGpu->desc.bar1_base;
}

/* ---------------------------------------------------------------------
 * NVOC stubs.  The suffix names the stub's source body; each is its own
 * symbol (no identical-code folding), exactly one instruction plus ret.
 */
RM_FN NV_STATUS kbusCreateP2PMappingForBar1P2P_395e98(OBJGPU *pGpu0,
		KernelBus *pKernelBus0, OBJGPU *pGpu1, KernelBus *pKernelBus1,
		NvU32 attributes)
{
	return NV_ERR_NOT_SUPPORTED;
}

RM_FN NV_STATUS kbusRemoveP2PMappingForBar1P2P_395e98(OBJGPU *pGpu0,
		KernelBus *pKernelBus0, OBJGPU *pGpu1, KernelBus *pKernelBus1,
		NvU32 attributes)
{
	return NV_ERR_NOT_SUPPORTED;
}

RM_FN NV_STATUS kbusGetBar1P2PDmaInfo_395e98(OBJGPU *pSrcGpu,
		OBJGPU *pPeerGpu, KernelBus *pPeerKernelBus, NvU64 *dma_addr,
		NvU64 *dma_size)
{
	return NV_ERR_NOT_SUPPORTED;
}

/* 550-560 name these two stubs after another body (same code). */
#if NV_GEN_0
#define kbusHasPcieBar1P2PMapping_STUB		kbusHasPcieBar1P2PMapping_bf6dfa
#define kbusIsPcieBar1P2PMappingSupported_STUB	kbusIsPcieBar1P2PMappingSupported_bf6dfa
#else
#define kbusHasPcieBar1P2PMapping_STUB		kbusHasPcieBar1P2PMapping_d69453
#define kbusIsPcieBar1P2PMappingSupported_STUB	kbusIsPcieBar1P2PMappingSupported_d69453
#endif

#ifndef NV_STANDIN_FAULT_FOLD
RM_FN NvBool kbusHasPcieBar1P2PMapping_STUB(OBJGPU *pGpu0,
		KernelBus *pKernelBus0, OBJGPU *pGpu1, KernelBus *pKernelBus1)
{
	return NV_FALSE;
}
#endif

RM_FN NvBool kbusIsPcieBar1P2PMappingSupported_STUB(OBJGPU *pGpu0,
		KernelBus *pKernelBus0, OBJGPU *pGpu1, KernelBus *pKernelBus1)
{
#ifdef NV_STANDIN_FAULT_STUB
	/* fault-stub build: a stub whose body is not the known one */
	return NV_TRUE;
#else
	return NV_FALSE;
#endif
}

#ifdef NV_STANDIN_FAULT_FOLD
/*
 * fault-fold build: the two stubs (the same body) folded into one
 * function with two names, as identical-code folding leaves them.
 */
static NvBool kbusHasPcieBar1P2PMapping_STUB(OBJGPU *pGpu0,
		KernelBus *pKernelBus0, OBJGPU *pGpu1, KernelBus *pKernelBus1)
	__attribute__((__alias__("kbusIsPcieBar1P2PMappingSupported_d69453"), __used__));
#endif

#if NV_GEN_AT_LEAST(580)
RM_FN NV_STATUS kbusEnableStaticBar1Mapping_395e98(OBJGPU *pGpu,
		KernelBus *pKernelBus, NvU32 gfid, NvU64 bar1Offset)
{
	return NV_ERR_NOT_SUPPORTED;
}
#endif

#if NV_GEN_0
/* The static BAR1 slots of 550-560 (g_kern_bus_nvoc.h), default branch. */
RM_FN NvBool kbusIsBar1P2PCapable_bf6dfa(OBJGPU *pGpu, KernelBus *pKernelBus,
					 NvU32 gfid)
{
	return NV_FALSE;
}

RM_FN NV_STATUS kbusEnableStaticBar1Mapping_395e98(OBJGPU *pGpu,
		KernelBus *pKernelBus, NvU32 gfid)
{
	return NV_ERR_NOT_SUPPORTED;
}

RM_FN void kbusDisableStaticBar1Mapping_d44104(OBJGPU *pGpu,
		KernelBus *pKernelBus, NvU32 gfid)
{
}

RM_FN NV_STATUS kbusGetStaticFbAperture_395e98(OBJGPU *pGpu,
		KernelBus *pKernelBus, MEMORY_DESCRIPTOR *pMemDesc, NvU64 offset,
		NvU64 *pAperOffset, NvU64 *pLength, NvU32 gfid)
{
	return NV_ERR_NOT_SUPPORTED;
}

RM_FN NV_STATUS kbusUpdateStaticBar1VAMapping_395e98(OBJGPU *pGpu,
		KernelBus *pKernelBus, MEMORY_DESCRIPTOR *pMemDesc, NvU64 offset,
		NvU64 length, NvBool bRelease)
{
	return NV_ERR_NOT_SUPPORTED;
}
#endif

/* 595 renamed the dma stubs (same bodies). */
#if NV_GEN_AT_LEAST(595)
#define dmaAllocBar1P2PMapping_STUB	dmaAllocBar1P2PMapping_395e98
#define dmaFreeBar1P2PMapping_STUB	dmaFreeBar1P2PMapping_d44104
#else
#define dmaAllocBar1P2PMapping_STUB	dmaAllocBar1P2PMapping_46f6a7
#define dmaFreeBar1P2PMapping_STUB	dmaFreeBar1P2PMapping_b3696a
#endif

RM_FN NV_STATUS dmaAllocBar1P2PMapping_STUB(OBJGPU *pGpu,
		VirtMemAllocator *pDma, DMA_BAR1P2P_MAPPING_PRARAMS *params)
{
	return NV_ERR_NOT_SUPPORTED;
}

RM_FN void dmaFreeBar1P2PMapping_STUB(VirtMemAllocator *pDma,
				      CLI_DMA_MAPPING_INFO *pDmaMappingInfo)
{
}

/* ---------------------------------------------------------------------
 * KernelBus: peer ids (mailbox and NVLink)
 */
static NvU32 kbusReservePeerId(KernelBus *pKernelBus, NvU32 remoteInstance)
{
	NvU32 i;

	for (i = 0; i < P2P_MAX_PEERS; i++) {
		if (pKernelBus->peerRefcount[i] &&
		    pKernelBus->peerGpuInstance[i] == remoteInstance) {
			pKernelBus->peerRefcount[i]++;
			return i;
		}
	}
	for (i = 0; i < P2P_MAX_PEERS; i++) {
		if (!pKernelBus->peerRefcount[i]) {
			pKernelBus->peerRefcount[i] = 1;
			pKernelBus->peerGpuInstance[i] = remoteInstance;
			return i;
		}
	}
	return BUS_INVALID_PEER;
}

static void kbusReleasePeerId(KernelBus *pKernelBus, NvU32 peerId)
{
	if (peerId < P2P_MAX_PEERS && pKernelBus->peerRefcount[peerId])
		pKernelBus->peerRefcount[peerId]--;
}

static NvU32 kbusGetPeerId(KernelBus *pKernelBus, NvU32 remoteInstance)
{
	NvU32 i;

	for (i = 0; i < P2P_MAX_PEERS; i++)
		if (pKernelBus->peerRefcount[i] &&
		    pKernelBus->peerGpuInstance[i] == remoteInstance)
			return i;
	return BUS_INVALID_PEER;
}

/* Ada and Blackwell GeForce have no working mailbox P2P hardware. */
static NvBool kbusIsMailboxBroken(OBJGPU *pGpu)
{
	return pGpu->pChip->bGeforce &&
	       (pGpu->pChip->arch == ARCH_ADA ||
		pGpu->pChip->arch == ARCH_BLACKWELL_GB2XX);
}

/* ---------------------------------------------------------------------
 * KernelBus: mailbox and NVLink P2P
 */
RM_FN NV_STATUS kbusCreateP2PMappingForMailbox_GM200(OBJGPU *pGpu0,
		KernelBus *pKernelBus0, OBJGPU *pGpu1, KernelBus *pKernelBus1,
		NvU32 *peer0, NvU32 *peer1, NvU32 attributes)
{
	NvU32 p0, p1;

	p0 = kbusReservePeerId(pKernelBus0, pGpu1->gpuInstance);
	if (p0 == BUS_INVALID_PEER)
		return NV_ERR_INSUFFICIENT_RESOURCES;
	p1 = kbusReservePeerId(pKernelBus1, pGpu0->gpuInstance);
	if (p1 == BUS_INVALID_PEER) {
		kbusReleasePeerId(pKernelBus0, p0);
		return NV_ERR_INSUFFICIENT_RESOURCES;
	}
	pKernelBus0->p2pPcie.peerNumberMask[pGpu1->gpuInstance] |= BIT(p0);
	pKernelBus1->p2pPcie.peerNumberMask[pGpu0->gpuInstance] |= BIT(p1);
	*peer0 = p0;
	*peer1 = p1;
	/*
	 * The programming "succeeds" even where the mailbox hardware is
	 * gone (Ada, Blackwell GeForce): traffic would then fail silently.
	 */
	return NV_OK;
}

RM_FN NV_STATUS kbusRemoveP2PMappingForMailbox_GM200(OBJGPU *pGpu0,
		KernelBus *pKernelBus0, OBJGPU *pGpu1, KernelBus *pKernelBus1,
		NvU32 peer0, NvU32 peer1, NvU32 attributes)
{
	if (peer0 >= P2P_MAX_PEERS || peer1 >= P2P_MAX_PEERS)
		return NV_ERR_INVALID_ARGUMENT;
	kbusReleasePeerId(pKernelBus0, peer0);
	kbusReleasePeerId(pKernelBus1, peer1);
	if (!pKernelBus0->peerRefcount[peer0])
		pKernelBus0->p2pPcie.peerNumberMask[pGpu1->gpuInstance] &= ~BIT(peer0);
	if (!pKernelBus1->peerRefcount[peer1])
		pKernelBus1->p2pPcie.peerNumberMask[pGpu0->gpuInstance] &= ~BIT(peer1);
	return NV_OK;
}

RM_FN NV_STATUS kbusCreateP2PMappingForNvlink_GP100(OBJGPU *pGpu0,
		KernelBus *pKernelBus0, OBJGPU *pGpu1, KernelBus *pKernelBus1,
		NvU32 *peer0, NvU32 *peer1, NvU32 attributes)
{
	NvU32 p0, p1;

	if (!(pGpu0->nvlinkPeerMask & BIT(pGpu1->gpuInstance)))
		return NV_ERR_INVALID_STATE;
	p0 = kbusReservePeerId(pKernelBus0, pGpu1->gpuInstance);
	p1 = kbusReservePeerId(pKernelBus1, pGpu0->gpuInstance);
	if (p0 == BUS_INVALID_PEER || p1 == BUS_INVALID_PEER) {
		kbusReleasePeerId(pKernelBus0, p0);
		kbusReleasePeerId(pKernelBus1, p1);
		return NV_ERR_INSUFFICIENT_RESOURCES;
	}
	*peer0 = p0;
	*peer1 = p1;
	return NV_OK;
}

RM_FN NV_STATUS kbusRemoveP2PMappingForNvlink_GP100(OBJGPU *pGpu0,
		KernelBus *pKernelBus0, OBJGPU *pGpu1, KernelBus *pKernelBus1,
		NvU32 peer0, NvU32 peer1, NvU32 attributes)
{
	if (peer0 >= P2P_MAX_PEERS || peer1 >= P2P_MAX_PEERS)
		return NV_ERR_INVALID_ARGUMENT;
	kbusReleasePeerId(pKernelBus0, peer0);
	kbusReleasePeerId(pKernelBus1, peer1);
	return NV_OK;
}

/* ---------------------------------------------------------------------
 * KernelBus: BAR1 P2P (_GH100 bodies)
 */
#if NV_GEN_0
/* kern_bus.c: out of line (a global function of nv-kernel.o in 550). */
RM_FN NvBool kbusIsStaticBar1Enabled_IMPL(OBJGPU *pGpu, KernelBus *pKernelBus)
{
	return pKernelBus->staticBar1.bStaticBar1Enabled;
}
#define kbusIsStaticBar1Enabled(g, b)	kbusIsStaticBar1Enabled_IMPL((g), (b))
#else
static NvBool kbusIsStaticBar1Enabled(OBJGPU *pGpu, KernelBus *pKernelBus)
{
	return pKernelBus->staticBar1.bStaticBar1Enabled;
}
#endif

RM_FN NvBool kbusIsPcieBar1P2PMappingSupported_GH100(OBJGPU *pGpu0,
		KernelBus *pKernelBus0, OBJGPU *pGpu1, KernelBus *pKernelBus1)
{
	RM_FAULT_POINT(NV_FALSE);

#if NV_GEN_AT_LEAST(590)
	/* From 590: BAR1 P2P only when asked for, except on GB20x. */
	if (GPU_GET_KERNEL_BIF(pGpu0)->pcieP2PType != NV_REG_STR_RM_PCIEP2P_TYPE_BAR1 &&
	    !pKernelBus0->bSupportBar1P2PByDefault)
		return NV_FALSE;
#endif
	if (pGpu0 == pGpu1)
		return NV_FALSE;	/* no loopback through BAR1 */
	if (!kbusIsStaticBar1Enabled(pGpu0, pKernelBus0) ||
	    !kbusIsStaticBar1Enabled(pGpu1, pKernelBus1))
		return NV_FALSE;
	/* Mailbox and BAR1 P2P between the same pair exclude each other. */
	if (pKernelBus0->p2pPcie.peerNumberMask[pGpu1->gpuInstance] ||
	    pKernelBus1->p2pPcie.peerNumberMask[pGpu0->gpuInstance])
		return NV_FALSE;
	return NV_TRUE;
}

RM_FN NvBool kbusHasPcieBar1P2PMapping_GH100(OBJGPU *pGpu0,
		KernelBus *pKernelBus0, OBJGPU *pGpu1, KernelBus *pKernelBus1)
{
	RM_FAULT_POINT(NV_FALSE);
	return pKernelBus0->p2pPcieBar1.busBar1PeerRefcount[pGpu1->gpuInstance] &&
	       pKernelBus1->p2pPcieBar1.busBar1PeerRefcount[pGpu0->gpuInstance];
}

/* memdescMapIommu of the peer's static BAR1 into the GPU's IOVA space. */
static NV_STATUS _kbusCreateStaticBar1IOMMUMapping(OBJGPU *pSrcGpu,
						   OBJGPU *pPeerGpu)
{
	RmPhysAddr dma = pPeerGpu->kernelBus.staticBar1.dmaMemDesc.base;

	/* The peer's static BAR1 must be 512 MiB aligned as the GPU sees it. */
	if (dma & (SZ_512M - 1)) {
		NV_PRINTF_ERROR("static BAR1 DMA address 0x%llx not 512MB aligned\n",
				dma);
		return NV_ERR_INVALID_ADDRESS;
	}
	pSrcGpu->iovas.mappingCount++;
	return NV_OK;
}

static NV_STATUS _kbusCreateStaticBar1IOMMUMappingForGpuPair(OBJGPU *pGpu0,
							     OBJGPU *pGpu1)
{
	NV_STATUS status;

	status = _kbusCreateStaticBar1IOMMUMapping(pGpu0, pGpu1);
	if (status != NV_OK)
		return status;
	status = _kbusCreateStaticBar1IOMMUMapping(pGpu1, pGpu0);
	if (status != NV_OK)
		pGpu0->iovas.mappingCount--;
	return status;
}

static void _kbusRemoveStaticBar1IOMMUMappingForGpuPair(OBJGPU *pGpu0,
							OBJGPU *pGpu1)
{
	pGpu0->iovas.mappingCount--;
	pGpu1->iovas.mappingCount--;
}

RM_FN NV_STATUS kbusCreateP2PMappingForBar1P2P_GH100(OBJGPU *pGpu0,
		KernelBus *pKernelBus0, OBJGPU *pGpu1, KernelBus *pKernelBus1,
		NvU32 attributes)
{
	NvU32 *pRef0 = &pKernelBus0->p2pPcieBar1.busBar1PeerRefcount[pGpu1->gpuInstance];
	NvU32 *pRef1 = &pKernelBus1->p2pPcieBar1.busBar1PeerRefcount[pGpu0->gpuInstance];
	NV_STATUS status;

	RM_FAULT_POINT(NV_ERR_GENERIC);

	if (IS_VIRTUAL(pGpu0) || IS_VIRTUAL(pGpu1))
		return NV_ERR_NOT_SUPPORTED;
	if (!kbusIsPcieBar1P2PMappingSupported_HAL(pGpu0, pKernelBus0, pGpu1,
						   pKernelBus1))
		return NV_ERR_NOT_SUPPORTED;

	/* The first BAR1 mapping of the pair maps each side's BAR1 for the other. */
	if (*pRef0 == 0 && *pRef1 == 0) {
		status = _kbusCreateStaticBar1IOMMUMappingForGpuPair(pGpu0, pGpu1);
		if (status != NV_OK)
			return status;
	}
	nv_standin_hold(NV_STANDIN_HOLD_CREATE);
	(*pRef0)++;
	(*pRef1)++;
	NV_PRINTF_INFO("added PCIe BAR1 P2P mapping between GPU%u and GPU%u\n",
		       pGpu0->gpuInstance, pGpu1->gpuInstance);
	return NV_OK;
}

RM_FN NV_STATUS kbusRemoveP2PMappingForBar1P2P_GH100(OBJGPU *pGpu0,
		KernelBus *pKernelBus0, OBJGPU *pGpu1, KernelBus *pKernelBus1,
		NvU32 attributes)
{
	NvU32 *pRef0 = &pKernelBus0->p2pPcieBar1.busBar1PeerRefcount[pGpu1->gpuInstance];
	NvU32 *pRef1 = &pKernelBus1->p2pPcieBar1.busBar1PeerRefcount[pGpu0->gpuInstance];

	RM_FAULT_POINT(NV_ERR_GENERIC);

	if (IS_VIRTUAL(pGpu0) || IS_VIRTUAL(pGpu1))
		return NV_ERR_NOT_SUPPORTED;
	if (*pRef0 == 0 || *pRef1 == 0)
		return NV_ERR_INVALID_STATE;
	(*pRef0)--;
	(*pRef1)--;
	if (*pRef0 == 0 && *pRef1 == 0)
		_kbusRemoveStaticBar1IOMMUMappingForGpuPair(pGpu0, pGpu1);
	return NV_OK;
}
#ifdef NV_STANDIN_FAULT_NOKPROBE
/*
 * The fault-nokprobe build: the kernel refuses kprobes on this body (gen-b's
 * last hook), which passes every check, so an arming fails part-way, after
 * every other probe went in (docs/lifecycle.md, arm-fail).
 */
NOKPROBE_SYMBOL(kbusRemoveP2PMappingForBar1P2P_GH100);
#endif

/*
 * The fault-nosym build has this body under a compiler-clone name, so the
 * symbol kbusGetBar1P2PDmaInfo_GH100 does not exist.
 */
#ifdef NV_STANDIN_FAULT_NOSYM
#define GETDMAINFO_GH100_NAME __asm__("kbusGetBar1P2PDmaInfo_GH100.isra.0")
#else
#define GETDMAINFO_GH100_NAME
#endif

/*
 * The fault-endbr build gives this body no ENDBR, as objtool's sealing
 * leaves a function that is only called directly on an IBT kernel (the
 * kernel then overwrites the ENDBR with a 4-byte nop at load; QEMU's CPU
 * has no IBT, so this build shows the first bytes directly).
 */
#ifdef NV_STANDIN_FAULT_ENDBR
#define GETDMAINFO_GH100_CF __attribute__((nocf_check))
#else
#define GETDMAINFO_GH100_CF
#endif

RM_FN GETDMAINFO_GH100_CF NV_STATUS kbusGetBar1P2PDmaInfo_GH100(OBJGPU *pSrcGpu, OBJGPU *pPeerGpu,
		KernelBus *pPeerKernelBus, NvU64 *dma_addr, NvU64 *dma_size)
		GETDMAINFO_GH100_NAME;

RM_FN GETDMAINFO_GH100_CF NV_STATUS kbusGetBar1P2PDmaInfo_GH100(OBJGPU *pSrcGpu,
		OBJGPU *pPeerGpu, KernelBus *pPeerKernelBus, NvU64 *dma_addr, NvU64 *dma_size)
{
	*dma_addr = NV_U64_MAX;
	*dma_size = 0;

	RM_FAULT_POINT(NV_ERR_GENERIC);

	if (!pPeerKernelBus->staticBar1.bStaticBar1Enabled)
		return NV_ERR_NOT_SUPPORTED;
	/* No IOMMU is modelled: the DMA address is the bus address. */
	*dma_addr = pPeerKernelBus->staticBar1.dmaMemDesc.base;
	*dma_size = pPeerKernelBus->staticBar1.dmaMemDesc.size;
	return NV_OK;
}

/* ---------------------------------------------------------------------
 * KernelBus: kbusCreateP2PMapping / kbusRemoveP2PMapping
 */
RM_FN NV_STATUS kbusCreateP2PMapping_GP100(OBJGPU *pGpu0,
		KernelBus *pKernelBus0, OBJGPU *pGpu1, KernelBus *pKernelBus1,
		NvU32 *peer0, NvU32 *peer1, NvU32 attributes)
{
	NvU32 type = P2PAPI_CONNECTION_TYPE(attributes);

	if (type == P2P_CONNECTIVITY_NVLINK ||
	    type == P2P_CONNECTIVITY_NVLINK_INDIRECT)
		return kbusCreateP2PMappingForNvlink_HAL(pGpu0, pKernelBus0, pGpu1,
							 pKernelBus1, peer0, peer1,
							 attributes);
	if (type == P2P_CONNECTIVITY_PCIE_PROPRIETARY)
		return kbusCreateP2PMappingForMailbox_HAL(pGpu0, pKernelBus0, pGpu1,
							  pKernelBus1, peer0, peer1,
							  attributes);
	NV_PRINTF_ERROR("P2P type %u is not supported\n", type);
	return NV_ERR_NOT_SUPPORTED;
}

RM_FN NV_STATUS kbusCreateP2PMapping_GH100(OBJGPU *pGpu0,
		KernelBus *pKernelBus0, OBJGPU *pGpu1, KernelBus *pKernelBus1,
		NvU32 *peer0, NvU32 *peer1, NvU32 attributes)
{
	NvU32 type = P2PAPI_CONNECTION_TYPE(attributes);

	RM_FAULT_POINT(NV_ERR_GENERIC);

	if (type == P2P_CONNECTIVITY_C2C)
		return NV_ERR_NOT_SUPPORTED;	/* no C2C hardware modelled */
	if (type == P2P_CONNECTIVITY_NVLINK ||
	    type == P2P_CONNECTIVITY_NVLINK_INDIRECT)
		return kbusCreateP2PMappingForNvlink_HAL(pGpu0, pKernelBus0, pGpu1,
							 pKernelBus1, peer0, peer1,
							 attributes);
	if (type == P2P_CONNECTIVITY_PCIE_BAR1)
		return kbusCreateP2PMappingForBar1P2P_HAL(pGpu0, pKernelBus0, pGpu1,
							  pKernelBus1, attributes);
	if (type == P2P_CONNECTIVITY_PCIE_PROPRIETARY)
		return kbusCreateP2PMappingForMailbox_HAL(pGpu0, pKernelBus0, pGpu1,
							  pKernelBus1, peer0, peer1,
							  attributes);
	NV_PRINTF_ERROR("P2P type %u is not supported\n", type);
	return NV_ERR_NOT_SUPPORTED;
}

RM_FN NV_STATUS kbusRemoveP2PMapping_GP100(OBJGPU *pGpu0,
		KernelBus *pKernelBus0, OBJGPU *pGpu1, KernelBus *pKernelBus1,
		NvU32 peer0, NvU32 peer1, NvU32 attributes)
{
	NvU32 type = P2PAPI_CONNECTION_TYPE(attributes);

	if (type == P2P_CONNECTIVITY_NVLINK ||
	    type == P2P_CONNECTIVITY_NVLINK_INDIRECT)
		return kbusRemoveP2PMappingForNvlink_HAL(pGpu0, pKernelBus0, pGpu1,
							 pKernelBus1, peer0, peer1,
							 attributes);
	if (type == P2P_CONNECTIVITY_PCIE_PROPRIETARY)
		return kbusRemoveP2PMappingForMailbox_HAL(pGpu0, pKernelBus0, pGpu1,
							  pKernelBus1, peer0, peer1,
							  attributes);
	NV_PRINTF_ERROR("P2P type %u is not supported\n", type);
	return NV_ERR_NOT_SUPPORTED;
}

RM_FN NV_STATUS kbusRemoveP2PMapping_GH100(OBJGPU *pGpu0,
		KernelBus *pKernelBus0, OBJGPU *pGpu1, KernelBus *pKernelBus1,
		NvU32 peer0, NvU32 peer1, NvU32 attributes)
{
	NvU32 type = P2PAPI_CONNECTION_TYPE(attributes);

	RM_FAULT_POINT(NV_ERR_GENERIC);

	if (type == P2P_CONNECTIVITY_C2C)
		return NV_ERR_NOT_SUPPORTED;
	if (type == P2P_CONNECTIVITY_NVLINK ||
	    type == P2P_CONNECTIVITY_NVLINK_INDIRECT)
		return kbusRemoveP2PMappingForNvlink_HAL(pGpu0, pKernelBus0, pGpu1,
							 pKernelBus1, peer0, peer1,
							 attributes);
	if (type == P2P_CONNECTIVITY_PCIE_BAR1)
		return kbusRemoveP2PMappingForBar1P2P_HAL(pGpu0, pKernelBus0, pGpu1,
							  pKernelBus1, attributes);
	if (type == P2P_CONNECTIVITY_PCIE_PROPRIETARY)
		return kbusRemoveP2PMappingForMailbox_HAL(pGpu0, pKernelBus0, pGpu1,
							  pKernelBus1, peer0, peer1,
							  attributes);
	NV_PRINTF_ERROR("P2P type %u is not supported\n", type);
	return NV_ERR_NOT_SUPPORTED;
}

/* ---------------------------------------------------------------------
 * Static BAR1 (kbusInitBar1 -> kbusIsStaticBar1Supported_TU102 ->
 * kbusEnableStaticBar1Mapping_TU102), per generation.
 */
#define RM_USERD_TOTAL_SIZE	SZ_1M	/* USERD size x max channels */
#define RM_MAILBOX_BAR1_SIZE	SZ_1M	/* P2P write mailbox area */

/*
 * kbusInitBar1_GM107: BAR1's usable VA is the aperture (the BAR, or less
 * with RMBar1ApertureSizeMB: kbusDetermineBar1ApertureLength) minus the
 * overfetch WAR page (vaRangeMax = size - 1 - 4 KiB: mappableLength); the
 * rules align it down to 2 MiB (bar1VASizeAligned).
 */
static __maybe_unused NvU64 rmBar1ApertureLength(OBJGPU *pGpu)
{
	return GPU_GET_KERNEL_BUS(pGpu)->bar1ApertureLength ?: pGpu->desc.bar1_size;
}

static __maybe_unused NvU64 rmBar1MappableLength(OBJGPU *pGpu)
{
	return rmBar1ApertureLength(pGpu) - 1 - SZ_4K;
}

/* pMemoryManager->Ram.fbAddrSpaceSizeMb << 20: the FB address space. */
static __maybe_unused NvU64 rmFbAddrSpaceSize(OBJGPU *pGpu)
{
	return pGpu->desc.fb_size ? pGpu->desc.fb_size : pGpu->desc.vram_size;
}

/* ---------------------------------------------------------------------
 * The BAR1 VA space's dynamic mappings, every generation
 * (docs/standin.md, "BAR1 VA allocator"; docs/windows.md sections 7, 13).
 */
#define BUS_MAP_FB_FLAGS_MAP_UNICAST		BIT(0)
#define BUS_MAP_FB_FLAGS_MAP_OFFSET_FIXED	BIT(1)

/*
 * kbusDetermineBar1Force64KBMapping_IMPL (kern_bus.c, from
 * kbusStatePreInitLocked_GM107 before the aperture length): forced on
 * unless RM64KBBAR1Mappings reads 0; without the key, off exactly when
 * the PCI BAR (not the aperture) is over 256 whole MiB.
 */
RM_FN void kbusDetermineBar1Force64KBMapping_IMPL(OBJGPU *pGpu,
						  KernelBus *pKernelBus)
{
	NvU32 data;

	pKernelBus->bBar1Force64KBMapping = NV_TRUE;
	if (osReadRegistryDword(pGpu, "RM64KBBAR1Mappings", &data) == NV_OK) {
		if (data == 0)
			pKernelBus->bBar1Force64KBMapping = NV_FALSE;
	} else if ((pGpu->desc.bar1_size >> 20) > 256) {
		pKernelBus->bBar1Force64KBMapping = NV_FALSE;
	}
}

/*
 * The page size of a dynamic BAR1 mapping (dmaAllocMapping_GM107 for the
 * BAR1 VA space): the memory's own page size, lowered to the big page
 * size (64 KiB) when the GPU forces 64 KiB BAR1 mappings.  The real code
 * also sets the lowered size on the memdesc it maps, but that is the
 * temporary sub-memdesc _kbusMapAperture_GM107 makes and destroys around
 * the call: the caller's memdesc keeps its own page size.
 */
static NvU64 rmBar1MapPageSize(KernelBus *pKernelBus,
			       const MEMORY_DESCRIPTOR *pMemDesc)
{
	NvU64 pageSize = pMemDesc->pageSize ?: SZ_64K;

	if (pageSize > SZ_64K && pKernelBus->bBar1Force64KBMapping)
		pageSize = SZ_64K;
	return pageSize;
}

/*
 * BAR1 that is not the allocator's to give (565+; gen 0 maps its static
 * BAR1 through the allocator itself): the console and the mailbox area
 * at offset 0, and the static BAR1 range.
 */
static NvBool rmBar1Reserved(OBJGPU *pGpu, KernelBus *pKernelBus, NvU32 i,
			     NvU64 *pLo, NvU64 *pHi)
{
	if (NV_GEN_0)
		return NV_FALSE;
	switch (i) {
	case 0:
		*pLo = 0;
		*pHi = pGpu->desc.console_size + pKernelBus->writeMailboxTotalSize;
		return NV_TRUE;
	case 1:
		*pLo = *pHi = 0;
		if (pKernelBus->staticBar1.bStaticBar1Enabled) {
			*pLo = pKernelBus->staticBar1.startOffset;
			*pHi = *pLo + pKernelBus->staticBar1.size;
		}
		return NV_TRUE;
	default:
		return NV_FALSE;
	}
}

/* Whether [cand, cand + size) overlaps a range in use; *pEnd: its end. */
static NvBool rmBar1Busy(OBJGPU *pGpu, KernelBus *pKernelBus, NvU64 cand,
			 NvU64 size, NvU64 *pEnd)
{
	NvU64 lo, hi;
	NvU32 i;

	for (i = 0; i < pKernelBus->bar1MapCount; i++) {
		lo = pKernelBus->bar1Maps[i].offset;
		hi = lo + pKernelBus->bar1Maps[i].size;
		if (cand < hi && lo < cand + size) {
			*pEnd = hi;
			return NV_TRUE;
		}
	}
	for (i = 0; rmBar1Reserved(pGpu, pKernelBus, i, &lo, &hi); i++) {
		if (lo < hi && cand < hi && lo < cand + size) {
			*pEnd = hi;
			return NV_TRUE;
		}
	}
	return NV_FALSE;
}

/*
 * The BAR1 VA space: fixed or first-fit placement aligned to @align
 * (the mapping's page size @pageSize, at least 64 KiB), the length
 * rounded up to it, below the overfetch WAR page at the end (vaRangeMax,
 * kern_bus_gm107.c).  The caller's length is not changed: the real map
 * never writes the rounded size back.
 */
static NV_STATUS rmBar1VaAlloc(OBJGPU *pGpu, KernelBus *pKernelBus,
			       NvU64 *pOffset, NvU64 length, NvU64 pageSize,
			       NvBool bFixed)
{
	NvU64 align = max_t(NvU64, pageSize, SZ_64K);
	NvU64 limit = rmBar1ApertureLength(pGpu) - SZ_4K;
	NvU64 size = ALIGN(length, align);
	NvU64 cand = bFixed ? *pOffset : 0;
	NvU32 n = pKernelBus->bar1MapCount;
	NvU64 end;

	if (n == ARRAY_SIZE(pKernelBus->bar1Maps))
		return NV_ERR_INSUFFICIENT_RESOURCES;
	if (!size || (bFixed && !IS_ALIGNED(cand, align)))
		return NV_ERR_INVALID_ARGUMENT;
	while (cand <= limit && size <= limit - cand &&
	       rmBar1Busy(pGpu, pKernelBus, cand, size, &end)) {
		if (bFixed)
			return NV_ERR_INVALID_ARGUMENT;
		cand = ALIGN(end, align);
	}
	if (cand > limit || size > limit - cand)
		return NV_ERR_NO_MEMORY;
	pKernelBus->bar1Maps[n].offset = cand;
	pKernelBus->bar1Maps[n].size = size;
	pKernelBus->bar1Maps[n].pageSize = pageSize;
	pKernelBus->bar1MapCount++;
	*pOffset = cand;
	return NV_OK;
}

static NV_STATUS rmBar1VaFree(KernelBus *pKernelBus, NvU64 offset)
{
	NvU32 i;

	for (i = 0; i < pKernelBus->bar1MapCount; i++) {
		if (pKernelBus->bar1Maps[i].offset != offset)
			continue;
		pKernelBus->bar1Maps[i] =
			pKernelBus->bar1Maps[--pKernelBus->bar1MapCount];
		return NV_OK;
	}
	return NV_ERR_INVALID_ARGUMENT;	/* no mapping at that BAR1 offset */
}

/*
 * The static branch of a BAR1 map of video memory (kbusGetStaticFbAperture
 * _HAL): NV_ERR_NOT_SUPPORTED sends the caller to the dynamic map.  565+:
 * the static map covers FB linearly from its BAR1 start offset.
 */
static NV_STATUS rmBar1StaticAperture(OBJGPU *pGpu, KernelBus *pKernelBus,
				      MEMORY_DESCRIPTOR *pMemDesc, NvU64 offset,
				      NvU64 *pAperOffset, NvU64 *pLength)
{
	if (!kbusIsStaticBar1Enabled(pGpu, pKernelBus) ||
	    pMemDesc->addressSpace != ADDR_FBMEM)
		return NV_ERR_NOT_SUPPORTED;
#if NV_GEN_0
	return kbusGetStaticFbAperture_HAL(pGpu, pKernelBus, pMemDesc, offset,
					   pAperOffset, pLength, 0);
#else
	if (pMemDesc->base + offset + *pLength > pKernelBus->staticBar1.size)
		return NV_ERR_INVALID_ARGUMENT;
	*pAperOffset = pKernelBus->staticBar1.startOffset + pMemDesc->base +
		       offset;
	return NV_OK;
#endif
}

RM_FN NV_STATUS _kbusMapAperture_GM107(OBJGPU *pGpu, KernelBus *pKernelBus,
		MEMORY_DESCRIPTOR *pMemDesc, OBJVASPACE *pVAS, NvU64 offset,
		NvU64 *pAperOffset, NvU64 *pLength, NvU32 mapFlags, void *pDevice)
{
	NV_STATUS status = rmBar1StaticAperture(pGpu, pKernelBus, pMemDesc,
						offset, pAperOffset, pLength);

	if (status != NV_ERR_NOT_SUPPORTED)
		return status;
	return rmBar1VaAlloc(pGpu, pKernelBus, pAperOffset, *pLength,
			     rmBar1MapPageSize(pKernelBus, pMemDesc),
			     !!(mapFlags & BUS_MAP_FB_FLAGS_MAP_OFFSET_FIXED));
}

RM_FN NV_STATUS kbusMapFbAperture_GM107(OBJGPU *pGpu, KernelBus *pKernelBus,
		MEMORY_DESCRIPTOR *pMemDesc, NvU64 offset, NvU64 *pAperOffset,
		NvU64 *pLength, NvU32 flags, void *pDevice)
{
	return _kbusMapAperture_GM107(pGpu, pKernelBus, pMemDesc, NULL, offset,
				      pAperOffset, pLength, flags, pDevice);
}

/*
 * _kbusUnmapAperture_GM107 is inlined here in the 550.163.01 binary.  The
 * static branch is a no-op (595: kbusDecreaseStaticBar1Refcount); else
 * the BAR1 VA at @aperOffset is freed, and nothing when no mapping starts
 * there.
 */
RM_FN NV_STATUS kbusUnmapFbAperture_GM107(OBJGPU *pGpu, KernelBus *pKernelBus,
		MEMORY_DESCRIPTOR *pMemDesc, NvU64 aperOffset, NvU64 length,
		NvU32 flags)
{
	if (kbusIsStaticBar1Enabled(pGpu, pKernelBus) &&
	    pMemDesc->addressSpace == ADDR_FBMEM)
		return NV_OK;	/* no op for the static bar1 mode */
	return rmBar1VaFree(pKernelBus, aperOffset);
}

#define kbusMapFbAperture_HAL(g, b, m, o, pa, pl, f, d) \
	kbusMapFbAperture_GM107((g), (b), (m), (o), (pa), (pl), (f), (d))
#define kbusUnmapFbAperture_HAL(g, b, m, a, l, f) \
	kbusUnmapFbAperture_GM107((g), (b), (m), (a), (l), (f))

#if !NV_GEN_0
/* kern_bus.c (565+): one range, the mapping always unmanaged. */
RM_FN NV_STATUS kbusMapFbApertureSingle_IMPL(OBJGPU *pGpu,
		KernelBus *pKernelBus, MEMORY_DESCRIPTOR *pMemDesc, NvU64 offset,
		NvU64 *pAperOffset, NvU64 *pLength, NvU32 flags, void *pDevice)
{
	return kbusMapFbAperture_HAL(pGpu, pKernelBus, pMemDesc, offset,
				     pAperOffset, pLength, flags, pDevice);
}

RM_FN NV_STATUS kbusUnmapFbApertureSingle_IMPL(OBJGPU *pGpu,
		KernelBus *pKernelBus, MEMORY_DESCRIPTOR *pMemDesc,
		NvU64 aperOffset, NvU64 length, NvU32 flags)
{
	return kbusUnmapFbAperture_HAL(pGpu, pKernelBus, pMemDesc, aperOffset,
				       length, flags);
}
#define kbusMapFbApertureSingle(g, b, m, o, pa, pl, f, d) \
	kbusMapFbApertureSingle_IMPL((g), (b), (m), (o), (pa), (pl), (f), (d))
#define kbusUnmapFbApertureSingle(g, b, m, a, l, f) \
	kbusUnmapFbApertureSingle_IMPL((g), (b), (m), (a), (l), (f))
#else
#define kbusMapFbApertureSingle		kbusMapFbAperture_HAL
#define kbusUnmapFbApertureSingle	kbusUnmapFbAperture_HAL
#endif

/* BAR1 mappings left in a GPU's BAR1 VA space when it was destroyed. */
static NvU32 rmBar1LeakedMaps[NV_STANDIN_MAX_GPUS];

#if !NV_GEN_0
/*
 * memmgrGetClientFbAddrSpaceSize_IMPL (mem_mgr.c): the client-visible FB,
 * what the static BAR1 mapping covers.  Out of line in the real binaries
 * (570-595: a global T symbol), called from kern_bus_tu102.c only.
 */
RM_FN NvU64 memmgrGetClientFbAddrSpaceSize_IMPL(OBJGPU *pGpu,
						void *pMemoryManager)
{
	return pGpu->desc.vram_size;
}
#define GPU_GET_MEMORY_MANAGER(g)	((void *)(g))

/* Where the static BAR1 mapping starts and what it maps. */
#if NV_GEN_AT_LEAST(565)
RM_FN void kbusDisableStaticBar1Mapping_TU102(OBJGPU *pGpu,
		KernelBus *pKernelBus, NvU32 gfid)
{
	pKernelBus->staticBar1.bStaticBar1Enabled = NV_FALSE;
}
#endif

static void kbusSetStaticBar1(OBJGPU *pGpu, KernelBus *pKernelBus,
			      NvU64 bar1Offset, NvU64 size)
{
	pKernelBus->staticBar1.bStaticBar1Enabled = NV_TRUE;
	pKernelBus->staticBar1.startOffset = bar1Offset;
	pKernelBus->staticBar1.size = size;
	pKernelBus->staticBar1.dmaMemDesc.addressSpace = ADDR_SYSMEM;
	pKernelBus->staticBar1.dmaMemDesc.pGpu = pGpu;
	pKernelBus->staticBar1.dmaMemDesc.base =
		gpumgrGetGpuPhysFbAddr(pGpu) + bar1Offset;
	pKernelBus->staticBar1.dmaMemDesc.size = size;
	pKernelBus->staticBar1.dmaMemDesc.bUncached = NV_TRUE;
}

/*
 * The body of kbusEnableStaticBar1Mapping_TU102 (kern_bus_tu102.c): size
 * from memmgrGetClientFbAddrSpaceSize (570-575 aligned up to 2 MiB, 580+
 * down), memdescCreate, then one BAR1 mapping at @bar1Offset (570-575:
 * the lowest free address), which fails when it does not end inside
 * BAR1's VA heap; on failure everything is undone and static BAR1 stays
 * off.
 */
static NV_STATUS kbusMapStaticBar1(OBJGPU *pGpu, KernelBus *pKernelBus,
				   NvU64 bar1Offset)
{
	NvU64 size = memmgrGetClientFbAddrSpaceSize_IMPL(pGpu,
				GPU_GET_MEMORY_MANAGER(pGpu));

#if NV_GEN_AT_LEAST(580)
	size = ALIGN_DOWN(size, SZ_2M);
#else
	size = ALIGN(size, SZ_2M);
#endif
	if (bar1Offset + size > rmBar1MappableLength(pGpu) + 1) {
		NV_PRINTF_ERROR("Failed to create the static bar1 mapping offset0x%llx size 0x%llx\n",
				bar1Offset, size);
		return NV_ERR_NO_MEMORY;
	}
	kbusSetStaticBar1(pGpu, pKernelBus, bar1Offset, size);
	NV_PRINTF_INFO("static BAR1 mapped at BAR1 offset 0x%llx\n", bar1Offset);
	return NV_OK;
}

#if NV_GEN_AT_LEAST(580)
RM_FN NV_STATUS kbusEnableStaticBar1Mapping_TU102(OBJGPU *pGpu,
		KernelBus *pKernelBus, NvU32 gfid, NvU64 bar1Offset)
{
	return kbusMapStaticBar1(pGpu, pKernelBus, bar1Offset);
}
#else
RM_FN NV_STATUS kbusEnableStaticBar1Mapping_TU102(OBJGPU *pGpu,
		KernelBus *pKernelBus, NvU32 gfid)
{
	NvU64 offset = 0;

#if NV_GEN_AT_LEAST(570)
	/*
	 * The BAR1 heap places it at the lowest free 2 MiB-aligned address:
	 * after the console and the mailbox reserved before.
	 */
	offset = ALIGN(pGpu->desc.console_size +
		       pKernelBus->writeMailboxTotalSize, SZ_2M);
#endif
	return kbusMapStaticBar1(pGpu, pKernelBus, offset);
}
#endif

#if NV_GEN_AT_LEAST(570)
/* Whether static BAR1 is wanted and fits, given the areas already reserved. */
RM_FN NV_STATUS kbusIsStaticBar1Supported_TU102(OBJGPU *pGpu,
		KernelBus *pKernelBus, NvU32 gfid, NvU64 consoleSize,
		NvU64 mailboxSize)
{
	NvU64 bar1VASize = rmBar1MappableLength(pGpu);
	NvU64 bar1 = ALIGN_DOWN(bar1VASize, SZ_2M);
	NvU64 fb = ALIGN(rmFbAddrSpaceSize(pGpu), SZ_2M);
	NvU64 client, need;

	if (!fb || !pGpu->desc.bar1_size)
		return NV_ERR_NOT_SUPPORTED;

	switch (pKernelBus->staticBar1ForceType) {
	case NV_REG_STR_RM_FORCE_STATIC_BAR1_DISABLE:
		return NV_ERR_NOT_SUPPORTED;
	case NV_REG_STR_RM_FORCE_STATIC_BAR1_ENABLE:
		client = memmgrGetClientFbAddrSpaceSize_IMPL(pGpu,
				GPU_GET_MEMORY_MANAGER(pGpu));
#if NV_GEN_AT_LEAST(580)
		client = ALIGN_DOWN(client, SZ_2M);
#else
		client = ALIGN(client, SZ_2M);
#endif
		if (bar1 < client) {
			NV_PRINTF_ERROR("BAR1 too small for static BAR1\n");
			return NV_ERR_INVALID_REGISTRY_KEY;
		}
		return NV_OK;
	case NV_REG_STR_RM_FORCE_STATIC_BAR1_AUTO:
		need = fb + RM_USERD_TOTAL_SIZE + SZ_64K + SZ_64K +
		       consoleSize + mailboxSize;
#if NV_GEN_AT_LEAST(580)
		if (consoleSize || mailboxSize)
			need += SZ_512M - (consoleSize + mailboxSize) % SZ_512M;
#endif
		if (bar1 < need)
			return NV_ERR_NOT_SUPPORTED;
		NV_PRINTF_INFO("Enabling static BAR1 automatically!\n");
		return NV_OK;
#if !NV_GEN_AT_LEAST(575)
	case NV_REG_STR_RM_FORCE_STATIC_BAR1_ONLY_GPU:
		if (GPU_GET_KERNEL_BIF(pGpu)->forceP2PType !=
		    NV_REG_STR_RM_FORCE_P2P_TYPE_BAR1P2P)
			return NV_ERR_NOT_SUPPORTED;
		/* The unaligned VA here, and no console or mailbox counted. */
		return bar1VASize >= SZ_128K && bar1VASize - SZ_128K >= fb ?
			NV_OK : NV_ERR_NOT_SUPPORTED;
#endif
	default:
		return NV_ERR_INVALID_REGISTRY_KEY;
	}
}

/* _kbusRequiresP2PMailboxBar1_GM107 */
static NvBool kbusRequiresP2PMailboxBar1(OBJGPU *pGpu)
{
	KernelBif *pKernelBif = GPU_GET_KERNEL_BIF(pGpu);

#if NV_GEN_AT_LEAST(575)
	return pKernelBif->pcieP2PType != NV_REG_STR_RM_PCIEP2P_TYPE_BAR1;
#else
	return pKernelBif->forceP2PType != NV_REG_STR_RM_FORCE_P2P_TYPE_BAR1P2P;
#endif
}
#else
/* 565: decided before any BAR1 area is reserved; NvBool. */
RM_FN NvBool kbusIsStaticBar1Supported_TU102(OBJGPU *pGpu,
		KernelBus *pKernelBus, NvU32 gfid)
{
	NvU64 bar1VASize = rmBar1MappableLength(pGpu);
	NvU64 bar1 = ALIGN_DOWN(bar1VASize, SZ_2M);
	NvU64 fb = ALIGN(rmFbAddrSpaceSize(pGpu), SZ_2M);

	switch (pKernelBus->staticBar1ForceType) {
	case NV_REG_STR_RM_FORCE_STATIC_BAR1_ENABLE:
		return NV_TRUE;
	case NV_REG_STR_RM_FORCE_STATIC_BAR1_AUTO:
		return bar1 >= 2 * fb;
	case NV_REG_STR_RM_FORCE_STATIC_BAR1_ONLY_GPU:
		return GPU_GET_KERNEL_BIF(pGpu)->forceP2PType ==
			NV_REG_STR_RM_FORCE_P2P_TYPE_BAR1P2P &&
		       bar1VASize - SZ_128K >= fb;
	default:
		return NV_FALSE;
	}
}
#endif

/* The static BAR1 part of kbusInitBar1_GM107. */
RM_FN NV_STATUS kbusInitBar1(OBJGPU *pGpu, KernelBus *pKernelBus)
{
	NV_STATUS status = NV_OK;
	NvU64 consoleSize = pGpu->desc.console_size;

	memset(&pKernelBus->staticBar1, 0, sizeof(pKernelBus->staticBar1));
	pKernelBus->writeMailboxTotalSize = 0;

#if NV_GEN_AT_LEAST(570)
	/* The console mapping (at BAR1 offset 0), then the mailbox. */
	if (kbusRequiresP2PMailboxBar1(pGpu))
		pKernelBus->writeMailboxTotalSize = RM_MAILBOX_BAR1_SIZE;

	status = kbusIsStaticBar1Supported_TU102(pGpu, pKernelBus, 0,
						 consoleSize,
						 pKernelBus->writeMailboxTotalSize);
	if (status == NV_ERR_NOT_SUPPORTED)
		return NV_OK;
	if (status != NV_OK)
		return status;
	nv_standin_hold(NV_STANDIN_HOLD_SB1);
#if NV_GEN_AT_LEAST(580)
	status = pKernelBus->__kbusEnableStaticBar1Mapping__(pGpu, pKernelBus, 0,
		ALIGN(consoleSize + pKernelBus->writeMailboxTotalSize,
		      SZ_512M));
#else
	status = kbusEnableStaticBar1Mapping_TU102(pGpu, pKernelBus, 0);
#endif
#else
	/* 565: decided first; with static BAR1 the console is not preserved. */
	(void)consoleSize;
	if (kbusIsStaticBar1Supported_TU102(pGpu, pKernelBus, 0)) {
		nv_standin_hold(NV_STANDIN_HOLD_SB1);
		status = kbusEnableStaticBar1Mapping_TU102(pGpu, pKernelBus, 0);
	}
	if (GPU_GET_KERNEL_BIF(pGpu)->forceP2PType !=
	    NV_REG_STR_RM_FORCE_P2P_TYPE_BAR1P2P)
		pKernelBus->writeMailboxTotalSize = RM_MAILBOX_BAR1_SIZE;
#endif
	return status;
}

#else /* NV_GEN_0 */
/*
 * 550-560: kbusInitBar1_GM107 asks kbusIsBar1P2PCapable (a HAL slot) and,
 * when it says yes, calls kbusEnableStaticBar1Mapping_HAL; both are stubs
 * on every chip but GH100.  The _GH100 bodies map all of VRAM through BAR1
 * at BAR1 offset 0 with one fixed-offset BAR1 mapping.  BAR1 mappings of
 * video memory then take the static branch of _kbusMapAperture_GM107
 * (kbusGetStaticFbAperture_HAL), and unmaps of video memory are no-ops.
 */
RM_FN NvBool kbusIsBar1P2PCapable_GH100(OBJGPU *pGpu, KernelBus *pKernelBus,
					NvU32 gfid)
{
	NvU64 bar1Size = pGpu->desc.bar1_size;
	NvU64 fbSize = pGpu->desc.vram_size;
	NvU64 bar1VASize = rmBar1ApertureLength(pGpu);	/* the BAR1 VA heap spans the aperture */

	if (!fbSize || !bar1Size)
		return NV_FALSE;
	if (GPU_GET_KERNEL_BIF(pGpu)->forceP2PType !=
	    NV_REG_STR_RM_FORCE_P2P_TYPE_BAR1P2P)
		return NV_FALSE;
	/* 128 KiB of BAR1 VA stay free for the doorbell (bug 3869651). */
	if (bar1VASize < 32 * SZ_4K ||
	    bar1VASize - 32 * SZ_4K < ALIGN(fbSize, SZ_2M))
		return NV_FALSE;
	return NV_TRUE;
}

RM_FN NV_STATUS kbusEnableStaticBar1Mapping_GH100(OBJGPU *pGpu,
		KernelBus *pKernelBus, NvU32 gfid)
{
	NvU64 bar1Offset = 0;
	NvU64 bar1MapSize = ALIGN(pGpu->desc.vram_size, SZ_2M);
	MEMORY_DESCRIPTOR vid = {
		.pGpu = pGpu, .addressSpace = ADDR_FBMEM, .base = 0,
		.size = bar1MapSize,
	};
	NV_STATUS status;

	RM_FAULT_POINT(NV_ERR_GENERIC);

	status = kbusMapFbAperture_HAL(pGpu, pKernelBus, &vid, 0, &bar1Offset,
				       &bar1MapSize,
				       BUS_MAP_FB_FLAGS_MAP_UNICAST |
				       BUS_MAP_FB_FLAGS_MAP_OFFSET_FIXED, NULL);
	if (status != NV_OK || bar1Offset != 0) {
		if (status == NV_OK) {
			kbusUnmapFbAperture_HAL(pGpu, pKernelBus, &vid,
						bar1Offset, bar1MapSize,
						BUS_MAP_FB_FLAGS_MAP_UNICAST);
			status = NV_ERR_INVALID_STATE;
		}
		NV_PRINTF_ERROR("Failed to create the static bar1 mapping offset0x%llx size 0x%llx\n",
				bar1Offset, bar1MapSize);
		return status;
	}
	pKernelBus->staticBar1.bStaticBar1Enabled = NV_TRUE;
	pKernelBus->staticBar1.startOffset = 0;
	pKernelBus->staticBar1.size = bar1MapSize;
	pKernelBus->staticBar1.dmaMemDesc.addressSpace = ADDR_SYSMEM;
	pKernelBus->staticBar1.dmaMemDesc.pGpu = pGpu;
	pKernelBus->staticBar1.dmaMemDesc.base = gpumgrGetGpuPhysFbAddr(pGpu);
	pKernelBus->staticBar1.dmaMemDesc.size = bar1MapSize;
	pKernelBus->staticBar1.dmaMemDesc.bUncached = NV_TRUE;
	NV_PRINTF_INFO("Static bar1 mapped offset 0x%llx size 0x%llx\n",
		       bar1Offset, bar1MapSize);
	return NV_OK;
}

RM_FN void kbusDisableStaticBar1Mapping_GH100(OBJGPU *pGpu,
		KernelBus *pKernelBus, NvU32 gfid)
{
	MEMORY_DESCRIPTOR vid = {
		.pGpu = pGpu, .addressSpace = ADDR_FBMEM, .base = 0,
		.size = pKernelBus->staticBar1.size,
	};

	if (!pKernelBus->staticBar1.bStaticBar1Enabled)
		return;
	pKernelBus->staticBar1.bStaticBar1Enabled = NV_FALSE;
	kbusUnmapFbAperture_HAL(pGpu, pKernelBus, &vid, 0,
				pKernelBus->staticBar1.size,
				BUS_MAP_FB_FLAGS_MAP_UNICAST |
				BUS_MAP_FB_FLAGS_MAP_OFFSET_FIXED);
	memset(&pKernelBus->staticBar1.dmaMemDesc, 0,
	       sizeof(pKernelBus->staticBar1.dmaMemDesc));
}

RM_FN NV_STATUS kbusGetStaticFbAperture_GH100(OBJGPU *pGpu,
		KernelBus *pKernelBus, MEMORY_DESCRIPTOR *pMemDesc, NvU64 offset,
		NvU64 *pAperOffset, NvU64 *pLength, NvU32 gfid)
{
	NvU64 physAddr;

	/* It only support contiguous memory */
	if (pMemDesc->bDiscontiguous) {
		NV_PRINTF_ERROR("Assertion failed: memdescGetPteArraySize(pMemDesc, AT_GPU) == 1\n");
		return NV_ERR_INVALID_ARGUMENT;
	}
	physAddr = pMemDesc->base + offset;
	if (physAddr + *pLength >= pKernelBus->staticBar1.size) {
		NV_PRINTF_ERROR("0x%llx + 0x%llx is out of the range of the static Bar1map [0, 0x%llx]\n",
				physAddr, *pLength, pKernelBus->staticBar1.size);
		return NV_ERR_INVALID_ARGUMENT;
	}
	*pAperOffset = physAddr;
	return NV_OK;
}

/* Rewrites the static BAR1 PTE kind for compressed memory (Hopper). */
RM_FN NV_STATUS kbusUpdateStaticBar1VAMapping_GH100(OBJGPU *pGpu,
		KernelBus *pKernelBus, MEMORY_DESCRIPTOR *pMemDesc, NvU64 offset,
		NvU64 length, NvBool bRelease)
{
	if (pMemDesc->bDiscontiguous)
		return NV_ERR_INVALID_ARGUMENT;
	return NV_OK;
}

/* The BAR1 part of kbusInitBar1_GM107 (550.163.01 L1011-1117). */
RM_FN NV_STATUS kbusInitBar1(OBJGPU *pGpu, KernelBus *pKernelBus)
{
	KernelBif *pKernelBif = GPU_GET_KERNEL_BIF(pGpu);
	NvBool bBar1P2PCapable;
	NV_STATUS status;

	pKernelBus->writeMailboxTotalSize = 0;
	bBar1P2PCapable = kbusIsBar1P2PCapable(pGpu, pKernelBus, 0);
	if (bBar1P2PCapable) {
		/* Enable the static BAR1 mapping for the BAR1 P2P */
		nv_standin_hold(NV_STANDIN_HOLD_SB1);
		status = kbusEnableStaticBar1Mapping_HAL(pGpu, pKernelBus, 0);
		if (status != NV_OK)
			return status;
	} else if (FORCE_P2P_READ(pKernelBif->p2pOverride) != FORCE_P2P_DISABLE ||
		   FORCE_P2P_WRITE(pKernelBif->p2pOverride) != FORCE_P2P_DISABLE) {
		/* kbusAllocP2PMailboxBar1_HAL */
		pKernelBus->writeMailboxTotalSize = RM_MAILBOX_BAR1_SIZE;
	}
	return NV_OK;
}

/* kbusDestroyBar1_GM107 (from kbusStatePreUnload), at GPU teardown. */
RM_FN void kbusDestroyBar1_GM107(OBJGPU *pGpu, KernelBus *pKernelBus,
				 NvU32 gfid)
{
	if (pKernelBus->staticBar1.bStaticBar1Enabled)
		kbusDisableStaticBar1Mapping_HAL(pGpu, pKernelBus, gfid);
	/* vmmDestroyVaspace: what is still mapped goes with the VA space. */
	rmBar1LeakedMaps[pGpu->gpuInstance] += pKernelBus->bar1MapCount;
	pKernelBus->bar1MapCount = 0;
}
#endif /* NV_GEN_0 */

/*
 * kbusDetermineBar1ApertureLength_IMPL (kern_bus.c, 550-595), from
 * kbusStatePreInitLocked_GM107: after the attach, before kbusInitBar1.
 * RMBar1ApertureSizeMB shrinks the aperture, never grows it; 0 is ignored.
 */
RM_FN void kbusDetermineBar1ApertureLength_IMPL(OBJGPU *pGpu, KernelBus *pKernelBus)
{
	NvU32 data;

	pKernelBus->bar1ApertureLength = pGpu->desc.bar1_size;
	if (osReadRegistryDword(pGpu, "RMBar1ApertureSizeMB", &data) == NV_OK &&
	    data && ((NvU64)data << 20) < pKernelBus->bar1ApertureLength)
		pKernelBus->bar1ApertureLength = (NvU64)data << 20;
}

RM_FN void kbusInitRegistryOverrides(OBJGPU *pGpu, KernelBus *pKernelBus)
{
	NvU32 data __maybe_unused;

	pKernelBus->staticBar1ForceType = STATIC_BAR1_DEFAULT;
#if !NV_GEN_0	/* RMForceStaticBar1 arrived in 565 */
	if (osReadRegistryDword(pGpu, NV_REG_STR_RM_FORCE_STATIC_BAR1,
				&data) == NV_OK &&
	    data < NV_REG_STR_RM_FORCE_STATIC_BAR1_MAX)
		pKernelBus->staticBar1ForceType = data;
#endif
}

/* ---------------------------------------------------------------------
 * KernelBif
 */
RM_FN void _kbifInitRegistryOverrides(OBJGPU *pGpu, KernelBif *pKernelBif)
{
	NvU32 data;

	pKernelBif->p2pOverride = BIF_P2P_NOT_OVERRIDEN;
	if (osReadRegistryDword(pGpu, NV_REG_STR_CL_FORCE_P2P, &data) == NV_OK)
		pKernelBif->p2pOverride = data;

	pKernelBif->forceP2PType = NV_REG_STR_RM_FORCE_P2P_TYPE_DEFAULT;
	if (osReadRegistryDword(pGpu, NV_REG_STR_RM_FORCE_P2P_TYPE, &data) == NV_OK &&
	    data <= NV_REG_STR_RM_FORCE_P2P_TYPE_MAX)
		pKernelBif->forceP2PType = data;

	pKernelBif->pcieP2PType = NV_REG_STR_RM_PCIEP2P_TYPE_MAILBOX;
#if NV_GEN_AT_LEAST(575)
	if (osReadRegistryDword(pGpu, NV_REG_STR_RM_PCIEP2P_TYPE, &data) == NV_OK &&
	    data <= NV_REG_STR_RM_PCIEP2P_TYPE_MAX)
		pKernelBif->pcieP2PType = data;
#endif
}

/* ---------------------------------------------------------------------
 * VirtMemAllocator: BAR1 P2P mappings (_GH100 bodies)
 */
/*
 * virt_mem_allocator_gh100.c: a sub-memdesc of the peer's memory, one
 * BAR1 range on the peer (the static branch when the peer has static
 * BAR1, else the dynamic allocator), and a SYSMEM, uncached memdesc at
 * the BAR1 bus address with the page size the sub-memdesc was mapped at.
 * No IOMMU mapping.  Neither body reads pGpu or pDma.
 */
RM_FN NV_STATUS dmaAllocBar1P2PMapping_GH100(OBJGPU *pGpu,
		VirtMemAllocator *pDma, DMA_BAR1P2P_MAPPING_PRARAMS *params)
{
	OBJGPU *pPeerGpu;
	KernelBus *pPeerKernelBus;
	MEMORY_DESCRIPTOR *pSub, *pOut;
	NvU64 bar1Offset = 0, len;
	NV_STATUS status;

	RM_FAULT_POINT(NV_ERR_GENERIC);

	if (!params || !params->pVas || !params->pPeerGpu ||
	    !params->pPeerMemDesc || !params->pDmaMappingInfo)
		return NV_ERR_INVALID_ARGUMENT;
	pPeerGpu = params->pPeerGpu;
	pPeerKernelBus = GPU_GET_KERNEL_BUS(pPeerGpu);

	/* Step 1: memdescCreateSubMem */
	pSub = &params->pDmaMappingInfo->bar1PhysMemDesc;
	*pSub = *params->pPeerMemDesc;
	pSub->base += params->offset;
	pSub->size = params->length;
	len = params->length;

	/* Step 2: one BAR1 range on the peer */
	status = kbusMapFbApertureSingle(pPeerGpu, pPeerKernelBus, pSub, 0,
					 &bar1Offset, &len,
					 BUS_MAP_FB_FLAGS_MAP_UNICAST, NULL);
	if (status != NV_OK)
		goto cleanup;

	/* Step 3: the BAR1 bus range as uncached sysmem, owned by the peer */
	pOut = kzalloc(sizeof(*pOut), GFP_KERNEL);
	if (!pOut) {
		status = NV_ERR_NO_MEMORY;
		goto cleanup;
	}
	pOut->pGpu = pPeerGpu;
	pOut->addressSpace = ADDR_SYSMEM;
	pOut->base = gpumgrGetGpuPhysFbAddr(pPeerGpu) + bar1Offset;
	pOut->size = len;
	pOut->bUncached = NV_TRUE;
	pOut->pageSize = pSub->pageSize;

	/* The window memdesc, kept for the free (pBar1P2PVirtMemDesc) */
	params->pDmaMappingInfo->pMemDesc = pOut;
	params->pMemDescOut = pOut;
	params->offsetOut = 0;
	params->flagsOut = params->flags | DMA_FLAGS_PHYSICAL_KIND |
			   DMA_FLAGS_UNCACHED;
	params->pDmaMappingInfo->bBar1P2P = NV_TRUE;
	params->pDmaMappingInfo->bar1Offset = bar1Offset;
	return NV_OK;

cleanup:
	/* As the real cleanup: a map at BAR1 offset 0 is not undone. */
	if (bar1Offset != 0)
		kbusUnmapFbApertureSingle(pPeerGpu, pPeerKernelBus,
					  params->pPeerMemDesc, bar1Offset, len,
					  BUS_MAP_FB_FLAGS_MAP_UNICAST);
	NV_PRINTF_ERROR("Failed to create bar1p2p mapping\n");
	return status;
}

/*
 * The free unmaps by the window memdesc's address, which is the BAR1
 * *bus* address, not the BAR1 offset the map returned: with static BAR1
 * the static branch ignores it; without, no mapping starts there and the
 * window's BAR1 VA stays allocated (docs/windows.md section 4).
 */
RM_FN void dmaFreeBar1P2PMapping_GH100(VirtMemAllocator *pDma,
				       CLI_DMA_MAPPING_INFO *pDmaMappingInfo)
{
	OBJGPU *pPeerGpu;

	if (!pDmaMappingInfo || !pDmaMappingInfo->bBar1P2P)
		return;
	pPeerGpu = pDmaMappingInfo->bar1PhysMemDesc.pGpu;
	kbusUnmapFbApertureSingle(pPeerGpu, GPU_GET_KERNEL_BUS(pPeerGpu),
				  &pDmaMappingInfo->bar1PhysMemDesc,
				  pDmaMappingInfo->pMemDesc->base,
				  pDmaMappingInfo->pMemDesc->size,
				  BUS_MAP_FB_FLAGS_MAP_UNICAST);
	kfree(pDmaMappingInfo->pMemDesc);
	pDmaMappingInfo->pMemDesc = NULL;
	pDmaMappingInfo->bBar1P2P = NV_FALSE;
}

/* ---------------------------------------------------------------------
 * P2P capabilities (p2p_caps.c)
 */
#if NV_GEN_AT_LEAST(580)
RM_FN NV_STATUS _kgetP2PCapsStatusOverC2C(NvU32 gpuMask, NvU8 *pWrite,
					  NvU8 *pRead)
{
	/* No Grace (C2C) system is modelled. */
	*pWrite = *pRead = NV0000_P2P_CAPS_STATUS_NOT_SUPPORTED;
	return NV_ERR_NOT_SUPPORTED;
}
#endif

RM_FN NV_STATUS _gpumgrGetP2PCapsStatusOverNvLink(NvU32 gpuMask, NvU8 *pWrite,
						  NvU8 *pRead)
{
	NvU32 inst = 0;
	OBJGPU *pGpu0 = gpumgrGetNextGpu(gpuMask, &inst);
	OBJGPU *pGpu1 = gpumgrGetNextGpu(gpuMask, &inst);

	if (!pGpu0 || !pGpu1 ||
	    !(pGpu0->nvlinkPeerMask & BIT(pGpu1->gpuInstance))) {
		*pWrite = *pRead = NV0000_P2P_CAPS_STATUS_NOT_SUPPORTED;
		return NV_ERR_NOT_SUPPORTED;
	}
	/*
	 * A forced P2P type other than NVLink on the first GPU of the query
	 * turns NVLink P2P off, before the links are looked at or trained
	 * (p2p_caps.c L185-191 in 550.163.01, L190-196 in 565.57.01 to
	 * 595.45.04; RMForceP2PType's values were renumbered in 575).
	 */
	if (GPU_GET_KERNEL_BIF(pGpu0)->forceP2PType != NV_REG_STR_RM_FORCE_P2P_TYPE_DEFAULT &&
	    GPU_GET_KERNEL_BIF(pGpu0)->forceP2PType != NV_REG_STR_RM_FORCE_P2P_TYPE_NVLINK) {
		*pWrite = *pRead = NV0000_P2P_CAPS_STATUS_NOT_SUPPORTED;
		return NV_OK;
	}
	*pWrite = *pRead = NV0000_P2P_CAPS_STATUS_OK;
	return NV_OK;
}

/* ForceP2P: the first GPU in the mask with an override decides. */
RM_FN NvBool _kp2pCapsCheckStatusOverridesForPcie(NvU32 gpuMask, NvU8 *pWrite,
						  NvU8 *pRead, NvU8 *pAtomics)
{
	NvU32 inst = 0;
	OBJGPU *pGpu;

	while ((pGpu = gpumgrGetNextGpu(gpuMask, &inst)) != NULL) {
		NvU32 o = GPU_GET_KERNEL_BIF(pGpu)->p2pOverride;

		if (o == BIF_P2P_NOT_OVERRIDEN)
			continue;
		if (FORCE_P2P_READ(o) == FORCE_P2P_DISABLE)
			*pRead = NV0000_P2P_CAPS_STATUS_DISABLED_BY_REGKEY;
		else if (FORCE_P2P_READ(o) == FORCE_P2P_ENABLE)
			*pRead = NV0000_P2P_CAPS_STATUS_OK;
		if (FORCE_P2P_WRITE(o) == FORCE_P2P_DISABLE)
			*pWrite = NV0000_P2P_CAPS_STATUS_DISABLED_BY_REGKEY;
		else if (FORCE_P2P_WRITE(o) == FORCE_P2P_ENABLE)
			*pWrite = NV0000_P2P_CAPS_STATUS_OK;
		if (FORCE_P2P_ATOMICS(o) == FORCE_P2P_DISABLE)
			*pAtomics = NV0000_P2P_CAPS_STATUS_DISABLED_BY_REGKEY;
		else if (FORCE_P2P_ATOMICS(o) == FORCE_P2P_ENABLE)
			*pAtomics = NV0000_P2P_CAPS_STATUS_OK;
		return NV_TRUE;
	}
	return NV_FALSE;
}

/* Mailbox PCIe P2P: overrides, else what GSP answers for the chips. */
RM_FN NV_STATUS _kp2pCapsGetStatusOverPcie(NvU32 gpuMask, NvU8 *pWrite,
					   NvU8 *pRead, NvBool *pbCommonPciSwitch)
{
	NvU32 inst = 0;
	OBJGPU *pGpu, *pFirstGpu = NULL;
	NvU8 unused;

	*pbCommonPciSwitch = NV_TRUE;
	if (_kp2pCapsCheckStatusOverridesForPcie(gpuMask, pWrite, pRead, &unused))
		return NV_OK;

	*pRead = *pWrite = NV0000_P2P_CAPS_STATUS_OK;
	while ((pGpu = gpumgrGetNextGpu(gpuMask, &inst)) != NULL) {
		if (!pFirstGpu)
			pFirstGpu = pGpu;
		else if (pGpu->desc.pcie_switch < 0 ||
			 pGpu->desc.pcie_switch != pFirstGpu->desc.pcie_switch)
			*pbCommonPciSwitch = NV_FALSE;
		/* NV2080_CTRL_CMD_INTERNAL_GET_PCIE_P2P_CAPS */
		if (pGpu->pChip->bGeforce)
			*pRead = *pWrite = NV0000_P2P_CAPS_STATUS_GPU_NOT_SUPPORTED;
	}
	return NV_OK;
}

static NV_STATUS _p2pCapsGetHostSystemStatusOverPcieBar1(OBJGPU *pGpu,
		NvU8 *pWrite, NvU8 *pRead, NvBool bCommonPciSwitchFound)
{
	*pWrite = NV0000_P2P_CAPS_STATUS_OK;
	if (bCommonPciSwitchFound ||
	    rmConfig.cpu_type == NV_STANDIN_CPU_RYZEN ||
	    rmConfig.cpu_type == NV_STANDIN_CPU_XEON_SPR)
		*pRead = NV0000_P2P_CAPS_STATUS_OK;
	else
		*pRead = NV0000_P2P_CAPS_STATUS_CHIPSET_NOT_SUPPORTED;
	return NV_OK;
}

/*
 * 580 inlines this one into p2pGetCapsStatus (no symbol), and so does
 * Debian's 550.163.01 build; 565-575 not.
 */
#if NV_GEN_AT_LEAST(580) || NV_GEN_0
#define PCIE_BAR1_CAPS_FN static __always_inline
#else
#define PCIE_BAR1_CAPS_FN RM_FN
#endif

PCIE_BAR1_CAPS_FN NV_STATUS _kp2pCapsGetStatusOverPcieBar1(NvU32 gpuMask,
		NvU8 *pWrite, NvU8 *pRead, NvU8 *pAtomics,
		NvBool bCommonPciSwitchFound)
{
	NvU32 inst = 0;
	OBJGPU *pFirstGpu = gpumgrGetNextGpu(gpuMask, &inst);
	KernelBif *pKernelBif = GPU_GET_KERNEL_BIF(pFirstGpu);
	NvU8 writeStatus = *pWrite, readStatus = *pRead;
	OBJGPU *pPeer;

#if NV_GEN_AT_LEAST(575)
	if ((pKernelBif->forceP2PType != NV_REG_STR_RM_FORCE_P2P_TYPE_DEFAULT &&
	     pKernelBif->forceP2PType != NV_REG_STR_RM_FORCE_P2P_TYPE_PCIEP2P) ||
	    (pKernelBif->pcieP2PType != NV_REG_STR_RM_PCIEP2P_TYPE_BAR1 &&
	     pKernelBif->pcieP2PType != NV_REG_STR_RM_PCIEP2P_TYPE_AUTO))
		return NV_ERR_NOT_SUPPORTED;
#else
	if (pKernelBif->forceP2PType != NV_REG_STR_RM_FORCE_P2P_TYPE_BAR1P2P)
		return NV_ERR_NOT_SUPPORTED;
	/* Up to 570 the override comes before the HAL check. */
	if (_kp2pCapsCheckStatusOverridesForPcie(gpuMask, pWrite, pRead, pAtomics))
		return NV_OK;
#endif
	if (hweight32(gpuMask) <= 1)
		inst = 0;	/* loopback: check the GPU against itself */
	while ((pPeer = gpumgrGetNextGpu(gpuMask, &inst)) != NULL) {
		if (!kbusIsPcieBar1P2PMappingSupported_HAL(pFirstGpu,
				GPU_GET_KERNEL_BUS(pFirstGpu), pPeer,
				GPU_GET_KERNEL_BUS(pPeer)))
			return NV_ERR_NOT_SUPPORTED;
	}
#if NV_GEN_AT_LEAST(575)
	if (_kp2pCapsCheckStatusOverridesForPcie(gpuMask, pWrite, pRead, pAtomics))
		return NV_OK;
#endif
	_p2pCapsGetHostSystemStatusOverPcieBar1(pFirstGpu, &writeStatus,
						&readStatus, bCommonPciSwitchFound);
	if (*pWrite == NV0000_P2P_CAPS_STATUS_OK)
		*pWrite = writeStatus;
	if (*pRead == NV0000_P2P_CAPS_STATUS_OK)
		*pRead = readStatus;
	if (*pRead != NV0000_P2P_CAPS_STATUS_OK ||
	    *pWrite != NV0000_P2P_CAPS_STATUS_OK)
		return NV_ERR_NOT_SUPPORTED;
	/* BAR1 atomics: topology discovery is not implemented (real TODO). */
	return NV_OK;
}

#if NV_GEN_0
/* No atomics argument before 565. */
RM_FN NV_STATUS p2pGetCapsStatus(NvU32 gpuMask, NvU8 *pP2PWriteCapStatus,
				 NvU8 *pP2PReadCapStatus,
				 P2P_CONNECTIVITY *pConnectivity)
{
	NvU8 atomics, *pP2PAtomicsCapStatus = &atomics;
#define P2P_GET_CAPS(m, w, r, a, c) \
	(*(a) = NV0000_P2P_CAPS_STATUS_NOT_SUPPORTED, p2pGetCapsStatus((m), (w), (r), (c)))
#else
RM_FN NV_STATUS p2pGetCapsStatus(NvU32 gpuMask, NvU8 *pP2PWriteCapStatus,
				 NvU8 *pP2PReadCapStatus,
				 NvU8 *pP2PAtomicsCapStatus,
				 P2P_CONNECTIVITY *pConnectivity)
{
#define P2P_GET_CAPS(m, w, r, a, c) p2pGetCapsStatus((m), (w), (r), (a), (c))
#endif
	NvBool bCommonSwitchFound = NV_FALSE;

	if (!pP2PWriteCapStatus || !pP2PReadCapStatus || !pConnectivity)
		return NV_ERR_INVALID_ARGUMENT;

	*pP2PWriteCapStatus = NV0000_P2P_CAPS_STATUS_NOT_SUPPORTED;
	*pP2PReadCapStatus = NV0000_P2P_CAPS_STATUS_NOT_SUPPORTED;
	*pP2PAtomicsCapStatus = NV0000_P2P_CAPS_STATUS_NOT_SUPPORTED;
	*pConnectivity = P2P_CONNECTIVITY_UNKNOWN;
	nv_standin_hold(NV_STANDIN_HOLD_CAPS);

#if NV_GEN_AT_LEAST(580)
	if (_kgetP2PCapsStatusOverC2C(gpuMask, pP2PWriteCapStatus,
				      pP2PReadCapStatus) == NV_OK &&
	    *pP2PWriteCapStatus == NV0000_P2P_CAPS_STATUS_OK &&
	    *pP2PReadCapStatus == NV0000_P2P_CAPS_STATUS_OK) {
		*pConnectivity = P2P_CONNECTIVITY_C2C;
		*pP2PAtomicsCapStatus = NV0000_P2P_CAPS_STATUS_OK;
		return NV_OK;
	}
#endif
	if (_gpumgrGetP2PCapsStatusOverNvLink(gpuMask, pP2PWriteCapStatus,
					      pP2PReadCapStatus) == NV_OK &&
	    *pP2PWriteCapStatus == NV0000_P2P_CAPS_STATUS_OK &&
	    *pP2PReadCapStatus == NV0000_P2P_CAPS_STATUS_OK) {
		*pConnectivity = P2P_CONNECTIVITY_NVLINK;
		*pP2PAtomicsCapStatus = NV0000_P2P_CAPS_STATUS_OK;
		return NV_OK;
	}

	if (_kp2pCapsGetStatusOverPcie(gpuMask, pP2PWriteCapStatus,
				       pP2PReadCapStatus,
				       &bCommonSwitchFound) == NV_OK &&
	    (*pP2PWriteCapStatus == NV0000_P2P_CAPS_STATUS_OK ||
	     *pP2PReadCapStatus == NV0000_P2P_CAPS_STATUS_OK)) {
		NvU8 w = *pP2PWriteCapStatus, r = *pP2PReadCapStatus;
		NvU8 a = NV0000_P2P_CAPS_STATUS_NOT_SUPPORTED;

		*pConnectivity = P2P_CONNECTIVITY_PCIE_PROPRIETARY;
		if (_kp2pCapsGetStatusOverPcieBar1(gpuMask, &w, &r, &a,
						   bCommonSwitchFound) == NV_OK) {
			*pP2PWriteCapStatus = w;
			*pP2PReadCapStatus = r;
			*pP2PAtomicsCapStatus = a;
			*pConnectivity = P2P_CONNECTIVITY_PCIE_BAR1;
		}
	}
	return NV_OK;
}

/* ---------------------------------------------------------------------
 * GMMU
 */
RM_FN const GMMU_FIELD_ADDRESS *gmmuFmtPtePhysAddrFld(const GMMU_FMT_PTE *pPte,
						      const GMMU_APERTURE aperture)
{
	switch (aperture) {
	case GMMU_APERTURE_SYS_COH:
	case GMMU_APERTURE_SYS_NONCOH:
		return &pPte->fldAddrSysmem;
	case GMMU_APERTURE_PEER:
		return &pPte->fldAddrPeer;
	case GMMU_APERTURE_VIDEO:
		return &pPte->fldAddrVidmem;
	default:
		return NULL;
	}
}

static NvU64 gmmuFieldMask(const GMMU_FIELD *f)
{
	return GENMASK_ULL(f->hi, f->lo);
}

static void gmmuFieldSet(const GMMU_FIELD *f, NvU64 value, NvU64 *pte)
{
	*pte = (*pte & ~gmmuFieldMask(f)) | ((value << f->lo) & gmmuFieldMask(f));
}

static NvU64 gmmuFieldGet(const GMMU_FIELD *f, NvU64 pte)
{
	return (pte & gmmuFieldMask(f)) >> f->lo;
}

static void gmmuFieldSetAperture(const GMMU_FMT_PTE *pFmt,
				 GMMU_APERTURE aperture, NvU64 *pte)
{
	static const NvU32 hw[] = {
		[GMMU_APERTURE_VIDEO] = PTE_APERTURE_VIDEO_MEMORY,
		[GMMU_APERTURE_PEER] = PTE_APERTURE_PEER_MEMORY,
		[GMMU_APERTURE_SYS_COH] = PTE_APERTURE_SYSTEM_COHERENT_MEMORY,
		[GMMU_APERTURE_SYS_NONCOH] = PTE_APERTURE_SYSTEM_NON_COHERENT_MEMORY,
	};

	gmmuFieldSet(&pFmt->fldAperture, hw[aperture], pte);
}

static void gmmuFieldSetAddress(const GMMU_FIELD_ADDRESS *f, NvU64 addr,
				NvU64 *pte)
{
	gmmuFieldSet(&f->desc, addr >> f->shift, pte);
}

/* The PEER path adds the NVLink fabric base, unless there is none. */
RM_FN void kgmmuEncodePhysAddrs_IMPL(KernelGmmu *pKernelGmmu,
				     const GMMU_APERTURE aperture,
				     NvU64 *pAddresses, NvU64 fabricBaseAddress,
				     NvU64 count)
{
	NvU64 i;

	if (aperture != GMMU_APERTURE_PEER ||
	    fabricBaseAddress == NVLINK_INVALID_FABRIC_ADDR)
		return;
	for (i = 0; i < count; i++)
		pAddresses[i] += fabricBaseAddress;
}

/* Build one valid PTE for aperture/address (and peer index). */
static NvU64 rmBuildPte(const GMMU_FMT_PTE *pFmt, GMMU_APERTURE aperture,
			const GMMU_FIELD_ADDRESS *pAddrFld, NvU64 addr,
			NvU32 peerId, NvBool bVolatile)
{
	NvU64 pte = 0;

	gmmuFieldSet(&pFmt->fldValid, 1, &pte);
	gmmuFieldSetAperture(pFmt, aperture, &pte);
	if (pFmt->version == 2)
		gmmuFieldSet(&pFmt->fldVolatile, bVolatile, &pte);
	else
		gmmuFieldSet(&pFmt->fldPcf, bVolatile ? PTE_PCF_UNCACHED :
			     PTE_PCF_CACHED, &pte);
	if (aperture == GMMU_APERTURE_PEER && peerId < P2P_MAX_PEERS)
		gmmuFieldSet(&pFmt->fldPeerIndex, peerId, &pte);
	if (pAddrFld)
		gmmuFieldSetAddress(pAddrFld, addr, &pte);
	return pte;
}

/* ---------------------------------------------------------------------
 * UVM external mappings (nv_gpu_ops.c)
 */
struct gpuSession {
	NvU32 handle;
};

/* UvmGpuCachingType / UvmRmGpuCachingType (nv_uvm_types.h) */
typedef enum {
	UvmGpuCachingTypeDefault = 0,
	UvmGpuCachingTypeForceUncached = 1,
	UvmGpuCachingTypeForceCached = 2,
} UvmGpuCachingType;

/* cachingType first, as in UvmGpuExternalMappingInfo of every tag 550-595. */
typedef struct {
	UvmGpuCachingType cachingType;
	NvU64 *pteBuffer;
	NvU64 pteBufferSize;	/* in bytes */
	NvU64 numWrittenPtes;
	NvU64 pageSize;
	/* What the model reports: the field the address went to. */
	const GMMU_FIELD_ADDRESS *pAddrFld;
	GMMU_APERTURE aperture;
	NvU64 address;
} gpuExternalMappingInfo;

/*
 * nvGpuOpsGetExternalAllocVolatility (static, inlined): a peer's memory is
 * volatile (uncached in the mapping GPU's L2) per its P2P cache attribute,
 * anything else per its own.  Before 580 only the PEER aperture counts as
 * a peer; from 580 a BAR1 peer does too.
 */
static NvBool nvGpuOpsGetExternalAllocVolatility(PMEMORY_DESCRIPTOR pMemDesc,
		GMMU_APERTURE aperture, NvBool isIndirectPeerSupported,
		NvBool isBar1P2PSupported, UvmGpuCachingType cachingType)
{
	if (cachingType == UvmGpuCachingTypeForceUncached)
		return NV_TRUE;
	if (cachingType != UvmGpuCachingTypeDefault)
		return NV_FALSE;
	if (aperture == GMMU_APERTURE_PEER || isIndirectPeerSupported ||
	    (NV_GEN_AT_LEAST(580) && isBar1P2PSupported))
		return memdescGetGpuP2PCacheAttrib(pMemDesc) == NV_MEMORY_UNCACHED;
	return memdescGetGpuCacheAttrib(pMemDesc) == NV_MEMORY_UNCACHED;
}

RM_FN NV_STATUS nvGpuOpsGetExternalAllocP2pInfo(struct gpuSession *session,
		OBJGPU *pMemOwnerGpu, OBJGPU *pGpu, NvBool *isPeerSupported,
		NvBool *isBar1Supported, NvU32 *peerId)
{
	NvU8 w, r, a;
	P2P_CONNECTIVITY conn;
	NV_STATUS status;

	status = P2P_GET_CAPS(BIT(pGpu->gpuInstance) |
			      BIT(pMemOwnerGpu->gpuInstance), &w, &r, &a,
			      &conn);
	if (status != NV_OK)
		return status;
	*isPeerSupported = w == NV0000_P2P_CAPS_STATUS_OK &&
			   r == NV0000_P2P_CAPS_STATUS_OK;
#if NV_GEN_AT_LEAST(580)
	*isBar1Supported = conn == P2P_CONNECTIVITY_PCIE_BAR1;
#else
	*isBar1Supported = NV_FALSE;
#endif
	*peerId = kbusGetPeerId(GPU_GET_KERNEL_BUS(pGpu),
				pMemOwnerGpu->gpuInstance);
	return NV_OK;
}

#if NV_GEN_AT_LEAST(580)
RM_FN GMMU_APERTURE nvGpuOpsGetExternalAllocAperture(struct gpuSession *session,
		PMEMORY_DESCRIPTOR pMemDesc, NvBool isIndirectPeerSupported,
		NvBool isPeerSupported, NvBool isBar1P2PSupported,
		UvmGpuCachingType cachingType)
{
	if (pMemDesc->addressSpace == ADDR_FBMEM) {
		if (isIndirectPeerSupported)
			return GMMU_APERTURE_SYS_COH;
		if (isBar1P2PSupported) {
			/* Pre-Blackwell GPUs lack inbound atomics over BAR1. */
			if (pMemDesc->pGpu->pChip->arch >= ARCH_BLACKWELL_GB1XX)
				return GMMU_APERTURE_SYS_COH;
			return GMMU_APERTURE_SYS_NONCOH;
		}
		if (isPeerSupported)
			return GMMU_APERTURE_PEER;
		return GMMU_APERTURE_VIDEO;
	}
	return GMMU_APERTURE_SYS_COH;
}
#else
static __always_inline GMMU_APERTURE rmExternalAllocAperture(
		PMEMORY_DESCRIPTOR pMemDesc, NvBool isIndirectPeerSupported,
		NvBool isPeerSupported)
{
	if (pMemDesc->addressSpace == ADDR_FBMEM) {
		if (isIndirectPeerSupported)
			return GMMU_APERTURE_SYS_COH;
		if (isPeerSupported)
			return GMMU_APERTURE_PEER;
		return GMMU_APERTURE_VIDEO;
	}
	return GMMU_APERTURE_SYS_COH;
}

RM_FN GMMU_APERTURE nvGpuOpsGetExternalAllocAperture(PMEMORY_DESCRIPTOR pMemDesc,
		NvBool isIndirectPeerSupported, NvBool isPeerSupported)
{
	return rmExternalAllocAperture(pMemDesc, isIndirectPeerSupported,
				       isPeerSupported);
}

/*
 * The fault-inline build: the compiler inlined the static aperture choice
 * into the PTE build (it may: the out-of-line copy stays for the other
 * callers), so a probe on the symbol never sees this call.
 */
#ifdef NV_STANDIN_FAULT_INLINE
#define rmBuildPtesAperture rmExternalAllocAperture
#else
#define rmBuildPtesAperture nvGpuOpsGetExternalAllocAperture
#endif
#endif

#if NV_GEN_AT_LEAST(580)
RM_FN NV_STATUS nvGpuOpsBuildExternalAllocPtes(OBJVASPACE *pVAS,
		struct gpuSession *session, OBJGPU *pMappingGpu,
		MEMORY_DESCRIPTOR *pMemDesc, Memory *pMemory, NvU64 offset,
		NvU64 size, NvBool isIndirectPeerSupported,
		NvBool isPeerSupported, NvBool isBar1P2PSupported, NvU32 peerId,
		gpuExternalMappingInfo *pGpuExternalMappingInfo)
#else
RM_FN NV_STATUS nvGpuOpsBuildExternalAllocPtes(OBJVASPACE *pVAS,
		OBJGPU *pMappingGpu, MEMORY_DESCRIPTOR *pMemDesc,
		Memory *pMemory, NvU64 offset, NvU64 size,
		NvBool isIndirectPeerSupported, NvBool isPeerSupported,
		NvU32 peerId, gpuExternalMappingInfo *pGpuExternalMappingInfo)
#endif
{
	gpuExternalMappingInfo *pInfo = pGpuExternalMappingInfo;
	const GMMU_FMT_PTE *pFmt = GPU_GET_KERNEL_GMMU(pMappingGpu)->pPteFmt;
	GMMU_APERTURE aperture;
	NvU64 addr, pageSize = pInfo->pageSize, i, count;
	NvBool bVolatile;

#if NV_GEN_AT_LEAST(580)
	aperture = nvGpuOpsGetExternalAllocAperture(session, pMemDesc,
						    isIndirectPeerSupported,
						    isPeerSupported,
						    isBar1P2PSupported,
						    UvmGpuCachingTypeDefault);
#else
	aperture = rmBuildPtesAperture(pMemDesc, isIndirectPeerSupported,
				       isPeerSupported);
#endif
	if (aperture == GMMU_APERTURE_INVALID)
		return NV_ERR_INVALID_STATE;

	count = size / pageSize;
	if (count * sizeof(NvU64) > pInfo->pteBufferSize)
		return NV_ERR_INSUFFICIENT_RESOURCES;

#if NV_GEN_AT_LEAST(580)
	bVolatile = nvGpuOpsGetExternalAllocVolatility(pMemDesc, aperture,
			isIndirectPeerSupported, isBar1P2PSupported,
			pInfo->cachingType);
#else
	bVolatile = nvGpuOpsGetExternalAllocVolatility(pMemDesc, aperture,
			isIndirectPeerSupported, NV_FALSE, pInfo->cachingType);
#endif
	addr = pMemDesc->base + offset;

#if NV_GEN_AT_LEAST(580)
	if (isBar1P2PSupported && pMemDesc->addressSpace == ADDR_FBMEM) {
		OBJGPU *pOwner = pMemDesc->pGpu;
		NvU64 base, dmaSize;
		NV_STATUS status;

		status = kbusGetBar1P2PDmaInfo_HAL(pMappingGpu, pOwner,
						   GPU_GET_KERNEL_BUS(pOwner),
						   &base, &dmaSize);
		if (status != NV_OK)
			return status;
		if (base == NV_U64_MAX || dmaSize == 0)
			return NV_ERR_INVALID_STATE;
		addr += base;	/* _nvGpuOpsEncodeBar1P2PAddrs */
	} else
#endif
	{
		NvU64 fabricBase = NVLINK_INVALID_FABRIC_ADDR;

		kgmmuEncodePhysAddrs_IMPL(GPU_GET_KERNEL_GMMU(pMappingGpu),
					  aperture, &addr, fabricBase, 1);
	}

	pInfo->aperture = aperture;
	pInfo->pAddrFld = gmmuFmtPtePhysAddrFld(pFmt, aperture);
	pInfo->address = addr;
	for (i = 0; i < count; i++)
		pInfo->pteBuffer[i] = rmBuildPte(pFmt, aperture, pInfo->pAddrFld,
						 addr + i * pageSize, peerId,
						 bVolatile);
	pInfo->numWrittenPtes = count;
	return NV_OK;
}

/* ---------------------------------------------------------------------
 * IOVA spaces
 */
RM_FN void iovaspaceDestruct_IMPL(OBJIOVASPACE *pIOVAS)
{
	if (pIOVAS->mappingCount != 0)
		NV_PRINTF_ERROR("%lld left-over mappings in IOVAS 0x%x\n",
				(long long)pIOVAS->mappingCount,
				pIOVAS->base.vaspaceId);
}

/* ---------------------------------------------------------------------
 * P2P objects (p2p_api.c) and mappings (virtual_mem.c), kept in small
 * tables; their index is the handle userspace sees.
 */
#define RM_MAX_P2P_OBJECTS	32
#define RM_MAX_MAPPINGS		64

typedef struct {
	NvBool bUsed;
	OBJGPU *peer1;
	OBJGPU *peer2;
	NvU32 peerId1;
	NvU32 peerId2;
	NvU32 attributes;
	NvU64 l2pDmaAddress, p2lDmaAddress;
} P2PApi;

typedef struct {
	NvBool bUsed;
	NvU32 p2pObject;
	OBJGPU *pGpu;		/* mapping GPU */
	NvBool bUvm;
	CLI_DMA_MAPPING_INFO info;
} RmMapping;

static P2PApi rmP2PObjects[RM_MAX_P2P_OBJECTS];
static RmMapping rmMappings[RM_MAX_MAPPINGS];

/* nvflow window: BAR1 P2P windows made without a P2P object. */
#define RM_MAX_WINDOWS	16

typedef struct {
	NvBool bUsed;
	OBJGPU *pGpu;		/* mapping GPU */
	CLI_DMA_MAPPING_INFO info;
} RmWindow;

static RmWindow rmWindows[RM_MAX_WINDOWS];

static NvBool p2papiIsMailboxBroken(const P2PApi *pP2PApi)
{
	return P2PAPI_CONNECTION_TYPE(pP2PApi->attributes) ==
		P2P_CONNECTIVITY_PCIE_PROPRIETARY &&
	       (kbusIsMailboxBroken(pP2PApi->peer1) ||
		kbusIsMailboxBroken(pP2PApi->peer2));
}

/* NV0000 caps -> connection type, in p2papiConstruct's order. */
static P2P_CONNECTIVITY p2papiConnectionFromCaps(NvU8 w, NvU8 r,
						 P2P_CONNECTIVITY conn)
{
	if (w != NV0000_P2P_CAPS_STATUS_OK && r != NV0000_P2P_CAPS_STATUS_OK)
		return P2P_CONNECTIVITY_UNKNOWN;
	switch (conn) {
	case P2P_CONNECTIVITY_C2C:
		return P2P_CONNECTIVITY_C2C;
	case P2P_CONNECTIVITY_NVLINK:
	case P2P_CONNECTIVITY_NVLINK_INDIRECT:
		return P2P_CONNECTIVITY_NVLINK;
	case P2P_CONNECTIVITY_PCIE_BAR1:
		return P2P_CONNECTIVITY_PCIE_BAR1;
	case P2P_CONNECTIVITY_PCIE_PROPRIETARY:
		return P2P_CONNECTIVITY_PCIE_PROPRIETARY;
	default:
		return P2P_CONNECTIVITY_UNKNOWN;
	}
}

RM_FN NV_STATUS p2papiConstruct_IMPL(P2PApi *pP2PApi, OBJGPU *pLocalGpu,
				     OBJGPU *pRemoteGpu, int forcedType)
{
	KernelBus *pLocalKernelBus = GPU_GET_KERNEL_BUS(pLocalGpu);
	KernelBus *pRemoteKernelBus = GPU_GET_KERNEL_BUS(pRemoteGpu);
	NvU32 peer1 = BUS_INVALID_PEER, peer2 = BUS_INVALID_PEER;
	P2P_CONNECTIVITY conn, type;
	NvU8 w, r, a;
	NV_STATUS status;

	status = P2P_GET_CAPS(BIT(pLocalGpu->gpuInstance) |
			      BIT(pRemoteGpu->gpuInstance), &w, &r, &a,
			      &conn);
	if (status != NV_OK)
		return status;
	type = p2papiConnectionFromCaps(w, r, conn);
	/* A test may force the type the caller asks for ("create --type"). */
	if (forcedType != NV_STANDIN_TYPE_FROM_CAPS)
		type = forcedType;
	if (type == P2P_CONNECTIVITY_UNKNOWN) {
		NV_PRINTF_ERROR("Unknown connection type\n");
		return NV_ERR_NOT_SUPPORTED;
	}

	pP2PApi->peer1 = pLocalGpu;
	pP2PApi->peer2 = pRemoteGpu;
	pP2PApi->attributes = type;	/* LINK_TYPE GPA (0) */
	pP2PApi->l2pDmaAddress = pP2PApi->p2lDmaAddress = NV_U64_MAX;

	status = kbusCreateP2PMapping_HAL(pLocalGpu, pLocalKernelBus, pRemoteGpu,
					  pRemoteKernelBus, &peer1, &peer2,
					  pP2PApi->attributes);
	if (status != NV_OK)
		return status;
	pP2PApi->peerId1 = peer1;
	pP2PApi->peerId2 = peer2;

	/* Kernel-privileged clients also get the BAR1 DMA windows. */
	if (type == P2P_CONNECTIVITY_PCIE_BAR1) {
		NvU64 size;

		status = kbusGetBar1P2PDmaInfo_HAL(pLocalGpu, pRemoteGpu,
						   pRemoteKernelBus,
						   &pP2PApi->l2pDmaAddress, &size);
		if (status == NV_OK)
			status = kbusGetBar1P2PDmaInfo_HAL(pRemoteGpu, pLocalGpu,
							   pLocalKernelBus,
							   &pP2PApi->p2lDmaAddress,
							   &size);
		/* Like the real code, no cleanup of the mapping here. */
		if (status != NV_OK)
			return status;
	}
	return NV_OK;
}

RM_FN NV_STATUS p2papiDestruct_IMPL(P2PApi *pP2PApi)
{
	return kbusRemoveP2PMapping_HAL(pP2PApi->peer1,
					GPU_GET_KERNEL_BUS(pP2PApi->peer1),
					pP2PApi->peer2,
					GPU_GET_KERNEL_BUS(pP2PApi->peer2),
					pP2PApi->peerId1, pP2PApi->peerId2,
					pP2PApi->attributes);
}

/* virtmemMapTo_IMPL for peer vidmem: BAR1 P2P or a PEER mapping. */
RM_FN NV_STATUS virtmemMapTo_IMPL(OBJGPU *pGpu, OBJGPU *pPeerGpu,
				  MEMORY_DESCRIPTOR *pPeerMemDesc, NvU64 offset,
				  NvU64 length, CLI_DMA_MAPPING_INFO *pInfo,
				  GMMU_APERTURE *pAperture, NvU32 *pFlags)
{
	NvBool bBar1P2P = kbusHasPcieBar1P2PMapping_HAL(pGpu,
			GPU_GET_KERNEL_BUS(pGpu), pPeerGpu,
			GPU_GET_KERNEL_BUS(pPeerGpu));
	DMA_BAR1P2P_MAPPING_PRARAMS params = {
		.pVas = &pGpu->vas,
		.pPeerGpu = pPeerGpu,
		.pPeerMemDesc = pPeerMemDesc,
		.offset = offset,
		.length = length,
		.pDmaMappingInfo = pInfo,
	};
	NV_STATUS status;

	pInfo->pPeerGpu = pPeerGpu;
	pInfo->length = length;
	if (!bBar1P2P) {
		pInfo->pMemDesc = pPeerMemDesc;
		*pAperture = GMMU_APERTURE_PEER;
		*pFlags = 0;
		return NV_OK;
	}
	status = dmaAllocBar1P2PMapping_HAL(pGpu, GPU_GET_DMA(pGpu), &params);
	if (status != NV_OK)
		return status;
	pInfo->pMemDesc = params.pMemDescOut;
	*pAperture = (params.flagsOut & DMA_FLAGS_UNCACHED) ?
		GMMU_APERTURE_SYS_NONCOH : GMMU_APERTURE_SYS_COH;
	*pFlags = params.flagsOut;
	return NV_OK;
}

/* ---------------------------------------------------------------------
 * GPU construction: HAL tables as the NVOC-generated init fills them
 * for the chip and the driver generation (g_kern_bus_nvoc.c,
 * g_virt_mem_allocator_nvoc.c).
 */
static NvBool rmChipHasBar1P2PHals(const struct rmChip *pChip)
{
	if (NV_GEN_0)
		return pChip->arch == ARCH_HOPPER;	/* ChipHal: GH100 only */
	switch (pChip->arch) {
	case ARCH_HOPPER:
	case ARCH_BLACKWELL_GB1XX:
		return NV_TRUE;
	case ARCH_BLACKWELL_GB2XX:
		return NV_GEN_AT_LEAST(570);
	default:
		return NV_FALSE;	/* Ampere, Ada: stubs */
	}
}

RM_FN void __nvoc_init_funcTable_KernelBus(OBJGPU *pGpu, KernelBus *pKernelBus)
{
	NvBool bGH100 = rmChipHasBar1P2PHals(pGpu->pChip);

	pKernelBus->__kbusCreateP2PMappingForMailbox__ =
		kbusCreateP2PMappingForMailbox_GM200;
	pKernelBus->__kbusRemoveP2PMappingForMailbox__ =
		kbusRemoveP2PMappingForMailbox_GM200;
	pKernelBus->__kbusCreateP2PMappingForNvlink__ =
		kbusCreateP2PMappingForNvlink_GP100;
	pKernelBus->__kbusRemoveP2PMappingForNvlink__ =
		kbusRemoveP2PMappingForNvlink_GP100;

	if (bGH100) {
		pKernelBus->__kbusCreateP2PMapping__ = kbusCreateP2PMapping_GH100;
		pKernelBus->__kbusRemoveP2PMapping__ = kbusRemoveP2PMapping_GH100;
		pKernelBus->__kbusCreateP2PMappingForBar1P2P__ =
			kbusCreateP2PMappingForBar1P2P_GH100;
		pKernelBus->__kbusRemoveP2PMappingForBar1P2P__ =
			kbusRemoveP2PMappingForBar1P2P_GH100;
		/* (fault-endbr's copy carries nocf_check in its type) */
		pKernelBus->__kbusGetBar1P2PDmaInfo__ = (void *)kbusGetBar1P2PDmaInfo_GH100;
		pKernelBus->__kbusHasPcieBar1P2PMapping__ =
			kbusHasPcieBar1P2PMapping_GH100;
		pKernelBus->__kbusIsPcieBar1P2PMappingSupported__ =
			kbusIsPcieBar1P2PMappingSupported_GH100;
	} else {
		pKernelBus->__kbusCreateP2PMapping__ = kbusCreateP2PMapping_GP100;
		pKernelBus->__kbusRemoveP2PMapping__ = kbusRemoveP2PMapping_GP100;
		pKernelBus->__kbusCreateP2PMappingForBar1P2P__ =
			kbusCreateP2PMappingForBar1P2P_395e98;
		pKernelBus->__kbusRemoveP2PMappingForBar1P2P__ =
			kbusRemoveP2PMappingForBar1P2P_395e98;
		pKernelBus->__kbusGetBar1P2PDmaInfo__ = kbusGetBar1P2PDmaInfo_395e98;
		pKernelBus->__kbusHasPcieBar1P2PMapping__ =
			kbusHasPcieBar1P2PMapping_STUB;
		pKernelBus->__kbusIsPcieBar1P2PMappingSupported__ =
			kbusIsPcieBar1P2PMappingSupported_STUB;
	}
#if NV_GEN_0
	/* ChipHal: GH100 gets the bodies; every other chip the stubs. */
	if (bGH100) {
		pKernelBus->__kbusIsBar1P2PCapable__ = kbusIsBar1P2PCapable_GH100;
		pKernelBus->__kbusEnableStaticBar1Mapping__ =
			kbusEnableStaticBar1Mapping_GH100;
		pKernelBus->__kbusDisableStaticBar1Mapping__ =
			kbusDisableStaticBar1Mapping_GH100;
		pKernelBus->__kbusGetStaticFbAperture__ =
			kbusGetStaticFbAperture_GH100;
		pKernelBus->__kbusUpdateStaticBar1VAMapping__ =
			kbusUpdateStaticBar1VAMapping_GH100;
	} else {
		pKernelBus->__kbusIsBar1P2PCapable__ = kbusIsBar1P2PCapable_bf6dfa;
		pKernelBus->__kbusEnableStaticBar1Mapping__ =
			kbusEnableStaticBar1Mapping_395e98;
		pKernelBus->__kbusDisableStaticBar1Mapping__ =
			kbusDisableStaticBar1Mapping_d44104;
		pKernelBus->__kbusGetStaticFbAperture__ =
			kbusGetStaticFbAperture_395e98;
		pKernelBus->__kbusUpdateStaticBar1VAMapping__ =
			kbusUpdateStaticBar1VAMapping_395e98;
	}
#endif
#if NV_GEN_AT_LEAST(580)
	/* Turing through Blackwell get _TU102; the stub is the default branch. */
	if (pGpu->pChip->arch >= ARCH_TURING)
		pKernelBus->__kbusEnableStaticBar1Mapping__ =
			kbusEnableStaticBar1Mapping_TU102;
	else
		pKernelBus->__kbusEnableStaticBar1Mapping__ =
			kbusEnableStaticBar1Mapping_395e98;
#endif
#if NV_GEN_AT_LEAST(590)
	pKernelBus->bSupportBar1P2PByDefault = pGpu->pChip->bBar1P2PByDefault;
#endif
}

RM_FN void __nvoc_init_funcTable_VirtMemAllocator(OBJGPU *pGpu,
						  VirtMemAllocator *pDma)
{
	if (rmChipHasBar1P2PHals(pGpu->pChip)) {
		pDma->__dmaAllocBar1P2PMapping__ = dmaAllocBar1P2PMapping_GH100;
		pDma->__dmaFreeBar1P2PMapping__ = dmaFreeBar1P2PMapping_GH100;
	} else {
		pDma->__dmaAllocBar1P2PMapping__ = dmaAllocBar1P2PMapping_STUB;
		pDma->__dmaFreeBar1P2PMapping__ = dmaFreeBar1P2PMapping_STUB;
	}
}

/*
 * GPU (re)initialisation after the attach (RmInitAdapter: osinit.c's
 * gpumgrStatePreInitGpu, then gpumgrStateLoadGpu): the BAR1 aperture in
 * the pre-init (kbusStatePreInitLocked_GM107), BAR1 and static BAR1 in
 * the load (kbusStatePostLoad_GM107 -> kbusInitBar1).
 */
RM_FN NV_STATUS gpuStateInit(OBJGPU *pGpu)
{
	KernelBus *pKernelBus = GPU_GET_KERNEL_BUS(pGpu);
	NV_STATUS status;

	kbusDetermineBar1Force64KBMapping_IMPL(pGpu, pKernelBus);
	kbusDetermineBar1ApertureLength_IMPL(pGpu, pKernelBus);
	status = kbusInitBar1(pGpu, pKernelBus);
	pGpu->bInitialized = status == NV_OK;
	pGpu->initStatus = status;
	if (status != NV_OK)
		NV_PRINTF_ERROR("GPU%u: BAR1 initialisation failed: 0x%x\n",
				pGpu->gpuInstance, status);
	return status;
}

/* GPU teardown before detach (gpuStateUnload: kbusStatePreUnload). */
RM_FN void gpuStateUnload(OBJGPU *pGpu)
{
#if NV_GEN_0
	if (pGpu->bInitialized)
		kbusDestroyBar1_GM107(pGpu, GPU_GET_KERNEL_BUS(pGpu), 0);
#else
	/* vmmDestroyVaspace: what is still mapped goes with the VA space. */
	rmBar1LeakedMaps[pGpu->gpuInstance] +=
		GPU_GET_KERNEL_BUS(pGpu)->bar1MapCount;
	GPU_GET_KERNEL_BUS(pGpu)->bar1MapCount = 0;
#endif
	pGpu->bInitialized = NV_FALSE;
}

static const struct rmChip *rmFindChip(const char *name)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(rmChips); i++)
		if (!strcmp(rmChips[i].name, name))
			return &rmChips[i];
	return NULL;
}

/* ---------------------------------------------------------------------
 * Entry points for the kernel interface layer (nv.c)
 */
static void rmPrintStatus(struct seq_buf *out, NV_STATUS status)
{
	seq_buf_printf(out, "status=0x%x\nstatus_name=%s\n", status,
		       nvStatusToString(status));
}

static OBJGPU *rmGetReadyGpu(u32 inst)
{
	return gpumgrGetGpu(inst);
}

const char *rm_standin_version_id(void)
{
	return "NVIDIA UNIX Open Kernel Module for x86_64  " NV_STANDIN_VERSION
	       "  Release Build  (standin@)";
}

/* Drops the global keys; the per-device ones stay (module parameter only). */
void rm_standin_registry_clear(void)
{
	unsigned int i, n = 0;

	for (i = 0; i < rmRegistryCount; i++)
		if (rmRegistry[i].gpu >= 0)
			rmRegistry[n++] = rmRegistry[i];
	rmRegistryCount = n;
}

/* @gpu: the GPU (index in gpus=) the key is for, or -1 for every GPU. */
int rm_standin_registry_write_dev(int gpu, const char *key, u32 value)
{
	unsigned int i;

	if (strlen(key) >= RM_REGISTRY_KEY_LEN)
		return -EINVAL;
	for (i = 0; i < rmRegistryCount; i++) {
		if (rmRegistry[i].gpu == gpu && !strcmp(rmRegistry[i].key, key)) {
			rmRegistry[i].value = value;
			return 0;
		}
	}
	if (rmRegistryCount == RM_REGISTRY_MAX)
		return -ENOSPC;
	strscpy(rmRegistry[rmRegistryCount].key, key, RM_REGISTRY_KEY_LEN);
	rmRegistry[rmRegistryCount].value = value;
	rmRegistry[rmRegistryCount].gpu = gpu;
	rmRegistryCount++;
	return 0;
}

int rm_standin_registry_write(const char *key, u32 value)
{
	return rm_standin_registry_write_dev(-1, key, value);
}

static void rmRegistryShow(struct seq_buf *out)
{
	unsigned int i;

	for (i = 0; i < rmRegistryCount; i++) {
		if (rmRegistry[i].gpu >= 0)
			seq_buf_printf(out, "gpu%d.", rmRegistry[i].gpu);
		seq_buf_printf(out, "%s=0x%x\n", rmRegistry[i].key,
			       rmRegistry[i].value);
	}
}

/*
 * gpumgrAttachGpu / gpumgrDetachGpu (gpu_mgr.c): RmInitAdapter attaches a
 * GPU on its first open (or in persistence mode), RmShutdownAdapter
 * detaches it after the last close.  Each attach constructs a new OBJGPU,
 * so the pointer changes from one cycle to the next; the engines'
 * constructors read the registry (kbifConstructEngine: ForceP2P) on the
 * attaching thread.
 */
/*
 * GPUATTACHARG (g_gpu_mgr_nvoc.h): the real field order up to pOsAttachArg,
 * the same in every tag from 550 to 595 but for regLength (NvU32 up to
 * 580, NvU64 from 590; fbLength stays at offset 72 either way).  RmInitAdapter
 * fills fbPhysAddr/fbLength with BAR1 (osinit.c: nv->fb).  pOsAttachArg
 * carries the stand-in's own description of the GPU.
 */
typedef struct GPUATTACHARG {
	void *regBaseAddr;
	void *fbBaseAddr;
	void *instBaseAddr;
	RmPhysAddr devPhysAddr;
	RmPhysAddr fbPhysAddr;
	RmPhysAddr instPhysAddr;
	RmPhysAddr ioPhysAddr;
	NvU64 nvDomainBusDeviceFunc;
#if NV_GEN_AT_LEAST(590)
	NvU64 regLength;
#else
	NvU32 regLength;
#endif
	NvU64 fbLength;
	NvU32 instLength;
	NvU32 intLine;
	void *pOsAttachArg;
} GPUATTACHARG;

static_assert(offsetof(GPUATTACHARG, fbPhysAddr) == 32);
static_assert(offsetof(GPUATTACHARG, nvDomainBusDeviceFunc) == 56);
static_assert(offsetof(GPUATTACHARG, fbLength) == 72);

/* RmInitAdapter's part: the attach argument of GPU @i. */
static void rmFillAttachArg(GPUATTACHARG *pArg, struct nv_standin_gpu_desc *desc)
{
	memset(pArg, 0, sizeof(*pArg));
	pArg->fbPhysAddr = desc->bar1_base;
	pArg->fbLength = desc->bar1_size;
	pArg->regLength = SZ_16M;
	/* gpuEncodeDomainBusDevice: domain 63:32, bus 15:8, device (slot) 7:0 */
	pArg->nvDomainBusDeviceFunc = ((NvU64)desc->domain << 32) |
		(desc->bus << 8) | desc->dev;
	/* A test knob (nv.c attach_no_pci): an address no reader can decode. */
	if (READ_ONCE(nv_standin_attach_no_pci) & BIT(desc - rmConfig.gpu))
		pArg->nvDomainBusDeviceFunc = ~0ULL;
	pArg->pOsAttachArg = desc;
}

/* The memory of each instance's last detached OBJGPU, for its next attach. */
static OBJGPU *rmSpareGpus[NV_STANDIN_MAX_GPUS];

/*
 * osDpcDetachGpu (arch/nvalloc/unix/src/osinit.c): empty on Unix, a call
 * of its own from gpu_mgr.c in every tag from 550 to 595.  gpumgrDetachGpu
 * calls it with the OBJGPU it is about to free; gpumgrAttachGpu's error
 * path (gpumgrAttach_error_and_exit) calls it too, with the OBJGPU or NULL.
 */
RM_FN void osDpcDetachGpu(OBJGPU *pGpu)
{
	barrier();
}

RM_FN NV_STATUS gpumgrAttachGpu(NvU32 gpuInstance, GPUATTACHARG *pArg)
{
	struct nv_standin_gpu_desc *pAttachArg = pArg->pOsAttachArg;
	const struct rmChip *pChip = rmFindChip(pAttachArg->chip);
	OBJGPU *pGpu;

	if (gpuInstance >= NV_STANDIN_MAX_GPUS || gpumgrGpus[gpuInstance])
		return NV_ERR_INVALID_ARGUMENT;
	/* Entered under the API lock (exclusive), no GPU lock. */
	nv_standin_hold(NV_STANDIN_HOLD_ATTACH);
	if (!pChip || pChip->firstMajor > NV_STANDIN_MAJOR) {
		printk(KERN_ERR "NVRM: GPU %04x:%02x:%02x.%x (%s) is not supported by this driver\n",
		       pAttachArg->domain, pAttachArg->bus, pAttachArg->dev,
		       pAttachArg->fn, pAttachArg->chip);
		osDpcDetachGpu(NULL);	/* gpumgrAttach_error_and_exit */
		return NV_ERR_NOT_SUPPORTED;
	}
	/*
	 * The allocator often hands a re-attached GPU the memory its last
	 * OBJGPU had; the stand-in makes that certain, so that anything a
	 * module keeps keyed by the old pointer meets the new GPU.
	 */
	pGpu = rmSpareGpus[gpuInstance];
	rmSpareGpus[gpuInstance] = NULL;
	if (pGpu)
		memset(pGpu, 0, sizeof(*pGpu));
	else
		pGpu = kzalloc(sizeof(*pGpu), GFP_KERNEL);
	if (!pGpu)
		return NV_ERR_NO_MEMORY;
	pGpu->gpuInstance = gpuInstance;
	pGpu->desc = *pAttachArg;
	pGpu->pChip = pChip;
	pGpu->gpuId = (pAttachArg->domain << 16) | (pAttachArg->bus << 8) |
		      pAttachArg->dev;
	pGpu->nvlinkPeerMask = rmConfig.nvlink[gpuInstance];
	pGpu->kernelGmmu.pPteFmt = pChip->arch >= ARCH_HOPPER ?
		&gmmuFmtPteVer3 : &gmmuFmtPteVer2;
	pGpu->vas.pGpu = pGpu;
	pGpu->vas.vaspaceId = pGpu->gpuId;
	pGpu->iovas.base.pGpu = pGpu;
	pGpu->iovas.base.vaspaceId = pGpu->gpuId;
	__nvoc_init_funcTable_KernelBus(pGpu, &pGpu->kernelBus);
	__nvoc_init_funcTable_VirtMemAllocator(pGpu, &pGpu->dma);
	gpumgrGpus[gpuInstance] = pGpu;
	gpumgrAttachedMask |= BIT(gpuInstance);
	/*
	 * The engines' constructors read the registry inside the attach, on
	 * its thread (kbifConstructEngine, kbusConstructEngine: gpuPostConstruct
	 * from gpumgrAttachGpu); the state phases come after it returns.
	 */
	_kbifInitRegistryOverrides(pGpu, GPU_GET_KERNEL_BIF(pGpu));
	kbusInitRegistryOverrides(pGpu, &pGpu->kernelBus);
	/*
	 * gpuPostConstruct failing after the engines read the registry
	 * (gpu_mgr.c gpumgrAttach_error_and_exit, L1602-1616 in 580.142):
	 * osDpcDetachGpu(pGpu), then the OBJGPU is freed and the attach fails.
	 */
	if (READ_ONCE(nv_standin_fail_post_construct) & BIT(gpuInstance)) {
		WRITE_ONCE(nv_standin_fail_post_construct,
			   nv_standin_fail_post_construct & ~BIT(gpuInstance));
		osDpcDetachGpu(pGpu);
		gpumgrGpus[gpuInstance] = NULL;
		gpumgrAttachedMask &= ~BIT(gpuInstance);
		rmSpareGpus[gpuInstance] = pGpu;
		return NV_ERR_GENERIC;
	}
	return NV_OK;
}

/*
 * RmInitAdapter's part after gpumgrAttachGpu has returned: the state
 * phases of GPU @i, under the GPU locks (gpumgrStatePreInitGpu,
 * gpumgrStateInitGpu, gpumgrStateLoadGpu), on the same thread.
 */
static void rmInitAdapterStates(NvU32 i)
{
	OBJGPU *pGpu = gpumgrGetGpu(i);

	if (!pGpu)
		return;
	rmGpuLocksAcquire();
	gpuStateInit(pGpu);
	rmGpuLocksRelease();
}

RM_FN NV_STATUS gpumgrDetachGpu(NvU32 gpuInstance)
{
	OBJGPU *pGpu = gpumgrGetGpu(gpuInstance);

	if (!pGpu)
		return NV_ERR_INVALID_ARGUMENT;
	osDpcDetachGpu(pGpu);
#if NV_GEN_AT_LEAST(565)
	/* kbusStateUnload / kbusDestruct: static BAR1 goes first. */
	if (pGpu->kernelBus.staticBar1.bStaticBar1Enabled)
		kbusDisableStaticBar1Mapping_TU102(pGpu, &pGpu->kernelBus, 0);
#endif
	iovaspaceDestruct_IMPL(&pGpu->iovas);
	gpumgrGpus[gpuInstance] = NULL;
	gpumgrAttachedMask &= ~BIT(gpuInstance);
	kfree(rmSpareGpus[gpuInstance]);
	rmSpareGpus[gpuInstance] = pGpu;
	return NV_OK;
}

/* RM's own init (RmInitRm): the system object, then (persistence) the GPUs. */
int rm_standin_init(const struct nv_standin_config *cfg)
{
	unsigned int i;

	rmGpuLocksInit();
	rmConfig = *cfg;
	memset(&rmGpuMgr, 0, sizeof(rmGpuMgr));
	rmSys.pGpuMgr = &rmGpuMgr;
	WRITE_ONCE(g_pSys, &rmSys);
	for (i = 0; i < cfg->num_gpus; i++) {
		GPUATTACHARG arg;
		NV_STATUS status;

		/* rm_init_adapter: RmInitAdapter under the API lock. */
		rmFillAttachArg(&arg, &rmConfig.gpu[i]);
		rmapiLockAcquire(RMAPI_LOCK_FLAGS_NONE);
		status = gpumgrAttachGpu(i, &arg);
		if (status == NV_OK)
			rmInitAdapterStates(i);
		rmapiLockRelease(RMAPI_LOCK_FLAGS_NONE);
		if (status == NV_ERR_NO_MEMORY) {
			rm_standin_shutdown();
			return -ENOMEM;
		}
	}
	return 0;
}

static void rmShutdown(void)
{
	unsigned int i;

	if (!SYS_GET_INSTANCE())
		return;
	if (rmConfig.unload_destroys) {
		for (i = 0; i < RM_MAX_MAPPINGS; i++)
			if (rmMappings[i].bUsed && rmMappings[i].info.bBar1P2P)
				dmaFreeBar1P2PMapping_HAL(GPU_GET_DMA(rmMappings[i].pGpu),
							  &rmMappings[i].info);
		for (i = 0; i < RM_MAX_P2P_OBJECTS; i++) {
			NV_STATUS status;

			if (!rmP2PObjects[i].bUsed)
				continue;
			status = p2papiDestruct_IMPL(&rmP2PObjects[i]);
			if (status != NV_OK)
				printk(KERN_ERR "NVRM: p2papiDestruct_IMPL: object %u: 0x%x\n",
				       i, status);
		}
	}
	for (i = 0; i < RM_MAX_MAPPINGS; i++) {
		/* Left-over BAR1 P2P memdescs are freed without the HAL. */
		if (rmMappings[i].bUsed && rmMappings[i].info.bBar1P2P)
			kfree(rmMappings[i].info.pMemDesc);
	}
	for (i = 0; i < RM_MAX_WINDOWS; i++)
		if (rmWindows[i].bUsed)
			kfree(rmWindows[i].info.pMemDesc);
	memset(rmWindows, 0, sizeof(rmWindows));
	memset(rmMappings, 0, sizeof(rmMappings));
	memset(rmP2PObjects, 0, sizeof(rmP2PObjects));

	for (i = 0; i < NV_STANDIN_MAX_GPUS; i++) {
		if (gpumgrGpus[i])
			gpuStateUnload(gpumgrGpus[i]);
		gpumgrDetachGpu(i);
		kfree(rmSpareGpus[i]);
		rmSpareGpus[i] = NULL;
	}
	WRITE_ONCE(g_pSys, NULL);
}

/* Unload (RmShutdownRm after every adapter's teardown): API lock, GPU locks. */
void rm_standin_shutdown(void)
{
	rmApiEnter(RMAPI_LOCK_FLAGS_NONE);
	rmShutdown();
	rmApiExit(RMAPI_LOCK_FLAGS_NONE);
}

static const char *rmCapsStatusName(NvU8 s)
{
	static const char *const names[] = {
		"OK", "CHIPSET_NOT_SUPPORTED", "GPU_NOT_SUPPORTED",
		"IOH_TOPOLOGY_NOT_SUPPORTED", "DISABLED_BY_REGKEY",
		"NOT_SUPPORTED",
	};

	return s < ARRAY_SIZE(names) ? names[s] : "UNKNOWN";
}

static int rmCaps(u32 a, u32 b, struct seq_buf *out)
{
	NvU8 w, r, at;
	P2P_CONNECTIVITY conn;
	NV_STATUS status;

	/* a == b: loopback, a mask of one GPU */
	if (!rmGetReadyGpu(a) || !rmGetReadyGpu(b))
		return -ENODEV;
	status = P2P_GET_CAPS(BIT(a) | BIT(b), &w, &r, &at, &conn);
	seq_buf_printf(out, "read=%s\nwrite=%s\natomics=%s\nconnectivity=%s\n",
		       rmCapsStatusName(r), rmCapsStatusName(w),
		       rmCapsStatusName(at), p2pConnectivityNames[conn]);
	seq_buf_printf(out, "p2p=%s\n",
		       (r == NV0000_P2P_CAPS_STATUS_OK &&
			w == NV0000_P2P_CAPS_STATUS_OK) ? "OK" : "NO");
	rmPrintStatus(out, status);
	return 0;
}

/*
 * Benchmark support (bench/hooks): the cost of N calls of a BAR1 P2P HAL
 * slot through the GPU's HAL table (the stub, or whatever the shim made
 * of it) against N direct calls of the _GH100 body it stands for.
 */
static int rmBench(u32 a, u32 b, u32 n, struct seq_buf *out)
{
	OBJGPU *pGpu0 = rmGetReadyGpu(a), *pGpu1 = rmGetReadyGpu(b);
	KernelBus *b0, *b1;
	u64 t0, t1, t2, t3;
	NvU32 i, yes = 0;

	if (!pGpu0 || !pGpu1 || a == b || !n)
		return -EINVAL;
	b0 = GPU_GET_KERNEL_BUS(pGpu0);
	b1 = GPU_GET_KERNEL_BUS(pGpu1);
	t0 = ktime_get_ns();
	for (i = 0; i < n; i++)
		yes += kbusIsPcieBar1P2PMappingSupported_GH100(pGpu0, b0, pGpu1, b1);
	t1 = ktime_get_ns();
	for (i = 0; i < n; i++)
		yes += kbusIsPcieBar1P2PMappingSupported_HAL(pGpu0, b0, pGpu1, b1);
	t2 = ktime_get_ns();
	for (i = 0; i < n; i++)
		yes += kbusHasPcieBar1P2PMapping_HAL(pGpu0, b0, pGpu1, b1);
	t3 = ktime_get_ns();
	seq_buf_printf(out, "calls=%u\ndirect_ns=%llu\nhal_issupported_ns=%llu\nhal_has_ns=%llu\ntrue=%u\n",
		       n, t1 - t0, t2 - t1, t3 - t2, yes);
	return 0;
}

static int rmCreate(u32 a, u32 b, int type, struct seq_buf *out)
{
	OBJGPU *pGpu0 = rmGetReadyGpu(a), *pGpu1 = rmGetReadyGpu(b);
	P2PApi *pP2PApi = NULL;
	NV_STATUS status;
	unsigned int i;

	if (!pGpu0 || !pGpu1 || a == b)
		return -ENODEV;
	if (type != NV_STANDIN_TYPE_FROM_CAPS &&
	    (type <= P2P_CONNECTIVITY_UNKNOWN || type > P2P_CONNECTIVITY_C2C))
		return -EINVAL;
	for (i = 0; i < RM_MAX_P2P_OBJECTS; i++) {
		if (!rmP2PObjects[i].bUsed) {
			pP2PApi = &rmP2PObjects[i];
			break;
		}
	}
	if (!pP2PApi)
		return -ENOSPC;

	if (!pGpu0->bInitialized || !pGpu1->bInitialized) {
		status = NV_ERR_INVALID_STATE;
	} else {
		memset(pP2PApi, 0, sizeof(*pP2PApi));
		status = p2papiConstruct_IMPL(pP2PApi, pGpu0, pGpu1, type);
	}
	if (status != NV_OK) {
		memset(pP2PApi, 0, sizeof(*pP2PApi));
		rmPrintStatus(out, status);
		return 0;
	}
	pP2PApi->bUsed = NV_TRUE;
	pGpu0->liveObjects++;
	pGpu1->liveObjects++;
	seq_buf_printf(out, "object=%u\ntype=%s\n", i,
		       p2pConnectivityNames[P2PAPI_CONNECTION_TYPE(pP2PApi->attributes)]);
	if (pP2PApi->peerId1 != BUS_INVALID_PEER)
		seq_buf_printf(out, "peer_id=%u\npeer_id_remote=%u\n",
			       pP2PApi->peerId1, pP2PApi->peerId2);
	if (pP2PApi->l2pDmaAddress != NV_U64_MAX)
		seq_buf_printf(out, "bar1_dma_l2p=0x%llx\nbar1_dma_p2l=0x%llx\n",
			       pP2PApi->l2pDmaAddress, pP2PApi->p2lDmaAddress);
	seq_buf_printf(out, "mailbox_broken=%d\n", p2papiIsMailboxBroken(pP2PApi));
	rmPrintStatus(out, NV_OK);
	return 0;
}

static const char *rmFieldName(const GMMU_FMT_PTE *pFmt,
			       const GMMU_FIELD_ADDRESS *pFld)
{
	if (pFld == &pFmt->fldAddrSysmem)
		return "sys";
	if (pFld == &pFmt->fldAddrVidmem)
		return "vid";
	if (pFld == &pFmt->fldAddrPeer)
		return "peer";
	return "none";
}

/* Decode a PTE back into its fields: what a test compares. */
static void rmPrintPte(struct seq_buf *out, const GMMU_FMT_PTE *pFmt,
		       GMMU_APERTURE aperture, const GMMU_FIELD_ADDRESS *pFld,
		       NvU64 addr, NvU64 pte)
{
	seq_buf_printf(out, "aperture=%s\nfield=%s\naddr=0x%llx\n",
		       gmmuApertureNames[aperture], rmFieldName(pFmt, pFld), addr);
	seq_buf_printf(out, "pte=0x%016llx\npte_format=ver%u\npte_valid=%llu\npte_aperture=%llu\n",
		       pte, pFmt->version, gmmuFieldGet(&pFmt->fldValid, pte),
		       gmmuFieldGet(&pFmt->fldAperture, pte));
	seq_buf_printf(out, "pte_addr_sys=0x%llx\npte_addr_vid=0x%llx\npte_peer_index=%llu\n",
		       gmmuFieldGet(&pFmt->fldAddrSysmem.desc, pte) << 12,
		       gmmuFieldGet(&pFmt->fldAddrVidmem.desc, pte) << 12,
		       gmmuFieldGet(&pFmt->fldPeerIndex, pte));
	/* Uncached in the mapping GPU's L2: the VOL bit, or PCF on ver3. */
	seq_buf_printf(out, "pte_volatile=%llu\n", pFmt->version == 3 ?
		       (NvU64)(gmmuFieldGet(&pFmt->fldPcf, pte) == PTE_PCF_UNCACHED) :
		       gmmuFieldGet(&pFmt->fldVolatile, pte));
}

static NvBool rmPageSizeValid(NvU64 pageSize)
{
	return pageSize == SZ_4K || pageSize == SZ_64K || pageSize == SZ_2M;
}

static int rmMap(u32 obj, u64 offset, u64 page_size, bool uvm,
		   struct seq_buf *out)
{
	P2PApi *pP2PApi;
	OBJGPU *pGpu, *pPeer;
	RmMapping *pMap = NULL;
	MEMORY_DESCRIPTOR peerMem;
	const GMMU_FMT_PTE *pFmt;
	const GMMU_FIELD_ADDRESS *pFld;
	GMMU_APERTURE aperture;
	NvU64 addr, pte;
	NvU32 peerId;
	NV_STATUS status;
	unsigned int i;

	if (obj >= RM_MAX_P2P_OBJECTS || !rmP2PObjects[obj].bUsed)
		return -ENOENT;
	if (!rmPageSizeValid(page_size) || offset % page_size)
		return -EINVAL;
	pP2PApi = &rmP2PObjects[obj];
	pGpu = pP2PApi->peer1;
	pPeer = pP2PApi->peer2;
	pFmt = GPU_GET_KERNEL_GMMU(pGpu)->pPteFmt;
	for (i = 0; i < RM_MAX_MAPPINGS; i++) {
		if (!rmMappings[i].bUsed) {
			pMap = &rmMappings[i];
			break;
		}
	}
	if (!pMap)
		return -ENOSPC;
	memset(pMap, 0, sizeof(*pMap));

	/* The peer's whole vidmem as one FBMEM memdesc. */
	peerMem = (MEMORY_DESCRIPTOR) {
		.addressSpace = ADDR_FBMEM, .pGpu = pPeer, .base = 0,
		.size = pPeer->desc.vram_size,
		.gpuCacheAttrib = NV_MEMORY_CACHED,
		.gpuP2PCacheAttrib = NV_MEMORY_UNCACHED,
	};
	if (offset + page_size > peerMem.size) {
		rmPrintStatus(out, NV_ERR_INVALID_ARGUMENT);
		return 0;
	}
	peerId = pP2PApi->peerId1;

	if (uvm) {
		gpuExternalMappingInfo info = { .pteBuffer = &pte,
			.pteBufferSize = sizeof(pte), .pageSize = page_size };
		struct gpuSession session = { 0 };
		NvBool isPeer, isBar1;

		status = nvGpuOpsGetExternalAllocP2pInfo(&session, pPeer, pGpu,
							 &isPeer, &isBar1, &peerId);
		if (status == NV_OK && !isPeer && !isBar1)
			status = NV_ERR_NOT_SUPPORTED;
		if (status == NV_OK)
#if NV_GEN_AT_LEAST(580)
			status = nvGpuOpsBuildExternalAllocPtes(&pGpu->vas, &session,
					pGpu, &peerMem, NULL, offset, page_size,
					NV_FALSE, isPeer, isBar1, peerId, &info);
#else
			status = nvGpuOpsBuildExternalAllocPtes(&pGpu->vas, pGpu,
					&peerMem, NULL, offset, page_size,
					NV_FALSE, isPeer, peerId, &info);
#endif
		if (status != NV_OK) {
			rmPrintStatus(out, status);
			return 0;
		}
		aperture = info.aperture;
		pFld = info.pAddrFld;
		addr = info.address;
	} else {
		NvU32 flags;

		status = virtmemMapTo_IMPL(pGpu, pPeer, &peerMem, offset,
					   page_size, &pMap->info, &aperture,
					   &flags);
		if (status != NV_OK) {
			rmPrintStatus(out, status);
			return 0;
		}
		pFld = gmmuFmtPtePhysAddrFld(pFmt, aperture);
		addr = pMap->info.bBar1P2P ? pMap->info.pMemDesc->base : offset;
		pte = rmBuildPte(pFmt, aperture, pFld, addr, peerId,
				 aperture != GMMU_APERTURE_VIDEO);
	}

	pMap->bUsed = NV_TRUE;
	pMap->bUvm = uvm;
	pMap->p2pObject = obj;
	pMap->pGpu = pGpu;
	pGpu->liveMappings++;
	seq_buf_printf(out, "mapping=%u\npath=%s\n", i, uvm ? "uvm" : "rm");
	rmPrintPte(out, pFmt, aperture, pFld, addr, pte);
	if (aperture == GMMU_APERTURE_PEER)
		seq_buf_printf(out, "peer=%u\n", peerId);
	if (pMap->info.bBar1P2P)
		seq_buf_printf(out, "bar1_offset=0x%llx\n", pMap->info.bar1Offset);
	seq_buf_printf(out, "mailbox_broken=%d\n", p2papiIsMailboxBroken(pP2PApi));
	rmPrintStatus(out, NV_OK);
	return 0;
}

static int rmUnmap(u32 map, struct seq_buf *out)
{
	RmMapping *pMap;

	if (map >= RM_MAX_MAPPINGS || !rmMappings[map].bUsed)
		return -ENOENT;
	pMap = &rmMappings[map];
	if (!pMap->bUvm && pMap->info.bBar1P2P)
		dmaFreeBar1P2PMapping_HAL(GPU_GET_DMA(pMap->pGpu), &pMap->info);
	/* A stub free leaves the BAR1 memdesc behind: a leak, as for real. */
	if (pMap->info.bBar1P2P)
		seq_buf_printf(out, "leaked=1\n");
	pMap->pGpu->liveMappings--;
	pMap->bUsed = NV_FALSE;
	seq_buf_printf(out, "mapping=%u\n", map);
	rmPrintStatus(out, NV_OK);
	return 0;
}

static int rmDestroy(u32 obj, struct seq_buf *out)
{
	P2PApi *pP2PApi;
	NV_STATUS status;
	unsigned int i;

	if (obj >= RM_MAX_P2P_OBJECTS || !rmP2PObjects[obj].bUsed)
		return -ENOENT;
	pP2PApi = &rmP2PObjects[obj];
	for (i = 0; i < RM_MAX_MAPPINGS; i++) {
		if (rmMappings[i].bUsed && rmMappings[i].p2pObject == obj) {
			rmPrintStatus(out, NV_ERR_STATE_IN_USE);
			return 0;
		}
	}
	/*
	 * The object goes away whatever Remove returns (as the RM frees the
	 * resource); a failed Remove leaves its mappings behind.
	 */
	status = p2papiDestruct_IMPL(pP2PApi);
	pP2PApi->peer1->liveObjects--;
	pP2PApi->peer2->liveObjects--;
	pP2PApi->bUsed = NV_FALSE;
	seq_buf_printf(out, "object=%u\n", obj);
	rmPrintStatus(out, status);
	return 0;
}

/*
 * Tear down GPU @gpu's P2P objects the way no hook of p2p-shim sees: the
 * BAR1 pairs through kbusRemoveP2PMappingForBar1P2P_GH100 called directly
 * (the path Hopper's own kbusRemoveP2PMapping_GH100 takes), not through
 * the HAL slot or kbusRemoveP2PMapping_GP100.  A stand-in for any cleanup
 * path the module does not hook.  Their mappings go first.
 */
static void rmTeardownUnseen(OBJGPU *pGpu)
{
	unsigned int i, obj;

	for (obj = 0; obj < RM_MAX_P2P_OBJECTS; obj++) {
		P2PApi *p = &rmP2PObjects[obj];

		if (!p->bUsed || (p->peer1 != pGpu && p->peer2 != pGpu))
			continue;
		for (i = 0; i < RM_MAX_MAPPINGS; i++) {
			if (!rmMappings[i].bUsed || rmMappings[i].p2pObject != obj)
				continue;
			if (rmMappings[i].info.bBar1P2P)
				kfree(rmMappings[i].info.pMemDesc);
			memset(&rmMappings[i], 0, sizeof(rmMappings[i]));
		}
		if (P2PAPI_CONNECTION_TYPE(p->attributes) == P2P_CONNECTIVITY_PCIE_BAR1)
			kbusRemoveP2PMappingForBar1P2P_GH100(p->peer1,
				GPU_GET_KERNEL_BUS(p->peer1), p->peer2,
				GPU_GET_KERNEL_BUS(p->peer2), p->attributes);
		p->peer1->liveObjects--;
		p->peer2->liveObjects--;
		p->bUsed = NV_FALSE;
	}
}

/*
 * The last client closes the GPU and a new one opens it (no persistence).
 * @unseen: its P2P objects are torn down first, unseen (rmTeardownUnseen).
 */
static int rmReinit(u32 gpu, bool unseen, struct seq_buf *out)
{
	OBJGPU *pGpu = rmGetReadyGpu(gpu);
	OBJGPU *pOld = pGpu;
	GPUATTACHARG arg;
	NV_STATUS status;

	/* A GPU whose attach failed (fail_post_construct): attach it anew. */
	if (!pGpu && gpu < rmConfig.num_gpus && !gpumgrGpus[gpu])
		goto attach;
	if (!pGpu)
		return -ENODEV;
	if (unseen) {
		rmGpuLocksAcquire();
		rmTeardownUnseen(pGpu);
		rmGpuLocksRelease();
	}
	if (pGpu->liveObjects) {
		seq_buf_printf(out, "live_objects=%u\n", pGpu->liveObjects);
		rmPrintStatus(out, NV_ERR_STATE_IN_USE);
		return 0;
	}
	rmGpuLocksAcquire();
	gpuStateUnload(pGpu);
	rmGpuLocksRelease();
	gpumgrDetachGpu(gpu);
attach:
	rmFillAttachArg(&arg, &rmConfig.gpu[gpu]);
	status = gpumgrAttachGpu(gpu, &arg);
	if (status == NV_OK)
		rmInitAdapterStates(gpu);
	pGpu = rmGetReadyGpu(gpu);
	if (status == NV_OK && pGpu)
		status = pGpu->initStatus;
	seq_buf_printf(out, "gpu=%u\nstatic_bar1=%d\nsame_address=%d\n", gpu,
		       pGpu ? pGpu->kernelBus.staticBar1.bStaticBar1Enabled : 0, pGpu == pOld);
	rmPrintStatus(out, status);
	return 0;
}

static int rmLocal(u32 gpu, u64 offset, u64 page_size, struct seq_buf *out)
{
	OBJGPU *pGpu = rmGetReadyGpu(gpu);
	const GMMU_FMT_PTE *pFmt;
	const GMMU_FIELD_ADDRESS *pFld;

	if (!pGpu)
		return -ENODEV;
	if (!rmPageSizeValid(page_size) || offset % page_size)
		return -EINVAL;
	if (offset + page_size > pGpu->desc.vram_size) {
		rmPrintStatus(out, NV_ERR_INVALID_ARGUMENT);
		return 0;
	}
	pFmt = GPU_GET_KERNEL_GMMU(pGpu)->pPteFmt;
	pFld = gmmuFmtPtePhysAddrFld(pFmt, GMMU_APERTURE_VIDEO);
	rmPrintPte(out, pFmt, GMMU_APERTURE_VIDEO, pFld, offset,
		   rmBuildPte(pFmt, GMMU_APERTURE_VIDEO, pFld, offset,
			      BUS_INVALID_PEER, NV_FALSE));
	rmPrintStatus(out, NV_OK);
	return 0;
}

static int rmSysmem(u32 gpu, u64 addr, u64 page_size, struct seq_buf *out)
{
	OBJGPU *pGpu = rmGetReadyGpu(gpu);
	const GMMU_FMT_PTE *pFmt;
	const GMMU_FIELD_ADDRESS *pFld;

	if (!pGpu)
		return -ENODEV;
	if (!rmPageSizeValid(page_size) || addr % page_size)
		return -EINVAL;
	pFmt = GPU_GET_KERNEL_GMMU(pGpu)->pPteFmt;
	pFld = gmmuFmtPtePhysAddrFld(pFmt, GMMU_APERTURE_SYS_COH);
	rmPrintPte(out, pFmt, GMMU_APERTURE_SYS_COH, pFld, addr,
		   rmBuildPte(pFmt, GMMU_APERTURE_SYS_COH, pFld, addr,
			      BUS_INVALID_PEER, NV_FALSE));
	rmPrintStatus(out, NV_OK);
	return 0;
}

static void rmState(struct seq_buf *out)
{
	unsigned int i, j;

	seq_buf_printf(out, "version=%s\ngpus=%u\n", NV_STANDIN_VERSION,
		       hweight32(gpumgrAttachedMask));
	for (i = 0; i < NV_STANDIN_MAX_GPUS; i++) {
		OBJGPU *g = gpumgrGpus[i];
		KernelBus *b;
		KernelBif *f;

		if (!g)
			continue;
		b = GPU_GET_KERNEL_BUS(g);
		f = GPU_GET_KERNEL_BIF(g);
		seq_buf_printf(out, "gpu%u.chip=%s\ngpu%u.bdf=%04x:%02x:%02x.%x\n",
			       i, g->pChip->name, i, g->desc.domain, g->desc.bus,
			       g->desc.dev, g->desc.fn);
		seq_buf_printf(out, "gpu%u.gpu_id=0x%x\ngpu%u.init=%s\ngpu%u.init_status=0x%x\n",
			       i, g->gpuId, i, g->bInitialized ? "ok" : "failed",
			       i, g->initStatus);
		seq_buf_printf(out, "gpu%u.vram=0x%llx\ngpu%u.bar1=0x%llx/0x%llx\ngpu%u.bar1_aperture=0x%llx\n",
			       i, g->desc.vram_size, i, g->desc.bar1_base,
			       g->desc.bar1_size, i, b->bar1ApertureLength);
		seq_buf_printf(out, "gpu%u.fb=0x%llx\ngpu%u.console=0x%llx\ngpu%u.static_bar1_size=0x%llx\n",
			       i, g->desc.fb_size ?: g->desc.vram_size, i,
			       g->desc.console_size, i, b->staticBar1.size);
		seq_buf_printf(out, "gpu%u.static_bar1=%d\ngpu%u.static_bar1_offset=0x%llx\ngpu%u.static_bar1_force_type=%u\n",
			       i, b->staticBar1.bStaticBar1Enabled, i,
			       b->staticBar1.startOffset, i,
			       b->staticBar1ForceType);
		seq_buf_printf(out, "gpu%u.p2p_override=0x%x\ngpu%u.force_p2p_type=%u\ngpu%u.pcie_p2p_type=%u\n",
			       i, f->p2pOverride, i, f->forceP2PType, i,
			       f->pcieP2PType);
		for (j = 0; j < NV_STANDIN_MAX_GPUS; j++)
			if (b->p2pPcieBar1.busBar1PeerRefcount[j])
				seq_buf_printf(out, "gpu%u.bar1_peer_refcount.%u=%u\n",
					       i, j,
					       b->p2pPcieBar1.busBar1PeerRefcount[j]);
		seq_buf_printf(out, "gpu%u.bar1_mappings=%u\ngpu%u.bar1_leaked_mappings=%u\ngpu%u.bar1_force64k=%d\n",
			       i, b->bar1MapCount, i, rmBar1LeakedMaps[i], i,
			       b->bBar1Force64KBMapping);
#if NV_GEN_0
		seq_buf_printf(out, "gpu%u.bar1_mailbox=0x%llx\n", i,
			       b->writeMailboxTotalSize);
#endif
		seq_buf_printf(out, "gpu%u.iova_mappings=%llu\ngpu%u.live_objects=%u\ngpu%u.live_mappings=%u\n",
			       i, g->iovas.mappingCount, i, g->liveObjects, i,
			       g->liveMappings);
	}
}

/* ---------------------------------------------------------------------
 * BAR1 mappings of video memory (a CPU mapping through BAR1, as
 * RmMapMemory does for FBMEM) and video memory allocations
 * (video_mem.c): what static BAR1 changes beyond P2P, in gen 0.
 */
#if NV_GEN_0
/* vidmemConstruct_IMPL, the part that static BAR1 changes (L554-567, L1009). */
RM_FN NV_STATUS vidmemConstruct_IMPL(OBJGPU *pGpu, MEMORY_DESCRIPTOR *pMemDesc,
				     NvBool bCompressed, NvU64 *pPageSize)
{
	KernelBus *pKernelBus = GPU_GET_KERNEL_BUS(pGpu);
	NvBool bUpdatePteKind = NV_FALSE;
	NV_STATUS status;

	*pPageSize = SZ_64K;
	if (bCompressed && kbusIsStaticBar1Enabled(pGpu, pKernelBus)) {
		/* Override the attr to use 2MB page size */
		*pPageSize = SZ_2M;
		bUpdatePteKind = NV_TRUE;
	}
	if (bUpdatePteKind) {
		status = kbusUpdateStaticBar1VAMapping_HAL(pGpu, pKernelBus,
							   pMemDesc, 0,
							   pMemDesc->size,
							   NV_FALSE);
		if (status != NV_OK)
			return status;
	}
	return NV_OK;
}
#endif

static int rmBar1map(u32 gpu, u64 offset, u64 size, bool contig,
		       struct seq_buf *out)
{
#if NV_GEN_0
	OBJGPU *pGpu = rmGetReadyGpu(gpu);
	MEMORY_DESCRIPTOR md;
	NvU64 aper = 0, len = size;
	NV_STATUS status;

	if (!pGpu)
		return -ENODEV;
	if (!size || offset + size > pGpu->desc.vram_size || offset % SZ_64K)
		return -EINVAL;
	md = (MEMORY_DESCRIPTOR) { .pGpu = pGpu, .addressSpace = ADDR_FBMEM,
		.base = offset, .size = size, .bDiscontiguous = !contig };
	status = kbusMapFbAperture_HAL(pGpu, GPU_GET_KERNEL_BUS(pGpu), &md, 0,
				       &aper, &len, BUS_MAP_FB_FLAGS_MAP_UNICAST,
				       NULL);
	if (status == NV_OK)
		seq_buf_printf(out, "bar1_offset=0x%llx\nbar1_addr=0x%llx\n", aper,
			       gpumgrGetGpuPhysFbAddr(pGpu) + aper);
	rmPrintStatus(out, status);
	return 0;
#else
	return -EOPNOTSUPP;
#endif
}

/* Every generation: the BAR1 VA at @bar1_offset (the dynamic allocator). */
static int rmBar1unmap(u32 gpu, u64 bar1_offset, u64 size, struct seq_buf *out)
{
	OBJGPU *pGpu = rmGetReadyGpu(gpu);
	MEMORY_DESCRIPTOR md;

	if (!pGpu)
		return -ENODEV;
	md = (MEMORY_DESCRIPTOR) { .pGpu = pGpu, .addressSpace = ADDR_FBMEM,
		.size = size };
	rmPrintStatus(out, kbusUnmapFbAperture_HAL(pGpu, GPU_GET_KERNEL_BUS(pGpu),
						   &md, bar1_offset, size,
						   BUS_MAP_FB_FLAGS_MAP_UNICAST));
	return 0;
}

/*
 * BAR1 P2P windows made by calling dmaAllocBar1P2PMapping_HAL directly,
 * as p2p-shim's windows will (docs/windows.md W2), with no P2P object:
 * the mapping GPU's VirtMemAllocator, the owner's vidmem (rmWindows).
 */

static NV_STATUS rmWindowAlloc(OBJGPU *pGpu, OBJGPU *pOwner, u64 offset,
			       u64 length, u64 page_size,
			       CLI_DMA_MAPPING_INFO *pInfo)
{
	MEMORY_DESCRIPTOR ownerMem = {
		.pGpu = pOwner, .addressSpace = ADDR_FBMEM, .base = 0,
		.size = pOwner->desc.vram_size, .pageSize = page_size,
		.gpuCacheAttrib = NV_MEMORY_CACHED,
		.gpuP2PCacheAttrib = NV_MEMORY_UNCACHED,
	};
	DMA_BAR1P2P_MAPPING_PRARAMS params = {
		.pVas = &pGpu->vas,
		.pPeerGpu = pOwner,
		.pPeerMemDesc = &ownerMem,
		.offset = offset,
		.length = length,
		.pDmaMappingInfo = pInfo,
	};

	memset(pInfo, 0, sizeof(*pInfo));
	return dmaAllocBar1P2PMapping_HAL(pGpu, GPU_GET_DMA(pGpu), &params);
}

static int rmWindowCheck(OBJGPU *pGpu, OBJGPU *pOwner, u64 offset,
			 u64 length, u64 page_size)
{
	if (!pGpu || !pOwner)
		return -ENODEV;
	if (!rmPageSizeValid(page_size) || offset % page_size || !length ||
	    offset > pOwner->desc.vram_size ||
	    length > pOwner->desc.vram_size - offset)
		return -EINVAL;
	return 0;
}

static int rmWindow(u32 a, u32 b, u64 offset, u64 length, u64 page_size,
		    struct seq_buf *out)
{
	OBJGPU *pGpu = rmGetReadyGpu(a), *pOwner = rmGetReadyGpu(b);
	RmWindow *pWin = NULL;
	NV_STATUS status;
	u32 i;
	int ret = rmWindowCheck(pGpu, pOwner, offset, length, page_size);

	if (ret)
		return ret;
	for (i = 0; i < RM_MAX_WINDOWS && !pWin; i++)
		if (!rmWindows[i].bUsed)
			pWin = &rmWindows[i];
	if (!pWin)
		return -ENOSPC;
	status = rmWindowAlloc(pGpu, pOwner, offset, length, page_size,
			       &pWin->info);
	if (status == NV_OK) {
		KernelBus *pOwnerBus = GPU_GET_KERNEL_BUS(pOwner);

		pWin->bUsed = NV_TRUE;
		pWin->pGpu = pGpu;
		seq_buf_printf(out, "window=%td\nbar1_offset=0x%llx\nbar1_addr=0x%llx\nlength=0x%llx\npage_size=0x%llx\n",
			       pWin - rmWindows, pWin->info.bar1Offset,
			       pWin->info.pMemDesc->base,
			       pWin->info.pMemDesc->size,
			       pWin->info.pMemDesc->pageSize);
		/* The dynamic BAR1 mapping under it (none: the static range) */
		for (i = 0; i < pOwnerBus->bar1MapCount; i++)
			if (pOwnerBus->bar1Maps[i].offset == pWin->info.bar1Offset)
				seq_buf_printf(out, "bar1_page_size=0x%llx\nbar1_size=0x%llx\n",
					       pOwnerBus->bar1Maps[i].pageSize,
					       pOwnerBus->bar1Maps[i].size);
	}
	seq_buf_printf(out, "bar1_mappings=%u\n",
		       GPU_GET_KERNEL_BUS(pOwner)->bar1MapCount);
	rmPrintStatus(out, status);
	return 0;
}

/* The stock free (dmaFreeBar1P2PMapping_HAL), nothing else. */
static int rmWinfree(u32 w, struct seq_buf *out)
{
	RmWindow *pWin;
	OBJGPU *pOwner;

	if (w >= RM_MAX_WINDOWS || !rmWindows[w].bUsed)
		return -ENOENT;
	pWin = &rmWindows[w];
	pOwner = pWin->info.bar1PhysMemDesc.pGpu;
	dmaFreeBar1P2PMapping_HAL(GPU_GET_DMA(pWin->pGpu), &pWin->info);
	memset(pWin, 0, sizeof(*pWin));
	seq_buf_printf(out, "bar1_mappings=%u\n",
		       GPU_GET_KERNEL_BUS(pOwner)->bar1MapCount);
	rmPrintStatus(out, NV_OK);
	return 0;
}

/*
 * @n cycles of: a window, the stock free, then the unmap at the BAR1
 * offset the map returned (what docs/windows.md W7 makes the stock free
 * do).  Stops at the first failure.
 */
static int rmWinsoak(u32 a, u32 b, u64 length, u64 page_size, u32 n,
		     struct seq_buf *out)
{
	OBJGPU *pGpu = rmGetReadyGpu(a), *pOwner = rmGetReadyGpu(b);
	KernelBus *pOwnerBus;
	CLI_DMA_MAPPING_INFO info;
	NvU64 first = 0, bar1Offset;
	NvU32 i, moved = 0, alreadyFree = 0;
	NV_STATUS status = NV_OK;
	int ret = rmWindowCheck(pGpu, pOwner, 0, length, page_size);

	if (ret)
		return ret;
	pOwnerBus = GPU_GET_KERNEL_BUS(pOwner);
	for (i = 0; i < n; i++) {
		status = rmWindowAlloc(pGpu, pOwner, 0, length, page_size, &info);
		if (status != NV_OK)
			break;
		bar1Offset = info.bar1Offset;
		if (!i)
			first = bar1Offset;
		else if (bar1Offset != first)
			moved++;
		dmaFreeBar1P2PMapping_HAL(GPU_GET_DMA(pGpu), &info);
		/* Nothing there: the stock free (static branch) left none. */
		if (rmBar1VaFree(pOwnerBus, bar1Offset) != NV_OK)
			alreadyFree++;
	}
	seq_buf_printf(out, "cycles=%u\nfirst_offset=0x%llx\nmoved=%u\nalready_free=%u\nbar1_mappings=%u\n",
		       i, first, moved, alreadyFree,
		       pOwnerBus->bar1MapCount);
	rmPrintStatus(out, status);
	return 0;
}

static int rmAlloc(u32 gpu, u64 size, bool compressed, struct seq_buf *out)
{
#if NV_GEN_0
	OBJGPU *pGpu = rmGetReadyGpu(gpu);
	MEMORY_DESCRIPTOR md;
	NvU64 pageSize;
	NV_STATUS status;

	if (!pGpu)
		return -ENODEV;
	if (!size || size > pGpu->desc.vram_size)
		return -EINVAL;
	md = (MEMORY_DESCRIPTOR) { .pGpu = pGpu, .addressSpace = ADDR_FBMEM,
		.size = size };
	status = vidmemConstruct_IMPL(pGpu, &md, compressed, &pageSize);
	if (status == NV_OK)
		seq_buf_printf(out, "page_size=0x%llx\n", pageSize);
	rmPrintStatus(out, status);
	return 0;
#else
	return -EOPNOTSUPP;
#endif
}

/* The stubs' machine code, up to and including the first ret (0xc3). */
#define STUB(fn)	{ #fn, (const void *)fn }
#define RM_STR(x)	#x
#define RM_XSTR(x)	RM_STR(x)

static void rmStubs(struct seq_buf *out)
{
	static const struct {
		const char *name;
		const void *code;
	} stubs[] = {
		STUB(kbusCreateP2PMappingForBar1P2P_395e98),
		STUB(kbusRemoveP2PMappingForBar1P2P_395e98),
		STUB(kbusGetBar1P2PDmaInfo_395e98),
		{ RM_XSTR(kbusHasPcieBar1P2PMapping_STUB),
		  (const void *)kbusHasPcieBar1P2PMapping_STUB },
		{ RM_XSTR(kbusIsPcieBar1P2PMappingSupported_STUB),
		  (const void *)kbusIsPcieBar1P2PMappingSupported_STUB },
#if NV_GEN_AT_LEAST(580) || NV_GEN_0
		STUB(kbusEnableStaticBar1Mapping_395e98),
#endif
#if NV_GEN_0
		STUB(kbusIsBar1P2PCapable_bf6dfa),
		STUB(kbusDisableStaticBar1Mapping_d44104),
		STUB(kbusGetStaticFbAperture_395e98),
		STUB(kbusUpdateStaticBar1VAMapping_395e98),
#endif
		{ RM_XSTR(dmaAllocBar1P2PMapping_STUB),
		  (const void *)dmaAllocBar1P2PMapping_STUB },
		{ RM_XSTR(dmaFreeBar1P2PMapping_STUB),
		  (const void *)dmaFreeBar1P2PMapping_STUB },
	};
	unsigned int i, j;

	for (i = 0; i < ARRAY_SIZE(stubs); i++) {
		const u8 *p = stubs[i].code;

		seq_buf_printf(out, "%s", stubs[i].name);
		for (j = 0; j < 16; j++) {
			seq_buf_printf(out, " %02x", p[j]);
			if (p[j] == 0xc3)
				break;
		}
		seq_buf_printf(out, "\n");
	}
}

/*
 * rm_shutdown_adapter then rm_init_adapter, each under the API lock; the
 * GPU locks only around the state phases (gpuStateUnload here, the state
 * init inside gpumgrAttachGpu).
 */
int rm_standin_reinit(u32 gpu, bool unseen, struct seq_buf *out)
{
	int ret;

	rmapiLockAcquire(RMAPI_LOCK_FLAGS_NONE);
	ret = rmReinit(gpu, unseen, out);
	rmapiLockRelease(RMAPI_LOCK_FLAGS_NONE);
	return ret;
}

/* ---------------------------------------------------------------------
 * The entry points, each with the locks its real path takes ("Locking"):
 *   caps, bench          NV0000_CTRL_CMD_SYSTEM_GET_P2P_CAPS(_V2): flags
 *                        NON_PRIVILEGED | API_LOCK_READONLY (g_client_resource_nvoc.c),
 *                        so the API lock shared, then the GPU locks
 *   create, destroy      RmAlloc / RmFree of NV50_P2P (resource_list.h:
 *                        RS_FLAGS_ACQUIRE_GPUS_LOCK): API lock, GPU locks
 *   map rm, unmap, local, sysmem, bar1map, bar1unmap, alloc,
 *   window, winfree, winsoak
 *                        RmMapMemoryDma, RmAlloc...: API lock, GPU locks
 *   map uvm              nvGpuOpsGetExternalAllocPtes: API lock shared
 *                        (RMAPI_LOCK_FLAGS_READ), every GPU lock
 *   state, stubs, registry
 *                        the stand-in's own views: the API lock shared
 */
int rm_standin_caps(u32 a, u32 b, struct seq_buf *out)
{
	return RM_API_CALL(RMAPI_LOCK_FLAGS_READ, rmCaps(a, b, out));
}

int rm_standin_bench(u32 a, u32 b, u32 n, struct seq_buf *out)
{
	return RM_API_CALL(RMAPI_LOCK_FLAGS_READ, rmBench(a, b, n, out));
}

int rm_standin_create(u32 a, u32 b, int type, struct seq_buf *out)
{
	return RM_API_CALL(RMAPI_LOCK_FLAGS_NONE, rmCreate(a, b, type, out));
}

int rm_standin_map(u32 obj, u64 offset, u64 page_size, bool uvm,
		   struct seq_buf *out)
{
	NvU32 flags = uvm ? RMAPI_LOCK_FLAGS_READ : RMAPI_LOCK_FLAGS_NONE;

	return RM_API_CALL(flags, rmMap(obj, offset, page_size, uvm, out));
}

int rm_standin_unmap(u32 map, struct seq_buf *out)
{
	return RM_API_CALL(RMAPI_LOCK_FLAGS_NONE, rmUnmap(map, out));
}

int rm_standin_destroy(u32 obj, struct seq_buf *out)
{
	return RM_API_CALL(RMAPI_LOCK_FLAGS_NONE, rmDestroy(obj, out));
}

int rm_standin_local(u32 gpu, u64 offset, u64 page_size, struct seq_buf *out)
{
	return RM_API_CALL(RMAPI_LOCK_FLAGS_NONE, rmLocal(gpu, offset, page_size, out));
}

int rm_standin_sysmem(u32 gpu, u64 addr, u64 page_size, struct seq_buf *out)
{
	return RM_API_CALL(RMAPI_LOCK_FLAGS_NONE, rmSysmem(gpu, addr, page_size, out));
}

int rm_standin_bar1map(u32 gpu, u64 offset, u64 size, bool contig,
		       struct seq_buf *out)
{
	return RM_API_CALL(RMAPI_LOCK_FLAGS_NONE, rmBar1map(gpu, offset, size, contig, out));
}

int rm_standin_bar1unmap(u32 gpu, u64 bar1_offset, u64 size, struct seq_buf *out)
{
	return RM_API_CALL(RMAPI_LOCK_FLAGS_NONE, rmBar1unmap(gpu, bar1_offset, size, out));
}

int rm_standin_window(u32 a, u32 b, u64 offset, u64 length, u64 page_size,
		      struct seq_buf *out)
{
	return RM_API_CALL(RMAPI_LOCK_FLAGS_NONE,
			   rmWindow(a, b, offset, length, page_size, out));
}

int rm_standin_winfree(u32 w, struct seq_buf *out)
{
	return RM_API_CALL(RMAPI_LOCK_FLAGS_NONE, rmWinfree(w, out));
}

int rm_standin_winsoak(u32 a, u32 b, u64 length, u64 page_size, u32 n,
		       struct seq_buf *out)
{
	return RM_API_CALL(RMAPI_LOCK_FLAGS_NONE,
			   rmWinsoak(a, b, length, page_size, n, out));
}

int rm_standin_alloc(u32 gpu, u64 size, bool compressed, struct seq_buf *out)
{
	return RM_API_CALL(RMAPI_LOCK_FLAGS_NONE, rmAlloc(gpu, size, compressed, out));
}

void rm_standin_state(struct seq_buf *out)
{
	rmapiLockAcquire(RMAPI_LOCK_FLAGS_READ);
	rmState(out);
	rmapiLockRelease(RMAPI_LOCK_FLAGS_READ);
}

void rm_standin_stubs(struct seq_buf *out)
{
	rmapiLockAcquire(RMAPI_LOCK_FLAGS_READ);
	rmStubs(out);
	rmapiLockRelease(RMAPI_LOCK_FLAGS_READ);
}

void rm_standin_registry_show(struct seq_buf *out)
{
	rmapiLockAcquire(RMAPI_LOCK_FLAGS_READ);
	rmRegistryShow(out);
	rmapiLockRelease(RMAPI_LOCK_FLAGS_READ);
}

/* ---------------------------------------------------------------------
 * UVM's view of P2P (nv_gpu_ops.c): the device handles, the P2P object
 * UVM creates for a peer pair, and nvGpuOpsGetP2PCaps, which tells UVM
 * the link type and the peer ids it will build its apertures from
 * (docs/uvm.md, section 1.1).
 */
#include "nv-uvm-standin.h"

/*
 * struct gpuDevice as in nv_gpu_ops.c of every tag from 565 to 590: gpuId
 * at offset 32 (p2p-shim never reads it; the layout is kept all the same).
 */
struct gpuDevice {
	void *rmDevice;
	void *rmSubDevice;
	NvU32 handle;
	NvU32 subhandle;
	NvU32 deviceInstance;
	NvU32 subdeviceInstance;
	NvU32 gpuId;
	NvU32 hostClass;
	struct gpuSession *session;
};
static_assert(offsetof(struct gpuDevice, gpuId) == 32);

static struct gpuSession rmUvmSession = { .handle = 0xc1d00001 };

/* gpumgrGetGpuFromId */
static OBJGPU *rmGpuFromId(NvU32 gpuId)
{
	NvU32 i;

	for (i = 0; i < NV_STANDIN_MAX_GPUS; i++)
		if (gpumgrGpus[i] && gpumgrGpus[i]->gpuId == gpuId)
			return gpumgrGpus[i];
	return NULL;
}

static NvU32 rmGpuArch(const OBJGPU *pGpu)
{
	switch (pGpu->pChip->arch) {
	case ARCH_AMPERE:
		return NV_STANDIN_ARCH_GA100;
	case ARCH_ADA:
		return NV_STANDIN_ARCH_AD100;
	case ARCH_HOPPER:
		return NV_STANDIN_ARCH_GH100;
	case ARCH_BLACKWELL_GB1XX:
		return NV_STANDIN_ARCH_GB100;
	case ARCH_BLACKWELL_GB2XX:
		return NV_STANDIN_ARCH_GB200;
	default:
		return NV_STANDIN_ARCH_TU100;
	}
}

/* nvGpuOpsDeviceCreate: RmAlloc of the device and subdevice (API lock, GPU locks). */
static u32 rmUvmDeviceCreate(u32 gpuInstance, struct gpuDevice **device,
			     u32 *gpuArch)
{
	OBJGPU *pGpu = rmGetReadyGpu(gpuInstance);
	struct gpuDevice *d;

	if (!pGpu || !pGpu->bInitialized)
		return NV_ERR_INVALID_ARGUMENT;
	d = kzalloc(sizeof(*d), GFP_KERNEL);
	if (!d)
		return NV_ERR_NO_MEMORY;
	d->deviceInstance = gpuInstance;
	d->gpuId = pGpu->gpuId;
	d->handle = 0xde000000 | gpuInstance;
	d->subhandle = 0x5d000000 | gpuInstance;
	d->session = &rmUvmSession;
	*device = d;
	*gpuArch = rmGpuArch(pGpu);
	return NV_OK;
}

u32 rm_standin_uvm_device_create(u32 gpuInstance, struct gpuDevice **device,
				 u32 *gpuArch)
{
	u32 status;

	rmApiEnter(RMAPI_LOCK_FLAGS_NONE);
	status = rmUvmDeviceCreate(gpuInstance, device, gpuArch);
	rmApiExit(RMAPI_LOCK_FLAGS_NONE);
	return status;
}

void rm_standin_uvm_device_destroy(struct gpuDevice *device)
{
	rmApiEnter(RMAPI_LOCK_FLAGS_NONE);
	kfree(device);
	rmApiExit(RMAPI_LOCK_FLAGS_NONE);
}

/* What getSystemP2PCaps reads out of NV0000_CTRL_CMD_SYSTEM_GET_P2P_CAPS_V2. */
struct systemP2PCaps {
	NvU32 peerIds[2];
	NvBool accessSupported;
	NvBool nvlinkSupported;
	NvBool bar1Supported;	/* PCI_BAR1_SUPPORTED (580+ reads it) */
};

static NV_STATUS getSystemP2PCapsLocked(struct gpuDevice *device1,
					struct gpuDevice *device2,
					struct systemP2PCaps *p2pCaps)
{
	OBJGPU *pGpu1 = rmGpuFromId(device1->gpuId);
	OBJGPU *pGpu2 = rmGpuFromId(device2->gpuId);
	P2P_CONNECTIVITY conn;
	NvU8 w, r, a;
	NV_STATUS status;

	if (!pGpu1 || !pGpu2)
		return NV_ERR_INVALID_ARGUMENT;
	status = P2P_GET_CAPS(BIT(pGpu1->gpuInstance) | BIT(pGpu2->gpuInstance),
			      &w, &r, &a, &conn);
	if (status != NV_OK)
		return status;
	memset(p2pCaps, 0, sizeof(*p2pCaps));
	/*
	 * busPeerIds[0 * 2 + 1] and [1 * 2 + 0]: kbusGetPeerId_HAL, i.e. the
	 * mailbox or NVLink peer id; BUS_INVALID_PEER for a BAR1 pair, which
	 * allocates none.
	 */
	p2pCaps->peerIds[0] = kbusGetPeerId(GPU_GET_KERNEL_BUS(pGpu1), pGpu2->gpuInstance);
	p2pCaps->peerIds[1] = kbusGetPeerId(GPU_GET_KERNEL_BUS(pGpu2), pGpu1->gpuInstance);
	p2pCaps->nvlinkSupported = conn == P2P_CONNECTIVITY_NVLINK;
	p2pCaps->bar1Supported = conn == P2P_CONNECTIVITY_PCIE_BAR1;
	p2pCaps->accessSupported = w == NV0000_P2P_CAPS_STATUS_OK &&
				   r == NV0000_P2P_CAPS_STATUS_OK;
	return NV_OK;
}

/*
 * The NV0000_CTRL_CMD_SYSTEM_GET_P2P_CAPS_V2 control it sends through the
 * RM API: the API lock shared, the GPU locks (as rm_standin_caps).
 */
static NV_STATUS getSystemP2PCaps(struct gpuDevice *device1,
				  struct gpuDevice *device2,
				  struct systemP2PCaps *p2pCaps)
{
	NV_STATUS status;

	rmApiEnter(RMAPI_LOCK_FLAGS_READ);
	status = getSystemP2PCapsLocked(device1, device2, p2pCaps);
	rmApiExit(RMAPI_LOCK_FLAGS_READ);
	return status;
}

/*
 * _nvGpuOpsP2pObjectCreate: caps first (one control), then an NV50_P2P
 * object (pRmApi->Alloc: the API lock, the GPU locks), two RM API calls.
 */
/* The NV50_P2P allocation, under the API lock and the GPU locks. */
static NV_STATUS rmP2PObjectAlloc(struct gpuDevice *device1,
				  struct gpuDevice *device2, NvU32 *hP2pObject)
{
	OBJGPU *pGpu1 = rmGpuFromId(device1->gpuId);
	OBJGPU *pGpu2 = rmGpuFromId(device2->gpuId);
	P2PApi *pP2PApi = NULL;
	NV_STATUS status;
	NvU32 i;

	if (!pGpu1 || !pGpu2)
		return NV_ERR_INVALID_ARGUMENT;
	for (i = 0; i < RM_MAX_P2P_OBJECTS; i++) {
		if (!rmP2PObjects[i].bUsed) {
			pP2PApi = &rmP2PObjects[i];
			break;
		}
	}
	if (!pP2PApi)
		return NV_ERR_INSUFFICIENT_RESOURCES;
	memset(pP2PApi, 0, sizeof(*pP2PApi));
	/* hSubDevice = device1, hPeerSubDevice = device2: local, remote. */
	status = p2papiConstruct_IMPL(pP2PApi, pGpu1, pGpu2, NV_STANDIN_TYPE_FROM_CAPS);
	if (status != NV_OK) {
		memset(pP2PApi, 0, sizeof(*pP2PApi));
		return status;
	}
	pP2PApi->bUsed = NV_TRUE;
	pGpu1->liveObjects++;
	pGpu2->liveObjects++;
	*hP2pObject = 0xb0000000 | i;
	return NV_OK;
}

RM_FN NV_STATUS nvGpuOpsP2pObjectCreate(struct gpuDevice *device1,
					struct gpuDevice *device2,
					NvU32 *hP2pObject)
{
	struct systemP2PCaps p2pCaps;
	NV_STATUS status;

	if (!device1 || !device2 || !hP2pObject)
		return NV_ERR_INVALID_ARGUMENT;
	status = getSystemP2PCaps(device1, device2, &p2pCaps);
	if (status != NV_OK)
		return status;
	if (!p2pCaps.accessSupported)
		return NV_ERR_NOT_SUPPORTED;
	rmApiEnter(RMAPI_LOCK_FLAGS_NONE);
	status = rmP2PObjectAlloc(device1, device2, hP2pObject);
	rmApiExit(RMAPI_LOCK_FLAGS_NONE);
	return status;
}

u32 rm_standin_uvm_p2p_create(struct gpuDevice *device1,
			      struct gpuDevice *device2, u32 *hP2pObject)
{
	return nvGpuOpsP2pObjectCreate(device1, device2, hP2pObject);
}

void rm_standin_uvm_p2p_destroy(u32 hP2pObject)
{
	struct seq_buf none;
	char buf[256];

	seq_buf_init(&none, buf, sizeof(buf));
	if ((hP2pObject & 0xffff0000) == 0xb0000000)
		rm_standin_destroy(hP2pObject & 0xffff, &none);
}

#if NV_GEN_AT_LEAST(590)
/* _nvGpuOpsIsBar1P2pAtomicEnabled: the owner is Blackwell or newer. */
static NvBool nvGpuOpsIsBar1P2pAtomicEnabled(OBJGPU *pOwningGpu)
{
	return rmGpuArch(pOwningGpu) >= NV_STANDIN_ARCH_GB100;
}
#endif

#if NV_GEN_AT_LEAST(580)
static NV_STATUS rmGetBar1P2PDmaInfoPair(struct gpuDevice *device1,
					 struct gpuDevice *device2,
					 UvmGpuP2PCapsParams *p2pCapsParams)
{
	OBJGPU *pLocalGpu = rmGpuFromId(device1->gpuId);
	OBJGPU *pRemoteGpu = rmGpuFromId(device2->gpuId);
	NV_STATUS status;

	if (!pLocalGpu || !pRemoteGpu)
		return NV_ERR_INVALID_ARGUMENT;
	status = kbusGetBar1P2PDmaInfo_HAL(pLocalGpu, pRemoteGpu,
					   GPU_GET_KERNEL_BUS(pRemoteGpu),
					   &p2pCapsParams->bar1DmaAddress[0],
					   &p2pCapsParams->bar1DmaSize[0]);
	if (status != NV_OK)
		return status;
	status = kbusGetBar1P2PDmaInfo_HAL(pRemoteGpu, pLocalGpu,
					   GPU_GET_KERNEL_BUS(pLocalGpu),
					   &p2pCapsParams->bar1DmaAddress[1],
					   &p2pCapsParams->bar1DmaSize[1]);
#if NV_GEN_AT_LEAST(590)
	p2pCapsParams->bar1PcieAtomics[0] = nvGpuOpsIsBar1P2pAtomicEnabled(pRemoteGpu);
	p2pCapsParams->bar1PcieAtomics[1] = nvGpuOpsIsBar1P2pAtomicEnabled(pLocalGpu);
#endif
	return status;
}
#endif

RM_FN NV_STATUS nvGpuOpsGetP2PCaps(struct gpuDevice *device1,
				   struct gpuDevice *device2,
				   UvmGpuP2PCapsParams *p2pCapsParams)
{
	struct systemP2PCaps p2pCaps;
	NV_STATUS status;

	if (!device1 || !device2 || !p2pCapsParams)
		return NV_ERR_INVALID_ARGUMENT;
	if (device1->session != device2->session)
		return NV_ERR_INVALID_ARGUMENT;

	memset(p2pCapsParams, 0, sizeof(*p2pCapsParams));
	p2pCapsParams->peerIds[0] = (NvU32)-1;
	p2pCapsParams->peerIds[1] = (NvU32)-1;
	p2pCapsParams->egmPeerIds[0] = (NvU32)-1;
	p2pCapsParams->egmPeerIds[1] = (NvU32)-1;
	p2pCapsParams->p2pLink = UVM_LINK_TYPE_NONE;

	status = getSystemP2PCaps(device1, device2, &p2pCaps);
	if (status != NV_OK || !p2pCaps.accessSupported)
		return status;

	p2pCapsParams->peerIds[0] = p2pCaps.peerIds[0];
	p2pCapsParams->peerIds[1] = p2pCaps.peerIds[1];
	if (p2pCaps.nvlinkSupported) {
		p2pCapsParams->p2pLink = UVM_LINK_TYPE_NVLINK_4;
		p2pCapsParams->totalLinkLineRateMBps = 100000;
		return NV_OK;
	}
#if NV_GEN_AT_LEAST(580)
	if (p2pCaps.bar1Supported) {
		/* The BAR1 DMA windows come with the caps control (its locks). */
		rmApiEnter(RMAPI_LOCK_FLAGS_READ);
		status = rmGetBar1P2PDmaInfoPair(device1, device2, p2pCapsParams);
		rmApiExit(RMAPI_LOCK_FLAGS_READ);
		if (status != NV_OK)
			return status;
#if NV_GEN_AT_LEAST(590)
		p2pCapsParams->p2pLink = UVM_LINK_TYPE_PCIE_BAR1;
		p2pCapsParams->totalLinkLineRateMBps = 32000;
		return NV_OK;
#endif
	}
#endif
	p2pCapsParams->p2pLink = UVM_LINK_TYPE_PCIE;
	p2pCapsParams->totalLinkLineRateMBps = 32000;
	return NV_OK;
}

u32 rm_standin_uvm_get_p2p_caps(struct gpuDevice *device1,
				struct gpuDevice *device2,
				UvmGpuP2PCapsParams *p2pCapsParams)
{
	return nvGpuOpsGetP2PCaps(device1, device2, p2pCapsParams);
}
