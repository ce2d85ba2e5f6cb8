// SPDX-License-Identifier: GPL-2.0
/*
 * `p2pctl doctor`: static BAR1 per GPU.  The rules are rules/sb1rule.c's,
 * compiled into the library unchanged; here: the host's inputs and remedies.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "doctor.h"

/*
 * The driver's static-BAR1 decision and p2p-shim's forcing, per generation
 * (docs/cards.md has the source lines), are rules/sb1rule.c's, compiled into
 * this library as they are into the module: p2ps_sb1_driver_rule() and
 * p2ps_sb1_shim_rule().  Here: the host's inputs and the remedies.
 */
_Static_assert((int)P2PS_PRED_YES == (int)P2PS_SB_YES && (int)P2PS_PRED_NO == (int)P2PS_SB_NO &&
	       (int)P2PS_PRED_UNALIGNED == (int)P2PS_SB_UNALIGNED &&
	       (int)P2PS_PRED_INIT_FAILS == (int)P2PS_SB_INIT_FAILS &&
	       (int)P2PS_PRED_UNKNOWN == (int)P2PS_SB_UNKNOWN, "sb1rule.h and p2pshim.h agree");

struct sb_result {
	struct p2ps_sb1_pred_out o;
	char remedy[256];
};

static void sb_rules_init(struct dctx *c, struct p2ps_dr_rules *r)
{
	struct p2ps_sb1_keys *k = &r->k;
	const char *ver = c->r->driver_version;
	char buf[16];
	unsigned int major = p2ps_driver_major(ver);
	size_t i;

	memset(r, 0, sizeof(*r));
	if (!*ver) {
		k->gen = P2PS_GEN_B;
		r->assumed = true;
	} else if (!c->r->open_module || major < 550) {
		k->gen = P2PS_GEN_UNSERVED;
	} else {
		k->gen = p2ps_sb1_gen_of(major);
	}
	p2ps_dr_param(c, "RegistryDwords", r->dwords, sizeof(r->dwords));
	p2ps_dr_param(c, "RegistryDwordsPerDevice", r->per_device, sizeof(r->per_device));
	r->per_device_late = major >= 595;
	r->init_on_probe = p2ps_dr_param(c, "GpuInitOnProbe", buf, sizeof(buf)) && strtol(buf, NULL, 0);
	for (i = 0; i < c->r->nr_gpus; i++)
		if (strcmp(c->r->gpus[i].bdf, r->last_bdf) > 0)
			p2ps_strlcpy(r->last_bdf, c->r->gpus[i].bdf, sizeof(r->last_bdf));
	p2ps_dr_gpu_keys(r, NULL, k);
	k->shim_keys = !(p2ps_root_line(&c->root, "/sys/module/p2p_shim/parameters/registry_defaults",
					 buf, sizeof(buf)) && (buf[0] == 'N' || buf[0] == '0'));
	k->shim_force = !(p2ps_root_line(&c->root, "/sys/module/p2p_shim/parameters/static_bar1",
					  buf, sizeof(buf)) && (buf[0] == 'N' || buf[0] == '0'));
}

void p2ps_dr_gpu_keys(const struct p2ps_dr_rules *r, const struct p2ps_gpu *g, struct p2ps_sb1_keys *k)
{
	const char *bdf = p2ps_dr_per_device_bdf(r, g);

	if (k != &r->k)
		*k = r->k;
	/* 550/560 have no RMForceStaticBar1: the key is not read there */
	k->user_force_sb = k->gen == P2PS_GEN_0 ? -1 :
			   p2ps_dr_user_key(r->dwords, r->per_device, bdf, "RMForceStaticBar1", NULL);
	k->user_pcie_type = p2ps_dr_user_key(r->dwords, r->per_device, bdf, "RMPcieP2PType", NULL);
	k->user_force_p2p_type = p2ps_dr_user_key(r->dwords, r->per_device, bdf, "RMForceP2PType", NULL);
	k->user_bar1_aperture_mb = p2ps_dr_user_key(r->dwords, r->per_device, bdf,
						     "RMBar1ApertureSizeMB", NULL);
}

