// SPDX-License-Identifier: GPL-2.0
/* p2pctl doctor */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "p2pctl.h"

static const char help[] =
	"Usage: p2pctl doctor [--json] [--root DIR] [--topo FILE]\n\n"
	"First the answer: \"P2P possible for N of M pairs (K blocked: why)\"\n"
	"(fewer than two GPUs driven by nvidia is a blocker).  Then check this\n"
	"host for everything p2p-shim needs, each with a verdict (ok,\n"
	"skip, warn, fail) and a remedy line per fix: kprobes in the kernel; lockdown,\n"
	"Secure Boot, module signature enforcement and modules_disabled (which would\n"
	"refuse an unsigned module); the nvidia open kernel module, its version and\n"
	"profile; per GPU its name, architecture, VRAM, BAR1 size against VRAM\n"
	"(Resizable BAR) and NVreg_EnableResizableBar; the IOMMU; per GPU pair the\n"
	"PCIe path (common switch, same root complex, across host bridges or\n"
	"sockets, with NUMA nodes and what that costs) and whether native P2P\n"
	"(NVLink) exists, in which case the shim is not needed; per pair ACS on the\n"
	"switch ports where P2P turns (config space, extended capability 0x0d:\n"
	"which port redirects; remedies: setpci now, and for the host one literal\n"
	"GRUB_CMDLINE_LINUX line with pci=disable_acs_redir=\\\"BDF;BDF\\\"); per GPU its PCIe\n"
	"link and the bridges' (trained speed and width, the narrowest bridge, a\n"
	"path through the chipset) and whether it drives a display or the boot\n"
	"console (boot_vga, framebuffers, DRM connectors) and what that does to\n"
	"static BAR1; a hypervisor (CPU flag, DMI); the NCCL a process would load\n"
	"(ld.so.conf directories, Python packages, virtualenvs and conda in homes\n"
	"and /opt, libraries running processes mapped; before 2.27.5 warns) and, for\n"
	"bar1 pairs across host bridges or sockets, NCCL_P2P_LEVEL=SYS; vLLM P2P\n"
	"caches (~/.cache/vllm/gpu_p2p_access_cache_for_*) that say \"no P2P\" for a\n"
	"pair expected to have it; GPUs initialised before arming; p2p-shim loaded\n"
	"and armed.\n"
	"The text says each thing once, within 100 columns: the answer; the GPUs,\n"
	"numbered (BAR1, VRAM, whether it drives the boot display, whether the\n"
	"installed driver's rules give it static BAR1); the findings, blockers first,\n"
	"one line for those that differ only in their GPUs (\"0, 1\", \"all 8 GPUs\")\n"
	"or pairs (\"0-1, 2-3\", \"all 28 pairs\"); the pairs (BAR1 P2P with\n"
	"p2p-shim, native, or none, and why); one line per remedy, a fix each.  --json keeps\n"
	"every finding on its own.\n"
	"VRAM is nvidia-smi's memory.total where available (DIR/../cmd/\n"
	"nvidia-smi-query.txt with --root), else the nominal size of the device id.\n\n"
	"  -r, --root DIR   read procfs/sysfs/boot files under DIR: a host captured\n"
	"                   with `p2pctl report --capture CAP` (DIR = CAP/root)\n"
	"  -t, --topo FILE  `nvidia-smi topo -m` output for NVLink detection; default:\n"
	"                   run nvidia-smi on the live system, or use\n"
	"                   DIR/../cmd/nvidia-smi-topo-m.txt with --root\n"
	"  -j, --json       print JSON\n"
	"  -h, --help       this help\n\n"
	"Exit status 1 when any check fails (a blocker).\n"
	P2PCTL_EXIT_CODES_HELP;

/* A regular file of at most 4 MiB (no FIFO, no device), or NULL. */
static char *read_path(const char *path)
{
	return p2ps_read_file_max(path, NULL, false, 4 << 20);
}

/*
 * The output of nvidia-smi with @args, or NULL if it is missing, fails or
 * does not end in time (then @err says so: a GPU off the bus can hang it).
 */
