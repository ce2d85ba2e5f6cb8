// SPDX-License-Identifier: GPL-2.0
/*
 * `p2pctl doctor`: the driver's BAR1 peer-read host rule (kmod/readrule.c)
 * for each BAR1 pair.  Where the rule fails (Intel Core, Xeons other than
 * Sapphire Rapids, without a common switch) p2p-shim's ForceP2P=0x211
 * forces peer reads on anyway: writes (NCCL) are fine, apps that read peer
 * memory (custom all-reduce) gave wrong data there (shared/FIELD.md N1, N2).
 */
#include <stdlib.h>
#include <string.h>

#include <p2p-shim/readrule.h>
#include "doctor.h"

bool p2ps_dr_cpu(struct dctx *c, struct p2ps_dr_cpu *cpu)
{
	char *text = p2ps_root_read(&c->root, "/proc/cpuinfo", NULL, false);
	const char *line;
	bool fam = false, mod = false;

	memset(cpu, 0, sizeof(*cpu));
	if (!text)
		return false;
	/* the first processor's block */
	for (line = text; *line && *line != '\n';) {
		const char *eol = strchrnul(line, '\n'), *colon = memchr(line, ':', eol - line);
		size_t kl;

		if (colon) {
			const char *v = colon + 1;

			for (kl = (size_t)(colon - line); kl && (line[kl - 1] == ' ' || line[kl - 1] == '\t'); kl--)
				;
			while (*v == ' ' || *v == '\t')
				v++;
			if (kl == 9 && !strncmp(line, "vendor_id", 9))
				snprintf(cpu->vendor_id, sizeof(cpu->vendor_id), "%.*s",
					 (int)(eol - v), v);
			else if (kl == 10 && !strncmp(line, "cpu family", 10))
				fam = sscanf(v, "%u", &cpu->family) == 1;
			else if (kl == 5 && !strncmp(line, "model", 5))
				mod = sscanf(v, "%u", &cpu->model) == 1;
		}
		line = *eol ? eol + 1 : eol;
	}
	free(text);
	cpu->vendor = !strcmp(cpu->vendor_id, "GenuineIntel") ? P2PS_CPU_INTEL :
		      !strcmp(cpu->vendor_id, "AuthenticAMD") ? P2PS_CPU_AMD : P2PS_CPU_OTHER;
	cpu->known = *cpu->vendor_id && fam && mod;
	return cpu->known;
}

void p2ps_dr_bar1_reads(struct dctx *c)
{
	const struct p2ps_doctor_report *r = c->r;
	struct p2ps_dr_cpu cpu;
	size_t i;

	if (!p2ps_dr_cpu(c, &cpu))
		return;		/* no /proc/cpuinfo: nothing to judge by */
	for (i = 0; i < r->nr_pairs; i++) {
		const struct p2ps_pair *p = &r->pairs[i];
		char subj[48];

		if (p->p2p != P2PS_P2P_BAR1 || p->path == P2PS_PATH_UNKNOWN ||
		    p2ps_bar1_reads_allowed(cpu.vendor, cpu.family, cpu.model,
					    p->path == P2PS_PATH_SWITCH))
			continue;
		snprintf(subj, sizeof(subj), "%s %s", r->gpus[p->a].bdf, r->gpus[p->b].bdf);
		p2ps_dr_add(c, "bar1-reads", subj, P2PS_V_WARN, "/proc/cpuinfo, PCIe path",
			    "NCCL (peer writes) is fine; turn off custom all-reduce (vLLM "
			    "--disable-custom-all-reduce) or check with p2pctl verify",
			    "the driver allows BAR1 peer reads only with a common switch, AMD Zen or "
			    "Sapphire Rapids (%s family %u model %u here): ForceP2P forces them; "
			    "apps that read peer memory are at risk", cpu.vendor_id, cpu.family, cpu.model);
	}
}
