/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Raw generic netlink for the VM test programs: no libnl, so that the
 * fuzzer can put any bytes on the wire.  Resolves the p2p_shim family and
 * its "events" group with CTRL_CMD_GETFAMILY, sends byte buffers, and
 * drains and classifies whatever the kernel answers.
 */
#ifndef P2PS_NL_H
#define P2PS_NL_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <p2p-shim/uapi.h>

struct pnl {
	int fd;
	uint16_t family;
	uint32_t events_group;
	uint32_t seq;
};

/* What one drain saw. */
struct pnl_seen {
	unsigned int msgs;	/* every netlink message received */
	unsigned int acks;	/* NLMSG_ERROR with error 0 */
	unsigned int errors;	/* NLMSG_ERROR with error != 0 */
	unsigned int done;	/* NLMSG_DONE */
	unsigned int data;	/* messages of our family */
	unsigned int other;	/* anything else */
	unsigned int bad;	/* malformed answers from the kernel */
	unsigned int status_ok;	/* GET_STATUS replies with a sane P2PS_A_STATE */
	int last_error;		/* the last NLMSG_ERROR's error (negative) */
	int recv_errno;		/* an errno from recv other than EAGAIN, or 0 */
};

static inline int pnl_send(struct pnl *n, const void *buf, size_t len)
{
	struct sockaddr_nl to = { .nl_family = AF_NETLINK };

	return sendto(n->fd, buf, len, 0, (struct sockaddr *)&to, sizeof(to)) < 0 ? -errno : 0;
}

/* Walk the attributes at @a (@len bytes) calling @fn(type, payload, plen). */
#define PNL_FOR_ATTR(a, len, body)							\
	do {										\
		const unsigned char *_p = (const unsigned char *)(a);			\
		size_t _left = (len);							\
		while (_left >= NLA_HDRLEN) {						\
			const struct nlattr *_na = (const struct nlattr *)_p;		\
			size_t _al = _na->nla_len;					\
			if (_al < NLA_HDRLEN || _al > _left)				\
				break;							\
			{								\
				unsigned int type = _na->nla_type & NLA_TYPE_MASK;	\
				const unsigned char *pl = _p + NLA_HDRLEN;		\
				size_t plen = _al - NLA_HDRLEN;				\
				(void)type; (void)pl; (void)plen;			\
				body							\
			}								\
			_al = NLA_ALIGN(_al);						\
			if (_al >= _left)						\
				break;							\
			_p += _al;							\
			_left -= _al;							\
		}									\
	} while (0)

static inline void pnl_classify(struct pnl *n, const unsigned char *buf, size_t len,
				struct pnl_seen *s)
{
	while (len >= NLMSG_HDRLEN) {
		const struct nlmsghdr *h = (const struct nlmsghdr *)buf;
		size_t ml = h->nlmsg_len;

		if (ml < NLMSG_HDRLEN || ml > len) {
			s->bad++;
			return;
		}
		s->msgs++;
		if (h->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = (const struct nlmsgerr *)NLMSG_DATA(h);

			if (ml < NLMSG_HDRLEN + sizeof(*e)) {
				s->bad++;
			} else if (e->error == 0) {
				s->acks++;
			} else {
				s->errors++;
				s->last_error = e->error;
			}
		} else if (h->nlmsg_type == NLMSG_DONE) {
			s->done++;
		} else if (h->nlmsg_type == n->family) {
			const struct genlmsghdr *g = (const struct genlmsghdr *)NLMSG_DATA(h);

			s->data++;
			if (ml < NLMSG_HDRLEN + GENL_HDRLEN) {
				s->bad++;
			} else if (g->cmd == P2PS_CMD_GET_STATUS) {
				int state = -1;

				PNL_FOR_ATTR((const unsigned char *)g + GENL_HDRLEN,
					     ml - NLMSG_HDRLEN - GENL_HDRLEN, {
					if (type == P2PS_A_STATE && plen == 4)
						memcpy(&state, pl, 4);
				});
				if (state >= 0 && state <= P2PS_STATE_RESIDUAL)
					s->status_ok++;
				else
					s->bad++;
			}
		} else {
			s->other++;
		}
		ml = NLMSG_ALIGN(ml);
		if (ml >= len)
			break;
		buf += ml;
		len -= ml;
	}
}

/* Read everything queued (dumps continue inside recv) without blocking. */
static inline void pnl_drain(struct pnl *n, struct pnl_seen *s)
{
	static unsigned char buf[65536];

	memset(s, 0, sizeof(*s));
	for (;;) {
		ssize_t r = recv(n->fd, buf, sizeof(buf), MSG_DONTWAIT);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				s->recv_errno = errno;
			return;
		}
		if (r == 0)
			return;
		pnl_classify(n, buf, (size_t)r, s);
	}
}