static char *run_nvidia_smi(const char *args, char *err, size_t errlen)
{
	char a[160], *argv[8], *save, *tok, *out = NULL;
	int n = 0, rc, ms = p2ps_run_timeout_ms();

	argv[n++] = (char *)"nvidia-smi";
	snprintf(a, sizeof(a), "%s", args);
	for (tok = strtok_r(a, " ", &save); tok && n < 7; tok = strtok_r(NULL, " ", &save))
		argv[n++] = tok;
	argv[n] = NULL;
	rc = p2pctl_run(argv, ms, 4 << 20, false, &out, false);
	if (rc == 0)
		return out;
	/* "Failed to initialize NVML: Driver/library version mismatch" after an upgrade */
	if (rc > 0 && out && strstr(out, "Driver/library version mismatch"))
		snprintf(err, errlen, "nvidia-smi %s: %.*s", args, (int)strcspn(out, "\n"), out);
	free(out);
	if (rc == -ETIMEDOUT || rc >= 128) {
		char why[96];

		p2ps_run_describe(rc, ms, why, sizeof(why));
		snprintf(err, errlen, "nvidia-smi %s: %s", args, why);
	}
	return NULL;
}

int p2pctl_doctor_inputs(const char *root, const char *topo, struct p2pctl_doctor_in *in)
{
	char *err;

	memset(in, 0, sizeof(*in));
	if (root && !strcmp(root, "/"))
		root = NULL;
	if (topo) {
		in->topo_text = read_path(topo);
		if (!in->topo_text)
			return -ENOENT;
		snprintf(in->src, sizeof(in->src), "%s", topo);
	} else if (root) {
		snprintf(in->src, sizeof(in->src), "%s/../cmd/nvidia-smi-topo-m.txt", root);
		in->topo_text = read_path(in->src);
		if (in->topo_text && !strstr(in->topo_text, "GPU0")) {
			free(in->topo_text);
			in->topo_text = NULL;
		}
		if (in->topo_text)
			snprintf(in->src, sizeof(in->src), "nvidia-smi topo -m (captured)");
	} else {
		in->topo_text = run_nvidia_smi("topo -m", in->smi_err, sizeof(in->smi_err));
		snprintf(in->src, sizeof(in->src), "nvidia-smi topo -m");
	}
	if (root) {
		char qp[PATH_MAX + 32];

		snprintf(qp, sizeof(qp), "%s/../cmd/nvidia-smi-query.txt", root);
		in->smi_text = read_path(qp);
		/* report --capture: nvidia-smi did not answer there */
		snprintf(qp, sizeof(qp), "%s/../cmd/nvidia-smi-error.txt", root);
		err = read_path(qp);
		if (err)
			snprintf(in->smi_err, sizeof(in->smi_err), "%.*s", (int)strcspn(err, "\n"), err);
		free(err);
	} else if (in->topo_text) {
		/* Measured VRAM per GPU (live): CSV, parsed by the library. */
		in->smi_text = run_nvidia_smi(P2PCTL_SMI_QUERY, in->smi_err, sizeof(in->smi_err));
	}
	return 0;
}

void p2pctl_doctor_inputs_free(struct p2pctl_doctor_in *in)
{
	free(in->topo_text);
	free(in->smi_text);
	in->topo_text = in->smi_text = NULL;
}

/* The JSON's enums: tokens for scripts (the text keeps the library's words). */
static const char *pcie_path_token(enum p2ps_pcie_path p)
{
	switch (p) {
	case P2PS_PATH_SWITCH: return "switch";
	case P2PS_PATH_ROOT_COMPLEX: return "root_complex";
	case P2PS_PATH_HOST_BRIDGES: return "host_bridges";
	case P2PS_PATH_CROSS_SOCKET: return "cross_socket";
	default: return "unknown";
	}
}

static const char *static_bar1_token(enum p2ps_static_bar1 s)
{
	switch (s) {
	case P2PS_SB_YES: return "yes";
	case P2PS_SB_NO: return "no";
	case P2PS_SB_UNALIGNED: return "unaligned";
	case P2PS_SB_INIT_FAILS: return "init_fails";
	default: return "unknown";
	}
}

/* A finding's subject as an array of its words (PCI addresses), or null. */
static json_object *subject_array(const char *subject)
{
	char buf[sizeof(((struct p2ps_finding *)0)->subject)], *tok, *save;
	json_object *a;

	if (!*subject)
		return NULL;
	a = json_object_new_array();
	snprintf(buf, sizeof(buf), "%s", subject);
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
		json_object_array_add(a, json_object_new_string(tok));
	return a;
}

/* A finding's remedy as an array of its lines, one per fix ([] if none). */
static json_object *remedy_array(const char *remedy)
{
	json_object *a = json_object_new_array();
	const char *p = remedy;

	for (; *p; p += *p == '\n') {
		size_t n = strcspn(p, "\n");

		if (n)
			json_object_array_add(a, json_object_new_string_len(p, (int)n));
		p += n;
	}
	return a;
}

