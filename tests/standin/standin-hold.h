/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Hold points: places in the stand-ins' code where a test can park a call
 * until it releases it, to put a disable, enable or rmmod exactly inside
 * that call (docs/standin.md, "Locking and hold points").  The stand-in
 * nvidia.ko keeps them (nv.c) and exports nv_standin_hold() for the
 * stand-in nvidia-uvm.ko.
 */
#ifndef STANDIN_HOLD_H
#define STANDIN_HOLD_H

enum nv_standin_hold_point {
	NV_STANDIN_HOLD_ATTACH,	/* gpumgrAttachGpu, after entry, before the registry reads */
	NV_STANDIN_HOLD_CAPS,	/* p2pGetCapsStatus, between entry and return */
	NV_STANDIN_HOLD_CREATE,	/* kbusCreateP2PMappingForBar1P2P_GH100, mid-call */
	NV_STANDIN_HOLD_PTE,	/* nvidia-uvm's peer PTE address (the UVM peer set's hook) */
	NV_STANDIN_HOLD_SB1,	/* kbusInitBar1: after the static BAR1 decision, before the enable */
	NV_STANDIN_HOLD_COUNT
};

/* Parks the calling thread while @point is held (bounded: hold_timeout). */
void nv_standin_hold(enum nv_standin_hold_point point);

#endif
