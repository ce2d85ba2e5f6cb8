// SPDX-License-Identifier: GPL-2.0
/*
 * The UVM peer set: nvidia-uvm's own PTEs for a BAR1 pair (issue 14,
 * docs/uvm.md section 3.4).
 *
 * Drivers 550 to 580 report a BAR1 pair to nvidia-uvm as a PCIe pair whose
 * peer ids are 0xffffffff (no mailbox peer id).  nvidia-uvm stores them in
 * NvU8 peer_ids[] and casts them to an aperture, UVM_APERTURE_PEER(0xff),
 * which its PTE encoders write as VIDEO (the accessing GPU's own memory at
 * the owner's offset) and its copy engines as PEERMEM with peer id 7.  So
 * managed memory (cudaMallocManaged) of one GPU mapped into the other, and
 * migrations between them, go wrong.  Device memory is not affected: its
 * peer PTEs come from RM (uvm.c, and natively from 580).
 *
 * Three hooks, armed together while nvidia-uvm is loaded (all or none):
 *
 *   nvUvmInterfaceGetP2PCaps (nvidia)        return: for a pair of ours,
 *                                            peerIds[] become tags
 *                                            0x80..0xfe, one per direction,
 *                                            each tied to that direction's
 *                                            BAR1 DMA base (the ledger's)
 *   uvm_gpu_peer_phys_address (570-580),     return: a tagged aperture
 *   uvm_pmm_gpu_peer_phys_address (550-565)  (rdx) becomes UVM_APERTURE_SYS
 *                                            and the address (rax) base +
 *                                            offset; managed PTEs and
 *                                            physical CE copies take it
 *   uvm_pmm_gpu_peer_copy_address (550-565)  return: the same for a physical
 *                                            copy address, where the
 *                                            compiler inlined the phys-address
 *                                            function (565.57.01, gcc 12)
 *   make_pte_turing, make_pte_hopper         entry: the same for a tag that
 *                                            reaches a PTE directly (the
 *                                            identity mapping of virtual
 *                                            copy mode)
 *
 * 590 and later (set uvm-bar1) need one hook only: nvidia-uvm knows BAR1
 * pairs there, but picks an aperture Ampere and Ada cannot encode unless
 * the caps say the owner takes PCIe atomics; p2ps_uvm_atomics_return().
 *
 * The link type stays PCIE, so UvmEnablePeerAccess keeps succeeding and
 * CUDA's device-memory P2P is untouched (docs/uvm.md, 3.2).
 *
 * Which pair a caps query is about: nvidia-uvm creates the pair's P2P
 * object (nvUvmInterfaceP2pObjectCreate, on the same thread, with the same
 * device order) right before it asks for the caps, and the object's
 * creation runs through our BAR1 create wrapper with (device1's GPU,
 * device2's GPU).  So the wrapper notes the pair per thread and the caps
 * hook takes that note, if RM's p2pGetCapsStatus for this query (on the
 * same thread: gpus.c keeps its GPU mask) named that very pair; on 580,
 * where RM also returns both BAR1 DMA bases in the caps, they must match
 * the ledger's too, or nothing is tagged.
 *
 * The set's hooks are nvidia-uvm's object in the profile (profile.c):
 * lifecycle.c arms it, when the profile arms with nvidia-uvm loaded or
 * when nvidia-uvm arrives, and disarms it, through the callbacks below
 * (uvm_peer_object_cb).  Here are only the handlers and the policy table.
 *
 * Everything here but the probe handlers runs under lifecycle.c's lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bits.h>
#include <linux/jiffies.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>

#include <p2p-shim/uapi.h>

#include "gpus.h"
#include "hook.h"
#include "ledger.h"
#include "nmi.h"
#include "nv.h"
#include "policy.h"
#include "scopes.h"

/* uvm_aperture_t (uvm_hal_types.h): SYS is 9 in every tag from 550 to 595. */
#define UVM_APERTURE_SYS	9
/* UVM_LINK_TYPE_PCIE (nv_uvm_types.h): 1 in every tag from 550 to 595. */
#define UVM_LINK_TYPE_PCIE	1
/* UVM_LINK_TYPE_PCIE_BAR1: 2, from 590 (NVLink values moved up by one). */
#define UVM_LINK_TYPE_PCIE_BAR1	2
#define BUS_INVALID_PEER	0xffffffffU

