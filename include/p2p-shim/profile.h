/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Profiles: which functions of the stock nvidia driver p2p-shim hooks, per
 * driver generation, and how each target is recognised.
 *
 * This header and rules/profile.c are compiled into the module and into
 * libp2pshim, so that `p2pctl check` runs the module's own resolution and
 * fingerprint rules on a driver file, offline.
 */
#ifndef _P2P_SHIM_PROFILE_H
#define _P2P_SHIM_PROFILE_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdbool.h>
#include <stddef.h>
#endif

#include <p2p-shim/uapi.h>

/*
 * The expected body of a stub, after whatever prefix the build put at the
 * entry (see p2ps_match_code()).  P2PS_CODE_RET stands for the function's
 * return, which a build may emit as `ret` or as a jump to the return thunk.
 */
#define P2PS_CODE_RET		0x100
#define P2PS_CODE_MAX		16

struct p2ps_code {
	unsigned int len;
	unsigned short op[P2PS_CODE_MAX];	/* bytes, or P2PS_CODE_RET */
	const char *text;			/* the same, as assembly, for messages */
};

/* Target flags. */
#define P2PS_T_STUB	(1U << 0)	/* NVOC HAL stub: "<name>_<6 hex digits>" */
#define P2PS_T_UVM	(1U << 1)	/* in nvidia-uvm, not nvidia (UVM peer set) */

/*
 * Actions: what the module does on top of the hook's kind.  A redirect
 * with an action goes through a wrapper in the module, with the target's
 * own signature, that calls the destination and records what it did.
 */
enum p2ps_action {
	P2PS_ACT_NONE = 0,
	P2PS_ACT_LEDGER_CREATE,		/* redirect; ledger +1 for the pair on success */
	P2PS_ACT_LEDGER_REMOVE,		/* redirect; ledger -1 for the pair on success */
	P2PS_ACT_LEDGER_DMA_MAP,	/* redirect; ledger records the BAR1 window */
	P2PS_ACT_LEDGER_DMA_UNMAP,	/* redirect; ledger forgets the BAR1 window */
	P2PS_ACT_ROUTE_BAR1,		/* redirect only when attributes say PCIE_BAR1 */
	P2PS_ACT_REGISTRY_DEFAULTS,	/* return override: registry defaults */
	P2PS_ACT_CAPS_GUARD,		/* return override: refuse forced mailbox caps */
	P2PS_ACT_UVM_SCOPE,		/* return override: a UVM external PTE build */
	P2PS_ACT_UVM_APERTURE,		/* return override: PEER -> SYS_NONCOH, in scope */
	P2PS_ACT_UVM_ENCODE,		/* argument rewrite: add the peer BAR1 base, in scope */
	P2PS_ACT_GPU_ATTACH,		/* return override (observes): a GPU attaches */
	P2PS_ACT_GPU_DETACH,		/* return override (observes): a GPU detaches */
	P2PS_ACT_STATIC_BAR1,		/* return override (observes): static BAR1 enabled */
	P2PS_ACT_STATIC_BAR1_OFF,	/* return override (observes): static BAR1 disabled */
	/* gen 0 (550.x, 560.x): static BAR1 decided and set up in stub slots */
	P2PS_ACT_BAR1_CAPABLE,		/* redirect; "no" for a GPU we cannot place */
	P2PS_ACT_STATIC_ENABLE,		/* redirect; ledger records the GPU's static BAR1 */
	P2PS_ACT_STATIC_DISABLE,	/* redirect; ledger forgets it */
	P2PS_ACT_VIEW_IS_SUPPORTED,	/* redirect; inside, static BAR1 is visible */
	P2PS_ACT_STATIC_VIEW,		/* return override: static BAR1 seen by BAR1 P2P only */
	P2PS_ACT_CAPS_GUARD_V1,		/* return override: the caps guard, 4-argument caps */
	/* gen A and 0: BAR1 pairs of chips with the driver's own _GH100 slots */
	P2PS_ACT_NATIVE_CREATE,		/* return override (observes): a native BAR1 pair */
	P2PS_ACT_NATIVE_REMOVE,		/* return override (observes): its teardown */
	/* the UVM peer set (docs/uvm.md, section 3.4): nvidia-uvm's own PTEs */
	P2PS_ACT_UVM_PEER_CAPS,		/* return override: tag a BAR1 pair's peer ids */
	P2PS_ACT_UVM_PEER_ADDRESS,	/* return override: tag -> SYS, BAR1 base + offset */
	P2PS_ACT_UVM_PEER_PTE,		/* argument rewrite: the same, at make_pte */
	P2PS_ACT_UVM_PEER_COPY,		/* return override: the same, for a physical copy address */
	P2PS_ACT_UVM_PEER_ATOMICS,	/* return override (590+): a BAR1 pair of ours gets SYS */
	/* 565+: the per-GPU static BAR1 decision (kmod/static_bar1.c) */
	P2PS_ACT_STATIC_DECIDE,		/* return override: the decision; may turn "no" into "yes" */
	P2PS_ACT_CLIENT_FB,		/* return override: the client FB a forced enable maps */
	P2PS_ACT_GPU_LEAVING,		/* entry probe (observes): the OBJGPU a detach frees */
};

/*
 * Whether @suffix (what follows a function's name in another symbol) marks
 * a compiler clone with callers of its own (".isra.0", ".constprop.1",
 * ".part.0"), as opposed to the function's own cold part (".cold").
 */
bool p2ps_is_clone_suffix(const char *suffix);

