// SPDX-License-Identifier: GPL-2.0
/* The one deadline rule of verify and bench (deadline.h). */

#include <errno.h>
#include <sched.h>
#include <time.h>

#include "deadline.h"
#include "opts.h"

volatile sig_atomic_t dl_stop;

static struct sigaction old_int, old_term;
static int caught;

static void on_stop(int sig)
{
	if (dl_stop) {
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	dl_stop = sig;
}

int dl_catch(void)
{
	struct sigaction sa = { 0 };

	dl_stop = 0;
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	caught = !sigaction(SIGINT, &sa, &old_int) && !sigaction(SIGTERM, &sa, &old_term);
	return caught ? 0 : -1;
}

void dl_release(void)
{
	if (!caught)
		return;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	caught = 0;
}

void dl_nap(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* dl_wait's and dl_wait_timed's loop: timed, spin for the first 5 ms and
 * then nap 20 us; else nap 10 us, backing off to 2 ms. */
static CUresult dl_poll(CUstream s, CUevent e, double end, int timed)
{
	double start = now_s();
	long us = 10;
	CUresult cr;

	while ((cr = s ? cu.cuStreamQuery(s) : cu.cuEventQuery(e)) == CUDA_ERROR_NOT_READY) {
		if (dl_stop || now_s() > end)
			return CUDA_ERROR_NOT_READY;
		if (timed) {
			if (now_s() - start > 0.005)
				dl_nap(20);
			else
				sched_yield();
			continue;
		}
		dl_nap(us);
		/* back off to 2 ms: a signal is seen within that, and a short
		 * copy is not kept waiting long */
		if (us < 2000)
			us *= 2;
	}
	return cr;
}

CUresult dl_wait(CUstream s, CUevent e, double end)
{
	return dl_poll(s, e, end, 0);
}

CUresult dl_wait_timed(CUstream s, double end)
{
	return dl_poll(s, NULL, end, 1);
}
