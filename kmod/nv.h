/* SPDX-License-Identifier: GPL-2.0 */
/* The driver's own types and constants, as far as the hooks need them. */
#ifndef _P2PS_NV_H
#define _P2PS_NV_H

#include <linux/types.h>

typedef u32 NV_STATUS;
typedef u32 NvU32;
typedef u64 NvU64;
typedef u8 NvBool;
#define NV_OK			0x00000000
#define NV_ERR_NOT_SUPPORTED	0x00000056
#define NV_FALSE		((NvBool)0)

/* GMMU_APERTURE (gmmu_fmt.h) */
#define GMMU_APERTURE_PEER		2
#define GMMU_APERTURE_SYS_NONCOH	3

struct OBJGPU;
struct KernelBus;
struct VirtMemAllocator;
struct CLI_DMA_MAPPING_INFO;

/*
 * The argument of dmaAllocBar1P2PMapping, field for field as in
 * g_virt_mem_allocator_nvoc.h of every tag from 565 to 595 (docs/hooks.md).
 * Only pPeerGpu and pDmaMappingInfo are read.
 */
struct DMA_BAR1P2P_MAPPING_PRARAMS {
	void *pVas;
	struct OBJGPU *pPeerGpu;
	void *pPeerMemDesc;
	void *pMemDescOut;
	NvU32 flags;
	NvU32 flagsOut;
	NvU64 offset;
	NvU64 offsetOut;
	NvU64 length;
	struct CLI_DMA_MAPPING_INFO *pDmaMappingInfo;
};

/* NV_P2PAPI_ATTRIBUTES_CONNECTION_TYPE (bits 3:0 of attributes). */
#define NV_P2PAPI_CONNECTION_TYPE_MASK		0xf
#define NV_P2PAPI_CONNECTION_TYPE_PCIE_BAR1	0x2

/* NV0000_P2P_CAPS_STATUS values (P2P_CONNECTIVITY: p2p-shim/sb1rule.h). */
#define NV0000_P2P_CAPS_STATUS_NOT_SUPPORTED	0x05

#define NV_MAX_DEVICES		32

#endif /* _P2PS_NV_H */
