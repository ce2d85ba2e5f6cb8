/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * p2p-shim's interface to userspace, shared by the module, libp2pshim and
 * p2pctl.
 *
 * Actions go through ioctls on the misc device /dev/p2p-shim and need
 * CAP_SYS_ADMIN; P2PS_IOC_VERSION and P2PS_IOC_STATUS do not.  Every
 * argument struct starts with its size: the caller sets it to sizeof() of
 * the struct it was built with, and the module refuses any other size with
 * EINVAL, so a mismatched library fails loudly instead of reading garbage.
 *
 * Detailed status (per hook, per mapping) and events go through the generic
 * netlink family P2PS_GENL_NAME.
 */
#ifndef _UAPI_P2P_SHIM_H
#define _UAPI_P2P_SHIM_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define P2PS_DEVICE_NAME	"p2p-shim"	/* /dev/p2p-shim */
#define P2PS_ABI_VERSION	1

#define P2PS_NAME_LEN		64	/* symbol, profile and version strings */
#define P2PS_REASON_LEN		256	/* human-readable reason, NUL-terminated */

/* What the module is doing. */
enum p2ps_state {
	P2PS_STATE_DISABLED = 0,	/* nothing installed, not asked to */
	P2PS_STATE_WAITING = 1,		/* enabled; arms when nvidia loads */
	P2PS_STATE_ARMED = 2,		/* every hook of the profile installed */
	P2PS_STATE_DRY_RUN = 3,		/* counting probes only */
	P2PS_STATE_RESIDUAL = 4,	/* disabled; GPUs still carry our ForceP2P: the
					 * guard stays until they re-initialise */
};

/* P2PS_IOC_ENABLE flags. */
#define P2PS_ENABLE_DRY_RUN	(1U << 0)	/* install counting probes only */
#define P2PS_ENABLE_FORCE	(1U << 1)	/* use the newest profile for an unknown version */
#define P2PS_ENABLE_FLAGS	(P2PS_ENABLE_DRY_RUN | P2PS_ENABLE_FORCE)

struct p2ps_version {
	__u32 size;			/* in: sizeof(struct p2ps_version) */
	__u32 abi;			/* out: P2PS_ABI_VERSION */
	char module[P2PS_NAME_LEN];	/* out: p2p-shim's own version */
};

struct p2ps_status {
	__u32 size;			/* in: sizeof(struct p2ps_status) */
	__u32 state;			/* out: enum p2ps_state */
	__u32 flags;			/* out: P2PS_ENABLE_* of the current arming */
	__u32 hooks;			/* out: hooks installed */
	__u32 live_mappings;		/* out: BAR1 peer mappings in the ledger */
	__u32 stale_gpus;		/* out: mask of GPU instances initialised before arming */
	__u64 hits;			/* out: sum of all hooks' hits since arming */
	char driver_version[P2PS_NAME_LEN];	/* out: "" when nvidia is not loaded */
	char profile[P2PS_NAME_LEN];		/* out: "" when none chosen */
};

struct p2ps_enable {
	__u32 size;			/* in: sizeof(struct p2ps_enable) */
	__u32 flags;			/* in: P2PS_ENABLE_*; other bits: EINVAL */
	__u32 state;			/* out: enum p2ps_state after the call */
	__u32 pad;			/* in: must be 0 */
	char target[P2PS_NAME_LEN];	/* out, on failure: the target that failed, or "" */
	char reason[P2PS_REASON_LEN];	/* out, on failure: why */
};

struct p2ps_disable {
	__u32 size;			/* in: sizeof(struct p2ps_disable) */
	__u32 flags;			/* in: must be 0 */
	char reason[P2PS_REASON_LEN];	/* out, on EBUSY: what refused it (live BAR1 peer
					 * mappings, or GPUs initialising) */
};

#define P2PS_IOC_MAGIC		0xB2
#define P2PS_IOC_VERSION	_IOWR(P2PS_IOC_MAGIC, 0x00, struct p2ps_version)
#define P2PS_IOC_STATUS		_IOWR(P2PS_IOC_MAGIC, 0x01, struct p2ps_status)
#define P2PS_IOC_ENABLE		_IOWR(P2PS_IOC_MAGIC, 0x02, struct p2ps_enable)
#define P2PS_IOC_DISABLE	_IOWR(P2PS_IOC_MAGIC, 0x03, struct p2ps_disable)