/* Tags: NvU8 peer ids that are no peer index (0..7) and not RM's 0xff. */
#define TAG_FIRST	0x80
#define TAG_LAST	0xfe
#define NR_TAGS		(TAG_LAST - TAG_FIRST + 1)

/*
 * The slot to try @k-th: tags whose low 3 bits are 7 first.  A copy engine
 * told a tag that no hook converted (a missed probe) targets peer (tag & 7),
 * as it targets peer 7 for the stock 0xff: with these it fails the same way
 * rather than reaching a real peer 0..6.
 */
static unsigned int tag_slot(unsigned int k)
{
	unsigned int first = NR_TAGS / 8;	/* 0x87, 0x8f, ..., 0xf7 */

	if (k < first)
		return 8 * k + 7;
	k -= first;
	return k + k / 7;	/* the k-th slot whose low bits are not 7 */
}

/*
 * UvmGpuP2PCapsParams up to the fields read here; bar1Dma* only from 580
 * (nv_uvm_types.h: peerIds, egmPeerIds, p2pLink, optimalNvlinkWriteCEs,
 * totalLinkLineRateMBps, then bar1DmaAddress[2], bar1DmaSize[2]).
 */
struct uvm_caps {
	u32 peer_ids[2];
	u32 egm_peer_ids[2];
	u32 p2p_link;
	u32 optimal_nvlink_write_ces[2];
	u32 total_link_line_rate_mbps;
	u64 bar1_dma_address[2];
	u64 bar1_dma_size[2];
	u8 bar1_pcie_atomics[2];	/* 590+ */
};
static_assert(offsetof(struct uvm_caps, p2p_link) == 16);
static_assert(offsetof(struct uvm_caps, bar1_dma_address) == 32);
static_assert(offsetof(struct uvm_caps, bar1_pcie_atomics) == 64);
#define CAPS_580_SIZE	offsetof(struct uvm_caps, bar1_pcie_atomics)
#define CAPS_HEAD_SIZE	offsetof(struct uvm_caps, bar1_dma_address)

struct peer_tag {
	struct OBJGPU *mapper, *owner;	/* compared, never dereferenced */
	u64 base;			/* owner's BAR1 as mapper reaches it */
	bool used;
};

static struct peer_tag tags[NR_TAGS];
static DEFINE_SPINLOCK(tags_lock);

/*
 * A BAR1 pair created by a thread, for its next caps query: a per-task
 * scope (scopes.c), under created_lock, since another thread's detach
 * clears notes of its GPU and a full table reuses the oldest slot.
 */
struct created {
	struct OBJGPU *g0, *g1;
	unsigned long when;
};

#define NR_CREATED	16
P2PS_SCOPES(creators, NR_CREATED);
static struct created created[NR_CREATED];
static unsigned int created_next;
static DEFINE_SPINLOCK(created_lock);

/* Set while all hooks of the set are installed: only then are tags handed out. */
static bool tagging;

/* The armed set (nvidia-uvm's object), and what its caps hook reads. */
static struct {
	const struct p2ps_object *set;
	bool bar1_dma;		/* 580: the caps carry RM's BAR1 DMA bases */
} uset;

static void reset_tags(void)
{
	unsigned long flags;

	p2ps_lock(&tags_lock, flags);
	memset(tags, 0, sizeof(tags));
	spin_unlock_irqrestore(&tags_lock, flags);
	p2ps_lock(&created_lock, flags);
	p2ps_scope_reset(&creators);
	memset(created, 0, sizeof(created));
	spin_unlock_irqrestore(&created_lock, flags);
}

/* A BAR1 pair our create wrapper made (the ledger counted it): @g0 and @g1 are ours. */
static void peer_created(struct OBJGPU *g0, struct OBJGPU *g1)
{
	unsigned long flags;
	struct created *c;
	int i;

	if (!READ_ONCE(tagging))
		return;
	p2ps_lock(&created_lock, flags);
	i = p2ps_scope_find(&creators);
	if (i < 0) {
		i = created_next;
		created_next = (created_next + 1) % NR_CREATED;
		p2ps_scope_take(&creators, i);
	}
	c = &created[i];
	c->g0 = g0;
	c->g1 = g1;
	c->when = jiffies;
	spin_unlock_irqrestore(&created_lock, flags);
}