json_object *p2pctl_doctor_json(const struct p2ps_doctor_report *r, const char *root)
{
	json_object *o = json_object_new_object(), *a, *s, *sb;
	size_t i;

	json_object_object_add(o, "schema_version", json_object_new_int(P2PCTL_DOCTOR_SCHEMA));
	json_object_object_add(o, "tool_version", json_object_new_string(P2PS_VERSION));
	json_object_object_add(o, "root", json_object_new_string(root ? root : "/"));
	json_object_object_add(o, "kernel_release", p2pctl_json_str(r->kernel_release));
	json_object_object_add(o, "driver_version", p2pctl_json_str(r->driver_version));
	json_object_object_add(o, "open_module", json_object_new_boolean(r->open_module));
	json_object_object_add(o, "profile", p2pctl_json_str(r->profile));
	s = json_object_new_object();
	json_object_object_add(s, "fail", json_object_new_int64(r->nr_fail));
	json_object_object_add(s, "warn", json_object_new_int64(r->nr_warn));
	json_object_object_add(o, "summary", s);
	s = json_object_new_object();
	json_object_object_add(s, "pairs", json_object_new_uint64(r->nr_pairs));
	json_object_object_add(s, "possible", json_object_new_uint64(r->nr_p2p_possible));
	json_object_object_add(s, "usable_gpus", json_object_new_uint64(r->nr_usable_gpus));
	json_object_object_add(s, "text", json_object_new_string(r->summary));
	json_object_object_add(o, "p2p_possible", s);
	a = json_object_new_array();
	for (i = 0; i < r->nr_findings; i++) {
		const struct p2ps_finding *f = &r->findings[i];
		json_object *j = json_object_new_object();

		json_object_object_add(j, "check", json_object_new_string(f->check));
		json_object_object_add(j, "subject", subject_array(f->subject));
		json_object_object_add(j, "verdict", json_object_new_string(p2ps_verdict_name(f->verdict)));
		json_object_object_add(j, "detail", json_object_new_string(f->detail));
		json_object_object_add(j, "remedies", remedy_array(f->remedy));
		json_object_object_add(j, "source", p2pctl_json_str(f->source));
		json_object_array_add(a, j);
	}
	json_object_object_add(o, "checks", a);
	a = json_object_new_array();
	for (i = 0; i < r->nr_gpus; i++) {
		const struct p2ps_gpu *g = &r->gpus[i];
		json_object *j = json_object_new_object();
		char id[8];

		snprintf(id, sizeof(id), "%04x", g->device);
		json_object_object_add(j, "pci_address", json_object_new_string(g->bdf));
		json_object_object_add(j, "device_id", json_object_new_string(id));
		json_object_object_add(j, "name", p2pctl_json_str(g->name));
		json_object_object_add(j, "architecture", json_object_new_string(g->arch));
		json_object_object_add(j, "vram", g->vram ? json_object_new_uint64(g->vram) : NULL);
		json_object_object_add(j, "bar1", g->bar1 ? json_object_new_uint64(g->bar1) : NULL);
		json_object_object_add(j, "numa_node", json_object_new_int(g->numa_node));
		json_object_object_add(j, "sysfs_path", json_object_new_string(g->path));
		json_object_object_add(j, "chip", p2pctl_json_str(g->chip));
		json_object_object_add(j, "vram_source", p2pctl_json_str(g->vram_source));
		json_object_object_add(j, "vram_smi_mib",
				       g->vram_mib ? json_object_new_uint64(g->vram_mib) : NULL);
		json_object_object_add(j, "driver", !g->driver_known ? NULL :
				       json_object_new_string(*g->driver ? g->driver : "none"));
		json_object_object_add(j, "display", g->display < 0 ? NULL :
				       json_object_new_boolean(g->display == 1));
		sb = json_object_new_object();
		json_object_object_add(sb, "expected", json_object_new_string(
			static_bar1_token(g->static_bar1)));
		json_object_object_add(sb, "why", json_object_new_string(g->static_bar1_why));
		json_object_object_add(j, "static_bar1", sb);
		json_object_array_add(a, j);
	}
	json_object_object_add(o, "gpus", a);
	a = json_object_new_array();
	for (i = 0; i < r->nr_pairs; i++) {
		const struct p2ps_pair *p = &r->pairs[i];
		json_object *j = json_object_new_object();

		json_object_object_add(j, "gpu0", json_object_new_string(r->gpus[p->a].bdf));
		json_object_object_add(j, "gpu1", json_object_new_string(r->gpus[p->b].bdf));
		json_object_object_add(j, "pcie_path", json_object_new_string(pcie_path_token(p->path)));
		json_object_object_add(j, "native_p2p", json_object_new_string(
			p->native == P2PS_NATIVE_NVLINK ? "nvlink" :
			p->native == P2PS_NATIVE_NONE ? "none" : "unknown"));
		json_object_object_add(j, "shim_needed", p->native == P2PS_NATIVE_UNKNOWN ? NULL :
				       json_object_new_boolean(p->native == P2PS_NATIVE_NONE));
		json_object_object_add(j, "native_source", json_object_new_string(p->native_source));
		json_object_object_add(j, "p2p", json_object_new_string(p2ps_p2p_name(p->p2p)));
		json_object_object_add(j, "p2p_why", json_object_new_string(p->p2p_why));
		json_object_array_add(a, j);
	}
	json_object_object_add(o, "pairs", a);
	return o;
}

