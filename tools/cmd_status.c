// SPDX-License-Identifier: GPL-2.0
/* p2pctl status */
#include <getopt.h>
#include <inttypes.h>
#include <string.h>

#include "p2pctl.h"
#include <p2p-shim/profile.h>
#include <p2p-shim/readrule.h>

static const char help[] =
	"Usage: p2pctl status [--json]\n\n"
	"Show p2p-shim's state (disabled, waiting, armed, dry-run, or residual:\n"
	"disabled while GPUs still carry its ForceP2P), the driver version and\n"
	"profile, each hook (target, kind, state, hits, DEST: the\n"
	"function a redirect runs instead, last error), per GPU what the driver\n"
	"decided about static BAR1 (on, off, forced by p2p-shim, and why) and the\n"
	"live BAR1 peer mappings.  \"stale GPUs:\" names GPUs initialised before\n"
	"arming, which keep the driver's own settings until they re-initialise;\n"
	"\"uvm peers:\" says whether nvidia-uvm's peer mappings are fixed;\n"
	"\"registry keys:\" which GPUs get p2p-shim's registry defaults (every\n"
	"GPU, those of registry_gpus=, or none: registry_defaults=0); \"peer\n"
	"reads:\" where BAR1 P2P is offered by NVIDIA's host rule for peer reads\n"
	"(every pair with an AMD CPU or a Sapphire Rapids Xeon, else only GPUs\n"
	"below one PCIe switch), or everywhere with peer_reads=1.\n"
	"Does not need root.\n\n"
	"  -j, --json     print JSON\n"
	"  -h, --help     this help\n\n"
	P2PCTL_EXIT_CODES_HELP;

static json_object *flags_json(uint32_t f)
{
	json_object *a = json_object_new_array();

	if (f & P2PS_ENABLE_DRY_RUN)
		json_object_array_add(a, json_object_new_string("dry-run"));
	if (f & P2PS_ENABLE_FORCE)
		json_object_array_add(a, json_object_new_string("force"));
	return a;
}

/*
 * The UVM peer set (nvidia-uvm's own peer PTEs of BAR1 pairs): its rows
 * are the hooks named "<module>:<symbol>".  NULL when there is nothing to
 * say (p2p-shim not armed).
 */
static const char *uvm_peers(const struct p2ps_status_info *st, char *buf, size_t len)
{
	const struct p2ps_hook_info *failed = NULL;
	size_t i, n = 0, installed = 0;

	if (st->state != P2PS_STATE_ARMED && st->state != P2PS_STATE_DRY_RUN)
		return NULL;
	for (i = 0; i < st->nr_hooks; i++) {
		const struct p2ps_hook_info *k = &st->hooks[i];

		if (!strchr(k->target, ':'))
			continue;
		n++;
		if (k->state == P2PS_HOOK_INSTALLED)
			installed++;
		else if (k->state == P2PS_HOOK_FAILED && !failed)
			failed = k;
	}
	if (failed)
		snprintf(buf, len, "NOT armed: %s: %s; nvidia-uvm's own (managed-memory) peer "
			 "mappings of BAR1 pairs are NOT fixed", failed->target, failed->last_error);
	else if (n && installed == n && st->state == P2PS_STATE_DRY_RUN)
		snprintf(buf, len, "dry run (%zu counting hooks)", n);
	else if (n && installed == n)
		snprintf(buf, len, "armed (%zu hooks)", n);
	else if (n)
		snprintf(buf, len, "NOT armed (%zu of %zu hooks)", installed, n);
	else if (p2ps_uvm_set_for_version(st->driver_version))
		snprintf(buf, len, "waiting for nvidia-uvm");
	else if (p2ps_uvm_native_bar1(st->driver_version))
		snprintf(buf, len, "none needed (nvidia-uvm %s maps BAR1 peers itself)",
			 st->driver_version);
	else
		snprintf(buf, len, "not covered: nvidia-uvm's own peer mappings of BAR1 pairs "
			 "are NOT fixed");
	return buf;
}

/* p2p-shim's module parameter @name, its first line into @buf; false if not loaded. */
static bool shim_param(const char *name, char *buf, size_t len)
{
	char path[96];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/p2p_shim/parameters/%s", name);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (!fgets(buf, (int)len, f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return true;
}

/*
 * Which GPUs get the registry defaults, from the module's parameters
 * (registry_defaults, registry_gpus): "every GPU", the list, or "none".
 */
static const char *registry_scope(char *buf, size_t len)
{
	char on[8], list[P2PS_REASON_LEN] = "";
	size_t n = 0;

	if (!shim_param("registry_defaults", on, sizeof(on)))
		return NULL;
	if (on[0] == 'N')
		return "none (registry_defaults=0)";
	if (!shim_param("registry_gpus", list, sizeof(list)) || !list[0])
		return "every GPU";
	buf[0] = '\0';
	for (char *tok = strtok(list, ","); tok && n < len; tok = strtok(NULL, ","))
		n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", tok);
	return buf;
}