/*
 * A pair the driver made through its own slots (uvm.c's observer, the
 * ledger counted it): nvidia-uvm's own peer PTEs of such a pair
 * need the same tags before 590.  From 590 the driver's native pairs are
 * Hopper and Blackwell, whose UVM apertures are right: left alone.
 */
static void peer_created_native(struct OBJGPU *g0, struct OBJGPU *g1)
{
	const struct p2ps_object *set = READ_ONCE(uset.set);

	if (set && set->hooks[0].action == P2PS_ACT_UVM_PEER_CAPS)
		peer_created(g0, g1);
}

/* @gpu detaches: its tags and notes must not match the next OBJGPU there. */
static void peer_forget_gpu(struct OBJGPU *gpu)
{
	unsigned long flags;
	unsigned int i;

	if (!gpu)
		return;
	p2ps_lock(&tags_lock, flags);
	for (i = 0; i < NR_TAGS; i++)
		if (tags[i].used && (tags[i].mapper == gpu || tags[i].owner == gpu)) {
			smp_store_release(&tags[i].used, false);
			tags[i].mapper = tags[i].owner = NULL;
		}
	spin_unlock_irqrestore(&tags_lock, flags);
	p2ps_lock(&created_lock, flags);
	for (i = 0; i < NR_CREATED; i++)
		if (created[i].g0 == gpu || created[i].g1 == gpu) {
			memset(&created[i], 0, sizeof(created[i]));
			p2ps_scope_release(&creators, i);
		}
	spin_unlock_irqrestore(&created_lock, flags);
}

/* The GPU mask of pair @g0, @g1 (as p2pGetCapsStatus gets it), 0 if unknown. */
static u32 pair_mask(struct OBJGPU *g0, struct OBJGPU *g1)
{
	u32 i0 = p2ps_gpu_instance(g0), i1 = p2ps_gpu_instance(g1);

	return i0 < NV_MAX_DEVICES && i1 < NV_MAX_DEVICES ? BIT(i0) | BIT(i1) : 0;
}

/*
 * This thread's note, taken, if it is of the pair the caps query being
 * answered is about (recent ones only: UVM asks right away).  Before 580
 * RM's UVM caps carry nothing of the pair; the query's own
 * p2pGetCapsStatus, on this thread, named its GPUs (gpus.c): a note of
 * another pair (this thread made one, then peers a pair not made through
 * us) is dropped, not handed to it.  @need_mask: the caller cannot tell
 * the pair by RM's BAR1 bases (before 580).
 */
static bool take_created(struct OBJGPU **g0, struct OBJGPU **g1, bool need_mask)
{
	u32 asked = p2ps_gpus_take_asked();
	unsigned long flags;
	bool found = false;
	struct created *c;
	int i;

	p2ps_lock(&created_lock, flags);
	i = p2ps_scope_find(&creators);
	if (i >= 0) {
		c = &created[i];
		found = time_before(jiffies, c->when + 10 * HZ);
		*g0 = c->g0;
		*g1 = c->g1;
		memset(c, 0, sizeof(*c));
		p2ps_scope_release(&creators, i);
	}
	spin_unlock_irqrestore(&created_lock, flags);
	return found && (!need_mask || (asked && asked == pair_mask(*g0, *g1)));
}

/* Tags whose pair the ledger no longer has; tags_lock held. */
static void drop_stale_tags(void)
{
	unsigned int i;
	u64 base;

	for (i = 0; i < NR_TAGS; i++)
		if (tags[i].used && !p2ps_ledger_bar1_base(tags[i].mapper, tags[i].owner, &base))
			memset(&tags[i], 0, sizeof(tags[i]));
}