/* Whether the module calls a hook's destination (through a wrapper). */
bool p2ps_action_calls_dest(enum p2ps_action action);

/* A registry key the profile supplies where the user has not set it. */
struct p2ps_registry_default {
	const char *key;
	unsigned int value;
};

struct p2ps_hook_desc {
	const char *target;		/* symbol (or stub base name) in nvidia */
	unsigned int flags;		/* P2PS_T_* */
	const struct p2ps_code *expect;	/* required body, for stubs */
	enum p2ps_hook_kind kind;
	const char *dest;		/* REDIRECT: function in nvidia to run instead */
	enum p2ps_action action;	/* the module's policy that owns it gives the handlers */
	const char *why;
};

/*
 * An object (livepatch's klp_object): the hooks that one module's arrival
 * arms and its departure disarms, all or none.  A profile lists its
 * objects: nvidia's first (armed with the profile itself), then those of
 * nvidia-uvm, the UVM peer set, which need nvidia's armed too and differ
 * by driver major.  A hook flagged P2PS_T_UVM is in nvidia-uvm, the others
 * in nvidia: the UVM peer set's first hook is in nvidia, but must tag
 * nothing before nvidia-uvm's are there, so it is nvidia-uvm's object's.
 */
struct p2ps_object {
	const char *module;		/* "nvidia", "nvidia_uvm" */
	const char *name;		/* the UVM peer set's ("uvm-gpu"); NULL for nvidia's */
	const unsigned int *majors;	/* 0-terminated; NULL: every major of the profile */
	const struct p2ps_hook_desc *hooks;
	unsigned int nr_hooks;
	const char *const *calls;	/* other functions the module calls, NULL-terminated */
	const char *copy_fn;		/* calls hooks[1]'s target, or is hooked itself; or NULL */
};

struct p2ps_profile {
	const char *name;
	const char *versions;		/* human-readable range */
	const unsigned int *majors;	/* driver major versions served, 0-terminated */
	const struct p2ps_object *objects;	/* [0]: nvidia's; {NULL}-terminated */
	const struct p2ps_registry_default *registry;	/* {NULL}-terminated */
	/*
	 * The driver applies ForceP2P before its BAR1 HAL check (550-570), so
	 * the caps guard itself must ask for static BAR1 on both GPUs.
	 */
	bool force_before_bar1_check;
};

/* @profile's object for nvidia: its first, armed with the profile itself. */
static inline const struct p2ps_object *p2ps_profile_nvidia(const struct p2ps_profile *profile)
{
	return &profile->objects[0];
}

/*
 * @profile's object for @module at driver @version: the first that serves
 * @version's major, or NULL.
 */
const struct p2ps_object *p2ps_profile_object(const struct p2ps_profile *profile,
					      const char *version, const char *module);

/* Whether @module is the module of an object of some profile. */
bool p2ps_is_object_module(const char *module);

#ifndef __KERNEL__
/* The UVM peer set for @version, or NULL (libp2pshim only: lib/check.c). */
const struct p2ps_object *p2ps_uvm_set_for_version(const char *version);
#endif

/* Whether @version's nvidia-uvm maps BAR1 peers itself (590 and later). */
bool p2ps_uvm_native_bar1(const char *version);

extern const struct p2ps_profile p2ps_profiles[];
extern const unsigned int p2ps_nr_profiles;

/* The profile serving driver version @version ("580.159.04"), or NULL. */
const struct p2ps_profile *p2ps_profile_for_version(const char *version);

/* The profile used when an unknown version is forced: the newest. */
const struct p2ps_profile *p2ps_profile_newest(void);

/* Parse "MAJOR.MINOR[.PATCH]" (PATCH may be absent); 0 on success. */
int p2ps_parse_version(const char *version, unsigned int *major,
		       unsigned int *minor, unsigned int *patch);

/*
 * The major of driver version @version ("580" of "580.142"), read as
 * p2ps_parse_version() reads it; 0 if @version is NULL, empty or not
 * "MAJOR.MINOR[.PATCH]".  Every rule keyed on the major asks this.
 */
unsigned int p2ps_driver_major(const char *version);

/* Whether @sym names the HAL stub of @base: "<base>_" then 6 hex digits. */
bool p2ps_is_stub_of(const char *sym, const char *base);

/*
 * Check the machine code at a function's entry against @expect.  Accepted
 * prefixes, in order: endbr64; a 5-byte nop or call (an ftrace site).
 * Returns 0 if it matches; otherwise -1 with a description in @why.
 * @text holds @len readable bytes.
 */
int p2ps_match_code(const unsigned char *text, size_t len,
		    const struct p2ps_code *expect, char *why, size_t whylen);

/*
 * Whether @text (4 readable bytes) starts with endbr64.  A function the
 * module calls must: on IBT kernels objtool seals the ENDBR of functions
 * only ever called directly, and an indirect call to one faults.
 */
bool p2ps_has_endbr(const unsigned char *text);

/*
 * Whether @text (@len bytes of code at address @addr) has a direct call
 * that reaches @target; with @thunks, also one through the call-depth
 * accounting thunk the kernel puts just before @target (profile.c).
 */
#define P2PS_CALL_THUNK_WINDOW	16
bool p2ps_calls_target(const unsigned char *text, size_t len, unsigned long long addr,
		       unsigned long long target, bool thunks);

/* Why a known driver generation has no profile, or NULL. */
const char *p2ps_unsupported_reason(const char *version);

/* "a, b, c": every served major version, for refusal messages. */
void p2ps_supported_versions(char *buf, size_t len);

#endif /* _P2P_SHIM_PROFILE_H */
