// SPDX-License-Identifier: GPL-2.0
/* libp2pshim: generic netlink dumps and events (libnl-genl-3). */
#include <errno.h>
#include <poll.h>
#include <string.h>

#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include "internal.h"

static struct nla_policy top_policy[P2PS_A_MAX + 1] = {
	[P2PS_A_STATE] = { .type = NLA_U32 },
	[P2PS_A_FLAGS] = { .type = NLA_U32 },
	[P2PS_A_DRIVER_VERSION] = { .type = NLA_STRING },
	[P2PS_A_PROFILE] = { .type = NLA_STRING },
	[P2PS_A_LIVE_MAPPINGS] = { .type = NLA_U32 },
	[P2PS_A_STALE_GPUS] = { .type = NLA_U32 },
	[P2PS_A_HOOK] = { .type = NLA_NESTED },
	[P2PS_A_MAPPING] = { .type = NLA_NESTED },
	[P2PS_A_EVENT] = { .type = NLA_U32 },
	[P2PS_A_REASON] = { .type = NLA_STRING },
	[P2PS_A_UID] = { .type = NLA_U32 },
	[P2PS_A_MODULE_VERSION] = { .type = NLA_STRING },
	[P2PS_A_GPU] = { .type = NLA_NESTED },
};

static struct nla_policy gpu_policy[P2PS_GPU_A_MAX + 1] = {
	[P2PS_GPU_A_INSTANCE] = { .type = NLA_U32 },
	[P2PS_GPU_A_STATIC_BAR1] = { .type = NLA_U32 },
	[P2PS_GPU_A_P2P_USABLE] = { .type = NLA_U32 },
	[P2PS_GPU_A_FORCE_P2P] = { .type = NLA_U32 },
	[P2PS_GPU_A_BAR1_ADDR] = { .type = NLA_U64 },
	[P2PS_GPU_A_BAR1_SIZE] = { .type = NLA_U64 },
	[P2PS_GPU_A_CONSOLE] = { .type = NLA_U64 },
	[P2PS_GPU_A_MAILBOX] = { .type = NLA_U64 },
	[P2PS_GPU_A_CLIENT_FB] = { .type = NLA_U64 },
	[P2PS_GPU_A_OFFSET] = { .type = NLA_U64 },
	[P2PS_GPU_A_REASON] = { .type = NLA_STRING },
};

static struct nla_policy hook_policy[P2PS_HOOK_A_MAX + 1] = {
	[P2PS_HOOK_A_TARGET] = { .type = NLA_STRING },
	[P2PS_HOOK_A_KIND] = { .type = NLA_U32 },
	[P2PS_HOOK_A_STATE] = { .type = NLA_U32 },
	[P2PS_HOOK_A_HITS] = { .type = NLA_U64 },
	[P2PS_HOOK_A_LAST_ERROR] = { .type = NLA_STRING },
	[P2PS_HOOK_A_DEST] = { .type = NLA_STRING },
};

static struct nla_policy map_policy[P2PS_MAP_A_MAX + 1] = {
	[P2PS_MAP_A_GPU0] = { .type = NLA_U32 },
	[P2PS_MAP_A_GPU1] = { .type = NLA_U32 },
	[P2PS_MAP_A_CONN_TYPE] = { .type = NLA_U32 },
	[P2PS_MAP_A_COUNT] = { .type = NLA_U32 },
	[P2PS_MAP_A_DMA_BASE] = { .type = NLA_U64 },
	[P2PS_MAP_A_DMA_SIZE] = { .type = NLA_U64 },
};

static void get_str(struct nlattr *a, char *buf, size_t len)
{
	if (a)
		nla_strlcpy(buf, a, len);
	else if (len)
		buf[0] = '\0';
}

static int nl_to_err(int nlerr)
{
	switch (nlerr < 0 ? -nlerr : nlerr) {
	case NLE_PERM: return -EPERM;
	case NLE_NOMEM: return -ENOMEM;
	case NLE_OBJ_NOTFOUND: return -P2PS_E_NO_FAMILY;
	case NLE_BUSY: return -EBUSY;
	case NLE_INVAL: return -EINVAL;
	case NLE_OPNOTSUPP: return -EOPNOTSUPP;
	default: return -P2PS_E_NETLINK;
	}
}

