// SPDX-License-Identifier: GPL-2.0
/*
 * Malformed generic netlink messages to the p2p_shim family.
 *
 *   p2ps-nlfuzz [-s SEED] [-n COUNT] [-u UID]
 *   p2ps-nlfuzz [-u UID] query
 *
 * Each message goes out on its own sendto() (the kernel handles it before
 * sendto returns) and whatever came back is drained.  Kinds: unknown
 * commands, random attributes (types, lengths, nla_len under or over the
 * payload, NLA_F_NESTED garbage), truncated headers and bodies, nlmsg_len
 * larger or smaller than what was sent, bogus nlmsg_flags and genl
 * version/reserved bytes, dumps with garbage, several messages per
 * datagram.
 *
 * Checks: every well-framed request (NLM_F_REQUEST, nlmsg_len right) gets
 * an answer (an error, an ack, a reply or a dump that ends in NLMSG_DONE);
 * every error is one of EINVAL, EOPNOTSUPP, EBUSY, ERANGE, EMSGSIZE, EPERM,
 * E2BIG; no answer is malformed; and every 50 messages, and at the end, a
 * proper GET_STATUS still gets a sane reply and both dumps complete.
 *
 * query: GET_STATUS, both dumps and joining the events group, for the
 * privilege case; prints what it got.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "p2ps-nl.h"
#include "testutil.h"



/* Random attributes into @p (room @room); returns bytes written. */
static size_t garbage_attrs(unsigned char *p, size_t room, int depth)
{
	size_t used = 0;
	unsigned int i, nattr = below(6);

	for (i = 0; i < nattr && used + NLA_HDRLEN + 64 <= room; i++) {
		struct nlattr *na = (struct nlattr *)(p + used);
		size_t plen, j;
		uint16_t type;

		switch (below(5)) {
		case 0: type = (uint16_t)below(P2PS_A_MAX + 3); break;
		case 1: type = (uint16_t)rnd(); break;
		case 2: type = (uint16_t)(below(P2PS_A_MAX + 1) | NLA_F_NESTED); break;
		case 3: type = (uint16_t)(below(P2PS_A_MAX + 1) | NLA_F_NET_BYTEORDER); break;
		default: type = P2PS_A_STATE + (uint16_t)below(3);
		}
		plen = below(4) ? below(9) : below(60);
		na->nla_type = type;
		for (j = 0; j < plen; j++)
			p[used + NLA_HDRLEN + j] = (unsigned char)rnd();
		if ((type & NLA_F_NESTED) && depth < 3 && below(2)) {
			plen = garbage_attrs(p + used + NLA_HDRLEN, room - used - NLA_HDRLEN - 8,
					     depth + 1);
		}
		switch (below(8)) {
		case 0: na->nla_len = (uint16_t)below(NLA_HDRLEN); break;	/* too short */
		case 1: na->nla_len = (uint16_t)(NLA_HDRLEN + plen + 1 + below(300)); break;
		case 2: na->nla_len = (uint16_t)rnd(); break;
		default: na->nla_len = (uint16_t)(NLA_HDRLEN + plen);
		}
		used += NLA_ALIGN(NLA_HDRLEN + plen);
		if (below(8) == 0)
			used -= below(4);		/* unaligned next attribute */
	}
	return used;
}

enum { K_UNKNOWN_CMD, K_ATTRS, K_TRUNC, K_LEN, K_FLAGS, K_DUMP, K_BATCH, K_NONREQ, K_N };
static const char *const kname[K_N] = {
	"unknown_cmd", "bad_attrs", "truncated", "bad_len", "bad_flags", "garbage_dump",
	"batch", "not_request",
};

static int allowed_err(int e)
{
	return e == -EINVAL || e == -EOPNOTSUPP || e == -EBUSY || e == -ERANGE || e == -EMSGSIZE ||
	       e == -EPERM || e == -E2BIG;
}

