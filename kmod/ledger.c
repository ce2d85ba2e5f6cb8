// SPDX-License-Identifier: GPL-2.0
/*
 * The ledger: BAR1 peer mappings that exist because of our hooks.
 *
 * While any is live, tearing the hooks down would let the driver release
 * it through a stub that does nothing, leaking IOMMU and BAR1 mappings
 * ("left-over mappings" at unload).  So disable is refused, and the module
 * holds a reference on itself so that rmmod is refused too.
 *
 * Entries are added and removed from the driver's P2P paths, which may hold
 * the driver's spinlocks: a spinlock and atomic allocations here.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/list.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include <p2p-shim/uapi.h>

#include "driver.h"
#include "faults.h"
#include "hook.h"
#include "gpus.h"
#include "ledger.h"
#include "events.h"
#include "nmi.h"
#include "nv.h"
#include "policy.h"

struct ledger_entry {
	struct list_head node;
	enum p2ps_conn_type conn;
	struct OBJGPU *gpu0, *gpu1;
	void *key;			/* BAR1_WINDOW: the driver's mapping info */
	u64 base10;			/* PCIE_BAR1: GPU0's BAR1 as GPU1 reaches it */
	struct p2ps_mapping_event ev;	/* what status and events report */
	bool held;			/* native pair with live nvidia-uvm peer tags */
};

static LIST_HEAD(entries);
/*
 * BAR1 pairs the driver made with its own _GH100 slots while one of their
 * GPUs carried our ForceP2P (gen A's UVM fix needs their BAR1 bases).  No
 * hook of ours is needed to tear them down, so they hold nothing: no
 * module reference, no refusal, not in status.  Forgotten at each arming
 * and disarming (their teardown is no longer seen then).
 */
static LIST_HEAD(native);
static DEFINE_SPINLOCK(ledger_lock);
static unsigned int live;		/* references held by the driver */

/*
 * References the driver holds that we could not make an entry for (an
 * atomic allocation failed): counted per GPU pair in a fixed table, so
 * that a GPU's detach forgets them with the rest of what is keyed by its
 * OBJGPU.  Should even the table be full, they are counted in @unplaced,
 * which only nvidia's exit clears (disable and rmmod stay refused: safe).
 */
#define NR_UNRECORDED 16
static struct {
	struct OBJGPU *g0, *g1;
	unsigned int count;
} unrecorded[NR_UNRECORDED];
static unsigned int unplaced;

/* With ledger_lock held. */
static void unrecorded_add(struct OBJGPU *g0, struct OBJGPU *g1)
{
	int i, free = -1;

	for (i = 0; i < NR_UNRECORDED; i++) {
		if (unrecorded[i].count && unrecorded[i].g0 == g0 && unrecorded[i].g1 == g1) {
			unrecorded[i].count++;
			return;
		}
		if (!unrecorded[i].count && free < 0)
			free = i;
	}
	if (free < 0) {
		unplaced++;
		return;
	}
	unrecorded[free].g0 = g0;
	unrecorded[free].g1 = g1;
	unrecorded[free].count = 1;
}

/* With ledger_lock held: one unrecorded reference of (@g0, @g1) goes; false if none. */
static bool unrecorded_take(struct OBJGPU *g0, struct OBJGPU *g1)
{
	int i;

	for (i = 0; i < NR_UNRECORDED; i++)
		if (unrecorded[i].count &&
		    ((unrecorded[i].g0 == g0 && unrecorded[i].g1 == g1) ||
		     (unrecorded[i].g0 == g1 && unrecorded[i].g1 == g0))) {
			unrecorded[i].count--;
			return true;
		}
	return false;
}

/* With ledger_lock held: those of @gpu go; how many. */
static unsigned int unrecorded_forget(struct OBJGPU *gpu)
{
	unsigned int n = 0;
	int i;

	for (i = 0; i < NR_UNRECORDED; i++)
		if (unrecorded[i].count && (unrecorded[i].g0 == gpu || unrecorded[i].g1 == gpu)) {
			n += unrecorded[i].count;
			unrecorded[i].count = 0;
		}
	return n;
}

static unsigned int unrecorded_total(void)
{
	unsigned int n = unplaced;
	int i;

	for (i = 0; i < NR_UNRECORDED; i++)
		n += unrecorded[i].count;
	return n;
}

/* Called with ledger_lock held: the module is held while anything is live. */
static void account(int delta)
{
	unsigned int was = live;

	live += delta;
	if (!was && live)
		__module_get(THIS_MODULE);
	else if (was && !live)
		module_put(THIS_MODULE);
}