/*
 * The options the user set @key in for @g ("NVreg_RegistryDwords" where
 * unset): both where both do, as the global value applies once the
 * per-device one is gone.
 */
static const char *option_of(const struct p2ps_dr_rules *r, const struct p2ps_gpu *g, const char *key)
{
	const char *option;

	p2ps_dr_user_key(r->dwords, r->per_device, p2ps_dr_per_device_bdf(r, g), key, &option);
	return option;
}

static const char *const ENABLE_KEY =
	"options nvidia NVreg_RegistryDwords=\"RMForceStaticBar1=1\" (with any keys already there)";

static void sb_gpu(struct dctx *c, const struct p2ps_dr_rules *rules, struct p2ps_gpu *g,
		   struct sb_result *o)
{
	struct p2ps_sb1_keys gk;
	const struct p2ps_sb1_keys *k = &gk;
	unsigned int major = p2ps_driver_major(c->r->driver_version);
	long force;
	uint64_t cfb;
	bool con = g->display == 1;
	char bs[32], vs[32];

	memset(o, 0, sizeof(*o));
	p2ps_dr_gpu_keys(rules, g, &gk);
	force = p2ps_sb1_force_type(k);
	p2ps_dr_fmt_size(g->bar1, bs, sizeof(bs));
	p2ps_dr_fmt_size(g->vram, vs, sizeof(vs));
	if (k->gen == P2PS_GEN_UNSERVED) {
		o->o.v = P2PS_PRED_NO;
		snprintf(o->o.why, sizeof(o->o.why),
			 "driver %s: not served by p2p-shim (%s)", c->r->driver_version,
			 !c->r->open_module ? "the proprietary module" :
			 major ? "before 550: no static BAR1 for GeForce" :
			 "its version is not MAJOR.MINOR[.PATCH]");
		p2ps_strlcpy(o->remedy, c->r->open_module ? "use the open driver 550 or later" :
			     "install the open kernel module flavour of the driver", sizeof(o->remedy));
		return;
	}
	if (!strncmp(g->chip, "GB20", 4) && major && major < 570) {
		o->o.v = P2PS_PRED_NO;
		snprintf(o->o.why, sizeof(o->o.why), "driver %s does not support %s (GB20x: 570.86.16 and later)",
			 c->r->driver_version, g->chip);
		p2ps_strlcpy(o->remedy, "use the open driver 570.86.16 or later", sizeof(o->remedy));
		return;
	}
	if (!g->bar1 || !g->vram) {
		o->o.v = P2PS_PRED_UNKNOWN;
		snprintf(o->o.why, sizeof(o->o.why), "BAR1 or VRAM size unknown");
		p2ps_strlcpy(o->remedy, "give nvidia-smi --query-gpu output (memory.total), or check lspci -vv",
			     sizeof(o->remedy));
		return;
	}
	/* client-visible VRAM: nvidia-smi's total, or VRAM less an estimated RM reserve */
	cfb = g->vram_mib ? g->vram_mib * MiB : g->vram - g->vram / 256;
	p2ps_sb1_driver_rule(k, force, g->bar1, g->vram, cfb, con, &o->o);
	p2ps_sb1_shim_rule(k, g->bar1, cfb, con, &o->o);

