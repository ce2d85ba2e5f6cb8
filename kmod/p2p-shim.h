/* SPDX-License-Identifier: GPL-2.0 */
/*
 * p2p-shim internals.  One file per concern:
 *
 *   main.c     module lifecycle, the arm/disarm state machine, nvidia's
 *              arrival and departure
 *   driver.c   finding the nvidia module and resolving symbols inside it
 *   hook.c     the hook engine: redirect, return override, count
 *   bar1.c     what the hooks do: wrappers with the driver's signatures,
 *              registry defaults, the caps guard
 *   gpus.c     what we know of each GPU, learnt from hooked calls
 *   ledger.c   the BAR1 peer mappings created through the hooks
 *   control.c  /dev/p2p-shim ioctls
 *   netlink.c  the p2p_shim generic netlink family
 *   profile.c  the hook tables (shared with libp2pshim)
 */
#ifndef _P2P_SHIM_H
#define _P2P_SHIM_H

#include <linux/bug.h>
#include <linux/kprobes.h>
#include <linux/preempt.h>
#include <linux/module.h>
#include <linux/types.h>

#include <p2p-shim/profile.h>
#include <p2p-shim/readrule.h>
#include <p2p-shim/sb1rule.h>
#include <p2p-shim/uapi.h>

/*
 * Probe handlers take spinlock_t, which sleeps on PREEMPT_RT, where a
 * kprobe handler must not: refused at build time (vermagic keeps a module
 * built for another kernel out of an RT one).
 */
#ifdef CONFIG_PREEMPT_RT
#error "p2p-shim does not support PREEMPT_RT kernels: its probe handlers take spinlock_t, which sleeps there"
#endif

/* The hooks know the x86-64 calling convention; so does the driver. */
#ifndef CONFIG_X86_64
#error "p2p-shim supports x86-64 only, like NVIDIA's open driver it hooks"
#endif

/*
 * kprobe pre-handlers and kretprobe entry handlers run in NMI context on
 * x86-64 (a kernel int3 enters through irqentry_nmi_enter): there, only
 * loads and single stores (WRITE_ONCE, cmpxchg).  Taking a lock, freeing,
 * logging, sending, queueing work or dropping a module reference belongs
 * in return handlers and wrappers; p2ps_lock() says so where it happens.
 */
#define p2ps_assert_not_nmi()	WARN_ON_ONCE(in_nmi())
#define p2ps_lock(lock, flags) \
	do { p2ps_assert_not_nmi(); spin_lock_irqsave(lock, flags); } while (0)

/* The driver's own types, as far as the hooks need them. */
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

/* One installed hook. */
struct p2ps_hook {
	const struct p2ps_hook_desc *desc;
	char symbol[P2PS_NAME_LEN];	/* the resolved target, e.g. with its stub suffix */
	unsigned long addr;		/* target, in nvidia */
	unsigned long dest;		/* REDIRECT: destination, in nvidia */
	unsigned long via;		/* REDIRECT: wrapper in p2p-shim, or 0 */
	enum p2ps_hook_kind kind;	/* as installed: COUNT in a dry run */
	enum p2ps_hook_state state;
	unsigned int set;		/* hook.c: only the live set's handlers act */
	bool retiring;			/* being removed: takes no new call */
	atomic_t calls;			/* RETURN: calls taken, return handler not yet run */
	bool keep;			/* left installed by a disable (main.c: residual guard) */
	atomic64_t hits;
	atomic64_t bypassed;		/* UVM_SCOPE: builds that missed the aperture hook */
	char last_error[P2PS_REASON_LEN];
	union {
		struct kprobe kp;
		struct kretprobe krp;
	};
	struct kprobe guard;		/* RETURN: keeps krp unoptimised (hook.c) */
};

/* faults.c: fault injection, in the test VM's fault build only. */
enum p2ps_fault {
	P2PS_FAULT_INSTALL,		/* registering hook @index fails */
	P2PS_FAULT_REMOVE_NOMEM,	/* removal cannot allocate its batch */
	P2PS_FAULT_LEDGER_NOMEM,	/* the ledger cannot allocate an entry */
	P2PS_FAULT_CPU_NO_READS,	/* the CPU is one NVIDIA's rule gives no peer reads */
	P2PS_FAULT_ANY_SWITCH,		/* any PCIe switch counts as one the driver knows */
};
#ifdef P2PS_FAULTS
bool p2ps_fault(enum p2ps_fault f, unsigned int index);
u32 p2ps_fault_pci_id(unsigned int instance);
#else
static inline bool p2ps_fault(enum p2ps_fault f, unsigned int index)
{
	return false;
}

static inline u32 p2ps_fault_pci_id(unsigned int instance)
{
	return 0;
}
#endif

/* Why arming failed. */
struct p2ps_arm_error {
	char target[P2PS_NAME_LEN];
	char reason[P2PS_REASON_LEN];
};

__printf(3, 4)
void p2ps_fail(struct p2ps_arm_error *err, const char *target, const char *fmt, ...);