static void size_str(uint64_t b, char *buf, size_t len)
{
	if (!b)
		snprintf(buf, len, "?");
	else if (b % (1ULL << 30) == 0)
		snprintf(buf, len, "%llu GiB", (unsigned long long)(b >> 30));
	else
		snprintf(buf, len, "%llu MiB", (unsigned long long)(b >> 20));
}

/*
 * The text: the answer, the GPUs (numbered: the findings name them so),
 * the findings said once (blockers first), the pairs, the remedies; every
 * line within P2PCTL_COLUMNS.
 */
static int print_human(const struct p2ps_doctor_report *r, FILE *f)
{
	static const size_t subject_w[] = { 0, 0, 14, 0 }, pairs_w[] = { 14, 0, 0 };
	struct p2ps_doctor_digest *d;
	struct p2pctl_table t;
	char line[512];
	size_t i;
	int err;

	err = p2ps_doctor_digest(r, &d);
	if (err)
		return err;
	p2pctl_wrap(f, "", r->summary, 2, P2PCTL_COLUMNS);
	snprintf(line, sizeof(line), "kernel %s, nvidia %s%s, profile %s",
		 *r->kernel_release ? r->kernel_release : "?",
		 *r->driver_version ? r->driver_version : "not loaded",
		 *r->driver_version ? (r->open_module ? " (open)" : " (proprietary)") : "",
		 *r->profile ? r->profile : "none");
	p2pctl_wrap(f, "", line, 2, P2PCTL_COLUMNS);

	if (r->nr_gpus) {
		fprintf(f, "\nGPUs:\n");
		p2pctl_table_init(&t, 7);
		p2pctl_table_row(&t, "#", "GPU", "CHIP", "BAR1", "VRAM", "DISPLAY", "STATIC-BAR1");
		for (i = 0; i < r->nr_gpus; i++) {
			const struct p2ps_gpu *g = &r->gpus[i];
			char n[24], bs[32], vs[48];

			snprintf(n, sizeof(n), "%zu", i);
			size_str(g->bar1, bs, sizeof(bs));
			if (g->vram_mib)
				snprintf(vs, sizeof(vs), "%llu MiB", (unsigned long long)g->vram_mib);
			else
				size_str(g->vram, vs, sizeof(vs));
			p2pctl_table_row(&t, n, g->bdf, *g->chip ? g->chip : g->arch, bs, vs,
					 g->display < 0 ? "?" : g->display ? "yes" : "no",
					 p2ps_static_bar1_name(g->static_bar1));
		}
		p2pctl_table_print_wrapped(&t, f, "  ", P2PCTL_COLUMNS, NULL);
		p2pctl_table_free(&t);
	}

	fputc('\n', f);
	p2pctl_table_init(&t, 4);
	p2pctl_table_row(&t, "VERDICT", "CHECK", "SUBJECT", "DETAIL");
	for (i = 0; i < d->nr_lines; i++) {
		const struct p2ps_digest_line *l = &d->lines[i];
		char v[8];
		size_t k;

		snprintf(v, sizeof(v), "%s", p2ps_verdict_name(l->finding->verdict));
		for (k = 0; v[k]; k++)
			v[k] = (char)(v[k] - 'a' + 'A');
		p2pctl_table_row(&t, v, l->finding->check, *l->who ? l->who : "-", l->finding->detail);
	}
	p2pctl_table_print_wrapped(&t, f, "", P2PCTL_COLUMNS, subject_w);
	p2pctl_table_free(&t);

	if (d->nr_pairs) {
		fprintf(f, "\nPairs:\n");
		p2pctl_table_init(&t, 3);
		p2pctl_table_row(&t, "PAIR", "P2P", "WHY");
		for (i = 0; i < d->nr_pairs; i++)
			p2pctl_table_row(&t, d->pairs[i].who, p2ps_p2p_name(d->pairs[i].p2p),
					 d->pairs[i].why);
		p2pctl_table_print_wrapped(&t, f, "  ", P2PCTL_COLUMNS, pairs_w);
		p2pctl_table_free(&t);
	}

	if (d->nr_remedies)
		fprintf(f, "\nRemedies:\n");
	for (i = 0; i < d->nr_remedies; i++) {
		snprintf(line, sizeof(line), "  %s: ", d->remedies[i].who);
		/* a command ("# ..."): on a line of its own, whole, to be copied */
		if (!strncmp(d->remedies[i].remedy, "# ", 2))
			fprintf(f, "  %s:\n    %s\n", d->remedies[i].who, d->remedies[i].remedy);
		else
			p2pctl_wrap(f, line, d->remedies[i].remedy, 4, P2PCTL_COLUMNS);
	}
	fprintf(f, "\n%u blocker%s, %u warning%s\n", d->nr_fail, d->nr_fail == 1 ? "" : "s",
		d->nr_warn, d->nr_warn == 1 ? "" : "s");
	p2ps_doctor_digest_free(d);
	return 0;
}