	/* The user's RMBar1ApertureSizeMB, where it alone stands in the way. */
	if (o->o.v != P2PS_PRED_YES &&
	    p2ps_sb1_aperture(g->bar1, p2ps_sb1_key_aperture(k)) < g->bar1) {
		struct p2ps_sb1_pred_out w;
		struct p2ps_sb1_keys k2 = *k;

		k2.user_bar1_aperture_mb = -1;
		p2ps_sb1_driver_rule(&k2, force, g->bar1, g->vram, cfb, con, &w);
		p2ps_sb1_shim_rule(&k2, g->bar1, cfb, con, &w);
		if (w.v == P2PS_PRED_YES) {
			snprintf(o->remedy, sizeof(o->remedy),
				 "take RMBar1ApertureSizeMB out of %s: it shrinks BAR1 (%s) to %ld MiB; without it static BAR1 is on",
				 option_of(rules, g, "RMBar1ApertureSizeMB"), bs, k->user_bar1_aperture_mb);
			return;
		}
	}
	switch (o->o.v) {
	case P2PS_PRED_YES:
		return;
	case P2PS_PRED_UNKNOWN:
		p2ps_strlcpy(o->remedy, "load the driver and p2p-shim, then `p2pctl verify` shows whether the pair maps",
			     sizeof(o->remedy));
		return;
	case P2PS_PRED_UNALIGNED:
		p2ps_strlcpy(o->remedy,
			     "move the display (and boot console) to another GPU or the iGPU\nor use driver 580+ (static BAR1 at 512 MiB)",
			     sizeof(o->remedy));
		return;
	case P2PS_PRED_INIT_FAILS: {
		struct p2ps_sb1_pred_out w;
		struct p2ps_sb1_keys k2 = *k;

		k2.user_force_sb = -1;
		p2ps_sb1_driver_rule(&k2, P2PS_SB_ENABLE, g->bar1, g->vram, cfb, false, &w);
		if (con && w.v == P2PS_PRED_YES)
			snprintf(o->remedy, sizeof(o->remedy),
				 "move the display (and boot console) to another GPU or the iGPU\nor take RMForceStaticBar1=1 out of %s",
				 option_of(rules, g, "RMForceStaticBar1"));
		else
			snprintf(o->remedy, sizeof(o->remedy),
				 "take RMForceStaticBar1=1 out of %s: BAR1 can't hold VRAM here",
				 option_of(rules, g, "RMForceStaticBar1"));
		return;
	}
	default:
		break;
	}
	/* NO: say what would change it */
	if (k->gen == P2PS_GEN_0) {
		if (!p2ps_sb1_bar1p2p_type(k))
			snprintf(o->remedy, sizeof(o->remedy), k->shim_keys ?
				 "take RMForceP2PType out of %s (p2p-shim supplies 2)" :
				 "load p2p-shim with registry_defaults=1 (its RMForceP2PType=2 turns static BAR1 on)",
				 option_of(rules, g, "RMForceP2PType"));
		else if (g->bar1 <= 256 * MiB || (g->bar1 < g->vram && g->bar1 < 4 * GiB))
			p2ps_strlcpy(o->remedy,
				     "enable Above 4G Decoding and Resizable BAR in the firmware setup and set NVreg_EnableResizableBar=1 (p2pctl config --write)",
				     sizeof(o->remedy));
		else
			snprintf(o->remedy, sizeof(o->remedy),
				 "none on 550/560 (no RMForceStaticBar1 there): BAR1 (%s) can't hold VRAM (%s) plus 128 KiB; with 570 or later p2p-shim forces it where the client FB fits (docs/cards.md)",
				 bs, vs);
		return;
	}
	if (force == P2PS_SB_DISABLE && k->user_force_sb == 0) {
		snprintf(o->remedy, sizeof(o->remedy), "take RMForceStaticBar1=0 out of %s",
			 option_of(rules, g, "RMForceStaticBar1"));
	} else if (force == P2PS_SB_DISABLE || (force == P2PS_SB_ONLY_GPU && !p2ps_sb1_bar1p2p_type(k))) {
		snprintf(o->remedy, sizeof(o->remedy), k->shim_keys ?
			 "take RMForceP2PType out of %s (p2p-shim supplies 2)" :
			 "load p2p-shim with registry_defaults=1 (its registry keys turn static BAR1 on)",
			 option_of(rules, g, "RMForceP2PType"));
	} else if (g->bar1 <= 256 * MiB || (g->bar1 < g->vram && g->bar1 < 4 * GiB)) {
		p2ps_strlcpy(o->remedy,
			     "enable Above 4G Decoding and Resizable BAR in the firmware setup and set NVreg_EnableResizableBar=1 (p2pctl config --write)",
			     sizeof(o->remedy));
	} else if (g->bar1 < g->vram) {
		snprintf(o->remedy, sizeof(o->remedy),
			 "none in software: BAR1 (%s) is smaller than VRAM (%s) and can't hold it (RMForceStaticBar1=1 would make GPU initialisation fail); a larger BAR1, if the board offers one (Resizable BAR)",
			 bs, vs);
	} else {
		struct p2ps_sb1_pred_out w, w0;
		struct p2ps_sb1_keys k2 = *k;

		k2.user_force_sb = -1;
		p2ps_sb1_driver_rule(&k2, P2PS_SB_ENABLE, g->bar1, g->vram, cfb, con, &w);
		p2ps_sb1_driver_rule(&k2, P2PS_SB_ENABLE, g->bar1, g->vram, cfb, false, &w0);
		if (con && force == P2PS_SB_AUTO) {
			p2ps_sb1_driver_rule(&k2, P2PS_SB_AUTO, g->bar1, g->vram, cfb, false, &w0);
			if (w0.v == P2PS_PRED_YES) {
				p2ps_strlcpy(o->remedy,
					     "move the display (and boot console) to another GPU or the iGPU: without the console in BAR1 the automatic rule fits",
					     sizeof(o->remedy));
				return;
			}
			p2ps_sb1_driver_rule(&k2, P2PS_SB_ENABLE, g->bar1, g->vram, cfb, false, &w0);
		}
		if (w.v == P2PS_PRED_YES)
			snprintf(o->remedy, sizeof(o->remedy),
				 "BAR1 can't grow further; forcing fits here%s: %s, then reload nvidia",
				 p2ps_sb1_mailbox(k) ? "" : " (p2p-shim's registry keys keep the P2P mailbox out of BAR1)",
				 ENABLE_KEY);
		else if (w0.v == P2PS_PRED_YES)
			snprintf(o->remedy, sizeof(o->remedy),
				 "move the display (and boot console) to another GPU or the iGPU, then force it: %s. With the console in BAR1, forcing makes GPU initialisation fail",
				 ENABLE_KEY);
		else
			snprintf(o->remedy, sizeof(o->remedy),
				 "none in software: forcing (RMForceStaticBar1=1) would make GPU initialisation fail here; a larger BAR1 (Resizable BAR), if the board offers one");
	}
}

void p2ps_dr_static_bar1(struct dctx *c)
{
	struct p2ps_dr_rules *k = &c->rules;
	struct p2ps_doctor_report *r = c->r;
	size_t i;

	sb_rules_init(c, k);
	for (i = 0; i < r->nr_gpus; i++) {
		struct p2ps_gpu *g = &r->gpus[i];
		struct sb_result o;
		enum p2ps_verdict v;

		sb_gpu(c, k, g, &o);
		g->static_bar1 = (enum p2ps_static_bar1)o.o.v;
		p2ps_strlcpy(g->static_bar1_why, o.o.why, sizeof(g->static_bar1_why));
		v = g->static_bar1 == P2PS_SB_YES ? P2PS_V_OK :
		    g->static_bar1 == P2PS_SB_INIT_FAILS ? P2PS_V_FAIL : P2PS_V_WARN;
		p2ps_dr_add(c, "static-bar1", g->bdf, v,
		    k->assumed ? "rules of driver 580+ (no driver loaded)" : "rules of the installed driver",
		    o.remedy, "static BAR1 %s%s: %s", p2ps_static_bar1_name(g->static_bar1),
		    g->display == 1 ? " (drives the boot display)" : "", o.o.why);
	}
}