/* main.c: the state, for the control plane. */
struct p2ps_status_snapshot {
	enum p2ps_state state;
	u32 flags;
	u32 stale_gpus;
	char driver_version[P2PS_NAME_LEN];
	char profile[P2PS_NAME_LEN];
};

int p2ps_enable(u32 flags, struct p2ps_arm_error *err);
int p2ps_disable(char *busy, size_t len);
void p2ps_snapshot(struct p2ps_status_snapshot *snap, u32 *hooks, u64 *hits);
/* Calls @fn for each hook under the state lock; stops on non-zero. */
int p2ps_for_each_hook(int (*fn)(const struct p2ps_hook *h, void *arg), void *arg,
		       unsigned int skip);

/* driver.c */
struct module *p2ps_driver_find(void);
struct module *p2ps_module_find(const char *name);
unsigned long p2ps_driver_lookup_size(struct module *mod, const char *name, unsigned long *size);
int p2ps_resolve(struct module *mod, const struct p2ps_profile *profile,
		 struct p2ps_hook *hooks, struct p2ps_arm_error *err);
int p2ps_resolve_uvm(struct module *nv, struct module *uvm, const struct p2ps_uvm_set *set,
		     struct p2ps_hook *hooks, struct p2ps_arm_error *err);
unsigned long p2ps_driver_lookup(struct module *mod, const char *name);

/* hook.c */
int p2ps_hooks_install(struct p2ps_hook *hooks, unsigned int n, bool dry_run,
		       struct p2ps_arm_error *err);
void p2ps_hooks_remove(struct p2ps_hook *hooks, unsigned int n);
void p2ps_hooks_activate(unsigned int set);

/* bar1.c */
int p2ps_bar1_bind(struct module *mod, const struct p2ps_profile *profile,
		   struct p2ps_hook *hooks, unsigned int n, struct p2ps_arm_error *err);
void p2ps_bar1_unbind(void);
void p2ps_bar1_close(void);
bool p2ps_registry_scoped(u64 dbd);
void p2ps_bar1_reopen(void);
void p2ps_bar1_guard_only(bool on);
bool p2ps_bar1_enter(void);
void p2ps_bar1_exit(void);
NV_STATUS p2ps_bar1_dma_info(struct OBJGPU *src, struct OBJGPU *peer,
			     struct KernelBus *peer_bus, NvU64 *base, NvU64 *size);
/*
 * What a hook does on top of its kind: the handlers of the policy that owns
 * it.  Each policy (registry defaults and caps guard and BAR1 routing in
 * bar1.c, GPU tracking in gpus.c, static BAR1 in sbar1.c, the UVM scope
 * in uvm.c, the UVM peer set in uvm_peer.c) exports one ops object per
 * action; the profile's descriptors point at them (profile.c: ACT()), and
 * the engine (hook.c) calls them without knowing whose they are.
 */
#define P2PS_RET_DATA_SIZE	48
struct p2ps_hook_ops {
	/* REDIRECT: whether this call goes to the destination (NULL: every call). */
	bool (*route)(struct pt_regs *regs);
	/*
	 * REDIRECT through a wrapper with the target's signature, which calls
	 * the destination through *@dest_fn (bound at arming, bar1.c).
	 */
	void *wrapper;
	void **dest_fn;
	/* ARG: at the target's entry; may rewrite argument registers. */
	void (*arg)(struct pt_regs *regs);
	/*
	 * RETURN: @entry saves what the call needs in @data (P2PS_RET_DATA_SIZE
	 * bytes), @ret may change the return value and out-parameters.  @ret
	 * returns why it left the call as the stock driver has it, when that
	 * is worth showing, or NULL; the engine counts it in status.
	 */
	void (*entry)(void *data, struct pt_regs *regs);
	const char *(*ret)(void *data, struct pt_regs *regs);
	/* Kept by a disable while GPUs carry our ForceP2P (main.c). */
	bool residual;
};

extern const struct p2ps_hook_ops
	p2ps_none_ops,
	/* bar1.c */
	p2ps_route_bar1_ops, p2ps_ledger_create_ops, p2ps_ledger_remove_ops,
	p2ps_ledger_dma_map_ops, p2ps_ledger_dma_unmap_ops, p2ps_registry_defaults_ops,
	p2ps_caps_guard_ops, p2ps_caps_guard_v1_ops, p2ps_view_is_supported_ops,
	p2ps_bar1_capable_ops, p2ps_static_enable_ops, p2ps_static_disable_ops,
	p2ps_static_view_ops,
	/* gpus.c */
	p2ps_gpu_attach_ops, p2ps_gpu_detach_ops, p2ps_gpu_leaving_ops,
	/* sbar1.c */
	p2ps_static_decide_ops, p2ps_client_fb_ops, p2ps_static_bar1_ops,
	p2ps_static_bar1_off_ops,
	/* uvm.c */
	p2ps_uvm_scope_ops, p2ps_uvm_aperture_ops, p2ps_uvm_encode_ops,
	p2ps_native_create_ops, p2ps_native_remove_ops,
	/* uvm_peer.c */
	p2ps_uvm_peer_caps_ops, p2ps_uvm_peer_pte_ops, p2ps_uvm_peer_address_ops,
	p2ps_uvm_peer_copy_ops, p2ps_uvm_peer_atomics_ops;