/*
 * Where BAR1 P2P gets peer reads (the caps guard applies NVIDIA's host rule,
 * rules/readrule.c): from this CPU (/proc/cpuinfo, read as doctor reads it)
 * and the module's peer_reads.  NULL when p2p-shim is not loaded.
 */
static const char *peer_reads(const char *driver, char *buf, size_t len)
{
	unsigned int major = 0, minor, patch;
	struct p2ps_host_cpu cpu;
	char on[8];

	if (!shim_param("peer_reads", on, sizeof(on)))
		return NULL;
	if (on[0] == 'Y')
		return "allowed for every pair (peer_reads=1: the user's opt-in)";
	p2ps_host_cpu(&cpu);
	if (p2ps_parse_version(driver, &major, &minor, &patch))
		major = 0;
	if (cpu.known && p2ps_bar1_reads_allowed(major, cpu.vendor, cpu.family, cpu.model, false))
		snprintf(buf, len, "allowed (%s family %u model %u: NVIDIA's host rule)",
			 cpu.vendor == P2PS_CPU_AMD ? "AMD" : "Intel", cpu.family, cpu.model);
	else
		snprintf(buf, len, "only below a common PCIe switch (%s family %u model %u: "
			 "NVIDIA's host rule; peer_reads=1 overrides)",
			 *cpu.vendor_id ? cpu.vendor_id : "CPU", cpu.family, cpu.model);
	return buf;
}

json_object *p2pctl_status_json(const struct p2ps_status_info *st, const char *modver);

json_object *p2pctl_status_json(const struct p2ps_status_info *st, const char *modver)
{
	json_object *o = json_object_new_object(), *hooks, *maps, *gpus;
	size_t i;

	json_object_object_add(o, "module_version", p2pctl_json_str(modver));
	json_object_object_add(o, "state", json_object_new_string(p2ps_state_name(st->state)));
	json_object_object_add(o, "flags", flags_json(st->flags));
	json_object_object_add(o, "driver_version", p2pctl_json_str(st->driver_version));
	json_object_object_add(o, "profile", p2pctl_json_str(st->profile));
	json_object_object_add(o, "hooks_installed", json_object_new_int64(st->nr_installed));
	json_object_object_add(o, "live_mappings", json_object_new_int64(st->live_mappings));
	json_object_object_add(o, "stale_gpus", json_object_new_int64(st->stale_gpus));
	json_object_object_add(o, "hits", json_object_new_uint64(st->hits));
	{
		char buf[P2PS_REASON_LEN];

		json_object_object_add(o, "registry_keys",
				       p2pctl_json_str(registry_scope(buf, sizeof(buf)) ?: ""));
		json_object_object_add(o, "peer_reads",
				       p2pctl_json_str(peer_reads(st->driver_version, buf, sizeof(buf)) ?: ""));
	}
	{
		char buf[P2PS_REASON_LEN + 160];

		json_object_object_add(o, "uvm_peers",
				       p2pctl_json_str(uvm_peers(st, buf, sizeof(buf)) ?: ""));
	}
	hooks = json_object_new_array();
	for (i = 0; i < st->nr_hooks; i++) {
		const struct p2ps_hook_info *k = &st->hooks[i];
		json_object *h = json_object_new_object();

		json_object_object_add(h, "target", json_object_new_string(k->target));
		json_object_object_add(h, "dest", p2pctl_json_str(k->dest));
		json_object_object_add(h, "kind", json_object_new_string(p2ps_hook_kind_name(k->kind)));
		json_object_object_add(h, "state", json_object_new_string(p2ps_hook_state_name(k->state)));
		json_object_object_add(h, "hits", json_object_new_uint64(k->hits));
		json_object_object_add(h, "last_error", p2pctl_json_str(k->last_error));
		json_object_array_add(hooks, h);
	}
	json_object_object_add(o, "hooks", hooks);
	maps = json_object_new_array();
	for (i = 0; i < st->nr_mappings; i++) {
		const struct p2ps_mapping_info *m = &st->mappings[i];
		json_object *j = json_object_new_object();

		json_object_object_add(j, "gpu0", p2pctl_json_gpu(m->gpu0));
		json_object_object_add(j, "gpu1", p2pctl_json_gpu(m->gpu1));
		json_object_object_add(j, "conn_type", json_object_new_string(p2ps_conn_type_name(m->conn_type)));
		json_object_object_add(j, "count", json_object_new_int64(m->count));
		json_object_object_add(j, "dma_base",
				       m->dma_base ? json_object_new_uint64(m->dma_base) : NULL);
		json_object_object_add(j, "dma_size", json_object_new_uint64(m->dma_size));
		json_object_array_add(maps, j);
	}
	json_object_object_add(o, "mappings", maps);
	gpus = json_object_new_array();
	for (i = 0; i < st->nr_gpus; i++) {
		const struct p2ps_gpu_info *g = &st->gpus[i];
		json_object *j = json_object_new_object();

		json_object_object_add(j, "instance", json_object_new_int64(g->instance));
		json_object_object_add(j, "static_bar1",
				       json_object_new_string(p2ps_sb1_state_name(g->static_bar1)));
		json_object_object_add(j, "forced_by_shim",
				       json_object_new_boolean(g->static_bar1 == P2PS_SB1_FORCED));
		json_object_object_add(j, "p2p_usable", json_object_new_boolean(g->p2p_usable));
		json_object_object_add(j, "force_p2p", json_object_new_boolean(g->force_p2p));
		json_object_object_add(j, "bar1_addr",
				       g->bar1_addr ? json_object_new_uint64(g->bar1_addr) : NULL);
		json_object_object_add(j, "bar1_size", json_object_new_uint64(g->bar1_size));
		json_object_object_add(j, "console", json_object_new_uint64(g->console));
		json_object_object_add(j, "mailbox", json_object_new_uint64(g->mailbox));
		json_object_object_add(j, "client_fb", json_object_new_uint64(g->client_fb));
		json_object_object_add(j, "offset", json_object_new_uint64(g->offset));
		json_object_object_add(j, "reason", p2pctl_json_str(g->reason));
		json_object_array_add(gpus, j);
	}
	json_object_object_add(o, "gpus", gpus);
	json_object_object_add(o, "detail_error",
			       st->detail_error ? json_object_new_string(p2ps_strerror(st->detail_error)) : NULL);
	return o;
}