/* The tag of direction @mapper -> @owner (the same one again), or 0. */
static u32 tag_for(struct OBJGPU *mapper, struct OBJGPU *owner, u64 base)
{
	struct peer_tag *t = NULL;
	unsigned long flags;
	unsigned int i, pass;

	p2ps_lock(&tags_lock, flags);
	for (pass = 0; pass < 2 && !t; pass++) {
		for (i = 0; i < NR_TAGS && !t; i++)
			if (tags[i].used && tags[i].mapper == mapper && tags[i].owner == owner)
				t = &tags[i];
		for (i = 0; i < NR_TAGS && !t; i++)
			if (!tags[tag_slot(i)].used)
				t = &tags[tag_slot(i)];
		if (!t)
			drop_stale_tags();
	}
	if (t) {
		t->mapper = mapper;
		t->owner = owner;
		WRITE_ONCE(t->base, base);
		/* The hooks read used, then base: see lookup_tag(). */
		smp_store_release(&t->used, true);
	}
	spin_unlock_irqrestore(&tags_lock, flags);
	return t ? TAG_FIRST + (u32)(t - tags) : 0;
}

/* Probe handlers: is @aperture a tag of ours, and at which base? */
static bool lookup_tag(u32 aperture, u64 *base)
{
	struct peer_tag *t;

	if (aperture < TAG_FIRST || aperture > TAG_LAST)
		return false;
	t = &tags[aperture - TAG_FIRST];
	if (!smp_load_acquire(&t->used))
		return false;
	*base = READ_ONCE(t->base);
	return true;
}

/* nvUvmInterfaceGetP2PCaps(device1, device2, UvmGpuP2PCapsParams *) */
struct caps_call {
	struct uvm_caps *params;
};
static_assert(sizeof(struct caps_call) <= P2PS_RET_DATA_SIZE);

static void p2ps_uvm_caps_entry(void *data, struct pt_regs *regs)
{
	struct caps_call *c = data;

	c->params = (struct uvm_caps *)regs_get_kernel_argument(regs, 2);
}

static const char *p2ps_uvm_caps_return(void *data, struct pt_regs *regs)
{
	struct caps_call *c = data;
	struct OBJGPU *g0, *g1;
	struct uvm_caps caps;
	size_t len = READ_ONCE(uset.bar1_dma) ? CAPS_580_SIZE : CAPS_HEAD_SIZE;
	u64 base01, base10;
	u32 t0, t1;

	if (!READ_ONCE(tagging) || (u32)regs_return_value(regs) != NV_OK || !c->params)
		return NULL;
	memset(&caps, 0, sizeof(caps));
	if (copy_from_kernel_nofault(&caps, c->params, len))
		return NULL;
	if (caps.p2p_link != UVM_LINK_TYPE_PCIE || caps.peer_ids[0] != BUS_INVALID_PEER ||
	    caps.peer_ids[1] != BUS_INVALID_PEER)
		return NULL;		/* a mailbox or NVLink pair: real peer ids */
	/*
	 * Where RM's caps carry both BAR1 bases (580), they identify the pair
	 * below; the thread's GPU mask is needed only where they do not.  It
	 * is unknown for a GPU attached before arming (nvidia-uvm loaded
	 * first), which the bases still identify.
	 */
	if (!take_created(&g0, &g1, len != CAPS_580_SIZE || !caps.bar1_dma_size[0] ||
			  !caps.bar1_dma_size[1]))
		return NULL;		/* not a pair this thread just made through us */
	if (!p2ps_ledger_bar1_base(g0, g1, &base01) || !p2ps_ledger_bar1_base(g1, g0, &base10))
		return NULL;
	if (len == CAPS_580_SIZE && caps.bar1_dma_size[0] && caps.bar1_dma_size[1] &&
	    (caps.bar1_dma_address[0] != base01 || caps.bar1_dma_address[1] != base10)) {
		pr_warn_ratelimited("UVM caps of GPU%u-GPU%u: RM's BAR1 bases 0x%llx/0x%llx are not the ledger's 0x%llx/0x%llx: left untagged (stock PTEs)\n",
				    p2ps_gpu_instance(g0), p2ps_gpu_instance(g1),
				    caps.bar1_dma_address[0], caps.bar1_dma_address[1],
				    base01, base10);
		return NULL;
	}
	t0 = tag_for(g0, g1, base01);
	t1 = tag_for(g1, g0, base10);
	if (!t0 || !t1) {
		pr_warn_ratelimited("UVM caps of GPU%u-GPU%u: no free peer tag: left untagged (stock PTEs)\n",
				    p2ps_gpu_instance(g0), p2ps_gpu_instance(g1));
		return NULL;
	}
	WRITE_ONCE(c->params->peer_ids[0], t0);
	WRITE_ONCE(c->params->peer_ids[1], t1);
	/* A native pair's tags must not outlive the hooks either. */
	p2ps_ledger_native_hold(g0, g1);
	pr_info("nvidia-uvm peers GPU%u-GPU%u (BAR1): peer ids 0x%x (base 0x%llx), 0x%x (base 0x%llx)\n",
		p2ps_gpu_instance(g0), p2ps_gpu_instance(g1), t0, base01, t1, base10);
	return NULL;
}