/* Build a well-formed request: header + genl header + @alen attr bytes. */
static inline size_t pnl_request(struct pnl *n, void *buf, uint16_t type, uint16_t flags,
				 uint8_t cmd, const void *attrs, size_t alen)
{
	struct nlmsghdr *h = buf;
	struct genlmsghdr *g = NLMSG_DATA(h);

	h->nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN + alen);
	h->nlmsg_type = type;
	h->nlmsg_flags = flags;
	h->nlmsg_seq = ++n->seq;
	h->nlmsg_pid = 0;
	memset(g, 0, GENL_HDRLEN);
	g->cmd = cmd;
	g->version = 1;
	if (alen)
		memcpy((unsigned char *)g + GENL_HDRLEN, attrs, alen);
	return h->nlmsg_len;
}

/* Open a socket and resolve the family; 0 or -errno. */
static inline int pnl_open(struct pnl *n)
{
	static unsigned char buf[8192];
	unsigned char req[64], attr[32];
	struct nlattr *na = (struct nlattr *)attr;
	struct sockaddr_nl me = { .nl_family = AF_NETLINK };
	int rcv = 1 << 20;
	size_t len;
	ssize_t r;

	memset(n, 0, sizeof(*n));
	n->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (n->fd < 0)
		return -errno;
	setsockopt(n->fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	if (bind(n->fd, (struct sockaddr *)&me, sizeof(me)) < 0)
		return -errno;
	na->nla_type = CTRL_ATTR_FAMILY_NAME;
	na->nla_len = NLA_HDRLEN + sizeof(P2PS_GENL_NAME);
	memcpy(attr + NLA_HDRLEN, P2PS_GENL_NAME, sizeof(P2PS_GENL_NAME));
	len = pnl_request(n, req, GENL_ID_CTRL, NLM_F_REQUEST, CTRL_CMD_GETFAMILY, attr,
			  NLA_ALIGN(na->nla_len));
	if (pnl_send(n, req, len))
		return -errno;
	r = recv(n->fd, buf, sizeof(buf), 0);
	if (r < (ssize_t)(NLMSG_HDRLEN + GENL_HDRLEN))
		return -EIO;
	{
		struct nlmsghdr *h = (struct nlmsghdr *)buf;

		if (h->nlmsg_type == NLMSG_ERROR)
			return ((struct nlmsgerr *)NLMSG_DATA(h))->error ?: -EIO;
		PNL_FOR_ATTR(buf + NLMSG_HDRLEN + GENL_HDRLEN,
			     h->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN, {
			if (type == CTRL_ATTR_FAMILY_ID && plen >= 2)
				memcpy(&n->family, pl, 2);
			if (type == CTRL_ATTR_MCAST_GROUPS) {
				PNL_FOR_ATTR(pl, plen, {
					uint32_t id = 0;
					int named = 0;

					PNL_FOR_ATTR(pl, plen, {
						if (type == CTRL_ATTR_MCAST_GRP_ID && plen == 4)
							memcpy(&id, pl, 4);
						if (type == CTRL_ATTR_MCAST_GRP_NAME &&
						    !strcmp((const char *)pl, P2PS_GENL_MCGRP_EVENTS))
							named = 1;
					});
					if (named)
						n->events_group = id;
				});
			}
		});
	}
	/* Drop the rest (an ack would not come: no NLM_F_ACK). */
	{
		struct pnl_seen s;

		pnl_drain(n, &s);
	}
	return n->family ? 0 : -ENOENT;
}

/* One GET_STATUS round trip; 1 if a sane reply came back. */
static inline int pnl_status_ok(struct pnl *n)
{
	unsigned char req[64];
	struct pnl_seen s;
	size_t len = pnl_request(n, req, n->family, NLM_F_REQUEST, P2PS_CMD_GET_STATUS, NULL, 0);

	if (pnl_send(n, req, len))
		return 0;
	pnl_drain(n, &s);
	return s.status_ok == 1 && !s.bad && !s.errors;
}

/* A dump of @cmd to its end; the number of data messages, or -1. */
static inline int pnl_dump(struct pnl *n, uint8_t cmd)
{
	unsigned char req[64];
	struct pnl_seen s;
	size_t len = pnl_request(n, req, n->family, NLM_F_REQUEST | NLM_F_DUMP, cmd, NULL, 0);

	if (pnl_send(n, req, len))
		return -1;
	pnl_drain(n, &s);
	if (s.done != 1 || s.errors || s.bad || s.recv_errno)
		return -1;
	return (int)s.data;
}

#endif