static int query(struct pnl *n)
{
	int hooks = pnl_dump(n, P2PS_CMD_GET_HOOKS);
	int maps = pnl_dump(n, P2PS_CMD_GET_MAPPINGS);
	int st = pnl_status_ok(n);
	int grp = (int)n->events_group;
	int join = setsockopt(n->fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &grp, sizeof(grp));

	printf("uid=%d status=%s hooks_dump=%d mappings_dump=%d events_join=%s\n", (int)geteuid(),
	       st ? "ok" : "FAILED", hooks, maps, join ? strerrorname_np(errno) : "ok");
	return st && hooks >= 0 && maps >= 0 && !join ? 0 : 1;
}

int main(int argc, char **argv)
{
	static unsigned char buf[16384];
	unsigned long n = 10000, i, sent[K_N] = { 0 }, answered = 0, silent = 0, dropped = 0;
	unsigned long errs[200] = { 0 }, acks = 0, replies = 0, dumps_done = 0, probes = 0;
	uint64_t seed = 0;
	long uid = -1;
	struct timespec t0, t1;
	struct pnl nl;
	int opt, ret, e;
	double secs;

	while ((opt = getopt(argc, argv, "s:n:u:")) != -1) {
		switch (opt) {
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'n': n = strtoul(optarg, NULL, 0); break;
		case 'u': uid = strtol(optarg, NULL, 0); break;
		default:
			fprintf(stderr, "usage: p2ps-nlfuzz [-s SEED] [-n COUNT] [-u UID] [query]\n");
			return 2;
		}
	}
	if (uid >= 0 && (setgid((gid_t)uid) || setuid((uid_t)uid)))
		return perror("setuid"), 2;
	ret = pnl_open(&nl);
	if (ret) {
		fprintf(stderr, "resolve %s: %s\n", P2PS_GENL_NAME, strerror(-ret));
		return 2;
	}
	if (optind < argc && !strcmp(argv[optind], "query"))
		return query(&nl);
	if (!seed) {
		clock_gettime(CLOCK_REALTIME, &t0);
		seed = ((uint64_t)t0.tv_sec << 20) ^ (uint64_t)t0.tv_nsec ^ (uint64_t)getpid();
	}
	rng = seed;
	printf("seed=0x%016llx count=%lu uid=%d family=%u events_group=%u\n",
	       (unsigned long long)seed, n, (int)geteuid(), nl.family, nl.events_group);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < n; i++) {
		int k = (int)below(K_N), framed = 1;
		uint16_t flags = NLM_F_REQUEST | (below(2) ? NLM_F_ACK : 0);
		uint8_t cmd = (uint8_t)(1 + below(P2PS_CMD_MAX));	/* 1..4 */
		unsigned char attrs[2048];
		size_t alen = 0, len, wire;
		struct nlmsghdr *h = (struct nlmsghdr *)buf;
		struct genlmsghdr *g = NLMSG_DATA(h);
		struct pnl_seen s;

		switch (k) {
		case K_UNKNOWN_CMD:
			cmd = below(2) ? 0 : (uint8_t)(P2PS_CMD_MAX + below(256 - P2PS_CMD_MAX));
			if (below(2))
				flags |= NLM_F_DUMP;
			break;
		case K_ATTRS:
		case K_DUMP:
			alen = garbage_attrs(attrs, sizeof(attrs), 0);
			if (k == K_DUMP) {
				flags |= below(4) ? NLM_F_DUMP : (uint16_t)(NLM_F_ROOT << below(3));
				cmd = (uint8_t)below(6);
			}
			break;
		case K_FLAGS:
			flags = (uint16_t)(rnd() | NLM_F_REQUEST);
			break;
		case K_NONREQ:
			flags = (uint16_t)(rnd() & ~NLM_F_REQUEST);
			framed = 0;			/* ignored unless NLM_F_ACK */
			break;
		}
		len = pnl_request(&nl, buf, nl.family, flags, cmd, attrs, alen);
		wire = len;
		if (below(4) == 0) {		/* garbage genl version/reserved */
			g->version = (uint8_t)rnd();
			g->reserved = (uint16_t)rnd();
		}
		switch (k) {
		case K_TRUNC:			/* cut anywhere; nlmsg_len says more */
			alen = garbage_attrs(attrs, sizeof(attrs), 0);
			len = pnl_request(&nl, buf, nl.family, flags, cmd, attrs, alen);
			wire = below((unsigned int)len);
			/* A cut that still holds the genl header is a short request: answered. */
			framed = 0;
			break;
		case K_LEN:			/* nlmsg_len too small or too large */
			switch (below(3)) {
			case 0:
				h->nlmsg_len = below(NLMSG_HDRLEN);
				framed = 0;
				break;
			case 1:			/* shorter: body cut at the genl header */
				h->nlmsg_len = NLMSG_HDRLEN + below(GENL_HDRLEN);
				break;
			default:
				h->nlmsg_len = (uint32_t)(len + 1 + below(1000));
				framed = 0;
			}
			break;
		case K_BATCH: {			/* a few messages in one datagram */
			unsigned int m = 2 + below(3), j;

			for (j = 1; j < m && wire + 64 < sizeof(buf); j++) {
				alen = below(2) ? garbage_attrs(attrs, 256, 0) : 0;
				if (wire + NLMSG_ALIGN(NLMSG_LENGTH(GENL_HDRLEN + alen)) > sizeof(buf))
					break;
				wire += NLMSG_ALIGN(pnl_request(&nl, buf + wire, nl.family,
						    (uint16_t)(NLM_F_REQUEST | (below(2) ? NLM_F_ACK : 0)),
						    (uint8_t)below(6), attrs, alen));
			}
			break;
		}
		}
		sent[k]++;
		ret = pnl_send(&nl, buf, wire);
		if (ret) {
			/* Only a datagram the socket layer refuses outright. */
			errs[-ret < 200 ? -ret : 199]++;
			/* sendto() of zero bytes: ENODATA from the socket layer. */
			if (!allowed_err(ret) && !(ret == -ENODATA && wire == 0))
				FAILF("msg %lu (%s): sendto %s\n", i, kname[k], strerrorname_np(-ret));
			continue;
		}
		pnl_drain(&nl, &s);
		if (s.recv_errno)
			FAILF("msg %lu (%s): recv %s\n", i, kname[k], strerrorname_np(s.recv_errno));
		if (s.bad)
			FAILF("msg %lu (%s): %u malformed answers\n", i, kname[k], s.bad);
		if (s.msgs) {
			answered++;
		} else if (framed) {
			silent++;
			FAILF("msg %lu (%s): no answer to a well-framed request (flags 0x%x cmd %u)\n",
			      i, kname[k], flags, cmd);
		} else {
			dropped++;
		}
		acks += s.acks;
		replies += s.data;
		dumps_done += s.done;
		if (s.errors) {
			e = -s.last_error;
			errs[e > 0 && e < 200 ? e : 199]++;
			if (!allowed_err(s.last_error))
				FAILF("msg %lu (%s): error %d (%s)\n", i, kname[k], s.last_error,
				      strerrorname_np(-s.last_error) ?: "?");
		}
		if (i % 50 == 49) {
			probes++;
			if (!pnl_status_ok(&nl))
				FAILF("msg %lu: GET_STATUS probe got no sane reply\n", i);
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	if (!pnl_status_ok(&nl) || pnl_dump(&nl, P2PS_CMD_GET_HOOKS) < 0 ||
	    pnl_dump(&nl, P2PS_CMD_GET_MAPPINGS) < 0)
		FAILF("final status/dumps failed\n");

	printf("sent:");
	for (e = 0; e < K_N; e++)
		printf(" %s=%lu", kname[e], sent[e]);
	printf("\noutcome: answered=%lu dropped_unframed=%lu silent_framed=%lu acks=%lu "
	       "replies=%lu dump_done=%lu probes=%lu\nerrors:", answered, dropped, silent, acks,
	       replies, dumps_done, probes);
	for (e = 1; e < 200; e++)
		if (errs[e])
			printf(" %s=%lu", strerrorname_np(e) ?: "?", errs[e]);
	printf("\ntotal=%lu seconds=%.2f msgs_per_sec=%.0f failures=%lu\n", n, secs, n / secs,
	       failures);
	return failures ? 1 : 0;
}
