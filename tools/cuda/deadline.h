/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one deadline rule of verify and bench: every wait for GPU work is a
 * query loop that ends at its deadline or at SIGINT/SIGTERM, never a
 * blocking synchronisation (which would not return on a stuck context, and
 * which no signal ends).
 */
#ifndef P2P_CUDA_DEADLINE_H
#define P2P_CUDA_DEADLINE_H

#include <signal.h>

#include "cu.h"

/* SIGINT or SIGTERM seen (its number), 0 none: every wait ends at once. */
extern volatile sig_atomic_t dl_stop;

/* Catch SIGINT and SIGTERM into dl_stop (a second one ends the process at
 * once); dl_release() puts the old handlers back. 0, or -1 not caught. */
int dl_catch(void);
void dl_release(void);

/*
 * Query stream s (or, s NULL, event e) until its work is done, the
 * deadline end (now_s()) has passed or a signal came: CUDA_ERROR_NOT_READY
 * then (dl_stop says which). The work's own error otherwise.
 */
CUresult dl_wait(CUstream s, CUevent e, double end);

/*
 * dl_wait for a wait the host times (bench --nccl's batches, as nccl-tests
 * times cudaStreamSynchronize): it spins for the first 5 ms, then naps
 * 20 us, so no nap adds its length to a short batch's time.
 */
CUresult dl_wait_timed(CUstream s, double end);

/* Sleep us microseconds, restarted after a signal. */
void dl_nap(long us);

#endif
