// SPDX-License-Identifier: GPL-2.0
/*
 * The p2p_shim generic netlink family: status dumps anyone may read, and
 * the "events" multicast group.  Requests carry no attributes; the core
 * rejects any that are sent (no policy, new-style family).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <net/genetlink.h>

#include <p2p-shim/uapi.h>

#include "gpus.h"
#include "hook.h"
#include "ledger.h"
#include "lifecycle.h"
#include "netlink.h"
#include "nmi.h"
#include "nv.h"
#include "static_bar1.h"

static struct genl_family p2ps_family;

static int put_snapshot(struct sk_buff *skb, const struct p2ps_status_snapshot *snap)
{
	if (nla_put_u32(skb, P2PS_A_STATE, snap->state) ||
	    nla_put_u32(skb, P2PS_A_FLAGS, snap->flags) ||
	    nla_put_string(skb, P2PS_A_DRIVER_VERSION, snap->driver_version) ||
	    nla_put_string(skb, P2PS_A_PROFILE, snap->profile) ||
	    nla_put_u32(skb, P2PS_A_STALE_GPUS, snap->stale_gpus))
		return -EMSGSIZE;
	return 0;
}

/* A GPU's instance; P2PS_MAP_GPU_UNKNOWN for one that attached before arming (ledger.c). */
static int put_instance(struct sk_buff *skb, int attr, u32 instance)
{
	return nla_put_u32(skb, attr, instance < NV_MAX_DEVICES ? instance : P2PS_MAP_GPU_UNKNOWN);
}

/*
 * Bus and DMA addresses go only to CAP_SYS_ADMIN (@addrs): dumps ask the
 * requester; events, which any listener of the group receives, never
 * carry them.
 */
