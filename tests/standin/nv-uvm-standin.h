/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The stand-in nvidia.ko's interface to the stand-in nvidia-uvm.ko: the few
 * nvUvmInterface* calls (kernel-open/nvidia/nv_uvm_interface.c) that UVM's
 * peer set-up makes, with the types of nv_uvm_types.h as each driver
 * generation has them (docs/uvm.md, section 1.1).
 *
 * Device creation is reduced to a GPU instance (the real
 * nvUvmInterfaceDeviceCreateV2 takes a session, platform info and a UUID);
 * everything the peer path reads keeps its real layout and values.
 */
#ifndef NV_UVM_STANDIN_H
#define NV_UVM_STANDIN_H

#include <linux/types.h>

#ifndef NV_STANDIN_MAJOR
#error "NV_STANDIN_MAJOR must be set by the build"
#endif

/* UVM_LINK_TYPE (nv_uvm_types.h): 590 inserted PCIE_BAR1 after PCIE. */
enum {
	UVM_LINK_TYPE_NONE,
	UVM_LINK_TYPE_PCIE,
#if NV_STANDIN_MAJOR >= 590
	UVM_LINK_TYPE_PCIE_BAR1,
#endif
	UVM_LINK_TYPE_NVLINK_1,
	UVM_LINK_TYPE_NVLINK_2,
	UVM_LINK_TYPE_NVLINK_3,
	UVM_LINK_TYPE_NVLINK_4,
#if NV_STANDIN_MAJOR >= 560
	UVM_LINK_TYPE_NVLINK_5,
#endif
	UVM_LINK_TYPE_C2C,
};

/*
 * UvmGpuP2PCapsParams, field for field: 550 ends with a bitfield, 580 adds
 * the BAR1 DMA windows (filled by RM, unread by 580's UVM), 590 the BAR1
 * PCIe atomics flags.
 */
typedef struct UvmGpuP2PCapsParams_tag {
	u32 peerIds[2];
	u32 egmPeerIds[2];
	u32 p2pLink;
	u32 optimalNvlinkWriteCEs[2];
	u32 totalLinkLineRateMBps;
#if NV_STANDIN_MAJOR < 560
	u32 indirectAccess : 1;
#endif
#if NV_STANDIN_MAJOR >= 580
	u64 bar1DmaAddress[2];
	u64 bar1DmaSize[2];
#endif
#if NV_STANDIN_MAJOR >= 590
	u8 bar1PcieAtomics[2];
#endif
} UvmGpuP2PCapsParams;

/* NV2080_CTRL_MC_ARCH_INFO_ARCHITECTURE_* as gpuArch reports it. */
#define NV_STANDIN_ARCH_TU100	0x160
#define NV_STANDIN_ARCH_GA100	0x170
#define NV_STANDIN_ARCH_AD100	0x190
#define NV_STANDIN_ARCH_GH100	0x180
#define NV_STANDIN_ARCH_GB100	0x1a0
#define NV_STANDIN_ARCH_GB200	0x1b0

struct gpuDevice;
typedef struct gpuDevice *uvmGpuDeviceHandle;

/* Simplified: a GPU instance instead of session, platform info and UUID. */
u32 nvUvmInterfaceDeviceCreate(u32 gpuInstance, uvmGpuDeviceHandle *device,
			       u32 *gpuArch);
void nvUvmInterfaceDeviceDestroy(uvmGpuDeviceHandle device);
/* As in nv_uvm_interface.h. */
u32 nvUvmInterfaceP2pObjectCreate(uvmGpuDeviceHandle device1,
				  uvmGpuDeviceHandle device2, u32 *hP2pObject);
void nvUvmInterfaceP2pObjectDestroy(void *session, u32 hP2pObject);
u32 nvUvmInterfaceGetP2PCaps(uvmGpuDeviceHandle device1,
			     uvmGpuDeviceHandle device2,
			     UvmGpuP2PCapsParams *p2pCapsParams);

/* RM core entry points behind them (nv-kernel.c), called with the RM lock. */
u32 rm_standin_uvm_device_create(u32 gpuInstance, struct gpuDevice **device,
				 u32 *gpuArch);
void rm_standin_uvm_device_destroy(struct gpuDevice *device);
u32 rm_standin_uvm_p2p_create(struct gpuDevice *device1,
			      struct gpuDevice *device2, u32 *hP2pObject);
void rm_standin_uvm_p2p_destroy(u32 hP2pObject);
u32 rm_standin_uvm_get_p2p_caps(struct gpuDevice *device1,
				struct gpuDevice *device2,
				UvmGpuP2PCapsParams *p2pCapsParams);

#endif /* NV_UVM_STANDIN_H */