void p2pctl_status_print(const struct p2ps_status_info *st, const char *modver, FILE *f);
static void gpus_print(const struct p2ps_status_info *st, FILE *f);

void p2pctl_status_print(const struct p2ps_status_info *st, const char *modver, FILE *f)
{
	struct p2pctl_table t;
	char buf[160 + 32 * 7];	/* "stale GPUs:" names up to 32 */
	size_t i;

	p2pctl_table_init(&t, 2);
	p2pctl_table_row(&t, "module:", *modver ? modver : "?");
	snprintf(buf, sizeof(buf), "%s%s%s", p2ps_state_name(st->state),
		 st->flags & P2PS_ENABLE_DRY_RUN ? " (dry run)" : "",
		 st->flags & P2PS_ENABLE_FORCE ? " (forced)" : "");
	p2pctl_table_row(&t, "state:", buf);
	p2pctl_table_row(&t, "driver:", *st->driver_version ? st->driver_version : "not loaded");
	p2pctl_table_row(&t, "profile:", *st->profile ? st->profile : "none");
	snprintf(buf, sizeof(buf), "%u installed", st->nr_installed);
	p2pctl_table_row(&t, "hooks:", buf);
	snprintf(buf, sizeof(buf), "%" PRIu64, st->hits);
	p2pctl_table_row(&t, "hits:", buf);
	snprintf(buf, sizeof(buf), "%u", st->live_mappings);
	p2pctl_table_row(&t, "mappings:", buf);
	{
		char ubuf[P2PS_REASON_LEN + 160];

		if (uvm_peers(st, ubuf, sizeof(ubuf)))
			p2pctl_table_row(&t, "uvm peers:", ubuf);
	}
	{
		char rbuf[P2PS_REASON_LEN];
		const char *scope = registry_scope(rbuf, sizeof(rbuf));

		if (scope)
			p2pctl_table_row(&t, "registry keys:", scope);
		scope = peer_reads(st->driver_version, rbuf, sizeof(rbuf));
		if (scope)
			p2pctl_table_row(&t, "peer reads:", scope);
	}
	if (st->stale_gpus) {
		size_t n = 0;

		for (unsigned int i = 0; i < 32 && n < sizeof(buf); i++)
			if (st->stale_gpus & (1u << i))
				n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%sGPU%u",
						      n ? ", " : "", i);
		if (n < sizeof(buf))
			snprintf(buf + n, sizeof(buf) - n,
				 ": initialised before arming; re-initialise for full effect (at boot: "
				 "nvidia in the initramfs without p2p-shim? p2pctl doctor, initramfs)");
		p2pctl_table_row(&t, "stale GPUs:", buf);
	}
	p2pctl_table_print(&t, f, "");
	p2pctl_table_free(&t);

	if (st->detail_error) {
		fprintf(f, "\n(no per-hook detail: %s)\n", p2ps_strerror(st->detail_error));
		return;
	}
	if (st->nr_hooks) {
		fputc('\n', f);
		p2pctl_table_init(&t, 6);
		p2pctl_table_row(&t, "TARGET", "KIND", "STATE", "HITS", "DEST", "LAST ERROR");
		for (i = 0; i < st->nr_hooks; i++) {
			const struct p2ps_hook_info *k = &st->hooks[i];

			snprintf(buf, sizeof(buf), "%" PRIu64, k->hits);
			p2pctl_table_row(&t, k->target, p2ps_hook_kind_name(k->kind),
					 p2ps_hook_state_name(k->state), buf,
					 *k->dest ? k->dest : "-", *k->last_error ? k->last_error : "-");
		}
		p2pctl_table_print(&t, f, "");
		p2pctl_table_free(&t);
	}
	gpus_print(st, f);
	if (st->nr_mappings) {
		fputc('\n', f);
		p2pctl_table_init(&t, 6);
		p2pctl_table_row(&t, "GPU0", "GPU1", "TYPE", "REFS", "DMA BASE", "SIZE");
		for (i = 0; i < st->nr_mappings; i++) {
			const struct p2ps_mapping_info *m = &st->mappings[i];
			char g0[16], g1[16], cnt[16], base[32], size[32];

			p2pctl_gpu_str(g0, sizeof(g0), m->gpu0);
			p2pctl_gpu_str(g1, sizeof(g1), m->gpu1);
			snprintf(cnt, sizeof(cnt), "%u", m->count);
			/* 0: not given (CAP_SYS_ADMIN only), or unknown. */
			if (m->dma_base)
				snprintf(base, sizeof(base), "0x%" PRIx64, m->dma_base);
			else
				snprintf(base, sizeof(base), "-");
			snprintf(size, sizeof(size), "%" PRIu64 " MiB", m->dma_size >> 20);
			p2pctl_table_row(&t, g0, g1, p2ps_conn_type_name(m->conn_type), cnt, base, size);
		}
		p2pctl_table_print(&t, f, "");
		p2pctl_table_free(&t);
	}
}