static struct ledger_entry *find_pair_in(struct list_head *list, struct OBJGPU *g0,
					 struct OBJGPU *g1)
{
	struct ledger_entry *e;

	list_for_each_entry(e, list, node)
		if (e->conn == P2PS_CONN_PCIE_BAR1 &&
		    ((e->gpu0 == g0 && e->gpu1 == g1) || (e->gpu0 == g1 && e->gpu1 == g0)))
			return e;
	return NULL;
}

static struct ledger_entry *find_pair(struct OBJGPU *g0, struct OBJGPU *g1)
{
	return find_pair_in(&entries, g0, g1);
}

/* A keyed entry: a BAR1 window (by mapping info), a GPU's static BAR1 (by GPU). */
static struct ledger_entry *find_keyed(enum p2ps_conn_type conn, void *key)
{
	struct ledger_entry *e;

	list_for_each_entry(e, &entries, node)
		if (e->conn == conn && e->key == key)
			return e;
	return NULL;
}

static struct ledger_entry *new_entry(enum p2ps_conn_type conn, struct OBJGPU *g0,
				      struct OBJGPU *g1)
{
	struct ledger_entry *e;

	if (p2ps_fault(P2PS_FAULT_LEDGER_NOMEM, 0))
		return NULL;
	e = kzalloc(sizeof(*e), GFP_ATOMIC);
	if (!e)
		return NULL;
	e->conn = conn;
	e->gpu0 = g0;
	e->gpu1 = g1;
	e->ev.conn = conn;
	e->ev.gpu0 = p2ps_gpu_instance(g0);
	e->ev.gpu1 = p2ps_gpu_instance(g1);
	return e;
}

/* The driver's own BAR1 DMA info (kbusGetBar1P2PDmaInfo_GH100), bound at arming. */
static NV_STATUS (*dma_info)(struct OBJGPU *src, struct OBJGPU *peer,
			     struct KernelBus *peer_bus, NvU64 *addr, NvU64 *size);

/* Where @peer's static BAR1 appears to @src; U64_MAX if unknown. */
static u64 bar1_base(struct OBJGPU *src, struct OBJGPU *peer, struct KernelBus *peer_bus,
		     u64 *size)
{
	NvU64 base, sz;

	if (!dma_info || dma_info(src, peer, peer_bus, &base, &sz) != NV_OK || !sz)
		return U64_MAX;
	if (size)
		*size = sz;
	return base;
}

/* A BAR1 pair's entry with both directions' BAR1 DMA bases; NULL if out of memory. */
static struct ledger_entry *new_pair_entry(struct OBJGPU *g0, struct KernelBus *b0,
					   struct OBJGPU *g1, struct KernelBus *b1)
{
	struct ledger_entry *e = new_entry(P2PS_CONN_PCIE_BAR1, g0, g1);
	u64 size = 0;

	if (!e)
		return NULL;
	e->ev.dma_base = bar1_base(g0, g1, b1, &size);
	e->ev.dma_size = size;
	e->base10 = bar1_base(g1, g0, b0, NULL);
	return e;
}

void p2ps_ledger_pair_get(struct OBJGPU *g0, struct KernelBus *b0,
			  struct OBJGPU *g1, struct KernelBus *b1)
{
	/* Made before taking the lock: its BAR1 bases call into the driver. */
	struct ledger_entry *e, *fresh = new_pair_entry(g0, b0, g1, b1);
	struct p2ps_mapping_event ev = { .conn = P2PS_CONN_PCIE_BAR1 };
	unsigned long flags;
	p2ps_lock(&ledger_lock, flags);
	e = find_pair(g0, g1);
	if (!e && fresh) {
		e = fresh;
		fresh = NULL;
		list_add_tail(&e->node, &entries);
	}
	if (e) {
		e->ev.count++;
		ev = e->ev;
	} else {
		unrecorded_add(g0, g1);
	}
	account(+1);
	spin_unlock_irqrestore(&ledger_lock, flags);
	kfree(fresh);
	p2ps_emit_mapping(P2PS_EV_MAPPING_CREATED, &ev);
	/* nvidia-uvm asks the pair's caps right after creating it (uvm_peer.c). */
	p2ps_policies_pair_created(g0, g1, false);
}