int p2ps_parse_hook(struct nlattr *nest, struct p2ps_hook_info *out)
{
	struct nlattr *tb[P2PS_HOOK_A_MAX + 1];

	memset(out, 0, sizeof(*out));
	if (nla_parse_nested(tb, P2PS_HOOK_A_MAX, nest, hook_policy) < 0)
		return -P2PS_E_NETLINK;
	if (!tb[P2PS_HOOK_A_TARGET])
		return -P2PS_E_NETLINK;
	get_str(tb[P2PS_HOOK_A_TARGET], out->target, sizeof(out->target));
	get_str(tb[P2PS_HOOK_A_DEST], out->dest, sizeof(out->dest));
	get_str(tb[P2PS_HOOK_A_LAST_ERROR], out->last_error, sizeof(out->last_error));
	if (tb[P2PS_HOOK_A_KIND])
		out->kind = nla_get_u32(tb[P2PS_HOOK_A_KIND]);
	if (tb[P2PS_HOOK_A_STATE])
		out->state = nla_get_u32(tb[P2PS_HOOK_A_STATE]);
	if (tb[P2PS_HOOK_A_HITS])
		out->hits = nla_get_u64(tb[P2PS_HOOK_A_HITS]);
	return 0;
}

int p2ps_parse_mapping(struct nlattr *nest, struct p2ps_mapping_info *out)
{
	struct nlattr *tb[P2PS_MAP_A_MAX + 1];

	memset(out, 0, sizeof(*out));
	if (nla_parse_nested(tb, P2PS_MAP_A_MAX, nest, map_policy) < 0)
		return -P2PS_E_NETLINK;
	/*
	 * The module sends P2PS_MAP_GPU_UNKNOWN for a GPU it cannot name
	 * (the same value as P2PS_GPU_UNKNOWN); one without the attribute
	 * (modules of 2026-12-07) meant the same, never GPU 0.
	 */
	_Static_assert(P2PS_GPU_UNKNOWN == P2PS_MAP_GPU_UNKNOWN, "one unknown GPU value");
	out->gpu0 = out->gpu1 = P2PS_GPU_UNKNOWN;
	if (tb[P2PS_MAP_A_GPU0])
		out->gpu0 = nla_get_u32(tb[P2PS_MAP_A_GPU0]);
	if (tb[P2PS_MAP_A_GPU1])
		out->gpu1 = nla_get_u32(tb[P2PS_MAP_A_GPU1]);
	if (tb[P2PS_MAP_A_CONN_TYPE])
		out->conn_type = nla_get_u32(tb[P2PS_MAP_A_CONN_TYPE]);
	if (tb[P2PS_MAP_A_COUNT])
		out->count = nla_get_u32(tb[P2PS_MAP_A_COUNT]);
	if (tb[P2PS_MAP_A_DMA_BASE])
		out->dma_base = nla_get_u64(tb[P2PS_MAP_A_DMA_BASE]);
	if (tb[P2PS_MAP_A_DMA_SIZE])
		out->dma_size = nla_get_u64(tb[P2PS_MAP_A_DMA_SIZE]);
	return 0;
}