/*
 * 590+: a BAR1 pair is PCIE_BAR1 with RM's DMA bases, and nvidia-uvm picks
 * SYS where bar1PcieAtomics says the owner takes PCIe atomics, else
 * SYS_NON_COHERENT, which make_pte_turing and Ampere's ce_aperture encode
 * as VIDEO / PEERMEM.  The flag selects nothing else (uvm_gpu.c
 * parent_gpu_peer_aperture is its only reader), and a PCIE_BAR1 link gets
 * no native atomics (below NVLINK_1), so PTEs keep ATOMIC_DISABLE.
 */
static const char *p2ps_uvm_atomics_return(void *data, struct pt_regs *regs)
{
	struct caps_call *c = data;
	struct OBJGPU *g0, *g1;
	struct uvm_caps caps;
	u64 base01, base10;

	if (!READ_ONCE(tagging) || (u32)regs_return_value(regs) != NV_OK || !c->params)
		return NULL;
	if (copy_from_kernel_nofault(&caps, c->params, sizeof(caps)))
		return NULL;
	if (caps.p2p_link != UVM_LINK_TYPE_PCIE_BAR1 ||
	    (caps.bar1_pcie_atomics[0] && caps.bar1_pcie_atomics[1]))
		return NULL;
	if (!take_created(&g0, &g1, false))	/* the bases below name the pair */
		return NULL;
	if (!p2ps_ledger_bar1_base(g0, g1, &base01) || !p2ps_ledger_bar1_base(g1, g0, &base10) ||
	    caps.bar1_dma_address[0] != base01 || caps.bar1_dma_address[1] != base10)
		return NULL;		/* not the pair we made, or not in this order */
	WRITE_ONCE(c->params->bar1_pcie_atomics[0], 1);
	WRITE_ONCE(c->params->bar1_pcie_atomics[1], 1);
	pr_info("nvidia-uvm peers GPU%u-GPU%u (BAR1): coherent system aperture (SYS) at 0x%llx, 0x%llx\n",
		p2ps_gpu_instance(g0), p2ps_gpu_instance(g1), base01, base10);
	return NULL;
}

/*
 * uvm_gpu_peer_phys_address / uvm_pmm_gpu_peer_phys_address return a
 * uvm_gpu_phys_address_t { NvU64 address; uvm_aperture_t aperture; }: 16
 * bytes, in rax and rdx.
 */
static const char *p2ps_uvm_address_return(void *data, struct pt_regs *regs)
{
	u64 base;

	if (!lookup_tag((u32)regs->dx, &base))
		return NULL;
	regs->dx = UVM_APERTURE_SYS;
	regs->ax += base;
	return NULL;
}

/*
 * uvm_pmm_gpu_peer_copy_address returns a uvm_gpu_address_t { NvU64
 * address; uvm_aperture_t aperture; bool is_virtual; bool is_unprotected; }:
 * 16 bytes, address in rax, aperture in edx, is_virtual in bits 39:32 of
 * rdx.  Only a physical address carries an aperture.
 */
static const char *p2ps_uvm_copy_return(void *data, struct pt_regs *regs)
{
	u64 base;

	if ((regs->dx >> 32) & 0xff)
		return NULL;		/* virtual: the identity mapping's PTEs are hook 3's */
	if (!lookup_tag((u32)regs->dx, &base))
		return NULL;
	regs->dx = (regs->dx & ~0xffffffffUL) | UVM_APERTURE_SYS;
	regs->ax += base;
	return NULL;
}

/* make_pte_*(uvm_aperture_t aperture, NvU64 address, uvm_prot_t, NvU64 flags) */
static void p2ps_uvm_pte(struct pt_regs *regs)
{
	u64 base;

	if (!lookup_tag((u32)regs->di, &base))
		return;
	regs->di = UVM_APERTURE_SYS;
	regs->si += base;
}