/*
 * --root names a captured host (report --capture DIR: DIR/root), not a file
 * or an empty directory, whose verdicts would be those of no host at all.
 */
static int root_tree_ok(const char *root)
{
	static const char *const tops[] = { "proc", "sys", "etc" };
	char path[PATH_MAX];
	struct stat st;
	size_t i;

	if (!*root || stat(root, &st))
		return p2pctl_usage("doctor", "--root %s: %s", root, *root ? strerror(errno) :
				    "empty path");
	if (!S_ISDIR(st.st_mode))
		return p2pctl_usage("doctor", "--root %s: not a directory (give the root/ of "
				    "`p2pctl report --capture DIR`)", root);
	if (access(root, R_OK | X_OK))
		return p2pctl_usage("doctor", "--root %s: not a readable directory", root);
	for (i = 0; i < sizeof(tops) / sizeof(tops[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", root, tops[i]);
		if (!stat(path, &st) && S_ISDIR(st.st_mode))
			return 0;
	}
	return p2pctl_usage("doctor", "--root %s: no captured host there (no proc/, sys/ or etc/; "
			    "capture one with `p2pctl report --capture DIR`, then --root DIR/root)", root);
}

int cmd_doctor(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "root", required_argument, NULL, 'r' },
		{ "topo", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct p2ps_doctor_opts o = { 0 };
	struct p2ps_doctor_report *r;
	const char *root = NULL, *topo = NULL;
	struct p2pctl_doctor_in in;
	bool json = false;
	int c, err;

	p2pctl_getopt_reset();
	while ((c = getopt_long(argc, argv, "+jr:t:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 'r': root = optarg; break;
		case 't': topo = optarg; break;
		case 'h': fputs(help, p2pctl_out); return 0;
		default: return p2pctl_usage("doctor", "invalid option");
		}
	}
	if (optind < argc)
		return p2pctl_usage("doctor", "unexpected argument '%s'", argv[optind]);
	if (root) {
		err = root_tree_ok(root);
		if (err)
			return err;
	}

	err = p2pctl_doctor_inputs(root, topo, &in);
	if (err)
		return p2pctl_usage("doctor", "--topo %s: cannot read", topo);
	o.smi_query_text = in.smi_text;
	o.smi_error = *in.smi_err ? in.smi_err : NULL;
	o.root = root;
	o.topo_text = in.topo_text;
	o.topo_source = in.src;
	if (!root || !strcmp(root, "/"))
		p2ps_open(&o.h, getenv("P2PCTL_DEVICE"));	/* optional: module state */
	err = p2ps_doctor(&o, &r);
	p2ps_close(o.h);
	p2pctl_doctor_inputs_free(&in);
	if (err) {
		p2pctl_error("doctor", "%s", p2ps_strerror(err));
		return p2pctl_exit_for(err);
	}
	if (json) {
		p2pctl_json_print(p2pctl_doctor_json(r, root));
	} else {
		err = print_human(r, p2pctl_out);
		if (err) {
			p2ps_doctor_free(r);
			p2pctl_error("doctor", "%s", p2ps_strerror(err));
			return p2pctl_exit_for(err);
		}
	}
	c = r->nr_fail ? P2PCTL_EXIT_NOT_MET : 0;
	p2ps_doctor_free(r);
	return c;
}
