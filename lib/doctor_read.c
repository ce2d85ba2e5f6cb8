// SPDX-License-Identifier: GPL-2.0
/*
 * `p2pctl doctor`: the driver's BAR1 peer-read host rule (rules/readrule.c)
 * for each BAR1 pair.  Every ForceP2P skips the driver's own check, so
 * p2p-shim's caps guard applies the same rule: where it fails (Intel Core,
 * Xeons other than Sapphire Rapids, without a common switch the driver
 * knows) the pair gets no P2P, unless the module's peer_reads=1 says the
 * user has proven reads on the rig.  Apps that read peer memory (custom
 * all-reduce) gave wrong data on such hosts in the field.
 */
#include <stdlib.h>
#include <string.h>

#include <p2p-shim/readrule.h>
#include "doctor.h"

/*
 * Whether the GPUs of @p share a PCIe switch the driver knows
 * (p2ps_pcie_switch_known): the deepest bridge above both, its ids.
 */
static bool known_switch(struct dctx *c, const struct p2ps_pair *p)
{
	char ca[P2PS_DR_MAX_DEPTH][16], cb[P2PS_DR_MAX_DEPTH][16], ha[64], hb[64], dir[512];
	const char *at;
	const struct p2ps_doctor_report *r = c->r;
	int na = p2ps_dr_split_path(r->gpus[p->a].path, ca, P2PS_DR_MAX_DEPTH, ha, sizeof(ha));
	int nb = p2ps_dr_split_path(r->gpus[p->b].path, cb, P2PS_DR_MAX_DEPTH, hb, sizeof(hb));
	unsigned long vendor, device;
	bool ok1, ok2;
	int i;

	if (p->path != P2PS_PATH_SWITCH)
		return false;
	for (i = 0; i < na - 1 && i < nb - 1 && !strcmp(ca[i], cb[i]); i++)
		;
	if (i == 0)
		return false;
	/*
	 * The module's rule (kmod/static_bar1.c switch_of): each GPU's nearest
	 * switch, the upstream port above its downstream port, and both the
	 * same.  So each GPU sits right below a downstream port of the common
	 * bridge: nested switches (the driver looks further up) are refused,
	 * as the module refuses them.
	 */
	if (na - 1 != i + 1 || nb - 1 != i + 1)
		return false;
	/* the bridge's own directory on the GPU's path (a tree may have no sys/bus links) */
	at = strstr(r->gpus[p->a].path, ca[i - 1]);
	if (!at)
		return false;
	snprintf(dir, sizeof(dir), "%.*s", (int)(at - r->gpus[p->a].path + strlen(ca[i - 1])),
		 r->gpus[p->a].path);
	vendor = p2ps_dr_read_hex(c, dir, "vendor", &ok1);
	device = p2ps_dr_read_hex(c, dir, "device", &ok2);
	return ok1 && ok2 && p2ps_pcie_switch_known(vendor, device);
}

void p2ps_dr_bar1_reads(struct dctx *c)
{
	struct p2ps_doctor_report *r = c->r;
	unsigned int major;
	struct p2ps_host_cpu cpu;
	char on[8] = "";
	bool opt_in;
	size_t i;

	if (!p2ps_dr_cpu(c, &cpu))
		return;		/* no /proc/cpuinfo: nothing to judge by */
	major = p2ps_driver_major(r->driver_version);	/* 0: no driver, 570+'s rule */
	opt_in = p2ps_root_line(&c->root, "/sys/module/p2p_shim/parameters/peer_reads", on,
				sizeof(on)) && on[0] == 'Y';
	for (i = 0; i < r->nr_pairs; i++) {
		struct p2ps_pair *p = &r->pairs[i];
		char subj[48];

		if (p->p2p != P2PS_P2P_BAR1 || p->path == P2PS_PATH_UNKNOWN ||
		    p2ps_bar1_reads_allowed(major, cpu.vendor, cpu.family, cpu.model,
					    known_switch(c, p)))
			continue;
		snprintf(subj, sizeof(subj), "%s %s", r->gpus[p->a].bdf, r->gpus[p->b].bdf);
		if (opt_in) {
			p2ps_dr_add(c, "bar1-reads", subj, P2PS_V_WARN, "/proc/cpuinfo, PCIe path",
				    "keep peer_reads=1 only while p2pctl verify shows reads right",
				    "NVIDIA's rule gives this host no BAR1 peer reads without a common "
				    "switch (%s family %u model %u); peer_reads=1 offers BAR1 P2P anyway",
				    cpu.vendor_id, cpu.family, cpu.model);
			continue;
		}
		p->p2p = P2PS_P2P_NONE;
		snprintf(p->p2p_why, sizeof(p->p2p_why),
			 "NVIDIA's rule: no BAR1 peer reads without a common switch on %s family %u "
			 "model %u; p2p-shim follows it", cpu.vendor_id, cpu.family, cpu.model);
		p2ps_dr_add(c, "bar1-reads", subj, P2PS_V_WARN, "/proc/cpuinfo, PCIe path",
			    "load p2p-shim with peer_reads=1 only after p2pctl verify has shown peer "
			    "reads right on this rig",
			    "no P2P: NVIDIA's rule gives BAR1 peer reads only below a common PCIe "
			    "switch, or with an AMD CPU or a Sapphire Rapids Xeon (%s family %u "
			    "model %u here), and p2p-shim follows it; apps that read peer memory "
			    "(custom all-reduce) gave wrong data on such hosts",
			    cpu.vendor_id, cpu.family, cpu.model);
	}
}