/* gpus.c */
void p2ps_gpus_reset(void);
/* main.c: the last GPU carrying our ForceP2P has detached. */
void p2ps_residual_done(void);
bool p2ps_gpu_bind(struct OBJGPU *gpu);
bool p2ps_gpu_set_forced(struct OBJGPU *gpu, bool forced);
void p2ps_gpus_asked(u32 mask);
bool p2ps_gpus_forced_in(u32 mask);
u32 p2ps_gpu_instance(struct OBJGPU *gpu);
u32 p2ps_gpus_stale(void);
u32 p2ps_gpus_forced(void);

/* sbar1.c: static BAR1 per GPU */
struct p2ps_gpu_report {
	u32 instance, state;
	bool p2p_usable;
	u64 bar1_addr, bar1_size, console, mailbox, client_fb, offset;
	char reason[P2PS_REASON_LEN];
};
void p2ps_sb1_bind(const char *version, bool native_uvm);
void p2ps_sb1_forget(unsigned int instance);
void p2ps_sb1_attach(unsigned int instance, const void *arg);
void p2ps_sb1_user_key(void);
u64 p2ps_sb1_dbd(u32 instance);
void p2ps_sb1_aperture_key(struct OBJGPU *gpu, u32 mb);
void p2ps_sb1_torn_down(struct OBJGPU *gpu);
void p2ps_sb1_gather(u32 mask, struct p2ps_caps_set *set);
void p2ps_sb1_flush(void);
u32 p2ps_sb1_forcing(void);
bool p2ps_sb1_capable_begin(struct OBJGPU *gpu);
bool p2ps_sb1_report(unsigned int instance, struct p2ps_gpu_report *r);
u32 p2ps_gpu_attaching(void);

/* uvm.c: gen A's UVM external mapping fix */
void p2ps_uvm_reset(void);

/* uvm_peer.c: the UVM peer set (nvidia-uvm's own peer PTEs) */
void p2ps_uvm_peer_start(struct module *nv, bool dry_run);
void p2ps_uvm_peer_stop(void);
void p2ps_uvm_peer_module(struct module *uvm, unsigned long action);
void p2ps_uvm_peer_created(struct OBJGPU *g0, struct OBJGPU *g1);
void p2ps_uvm_peer_created_native(struct OBJGPU *g0, struct OBJGPU *g1);
void p2ps_uvm_peer_forget_gpu(struct OBJGPU *gpu);
int p2ps_uvm_peer_for_each(int (*fn)(const struct p2ps_hook *h, void *arg), void *arg,
			   unsigned int skip);
void p2ps_uvm_peer_count(u32 *installed, u64 *hits);

/* ledger.c */
void p2ps_ledger_pair_get(struct OBJGPU *g0, struct KernelBus *b0,
			  struct OBJGPU *g1, struct KernelBus *b1);
bool p2ps_ledger_bar1_base(struct OBJGPU *mapper, struct OBJGPU *owner, u64 *base);
void p2ps_ledger_pair_put(struct OBJGPU *g0, struct OBJGPU *g1);
void p2ps_ledger_native_get(struct OBJGPU *g0, struct KernelBus *b0,
			    struct OBJGPU *g1, struct KernelBus *b1);
void p2ps_ledger_native_put(struct OBJGPU *g0, struct OBJGPU *g1);
void p2ps_ledger_native_hold(struct OBJGPU *g0, struct OBJGPU *g1);
void p2ps_ledger_native_reset(void);
void p2ps_ledger_forget_gpu(struct OBJGPU *gpu);
void p2ps_ledger_dma_get(struct CLI_DMA_MAPPING_INFO *info, struct OBJGPU *gpu,
			 struct OBJGPU *peer);
void p2ps_ledger_dma_put(struct CLI_DMA_MAPPING_INFO *info);
void p2ps_ledger_static_get(struct OBJGPU *gpu);
void p2ps_ledger_static_put(struct OBJGPU *gpu);
bool p2ps_ledger_has_static(struct OBJGPU *gpu);
unsigned int p2ps_ledger_live(void);
void p2ps_ledger_describe(char *buf, size_t len);
void p2ps_ledger_drop_all(void);
struct p2ps_mapping_event;
bool p2ps_ledger_entry(unsigned int index, struct p2ps_mapping_event *m);

/* control.c */
int p2ps_control_init(void);
void p2ps_control_exit(void);

/* netlink.c */
int p2ps_netlink_init(void);
void p2ps_netlink_exit(void);
struct p2ps_status_snapshot;
void p2ps_event(enum p2ps_event ev, const struct p2ps_status_snapshot *snap, const char *reason);
struct p2ps_mapping_event {
	u32 gpu0, gpu1, count;
	enum p2ps_conn_type conn;
	u64 dma_base, dma_size;
};
void p2ps_event_mapping(enum p2ps_event ev, const struct p2ps_mapping_event *m);

#endif /* _P2P_SHIM_H */