int p2ps_parse_gpu(struct nlattr *nest, struct p2ps_gpu_info *out)
{
	struct nlattr *tb[P2PS_GPU_A_MAX + 1];

	memset(out, 0, sizeof(*out));
	if (nla_parse_nested(tb, P2PS_GPU_A_MAX, nest, gpu_policy) < 0 || !tb[P2PS_GPU_A_INSTANCE])
		return -P2PS_E_NETLINK;
	out->instance = nla_get_u32(tb[P2PS_GPU_A_INSTANCE]);
	if (tb[P2PS_GPU_A_STATIC_BAR1])
		out->static_bar1 = nla_get_u32(tb[P2PS_GPU_A_STATIC_BAR1]);
	if (tb[P2PS_GPU_A_P2P_USABLE])
		out->p2p_usable = nla_get_u32(tb[P2PS_GPU_A_P2P_USABLE]);
	if (tb[P2PS_GPU_A_FORCE_P2P])
		out->force_p2p = nla_get_u32(tb[P2PS_GPU_A_FORCE_P2P]);
	if (tb[P2PS_GPU_A_BAR1_ADDR])
		out->bar1_addr = nla_get_u64(tb[P2PS_GPU_A_BAR1_ADDR]);
	if (tb[P2PS_GPU_A_BAR1_SIZE])
		out->bar1_size = nla_get_u64(tb[P2PS_GPU_A_BAR1_SIZE]);
	if (tb[P2PS_GPU_A_CONSOLE])
		out->console = nla_get_u64(tb[P2PS_GPU_A_CONSOLE]);
	if (tb[P2PS_GPU_A_MAILBOX])
		out->mailbox = nla_get_u64(tb[P2PS_GPU_A_MAILBOX]);
	if (tb[P2PS_GPU_A_CLIENT_FB])
		out->client_fb = nla_get_u64(tb[P2PS_GPU_A_CLIENT_FB]);
	if (tb[P2PS_GPU_A_OFFSET])
		out->offset = nla_get_u64(tb[P2PS_GPU_A_OFFSET]);
	get_str(tb[P2PS_GPU_A_REASON], out->reason, sizeof(out->reason));
	return 0;
}

int p2ps_parse_event(struct nlattr **tb, struct p2ps_event_info *out)
{
	memset(out, 0, sizeof(*out));
	if (!tb[P2PS_A_EVENT])
		return -P2PS_E_NETLINK;
	out->event = nla_get_u32(tb[P2PS_A_EVENT]);
	if (tb[P2PS_A_FLAGS])
		out->flags = nla_get_u32(tb[P2PS_A_FLAGS]);
	if (tb[P2PS_A_UID]) {
		out->uid = nla_get_u32(tb[P2PS_A_UID]);
		out->has_uid = true;
	}
	get_str(tb[P2PS_A_DRIVER_VERSION], out->driver_version, sizeof(out->driver_version));
	get_str(tb[P2PS_A_PROFILE], out->profile, sizeof(out->profile));
	get_str(tb[P2PS_A_REASON], out->reason, sizeof(out->reason));
	if (tb[P2PS_A_MAPPING] && p2ps_parse_mapping(tb[P2PS_A_MAPPING], &out->mapping) == 0)
		out->has_mapping = true;
	return 0;
}

int p2ps_parse_msg(struct nl_msg *msg, struct nlattr **tb)
{
	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, P2PS_A_MAX, top_policy) < 0)
		return -P2PS_E_NETLINK;
	return 0;
}

/* ---------------------------------------------------------------- dumps */

static int genl_open(struct p2ps_handle *h)
{
	int err;

	if (h->sk)
		return 0;
	h->sk = nl_socket_alloc();
	if (!h->sk)
		return -ENOMEM;
	err = genl_connect(h->sk);
	if (err < 0)
		goto fail;
	h->family = genl_ctrl_resolve(h->sk, P2PS_GENL_NAME);
	if (h->family < 0) {
		err = -NLE_OBJ_NOTFOUND;
		goto fail;
	}
	return 0;
fail:
	nl_socket_free(h->sk);
	h->sk = NULL;
	h->family = -1;
	return nl_to_err(err);
}

struct dump_arg {
	int (*cb)(struct nlattr **tb, void *arg);
	void *arg;
	int err;
};

static int dump_valid(struct nl_msg *msg, void *arg)
{
	struct dump_arg *d = arg;
	struct nlattr *tb[P2PS_A_MAX + 1];
	int err;

	if (d->err)
		return NL_SKIP;
	if (p2ps_parse_msg(msg, tb))
		return NL_SKIP;
	err = d->cb(tb, d->arg);
	if (err)
		d->err = err;
	return NL_OK;
}