void p2ps_ledger_pair_put(struct OBJGPU *g0, struct OBJGPU *g1)
{
	struct p2ps_mapping_event ev = { .conn = P2PS_CONN_PCIE_BAR1 };
	struct ledger_entry *e, *gone = NULL;
	unsigned long flags;

	p2ps_lock(&ledger_lock, flags);
	e = find_pair(g0, g1);
	if (e) {
		ev = e->ev;
		ev.count = --e->ev.count;
		if (!e->ev.count) {
			list_del(&e->node);
			gone = e;
		}
		account(-1);
	} else if (unrecorded_take(g0, g1)) {
		account(-1);
	}
	spin_unlock_irqrestore(&ledger_lock, flags);
	kfree(gone);
	if (e)
		p2ps_emit_mapping(P2PS_EV_MAPPING_REMOVED, &ev);
}

/* The driver created a BAR1 pair natively (one more reference on it). */
void p2ps_ledger_native_get(struct OBJGPU *g0, struct KernelBus *b0,
			    struct OBJGPU *g1, struct KernelBus *b1)
{
	struct ledger_entry *e, *fresh = new_pair_entry(g0, b0, g1, b1);
	unsigned long flags;
	p2ps_lock(&ledger_lock, flags);
	e = find_pair_in(&native, g0, g1);
	if (!e && fresh) {
		e = fresh;
		fresh = NULL;
		list_add_tail(&e->node, &native);
	}
	if (e)
		e->ev.count++;
	spin_unlock_irqrestore(&ledger_lock, flags);
	kfree(fresh);
	p2ps_policies_pair_created(g0, g1, true);
}

void p2ps_ledger_native_put(struct OBJGPU *g0, struct OBJGPU *g1)
{
	struct ledger_entry *e, *gone = NULL;
	unsigned long flags;

	p2ps_lock(&ledger_lock, flags);
	e = find_pair_in(&native, g0, g1);
	if (e && !--e->ev.count) {
		list_del(&e->node);
		if (e->held)
			account(-1);
		gone = e;
	}
	spin_unlock_irqrestore(&ledger_lock, flags);
	kfree(gone);
}

/*
 * nvidia-uvm now carries tags for the native pair @g0, @g1 that only our
 * hooks turn into addresses: it holds the module (no disable, no rmmod)
 * until the driver tears the pair down, as a pair of ours does.
 */
void p2ps_ledger_native_hold(struct OBJGPU *g0, struct OBJGPU *g1)
{
	struct ledger_entry *e;
	unsigned long flags;

	p2ps_lock(&ledger_lock, flags);
	e = find_pair_in(&native, g0, g1);
	if (e && !e->held) {
		e->held = true;
		account(+1);
	}
	spin_unlock_irqrestore(&ledger_lock, flags);
}

/*
 * @gpu detaches (gpumgrDetachGpu, after the last close): every mapping of
 * its clients has been torn down by then, through our hooks or not (a
 * teardown path we do not see).  What the ledger still holds for it is
 * stale, and keyed by a pointer the next OBJGPU may reuse: a new pair at
 * that address would inherit this one's BAR1 DMA base.  Forget it all.
 * Called from a probe handler.
 */
static void ledger_forget_gpu(struct OBJGPU *gpu)
{
	struct ledger_entry *e, *tmp;
	unsigned long flags;
	unsigned int lost;
	LIST_HEAD(gone);

	if (!gpu)
		return;
	p2ps_lock(&ledger_lock, flags);
	lost = unrecorded_forget(gpu);
	account(-(int)lost);
	list_for_each_entry_safe(e, tmp, &entries, node) {
		if (e->gpu0 != gpu && e->gpu1 != gpu)
			continue;
		/* One reference per count (keyed entries: 1). */
		account(-(int)e->ev.count);
		list_move(&e->node, &gone);
	}
	list_for_each_entry_safe(e, tmp, &native, node) {
		if (e->gpu0 != gpu && e->gpu1 != gpu)
			continue;
		if (e->held)
			account(-1);
		list_move(&e->node, &gone);
	}
	spin_unlock_irqrestore(&ledger_lock, flags);
	if (lost)
		pr_warn_ratelimited("a GPU detached while the ledger held %u unrecorded references of it: forgotten\n",
				    lost);
	list_for_each_entry_safe(e, tmp, &gone, node) {
		pr_warn_ratelimited("GPU %u detached while the ledger held a mapping of it (torn down unseen): forgotten\n",
				    e->ev.gpu0);
		e->ev.count = 0;
		p2ps_emit_mapping(P2PS_EV_MAPPING_REMOVED, &e->ev);
		kfree(e);
	}
}