/* Sizes as the driver reports them: whole MiB, else KiB. */
static void size_str(char *buf, size_t len, uint64_t v)
{
	if (v % (1 << 20))
		snprintf(buf, len, "%" PRIu64 " KiB", v >> 10);
	else
		snprintf(buf, len, "%" PRIu64 " MiB", v >> 20);
}

static void gpus_print(const struct p2ps_status_info *st, FILE *f)
{
	struct p2pctl_table t;
	size_t i;

	if (!st->nr_gpus)
		return;
	fputc('\n', f);
	p2pctl_table_init(&t, 7);
	p2pctl_table_row(&t, "GPU", "STATIC BAR1", "BAR1 P2P", "BAR1", "CLIENT FB", "OFFSET", "WHY");
	for (i = 0; i < st->nr_gpus; i++) {
		const struct p2ps_gpu_info *g = &st->gpus[i];
		char gpu[16], bar1[32], fb[32], off[32];

		snprintf(gpu, sizeof(gpu), "%u", g->instance);
		if (g->bar1_size)
			size_str(bar1, sizeof(bar1), g->bar1_size);
		else
			snprintf(bar1, sizeof(bar1), "?");
		if (g->client_fb)
			size_str(fb, sizeof(fb), g->client_fb);
		else
			snprintf(fb, sizeof(fb), "-");
		if (g->static_bar1 == P2PS_SB1_ON || g->static_bar1 == P2PS_SB1_FORCED)
			size_str(off, sizeof(off), g->offset);
		else
			snprintf(off, sizeof(off), "-");
		p2pctl_table_row(&t, gpu, p2ps_sb1_state_name(g->static_bar1),
				 g->p2p_usable ? "usable" : "no", bar1, fb, off,
				 *g->reason ? g->reason : "-");
	}
	p2pctl_table_print(&t, f, "");
	p2pctl_table_free(&t);
}

int cmd_status(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct p2ps_status_info *st;
	struct p2ps_handle *h;
	char modver[P2PS_NAME_LEN] = "";
	bool json = false;
	int c, err, rc;

	p2pctl_getopt_reset();
	while ((c = getopt_long(argc, argv, "+jh", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 'h': fputs(help, p2pctl_out); return 0;
		default: return p2pctl_usage("status", "invalid option");
		}
	}
	if (optind < argc)
		return p2pctl_usage("status", "unexpected argument '%s'", argv[optind]);
	rc = p2pctl_open("status", &h);
	if (rc)
		return rc;
	p2ps_module_version(h, NULL, modver, sizeof(modver));
	err = p2ps_status(h, &st);
	p2ps_close(h);
	if (err) {
		p2pctl_error("status", "%s", p2ps_strerror(err));
		return p2pctl_exit_for(err);
	}
	if (json)
		p2pctl_json_print(p2pctl_status_json(st, modver));
	else
		p2pctl_status_print(st, modver, p2pctl_out);
	p2ps_status_free(st);
	return 0;
}
