// SPDX-License-Identifier: GPL-2.0
/*
 * `p2pctl doctor`: the IOMMU mode.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "doctor.h"

void p2ps_dr_iommu(struct dctx *c)
{
	char **names;
	size_t n = 0;
	char cmdline[1024] = "";

	if (p2ps_root_list(&c->root, "/sys/class/iommu", &names, &n))
		n = 0;
	else
		p2ps_free_list(names, n);
	p2ps_root_line(&c->root, "/proc/cmdline", cmdline, sizeof(cmdline));
	if (n == 0) {
		p2ps_dr_add(c, "iommu", NULL, P2PS_V_OK, "/sys/class/iommu", NULL,
		    "IOMMU off (no IOMMU registered)");
	} else if (strstr(cmdline, "iommu=pt") || strstr(cmdline, "iommu.passthrough=1")) {
		p2ps_dr_add(c, "iommu", NULL, P2PS_V_OK, "/proc/cmdline", NULL,
		    "IOMMU in passthrough mode (%zu unit%s)", n, n == 1 ? "" : "s");
	} else {
		/*
		 * UVM/CUDA peer PTEs use the peer BAR1 as the IOMMU maps it
		 * (kbusGetBar1P2PDmaInfo), but RM's own BAR1 windows
		 * (dmaAllocBar1P2PMapping_GH100) describe the raw bus address:
		 * under translation those DMAs fault.
		 */
		p2ps_dr_add(c, "iommu", NULL, P2PS_V_WARN, "/sys/class/iommu",
		    "boot with iommu=pt: with a translating IOMMU, peer mappings the driver makes itself through BAR1 windows use the raw bus address and fault; CUDA peer mappings through UVM use the IOMMU address and work",
		    "IOMMU on (%zu unit%s), translated DMA", n, n == 1 ? "" : "s");
	}
}