void p2ps_ledger_native_reset(void)
{
	struct ledger_entry *e, *tmp;
	unsigned long flags;
	LIST_HEAD(gone);

	p2ps_lock(&ledger_lock, flags);
	list_for_each_entry(e, &native, node)
		if (e->held)
			account(-1);
	list_splice_init(&native, &gone);
	spin_unlock_irqrestore(&ledger_lock, flags);
	list_for_each_entry_safe(e, tmp, &gone, node)
		kfree(e);
}

/* Record one keyed entry; the driver holds one reference on it. */
static void keyed_get(enum p2ps_conn_type conn, void *key, struct OBJGPU *g0,
		      struct OBJGPU *g1)
{
	struct ledger_entry *e = new_entry(conn, g0, g1);
	struct p2ps_mapping_event ev = { .conn = conn };
	unsigned long flags;

	p2ps_lock(&ledger_lock, flags);
	if (e) {
		e->key = key;
		e->ev.count = 1;
		list_add_tail(&e->node, &entries);
		ev = e->ev;
	} else {
		unrecorded_add(g0, g1);
	}
	account(+1);
	spin_unlock_irqrestore(&ledger_lock, flags);
	p2ps_emit_mapping(P2PS_EV_MAPPING_CREATED, &ev);
}

/*
 * Drop a keyed entry.  @ours: every such put is for an entry of ours, so
 * one not found is one we could not record; otherwise (BAR1 windows, whose
 * free sees every mapping) a put without an entry is not ours.
 */
static void keyed_put(enum p2ps_conn_type conn, void *key, bool ours)
{
	struct p2ps_mapping_event ev;
	struct ledger_entry *e;
	unsigned long flags;

	p2ps_lock(&ledger_lock, flags);
	e = find_keyed(conn, key);
	if (e) {
		list_del(&e->node);
		account(-1);
	} else if (ours && unrecorded_take(key, key)) {
		account(-1);	/* a GPU's static BAR1: keyed by the GPU */
	}
	spin_unlock_irqrestore(&ledger_lock, flags);
	if (!e)
		return;
	ev = e->ev;
	ev.count = 0;
	kfree(e);
	p2ps_emit_mapping(P2PS_EV_MAPPING_REMOVED, &ev);
}

void p2ps_ledger_dma_get(struct CLI_DMA_MAPPING_INFO *info, struct OBJGPU *gpu,
			 struct OBJGPU *peer)
{
	keyed_get(P2PS_CONN_BAR1_WINDOW, info, gpu, peer);
}

/* Every mapping goes through here; only ours are in the ledger. */
void p2ps_ledger_dma_put(struct CLI_DMA_MAPPING_INFO *info)
{
	keyed_put(P2PS_CONN_BAR1_WINDOW, info, false);
}

/*
 * Gen 0: a GPU's static BAR1, set up through our hooks.  While it exists,
 * removing the hooks would leave the driver with static BAR1 on a chip
 * whose other static-BAR1 code is a stub (every BAR1 mapping of its video
 * memory would fail), and unable to tear it down.
 */
void p2ps_ledger_static_get(struct OBJGPU *gpu)
{
	keyed_get(P2PS_CONN_STATIC_BAR1, gpu, gpu, gpu);
}

/* Whether @gpu's static BAR1 came from our hooks (and is still there). */
bool p2ps_ledger_has_static(struct OBJGPU *gpu)
{
	unsigned long flags;
	bool found;

	p2ps_lock(&ledger_lock, flags);
	found = find_keyed(P2PS_CONN_STATIC_BAR1, gpu);
	spin_unlock_irqrestore(&ledger_lock, flags);
	return found;
}

void p2ps_ledger_static_put(struct OBJGPU *gpu)
{
	keyed_put(P2PS_CONN_STATIC_BAR1, gpu, true);
}

/*
 * The BAR1 DMA base at which @mapper reaches @owner's VRAM, if they are a
 * pair (made through the wrappers or natively).
 */
bool p2ps_ledger_bar1_base(struct OBJGPU *mapper, struct OBJGPU *owner, u64 *base)
{
	struct ledger_entry *e;
	unsigned long flags;

	p2ps_lock(&ledger_lock, flags);
	e = find_pair(mapper, owner) ?: find_pair_in(&native, mapper, owner);
	if (e)
		*base = e->gpu0 == mapper ? e->ev.dma_base : e->base10;
	spin_unlock_irqrestore(&ledger_lock, flags);
	return e && *base != U64_MAX;
}

unsigned int p2ps_ledger_live(void)
{
	unsigned long flags;
	unsigned int n;

	p2ps_lock(&ledger_lock, flags);
	n = live;
	spin_unlock_irqrestore(&ledger_lock, flags);
	return n;
}

