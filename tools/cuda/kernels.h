/* SPDX-License-Identifier: GPL-2.0 */
#ifndef P2P_CUDA_KERNELS_H
#define P2P_CUDA_KERNELS_H

#include <stddef.h>
#include "cu.h"

/*
 * Five kernels, JIT-compiled by the driver from embedded PTX (ISA 7.0,
 * target sm_70: runs on Volta and every later GPU):
 *   p2p_read (u64 dst, u64 src, u64 n16, u64 tail)
 *       run on the destination GPU: loads from (peer) src, stores locally.
 *   p2p_write(u64 dst, u64 src, u64 n16, u64 tail)
 *       run on the source GPU: loads locally, stores to (peer) dst.
 *     Both copy n16 16-byte units then `tail` (< 16) single bytes; a
 *     grid-stride loop, four 16-byte loads in flight per thread.
 *   p2p_delay(u64 flag, u64 timeout_clocks)
 *       spins until *(u32 *)flag != 0 or timeout; on timeout it sets
 *       ((u32 *)flag)[1] = 1 so the host can tell (cuda-samples' delay()).
 *   p2p_flag_set(u64 flag, u32 value)
 *       one thread: fence.sc.sys, then st.release.sys of value at flag.
 *   p2p_flag_wait(u64 flag, u32 want, u64 timeout_ns, u64 status)
 *       one thread: ld.acquire.sys of flag until it equals want or
 *       timeout_ns passes; status[0] = the last value seen, status[1] = 1
 *       (seen) or 2 (timed out).
 *   p2p_car(u64 in, u64 mine, u64 peer, u64 out, u64 n, u64 ctr, u64 myflag,
 *           u64 peerflag, u64 timeout_ns, u64 status)
 *       one CTA: a two-rank one-shot custom all-reduce of n u32 words in
 *       one kernel (payload store, flag store, flag wait, peer payload
 *       read); see kernels.c. Launched with one block (CAR_THREADS).
 */
enum { K_READ, K_WRITE, K_DELAY, K_FLAG_SET, K_FLAG_WAIT, K_CAR, K_COUNT };
#define CAR_THREADS 512
extern const char *const kernel_names[K_COUNT];

const char *kernels_ptx(void);
/* Load the module into the current context; log gets the JIT error log. */
CUresult kernels_load(CUmodule *mod, CUfunction fn[K_COUNT], char *log, size_t loglen);

#endif
