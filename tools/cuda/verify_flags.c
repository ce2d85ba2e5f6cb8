// SPDX-License-Identifier: GPL-2.0
/*
 * p2pctl verify's flags and flags-poll tests: the custom all-reduce pattern
 * of payload and release flag, polled with acquire loads.
 */

#include "verify.h"

/*
 * flags a -> b: GPU a stores the payload into GPU b's memory, then the flag
 * (fence.sc.sys + st.release.sys) into b's memory; b polls its own memory
 * with acquire loads, then copies the payload it sees into a check buffer.
 * flags-poll a -> b: a writes the payload and the flag into its own memory;
 * b polls a's flag through SM peer loads, then copies the payload through
 * peer loads. Many rounds, a new flag value and pattern each.
 */
int run_flags(struct vstate *v, struct vtest *t)
{
	struct rig *r = &v->r;
	int a = t->src, b = t->dst, poll = t->method == V_FLAGS_POLL;
	struct gpu *ga = &r->g[a], *gb = &r->g[b];
	size_t n = v->size < FLAG_MAX ? v->size : FLAG_MAX;
	CUdeviceptr flag = poll ? v->aux[a] : v->aux[b], status = v->aux[b] + 64;
	uint32_t base = (uint32_t)(splitmix64(v->seed) & 0xffffff00u), st[2];
	unsigned long long tmo = (unsigned long long)(v->timeout * 0.5e9);

	t->ok = 1;
	t->engine = b;
	if (!ga->kernels_ok || !gb->kernels_ok) {
		t->ok = 0;
		snprintf(t->error, sizeof(t->error), "kernels not loaded on GPU %d: %.900s",
			 !gb->kernels_ok ? b : a, r->jitlog[0] ? r->jitlog : "unknown reason");
		return -1;
	}
	if (a != b) {
		char why[256];
		int m = vpeer_mapped(v, poll ? b : a, poll ? ga->src : gb->dst, why, sizeof(why));

		if (m == 0) {
			t->ok = 0;
			snprintf(t->error, sizeof(t->error), "no peer mapping: GPU %d has no access to "
				 "GPU %d's memory (CU_POINTER_ATTRIBUTE_ACCESS_FLAGS = 0) although peer "
				 "access was enabled", poll ? b : a, poll ? a : b);
			return -1;
		}
		t->proven = 1;
		snprintf(t->path, sizeof(t->path), poll ?
			 "GPU %d polled GPU %d's flag and read its payload with SM peer loads" :
			 "GPU %d stored payload and flag into GPU %d's memory with SM peer stores",
			 poll ? b : a, poll ? a : b);
	} else {
		snprintf(t->path, sizeof(t->path), "loopback within GPU %d: no peer path was used", a);
	}
	VT(rig_cur(r, poll ? a : b), "cuCtxSetCurrent");
	VT(cu.cuMemsetD32Async(flag, base, 1, r->g[poll ? a : b].s[1]), "reset flag (cuMemsetD32Async)");
	VW(poll ? a : b, r->g[poll ? a : b].s[1], "reset of the flag");
	for (int round = 0; round < FLAG_ROUNDS; round++) {
		uint32_t val = base + (uint32_t)round + 1;
		vimages(v, n);
		if (poll) {
			/* Payload and flag on a's stream 2, in that order (the
			 * waiter's stream 0 differs even in loopback). */
			VT(rig_cur(r, b), "cuCtxSetCurrent");
			VT(cu.cuMemsetD32Async(v->chk[b], POISON, v->total / 4, gb->s[1]),
			   "poison check buffer (cuMemsetD32Async)");
			VW(b, gb->s[1], "poisoning of the check buffer");
			VT(rig_cur(r, a), "cuCtxSetCurrent");
			VT(cu.cuMemcpyHtoDAsync(ga->src, v->img, v->total, ga->s[2]),
			   "upload pattern (cuMemcpyHtoDAsync)");
		} else {
			if (vstage(v, t, a, b, 1))
				return -1;
		}
		/* The waiter first, so it is polling when the flag comes. */
		{
			CUdeviceptr f = flag, sp = status;
			void *args[4] = { &f, &val, &tmo, &sp };

			VT(rig_cur(r, b), "cuCtxSetCurrent");
			VT(cu.cuLaunchKernel(gb->fn[K_FLAG_WAIT], 1, 1, 1, 1, 1, 1, 0, gb->s[0], args, NULL),
			   "launch p2p_flag_wait");
			VT(sm_launch(r, b, gb->s[0], poll ? K_READ : K_WRITE, &v->sm, v->chk[b] + GUARD,
				     (poll ? ga->src : gb->dst) + GUARD, n), "launch the payload copy");
		}
		{
			CUdeviceptr f = flag;
			void *args[2] = { &f, &val };

			VT(rig_cur(r, a), "cuCtxSetCurrent");
			if (!poll)
				VT(sm_launch(r, a, ga->s[2], K_WRITE, &v->sm, gb->dst + GUARD,
					     ga->src + GUARD, n), "launch p2p_write");
			VT(cu.cuLaunchKernel(ga->fn[K_FLAG_SET], 1, 1, 1, 1, 1, 1, 0, ga->s[2], args, NULL),
			   "launch p2p_flag_set");
		}
		VW(b, gb->s[0], "the flag wait");
		VW(a, ga->s[2], "the flag store");
		VT(rig_cur(r, b), "cuCtxSetCurrent");
		VT(cu.cuMemcpyDtoH(st, status, sizeof(st)), "read status (cuMemcpyDtoH)");
		if (st[1] != 1) {
			t->ok = 0;
			if (st[0] >= base && st[0] < val)
				snprintf(t->error, sizeof(t->error), poll ?
					 "peer read returned an old value: round %d, GPU %d still read "
					 "0x%08x from GPU %d's flag after it was set to 0x%08x "
					 "(stale peer read)" :
					 "flag never arrived: round %d, GPU %d still saw 0x%08x where GPU %d "
					 "stored 0x%08x (SM stores into the peer lost or not visible)",
					 round, b, st[0], a, val);
			else
				snprintf(t->error, sizeof(t->error),
					 "round %d: GPU %d read 0x%08x from the flag, a value nobody wrote "
					 "(want 0x%08x): %s reached the wrong memory", round, b, st[0], val,
					 poll ? "its peer loads" : "the peer stores");
			return -1;
		}
		if (vreadback(v, t, b, v->chk[b]))
			return -1;
		if (vcheck_got(v, t, n)) {
			char e[1024];

			snprintf(e, sizeof(e), "round %d, payload seen after the flag: %.900s%s", round,
				 t->error, poll ? " (peer read returned old data)" : "");
			snprintf(t->error, sizeof(t->error), "%s", e);
			return -1;
		}
		t->bytes += n;
		t->rounds++;
	}
	return 0;
}