/*
 * Generic netlink.
 *
 * P2PS_CMD_GET_STATUS (doit): one message with the P2PS_A_* top-level
 *   attributes.
 * P2PS_CMD_GET_HOOKS (dumpit): one message per hook of the chosen profile,
 *   each with one P2PS_A_HOOK nest.
 * P2PS_CMD_GET_MAPPINGS (dumpit): one message per live GPU pair in the
 *   ledger, each with one P2PS_A_MAPPING nest.
 * P2PS_CMD_EVENT: sent by the module to the "events" multicast group, with
 *   P2PS_A_EVENT and the attributes that event carries.
 */
#define P2PS_GENL_NAME		"p2p_shim"
#define P2PS_GENL_VERSION	1
#define P2PS_GENL_MCGRP_EVENTS	"events"

enum p2ps_genl_cmd {
	P2PS_CMD_UNSPEC,
	P2PS_CMD_GET_STATUS,
	P2PS_CMD_GET_HOOKS,
	P2PS_CMD_GET_MAPPINGS,
	P2PS_CMD_EVENT,
	P2PS_CMD_GET_GPUS,		/* dumpit: one P2PS_A_GPU nest per GPU seen attaching */
	__P2PS_CMD_MAX,
};
#define P2PS_CMD_MAX (__P2PS_CMD_MAX - 1)

enum p2ps_genl_attr {
	P2PS_A_UNSPEC,
	P2PS_A_STATE,			/* u32, enum p2ps_state */
	P2PS_A_FLAGS,			/* u32, P2PS_ENABLE_* */
	P2PS_A_DRIVER_VERSION,		/* string */
	P2PS_A_PROFILE,			/* string */
	P2PS_A_LIVE_MAPPINGS,		/* u32 */
	P2PS_A_STALE_GPUS,		/* u32, mask of GPU instances */
	P2PS_A_HOOK,			/* nest, P2PS_HOOK_A_* */
	P2PS_A_MAPPING,			/* nest, P2PS_MAP_A_* */
	P2PS_A_EVENT,			/* u32, enum p2ps_event */
	P2PS_A_REASON,			/* string */
	P2PS_A_UID,			/* u32, who asked */
	P2PS_A_MODULE_VERSION,		/* string */
	P2PS_A_PAD,
	P2PS_A_GPU,			/* nest, P2PS_GPU_A_* */
	__P2PS_A_MAX,
};
#define P2PS_A_MAX (__P2PS_A_MAX - 1)

enum p2ps_hook_kind {
	P2PS_HOOK_REDIRECT = 1,		/* entry runs another function of the same signature */
	P2PS_HOOK_ARG = 2,		/* an argument is rewritten at entry */
	P2PS_HOOK_RETURN = 3,		/* the return value is overridden */
	P2PS_HOOK_COUNT = 4,		/* dry run: counts calls, changes nothing */
};

enum p2ps_hook_state {
	P2PS_HOOK_IDLE = 0,		/* not installed */
	P2PS_HOOK_INSTALLED = 1,
	P2PS_HOOK_FAILED = 2,		/* the last arming failed on this hook */
};

enum p2ps_hook_attr {
	P2PS_HOOK_A_UNSPEC,
	P2PS_HOOK_A_TARGET,		/* string: the symbol in nvidia */
	P2PS_HOOK_A_KIND,		/* u32, enum p2ps_hook_kind (as installed) */
	P2PS_HOOK_A_STATE,		/* u32, enum p2ps_hook_state */
	P2PS_HOOK_A_HITS,		/* u64 */
	P2PS_HOOK_A_LAST_ERROR,		/* string, "" if none */
	P2PS_HOOK_A_DEST,		/* string: redirect destination, if any */
	P2PS_HOOK_A_PAD,
	__P2PS_HOOK_A_MAX,
};
#define P2PS_HOOK_A_MAX (__P2PS_HOOK_A_MAX - 1)

/*
 * A mapping's GPU that the module cannot name (attached before arming).
 * Sent as this value, never left out: a reader that defaults a missing
 * attribute to 0 would show it as GPU 0, a real and different GPU.
 */
