/* SPDX-License-Identifier: GPL-2.0 */
/* faults.c: fault injection, in the test VM's fault build only. */
#ifndef _P2PS_FAULTS_H
#define _P2PS_FAULTS_H

#include <linux/types.h>

enum p2ps_fault {
	P2PS_FAULT_INSTALL,		/* registering hook @index fails */
	P2PS_FAULT_REMOVE_NOMEM,	/* removal cannot allocate its batch */
	P2PS_FAULT_LEDGER_NOMEM,	/* the ledger cannot allocate an entry */
	P2PS_FAULT_CPU_NO_READS,	/* the CPU is one NVIDIA's rule gives no peer reads */
	P2PS_FAULT_ANY_SWITCH,		/* any PCIe switch counts as one the driver knows */
	P2PS_FAULT_UNBOUND_WRAPPER,	/* a policy forgets to bind its wrapper */
	P2PS_FAULT_UNOWNED_ACTION,	/* action @index has no policy (set at load only) */
};
#ifdef P2PS_FAULTS
bool p2ps_fault(enum p2ps_fault f, unsigned int index);
u32 p2ps_fault_pci_id(unsigned int instance);
#else
static inline bool p2ps_fault(enum p2ps_fault f, unsigned int index)
{
	return false;
}

static inline u32 p2ps_fault_pci_id(unsigned int instance)
{
	return 0;
}
#endif

#endif /* _P2PS_FAULTS_H */