int p2ps_nl_dump(void *ctx, int cmd, int (*cb)(struct nlattr **tb, void *arg), void *arg)
{
	struct p2ps_handle *h = ctx;
	struct dump_arg d = { cb, arg, 0 };
	struct nl_msg *msg;
	struct nl_cb *ncb;
	int err;

	err = genl_open(h);
	if (err)
		return err;
	msg = nlmsg_alloc();
	if (!msg)
		return -ENOMEM;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, h->family, 0, NLM_F_DUMP,
			 cmd, P2PS_GENL_VERSION)) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	ncb = nl_cb_clone(nl_socket_get_cb(h->sk));
	if (!ncb) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	nl_cb_set(ncb, NL_CB_VALID, NL_CB_CUSTOM, dump_valid, &d);
	err = nl_send_auto(h->sk, msg);
	nlmsg_free(msg);
	if (err >= 0)
		err = nl_recvmsgs(h->sk, ncb);
	nl_cb_put(ncb);
	if (err < 0)
		return nl_to_err(err);
	return d.err;
}

void p2ps_nl_close(struct p2ps_handle *h)
{
	if (h->sk)
		nl_socket_free(h->sk);
	if (h->ev_sk)
		nl_socket_free(h->ev_sk);
	h->sk = h->ev_sk = NULL;
}

/* ---------------------------------------------------------------- events */

struct ev_state {
	struct p2ps_handle *h;
	int count;
};

static int ev_valid(struct nl_msg *msg, void *arg)
{
	struct ev_state *s = arg;
	struct nlattr *tb[P2PS_A_MAX + 1];
	struct p2ps_event_info ev;

	if (genlmsg_hdr(nlmsg_hdr(msg))->cmd != P2PS_CMD_EVENT)
		return NL_SKIP;
	if (p2ps_parse_msg(msg, tb) || p2ps_parse_event(tb, &ev))
		return NL_SKIP;
	s->count++;
	if (s->h->ev_cb)
		s->h->ev_cb(&ev, s->h->ev_arg);
	return NL_OK;
}

int p2ps_event_subscribe(struct p2ps_handle *h, p2ps_event_cb cb, void *arg)
{
	int grp, err;

	if (h->ev_sk)
		return -EALREADY;
	h->ev_sk = nl_socket_alloc();
	if (!h->ev_sk)
		return -ENOMEM;
	nl_socket_disable_seq_check(h->ev_sk);
	err = genl_connect(h->ev_sk);
	if (err < 0)
		goto fail;
	grp = genl_ctrl_resolve_grp(h->ev_sk, P2PS_GENL_NAME, P2PS_GENL_MCGRP_EVENTS);
	if (grp < 0) {
		err = -NLE_OBJ_NOTFOUND;
		goto fail;
	}
	err = nl_socket_add_membership(h->ev_sk, grp);
	if (err < 0)
		goto fail;
	err = nl_socket_set_nonblocking(h->ev_sk);
	if (err < 0)
		goto fail;
	h->ev_cb = cb;
	h->ev_arg = arg;
	return 0;
fail:
	nl_socket_free(h->ev_sk);
	h->ev_sk = NULL;
	return nl_to_err(err);
}

int p2ps_event_fd(struct p2ps_handle *h)
{
	return h->ev_sk ? nl_socket_get_fd(h->ev_sk) : -EBADF;
}

int p2ps_event_dispatch(struct p2ps_handle *h)
{
	struct ev_state s = { h, 0 };
	struct nl_cb *ncb;
	int err;

	if (!h->ev_sk)
		return -EBADF;
	ncb = nl_cb_clone(nl_socket_get_cb(h->ev_sk));
	if (!ncb)
		return -ENOMEM;
	nl_cb_set(ncb, NL_CB_VALID, NL_CB_CUSTOM, ev_valid, &s);
	for (;;) {
		err = nl_recvmsgs(h->ev_sk, ncb);
		if (err < 0)
			break;
	}
	nl_cb_put(ncb);
	if (err == -NLE_AGAIN || s.count)
		return s.count;
	return nl_to_err(err);
}

int p2ps_event_wait(struct p2ps_handle *h, int timeout_ms)
{
	struct pollfd p;
	int n;

	if (!h->ev_sk)
		return -EBADF;
	p.fd = nl_socket_get_fd(h->ev_sk);
	p.events = POLLIN;
	n = poll(&p, 1, timeout_ms);
	if (n < 0)
		return -errno;
	if (n == 0)
		return 0;
	return p2ps_event_dispatch(h);
}