#define P2PS_MAP_GPU_UNKNOWN	0xffffffffU

enum p2ps_map_attr {
	P2PS_MAP_A_UNSPEC,
	P2PS_MAP_A_GPU0,		/* u32, GPU instance, or P2PS_MAP_GPU_UNKNOWN */
	P2PS_MAP_A_GPU1,		/* u32, GPU instance, or P2PS_MAP_GPU_UNKNOWN */
	P2PS_MAP_A_CONN_TYPE,		/* u32, enum p2ps_conn_type */
	P2PS_MAP_A_COUNT,		/* u32, references the driver holds */
	P2PS_MAP_A_DMA_BASE,		/* u64, GPU1's BAR1 as GPU0 reaches it */
	P2PS_MAP_A_DMA_SIZE,		/* u64 */
	P2PS_MAP_A_PAD,
	__P2PS_MAP_A_MAX,
};
#define P2PS_MAP_A_MAX (__P2PS_MAP_A_MAX - 1)

/* What the driver decided about a GPU's static BAR1 (P2PS_GPU_A_STATIC_BAR1). */
enum p2ps_sb1_state {
	P2PS_SB1_UNKNOWN = 0,		/* no decision seen (yet) */
	P2PS_SB1_ON = 1,		/* on, by the driver's own rule */
	P2PS_SB1_OFF = 2,		/* off (P2PS_GPU_A_REASON says why) */
	P2PS_SB1_FORCED = 3,		/* on, where the rule said no: p2p-shim turned it on */
	P2PS_SB1_FAILED = 4,		/* the driver's own mapping failed: BAR1 init fails */
};

enum p2ps_gpu_attr {
	P2PS_GPU_A_UNSPEC,
	P2PS_GPU_A_INSTANCE,		/* u32, GPU instance */
	P2PS_GPU_A_STATIC_BAR1,		/* u32, enum p2ps_sb1_state */
	P2PS_GPU_A_P2P_USABLE,		/* u32, 1: static BAR1 that BAR1 P2P can map */
	P2PS_GPU_A_FORCE_P2P,		/* u32, 1: its ForceP2P came from p2p-shim */
	P2PS_GPU_A_BAR1_ADDR,		/* u64, BAR1 bus address (0: unknown) */
	P2PS_GPU_A_BAR1_SIZE,		/* u64, bytes (0: unknown) */
	P2PS_GPU_A_CONSOLE,		/* u64, console mapping below static BAR1, bytes */
	P2PS_GPU_A_MAILBOX,		/* u64, mailbox area below static BAR1, bytes */
	P2PS_GPU_A_CLIENT_FB,		/* u64, client FB the driver maps, bytes (0: not read) */
	P2PS_GPU_A_OFFSET,		/* u64, static BAR1's offset in BAR1 */
	P2PS_GPU_A_REASON,		/* string */
	P2PS_GPU_A_PAD,
	__P2PS_GPU_A_MAX,
};
#define P2PS_GPU_A_MAX (__P2PS_GPU_A_MAX - 1)

enum p2ps_conn_type {
	P2PS_CONN_PCIE_BAR1 = 1,	/* a BAR1 P2P pair (kbusCreateP2PMapping) */
	P2PS_CONN_BAR1_WINDOW = 2,	/* peer memory mapped through BAR1 (dmaAllocBar1P2PMapping) */
	P2PS_CONN_STATIC_BAR1 = 3,	/* gen 0: a GPU's static BAR1 set up through the hooks */
};

enum p2ps_event {
	P2PS_EV_ARMED = 1,		/* P2PS_A_PROFILE, _DRIVER_VERSION, _FLAGS, _UID */
	P2PS_EV_DISARMED = 2,		/* P2PS_A_REASON, _UID */
	P2PS_EV_DRIVER_ARRIVED = 3,	/* P2PS_A_DRIVER_VERSION */
	P2PS_EV_DRIVER_LEFT = 4,
	P2PS_EV_MAPPING_CREATED = 5,	/* P2PS_A_MAPPING */
	P2PS_EV_MAPPING_REMOVED = 6,	/* P2PS_A_MAPPING */
	P2PS_EV_REFUSED = 7,		/* P2PS_A_REASON, _UID */
};

#endif /* _UAPI_P2P_SHIM_H */