static int put_mapping(struct sk_buff *skb, const struct p2ps_mapping_event *m, bool addrs)
{
	struct nlattr *nest = nla_nest_start(skb, P2PS_A_MAPPING);

	if (!nest ||
	    put_instance(skb, P2PS_MAP_A_GPU0, m->gpu0) ||
	    put_instance(skb, P2PS_MAP_A_GPU1, m->gpu1) ||
	    nla_put_u32(skb, P2PS_MAP_A_CONN_TYPE, m->conn) ||
	    nla_put_u32(skb, P2PS_MAP_A_COUNT, m->count) ||
	    nla_put_u64_64bit(skb, P2PS_MAP_A_DMA_SIZE, m->dma_size, P2PS_MAP_A_PAD) ||
	    (addrs && nla_put_u64_64bit(skb, P2PS_MAP_A_DMA_BASE, m->dma_base, P2PS_MAP_A_PAD)))
		return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

static int get_status(struct sk_buff *skb, struct genl_info *info)
{
	struct p2ps_status_snapshot snap;
	struct sk_buff *msg;
	void *hdr;
	u32 hooks;
	u64 hits;

	if (p2ps_snapshot(&snap, &hooks, &hits))
		return -EINTR;
	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &p2ps_family, 0, P2PS_CMD_GET_STATUS);
	if (!hdr ||
	    put_snapshot(msg, &snap) ||
	    nla_put_u32(msg, P2PS_A_LIVE_MAPPINGS, p2ps_ledger_live()) ||
	    nla_put_string(msg, P2PS_A_MODULE_VERSION, P2PS_MODULE_VERSION)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

struct dump_ctx {
	struct sk_buff *skb;
	struct netlink_callback *cb;
	unsigned int done;
};

static const char *hook_dest(const struct p2ps_hook *h)
{
	return h->desc->dest && h->kind != P2PS_HOOK_COUNT ? h->desc->dest : "";
}

static int put_hook(const struct p2ps_hook *h, void *arg)
{
	struct dump_ctx *ctx = arg;
	struct nlattr *nest;
	void *hdr;

	hdr = genlmsg_put(ctx->skb, NETLINK_CB(ctx->cb->skb).portid, ctx->cb->nlh->nlmsg_seq,
			  &p2ps_family, NLM_F_MULTI, P2PS_CMD_GET_HOOKS);
	if (!hdr)
		return -EMSGSIZE;
	nest = nla_nest_start(ctx->skb, P2PS_A_HOOK);
	if (!nest ||
	    nla_put_string(ctx->skb, P2PS_HOOK_A_TARGET, h->symbol) ||
	    nla_put_u32(ctx->skb, P2PS_HOOK_A_KIND, h->kind ?: h->desc->kind) ||
	    nla_put_u32(ctx->skb, P2PS_HOOK_A_STATE, h->state) ||
	    nla_put_u64_64bit(ctx->skb, P2PS_HOOK_A_HITS, atomic64_read(&h->hits),
			      P2PS_HOOK_A_PAD) ||
	    nla_put_string(ctx->skb, P2PS_HOOK_A_LAST_ERROR, h->last_error) ||
	    nla_put_string(ctx->skb, P2PS_HOOK_A_DEST, hook_dest(h))) {
		genlmsg_cancel(ctx->skb, hdr);
		return -EMSGSIZE;
	}
	nla_nest_end(ctx->skb, nest);
	genlmsg_end(ctx->skb, hdr);
	ctx->done++;
	return 0;
}

static int dump_hooks(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct dump_ctx ctx = { .skb = skb, .cb = cb };

	if (p2ps_for_each_hook(put_hook, &ctx, cb->args[0]) == -EINTR)
		return -EINTR;
	cb->args[0] += ctx.done;
	return skb->len;
}

static int dump_mappings(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct p2ps_mapping_event m;
	void *hdr;

	while (p2ps_ledger_entry(cb->args[0], &m)) {
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
				  &p2ps_family, NLM_F_MULTI, P2PS_CMD_GET_MAPPINGS);
		if (!hdr)
			break;
		if (put_mapping(skb, &m, netlink_capable(cb->skb, CAP_SYS_ADMIN))) {
			genlmsg_cancel(skb, hdr);
			break;
		}
		genlmsg_end(skb, hdr);
		cb->args[0]++;
	}
	return skb->len;
}

static int put_gpu(struct sk_buff *skb, const struct p2ps_gpu_report *r, bool addrs)
{
	struct nlattr *nest = nla_nest_start(skb, P2PS_A_GPU);

	if (!nest ||
	    nla_put_u32(skb, P2PS_GPU_A_INSTANCE, r->instance) ||
	    nla_put_u32(skb, P2PS_GPU_A_STATIC_BAR1, r->state) ||
	    nla_put_u32(skb, P2PS_GPU_A_P2P_USABLE, r->p2p_usable) ||
	    nla_put_u32(skb, P2PS_GPU_A_FORCE_P2P, !!(p2ps_gpus_forced() & BIT(r->instance))) ||
	    (addrs && nla_put_u64_64bit(skb, P2PS_GPU_A_BAR1_ADDR, r->bar1_addr, P2PS_GPU_A_PAD)) ||
	    nla_put_u64_64bit(skb, P2PS_GPU_A_BAR1_SIZE, r->bar1_size, P2PS_GPU_A_PAD) ||
	    nla_put_u64_64bit(skb, P2PS_GPU_A_CONSOLE, r->console, P2PS_GPU_A_PAD) ||
	    nla_put_u64_64bit(skb, P2PS_GPU_A_MAILBOX, r->mailbox, P2PS_GPU_A_PAD) ||
	    nla_put_u64_64bit(skb, P2PS_GPU_A_CLIENT_FB, r->client_fb, P2PS_GPU_A_PAD) ||
	    nla_put_u64_64bit(skb, P2PS_GPU_A_OFFSET, r->offset, P2PS_GPU_A_PAD) ||
	    nla_put_string(skb, P2PS_GPU_A_REASON, r->reason))
		return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

/* One message per GPU seen attaching while armed; args[0]: the next instance. */
static int dump_gpus(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct p2ps_gpu_report r;
	void *hdr;

	for (; cb->args[0] < NV_MAX_DEVICES; cb->args[0]++) {
		if (!p2ps_sb1_report(cb->args[0], &r))
			continue;
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
				  &p2ps_family, NLM_F_MULTI, P2PS_CMD_GET_GPUS);
		if (!hdr)
			break;
		if (put_gpu(skb, &r, netlink_capable(cb->skb, CAP_SYS_ADMIN))) {
			genlmsg_cancel(skb, hdr);
			break;
		}
		genlmsg_end(skb, hdr);
	}
	return skb->len;
}

static const struct genl_small_ops p2ps_ops[] = {
	{ .cmd = P2PS_CMD_GET_STATUS, .doit = get_status },
	{ .cmd = P2PS_CMD_GET_HOOKS, .dumpit = dump_hooks },
	{ .cmd = P2PS_CMD_GET_MAPPINGS, .dumpit = dump_mappings },
	{ .cmd = P2PS_CMD_GET_GPUS, .dumpit = dump_gpus },
};

static const struct genl_multicast_group p2ps_mcgrps[] = {
	{ .name = P2PS_GENL_MCGRP_EVENTS },
};

/*
 * parallel_ops: the handlers take only this module's own locks, and the
 * status and hook dumps wait for shim.lock, which an enable or disable
 * holds while it drains calls still inside the driver (hook.c).  Without
 * it they would wait holding the kernel's genl_mutex, and every other
 * non-parallel generic netlink family, nlctrl's family lookups and
 * genl_register_family() would wait with them: one unprivileged `p2pctl
 * status` would stall netlink for the whole system.  Now the asker waits,
 * killably (lifecycle.c); genl_rcv() still holds cb_lock for read around
 * it, so a family registering meanwhile waits as long (the drain's bound).
 */
static struct genl_family p2ps_family __ro_after_init = {
	.name = P2PS_GENL_NAME,
	.version = P2PS_GENL_VERSION,
	.module = THIS_MODULE,
	.parallel_ops = true,
	.small_ops = p2ps_ops,
	.n_small_ops = ARRAY_SIZE(p2ps_ops),
	.mcgrps = p2ps_mcgrps,
	.n_mcgrps = ARRAY_SIZE(p2ps_mcgrps),
};

/* Events may come from the driver's P2P paths: no sleeping here. */
static struct sk_buff *event_new(enum p2ps_event ev, void **hdr)
{
	struct sk_buff *skb;

	p2ps_assert_not_nmi();
	if (!genl_has_listeners(&p2ps_family, &init_net, 0))
		return NULL;
	skb = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_ATOMIC);
	if (!skb)
		return NULL;
	*hdr = genlmsg_put(skb, 0, 0, &p2ps_family, 0, P2PS_CMD_EVENT);
	if (!*hdr || nla_put_u32(skb, P2PS_A_EVENT, ev)) {
		nlmsg_free(skb);
		return NULL;
	}
	return skb;
}