/*
 * The object's callbacks: lifecycle.c arms and disarms nvidia-uvm's object
 * (the set's hooks, all or none) as it does nvidia's, and tells us around
 * it.  The caps hook tags only while every hook is installed.
 */
static int peer_pre_arm(const struct p2ps_arming *a, struct p2ps_arm_error *err)
{
	WRITE_ONCE(uset.set, a->obj);
	WRITE_ONCE(uset.bar1_dma, !strncmp(a->nv->version, "580.", 4));
	reset_tags();
	return 0;
}

static void peer_post_arm(const struct p2ps_arming *a)
{
	WRITE_ONCE(tagging, !a->dry_run);
	pr_info("UVM peer set %s %s for nvidia-uvm: its peer mappings of BAR1 pairs use the BAR1 DMA base\n",
		a->obj->name, a->dry_run ? "counting (dry run)" : "armed");
}

static void peer_arm_failed(const struct p2ps_arming *a, const struct p2ps_arm_error *err, int ret)
{
	pr_warn("UVM peer set %s NOT armed: %s%s%s (error %d): nvidia-uvm's own peer mappings of BAR1 pairs (managed memory, cudaMallocManaged) stay wrong; device memory P2P is not affected\n",
		a->obj->name, err->target, err->target[0] ? ": " : "", err->reason, ret);
}

static void peer_pre_disarm(const struct p2ps_object *obj)
{
	WRITE_ONCE(tagging, false);
}

static void peer_post_disarm(const struct p2ps_object *obj)
{
	reset_tags();
}

static void peer_left(const struct p2ps_object *obj)
{
	pr_info("nvidia-uvm left: UVM peer set %s removed, waiting for it to return\n", obj->name);
}

static const struct p2ps_object_cb uvm_peer_object_cb = {
	.pre_arm = peer_pre_arm,
	.post_arm = peer_post_arm,
	.arm_failed = peer_arm_failed,
	.pre_disarm = peer_pre_disarm,
	.post_disarm = peer_post_disarm,
	.left = peer_left,
};

static const struct p2ps_hook_ops uvm_peer_caps_ops = {
	.entry = p2ps_uvm_caps_entry, .ret = p2ps_uvm_caps_return,
};
static const struct p2ps_hook_ops uvm_peer_atomics_ops = {
	.entry = p2ps_uvm_caps_entry, .ret = p2ps_uvm_atomics_return,
};
static const struct p2ps_hook_ops uvm_peer_address_ops = { .ret = p2ps_uvm_address_return };
static const struct p2ps_hook_ops uvm_peer_copy_ops = { .ret = p2ps_uvm_copy_return };
static const struct p2ps_hook_ops uvm_peer_pte_ops = { .arg = p2ps_uvm_pte };

/* The profile's actions whose hooks are this file's (policy.c: p2ps_policies_ops()). */
static const struct p2ps_action_ops uvm_peer_actions[] = {
	{ P2PS_ACT_UVM_PEER_CAPS, &uvm_peer_caps_ops },
	{ P2PS_ACT_UVM_PEER_ATOMICS, &uvm_peer_atomics_ops },
	{ P2PS_ACT_UVM_PEER_ADDRESS, &uvm_peer_address_ops },
	{ P2PS_ACT_UVM_PEER_COPY, &uvm_peer_copy_ops },
	{ P2PS_ACT_UVM_PEER_PTE, &uvm_peer_pte_ops },
	{ P2PS_ACT_NONE, NULL },
};

/* A BAR1 pair was created (ledger.c): note it for this thread's caps query. */
static void peer_pair_created(struct OBJGPU *g0, struct OBJGPU *g1, bool native)
{
	if (native)
		peer_created_native(g0, g1);
	else
		peer_created(g0, g1);
}

const struct p2ps_policy p2ps_uvm_peer_policy = {
	.name = "UVM peer set",
	.actions = uvm_peer_actions,
	.object = "nvidia_uvm",
	.object_cb = &uvm_peer_object_cb,
	.forget_gpu = peer_forget_gpu,
	.pair_created = peer_pair_created,
};
