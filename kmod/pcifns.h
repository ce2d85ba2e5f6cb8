/* SPDX-License-Identifier: GPL-2.0 */
/* pcifns.c: the PCI functions p2p-shim may be asked about, gathered ahead of the attach. */
#ifndef _P2PS_PCIFNS_H
#define _P2PS_PCIFNS_H

#include <linux/types.h>

int p2ps_pcifns_start(void);
void p2ps_pcifns_stop(void);

struct p2ps_pcifn_facts {
	u32 pci_id;	/* vendor << 16 | device (gpurule.h) */
	u64 ioh;	/* 0: not below an Intel IOH root port; else its root bus + 1 */
	u64 sw;		/* 0: below no PCIe switch the driver knows; else its upstream port + 1 */
};
bool p2ps_pcifn_facts(u64 dbd, struct p2ps_pcifn_facts *out);

#endif /* _P2PS_PCIFNS_H */
