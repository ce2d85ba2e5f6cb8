/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The policies' ops tables, as the profile's descriptors name them
 * (profile.c: ACT()).  The engine (hook.c) calls them through the
 * descriptors and never by name.
 */
#ifndef _P2PS_P2P_SHIM_H
#define _P2PS_P2P_SHIM_H

#include "hook.h"

extern const struct p2ps_hook_ops
	/* hook.c: nothing on top of the hook's kind */
	p2ps_none_ops,
	/* bar1_map.c: PCIE_BAR1 routing and the mapping wrappers */
	p2ps_route_bar1_ops, p2ps_ledger_create_ops, p2ps_ledger_remove_ops,
	p2ps_ledger_dma_map_ops, p2ps_ledger_dma_unmap_ops,
	/* registry.c: registry defaults */
	p2ps_registry_defaults_ops,
	/* caps.c: the caps guard */
	p2ps_caps_guard_ops, p2ps_caps_guard_v1_ops,
	/* static_bar1_gen0.c: gen 0's static BAR1 */
	p2ps_view_is_supported_ops, p2ps_bar1_capable_ops, p2ps_static_enable_ops,
	p2ps_static_disable_ops, p2ps_static_view_ops,
	/* gpus.c: GPU tracking */
	p2ps_gpu_attach_ops, p2ps_gpu_detach_ops, p2ps_gpu_leaving_ops,
	/* static_bar1.c: static BAR1 per GPU (565+) */
	p2ps_static_decide_ops, p2ps_client_fb_ops, p2ps_static_bar1_ops,
	p2ps_static_bar1_off_ops,
	/* uvm.c: gen A's UVM external mappings */
	p2ps_uvm_scope_ops, p2ps_uvm_aperture_ops, p2ps_uvm_encode_ops,
	p2ps_native_create_ops, p2ps_native_remove_ops,
	/* uvm_peer.c: the UVM peer set */
	p2ps_uvm_peer_caps_ops, p2ps_uvm_peer_pte_ops, p2ps_uvm_peer_address_ops,
	p2ps_uvm_peer_copy_ops, p2ps_uvm_peer_atomics_ops;

/* The objects' callbacks (profile.c: OBJECT_CB()). */
extern const struct p2ps_object_cb
	/* lifecycle.c: nvidia's object, armed with the profile */
	p2ps_nvidia_cb,
	/* uvm_peer.c: nvidia-uvm's, the UVM peer set */
	p2ps_uvm_peer_cb;

#endif /* _P2PS_P2P_SHIM_H */