static void event_send(struct sk_buff *skb, void *hdr)
{
	genlmsg_end(skb, hdr);
	genlmsg_multicast(&p2ps_family, skb, 0, 0, GFP_ATOMIC);
}

static void event_state(enum p2ps_event ev, const struct p2ps_status_snapshot *snap,
			const char *reason)
{
	void *hdr;
	struct sk_buff *skb = event_new(ev, &hdr);

	if (!skb)
		return;
	if ((snap && put_snapshot(skb, snap)) ||
	    (reason && nla_put_string(skb, P2PS_A_REASON, reason)) ||
	    nla_put_u32(skb, P2PS_A_UID, from_kuid(&init_user_ns, current_uid()))) {
		nlmsg_free(skb);
		return;
	}
	event_send(skb, hdr);
}

static void event_mapping(enum p2ps_event ev, const struct p2ps_mapping_event *m)
{
	void *hdr;
	struct sk_buff *skb = event_new(ev, &hdr);

	if (!skb)
		return;
	if (put_mapping(skb, m, false)) {
		nlmsg_free(skb);
		return;
	}
	event_send(skb, hdr);
}

/* Where the module's events go (main.c points the sink here). */
const struct p2ps_sink p2ps_netlink_sink = {
	.state = event_state,
	.mapping = event_mapping,
};

int p2ps_netlink_init(void)
{
	return genl_register_family(&p2ps_family);
}

void p2ps_netlink_exit(void)
{
	genl_unregister_family(&p2ps_family);
}
