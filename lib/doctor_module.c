// SPDX-License-Identifier: GPL-2.0
/*
 * `p2pctl doctor`: p2p-shim's own state (loaded, armed, stale GPUs).
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "doctor.h"

void p2ps_dr_module(struct dctx *c)
{
	bool loaded = p2ps_dr_shim_loaded(c);
	struct p2ps_status_info *st = NULL;
	struct p2ps_handle *h = c->opts ? c->opts->h : NULL;

	if (!loaded) {
		p2ps_dr_add(c, "module", NULL, P2PS_V_WARN, "/sys/module/p2p_shim",
		    "modprobe p2p-shim (or insmod p2p-shim.ko), then p2pctl enable",
		    "p2p-shim not loaded");
		p2ps_dr_add(c, "stale-gpus", NULL, P2PS_V_SKIP, NULL, NULL,
		    "p2p-shim not loaded: can't tell which GPUs were initialised before arming");
		return;
	}
	if (!h || p2ps_status(h, &st)) {
		p2ps_dr_add(c, "module", NULL, P2PS_V_OK, "/sys/module/p2p_shim", NULL,
		    "p2p-shim loaded (state not queried)");
		p2ps_dr_add(c, "stale-gpus", NULL, P2PS_V_SKIP, NULL, NULL, "module state not available");
		return;
	}
	if (st->state == P2PS_STATE_ARMED)
		p2ps_dr_add(c, "module", NULL, P2PS_V_OK, "P2PS_IOC_STATUS", NULL,
		    "p2p-shim armed: profile %s, %u hooks", st->profile, st->nr_installed);
	else
		p2ps_dr_add(c, "module", NULL, P2PS_V_WARN, "P2PS_IOC_STATUS",
		    st->state == P2PS_STATE_WAITING ? "load nvidia: the shim arms when it arrives" :
		    "run p2pctl enable",
		    "p2p-shim loaded, %s", p2ps_state_name(st->state));
	if (st->stale_gpus) {
		char list[128] = "";
		size_t off = 0;
		unsigned int b;

		for (b = 0; b < 32; b++)
			if (st->stale_gpus & (1U << b)) {
				int k = snprintf(list + off, sizeof(list) - off, "%s%u", off ? "," : "", b);

				if (k > 0 && (size_t)k < sizeof(list) - off)
					off += k;
			}
		p2ps_dr_add(c, "stale-gpus", NULL, P2PS_V_WARN, "P2PS_IOC_STATUS",
		    "GPUs cache P2P capabilities at initialisation: reload nvidia after arming\nor load p2p-shim before nvidia (softdep, p2pctl config --write)",
		    "GPU instance(s) %s initialised before arming", list);
	} else {
		p2ps_dr_add(c, "stale-gpus", NULL, P2PS_V_OK, "P2PS_IOC_STATUS", NULL,
		    "no GPU initialised before arming");
	}
	p2ps_status_free(st);
}