/* "GPU0-GPU1 (2), GPU0->GPU1 window (1)": for refusal messages. */
/* "GPU3", or "GPU?" for one that attached before arming (instance unknown). */
static size_t gpu_name(char *buf, size_t len, u32 instance)
{
	return instance < NV_MAX_DEVICES ? scnprintf(buf, len, "GPU%u", instance) :
					   scnprintf(buf, len, "GPU?");
}

void p2ps_ledger_describe(char *buf, size_t len)
{
	struct ledger_entry *e;
	unsigned long flags;
	size_t n = 0;

	buf[0] = '\0';
	p2ps_lock(&ledger_lock, flags);
	list_for_each_entry(e, &entries, node) {
		if (n >= len)
			break;
		n += scnprintf(buf + n, len - n, "%s", n ? ", " : "");
		n += gpu_name(buf + n, len - n, e->ev.gpu0);
		if (e->conn == P2PS_CONN_STATIC_BAR1) {
			n += scnprintf(buf + n, len - n, " static BAR1");
			continue;
		}
		n += scnprintf(buf + n, len - n, "%s", e->conn == P2PS_CONN_PCIE_BAR1 ? "-" : "->");
		n += gpu_name(buf + n, len - n, e->ev.gpu1);
		n += scnprintf(buf + n, len - n, " %s(%u)",
			       e->conn == P2PS_CONN_PCIE_BAR1 ? "" : "window ", e->ev.count);
	}
	/* The driver's own BAR1 pairs whose nvidia-uvm peer tags hold us. */
	list_for_each_entry(e, &native, node) {
		if (!e->held || n >= len)
			continue;
		n += scnprintf(buf + n, len - n, "%s", n ? ", " : "");
		n += gpu_name(buf + n, len - n, e->ev.gpu0);
		n += scnprintf(buf + n, len - n, "-");
		n += gpu_name(buf + n, len - n, e->ev.gpu1);
		n += scnprintf(buf + n, len - n, " (the driver's own pair; nvidia-uvm holds its peer tags)");
	}
	if (unrecorded_total() && n < len)
		scnprintf(buf + n, len - n, "%s%u unrecorded", n ? ", " : "", unrecorded_total());
	spin_unlock_irqrestore(&ledger_lock, flags);
}

bool p2ps_ledger_entry(unsigned int index, struct p2ps_mapping_event *m)
{
	struct ledger_entry *e;
	unsigned long flags;
	bool found = false;

	p2ps_lock(&ledger_lock, flags);
	list_for_each_entry(e, &entries, node)
		if (!index--) {
			*m = e->ev;
			found = true;
			break;
		}
	spin_unlock_irqrestore(&ledger_lock, flags);
	return found;
}

/*
 * nvidia has gone: whatever it still held died with it.  Forget it all and
 * let the module be unloaded again.
 */
void p2ps_ledger_drop_all(void)
{
	struct ledger_entry *e, *tmp;
	unsigned long flags;
	LIST_HEAD(gone);

	p2ps_lock(&ledger_lock, flags);
	list_splice_init(&entries, &gone);
	if (live)
		module_put(THIS_MODULE);
	live = 0;
	memset(unrecorded, 0, sizeof(unrecorded));
	unplaced = 0;
	spin_unlock_irqrestore(&ledger_lock, flags);
	list_for_each_entry_safe(e, tmp, &gone, node)
		kfree(e);
	p2ps_ledger_native_reset();
}

/* At arming: the driver's function for the BAR1 DMA bases. */
static int ledger_bind(struct module *mod, const struct p2ps_profile *profile,
		       struct p2ps_hook *hooks, unsigned int n, struct p2ps_arm_error *err)
{
	dma_info = (void *)p2ps_driver_lookup(mod, "kbusGetBar1P2PDmaInfo_GH100");
	if (!dma_info) {
		p2ps_fail(err, "", "profile does not provide every function the wrappers need");
		return -ENOENT;
	}
	return 0;
}

/* A disable is refused while the driver holds mappings made through the hooks. */
static bool ledger_busy(char *why, size_t len)
{
	char pairs[P2PS_REASON_LEN];

	if (!p2ps_ledger_live())
		return false;
	p2ps_ledger_describe(pairs, sizeof(pairs));
	snprintf(why, len, "live BAR1 peer mappings: %s", pairs);
	return true;
}

const struct p2ps_policy p2ps_ledger_policy = {
	.name = "ledger",
	.bind = ledger_bind,
	.busy = ledger_busy,
	.forget_gpu = ledger_forget_gpu,
};
