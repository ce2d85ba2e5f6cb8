// SPDX-License-Identifier: GPL-2.0
/*
 * libp2pshim: `p2pctl doctor`'s vLLM check (issue 23, FIELD.md F22): the
 * "no P2P" answers vLLM cached before P2P was on.  Run by
 * p2ps_dr_software() (doctor_software.c), under the doctor's root.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "doctor.h"

/* ---------------------------------------------------------------- vLLM */

/*
 * vLLM's custom all-reduce tests P2P once per set of visible devices and
 * keeps the answer in VLLM_CACHE_ROOT (~/.cache/vllm) as
 * gpu_p2p_access_cache_for_<CUDA_VISIBLE_DEVICES>.json: {"0->1": false, ...},
 * indexes into that list.  An answer written before P2P was on stays "no".
 */
struct vllm_arg {
	unsigned int files;
};

static int pair_index(const struct p2ps_doctor_report *r, unsigned int a, unsigned int b)
{
	size_t i;

	for (i = 0; i < r->nr_pairs; i++)
		if ((r->pairs[i].a == a && r->pairs[i].b == b) || (r->pairs[i].a == b && r->pairs[i].b == a))
			return (int)i;
	return -1;
}

static void vllm_file(struct dctx *c, struct vllm_arg *va, const char *dir, const char *name)
{
	char path[800], visible[128], subj[48], stale[160] = "", wrong[160] = "";
	const char *list = name + strlen("gpu_p2p_access_cache_for_");
	const char *dot = strrchr(list, '.');
	unsigned int ids[32], nids = 0, pairs_no = 0;
	char *text, *tok, *save;
	json_object *o;
	size_t so = 0, wo = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(visible, sizeof(visible), "%.*s", dot ? (int)(dot - list) : (int)strlen(list), list);
	text = p2ps_root_read(&c->root, path, NULL, false);
	if (!text && (errno == EINVAL || errno == EFBIG)) {
		/* a FIFO or device (which would block or never end), or a huge file */
		p2ps_dr_add(c, "vllm-cache", NULL, P2PS_V_WARN, path, "delete it: vLLM writes it again",
			    "%s: %s, not read", path, errno == EFBIG ? "over 4 MiB" : "not a regular file");
		return;
	}
	if (!text)
		return;
	va->files++;
	o = json_tokener_parse(text);
	free(text);
	if (!o || !json_object_is_type(o, json_type_object)) {
		p2ps_dr_add(c, "vllm-cache", NULL, P2PS_V_WARN, path, "delete the file: vLLM writes it again",
			    "%s: not a JSON object", path);
		json_object_put(o);
		return;
	}
	/* CUDA_VISIBLE_DEVICES of that run: indexes of CUDA's PCI order */
	{
		char copy[128];

		p2ps_strlcpy(copy, visible, sizeof(copy));
		for (tok = strtok_r(copy, ",", &save); tok && nids < 32; tok = strtok_r(NULL, ",", &save)) {
			char *end;
			unsigned long v = strtoul(tok, &end, 10);

			if (*end || end == tok)
				break;		/* UUIDs or MIG names: can't map */
			ids[nids++] = (unsigned int)v;
		}
	}
	json_object_object_foreach(o, key, val) {
		unsigned int i, j;
		int pi;

		if (sscanf(key, "%u->%u", &i, &j) != 2 || i == j)
			continue;
		if (json_object_get_boolean(val)) {
			/* "P2P" cached for a pair doctor says has none: vLLM would use it */
			if (i >= nids || j >= nids || ids[i] >= c->r->nr_gpus || ids[j] >= c->r->nr_gpus)
				continue;
			pi = pair_index(c->r, ids[i], ids[j]);
			if (pi >= 0 && c->r->pairs[pi].p2p == P2PS_P2P_NONE)
				p2ps_catf(wrong, sizeof(wrong), &wo, ", ", "%s", key);
			continue;
		}
		pairs_no++;
		if (i >= nids || j >= nids || ids[i] >= c->r->nr_gpus || ids[j] >= c->r->nr_gpus)
			continue;
		pi = pair_index(c->r, ids[i], ids[j]);
		if (pi < 0 || (c->r->pairs[pi].p2p != P2PS_P2P_BAR1 && c->r->pairs[pi].p2p != P2PS_P2P_NATIVE))
			continue;
		if (so < sizeof(stale)) {
			int k = snprintf(stale + so, sizeof(stale) - so, "%s%s", so ? ", " : "", key);

			if (k > 0)
				so += (size_t)k;
		}
	}
	json_object_put(o);
	snprintf(subj, sizeof(subj), "CUDA_VISIBLE_DEVICES=%.26s", visible);
	if (*wrong) {
		char remedy[256];

		snprintf(remedy, sizeof(remedy), "rm %.200s (vLLM tests P2P again on its next start)", path);
		p2ps_dr_add(c, "vllm-cache", subj, P2PS_V_WARN, path, remedy,
			    "vLLM cached \"P2P\" for %s, which doctor says has none: vLLM would run its "
			    "custom all-reduce without P2P", wrong);
	}
	if (*stale) {
		char remedy[256];

		snprintf(remedy, sizeof(remedy), "rm %.200s (vLLM tests P2P again on its next start)", path);
		p2ps_dr_add(c, "vllm-cache", subj, P2PS_V_WARN, path, remedy,
			    "vLLM cached \"no P2P\" for %s, which doctor now expects to have P2P: vLLM keeps its custom all-reduce off",
			    stale);
	} else if (*wrong) {
		/* said above */
	} else if (pairs_no) {
		p2ps_dr_add(c, "vllm-cache", subj, P2PS_V_OK, path, NULL,
			    "vLLM cached \"no P2P\" for %u direction%s, none of them a pair doctor expects P2P on (CUDA's PCI order assumed)",
			    pairs_no, pairs_no == 1 ? "" : "s");
	} else {
		p2ps_dr_add(c, "vllm-cache", subj, P2PS_V_OK, path, NULL, "vLLM cached P2P as available");
	}
}

static void vllm_dir(struct dctx *c, void *arg, const char *dir)
{
	char **names;
	size_t n, i;

	if (p2ps_root_list(&c->root, dir, &names, &n))
		return;
	for (i = 0; i < n; i++)
		if (!strncmp(names[i], "gpu_p2p_access_cache_for_", 25))
			vllm_file(c, arg, dir, names[i]);
	p2ps_free_list(names, n);
}

/*
 * PyTorch's expandable_segments allocates with the CUDA VMM API, whose
 * memory cudaIpcGetMemHandle refuses: vLLM's custom all-reduce then fails
 * with "invalid argument" (custom_all_reduce.cuh), which reads like a P2P
 * fault and is not one (FIELD.md N19, vllm#42609).  Set where a job
 * would inherit it: the environment, /etc/environment, a home's shell
 * start-up files.
 */
#define EXPANDABLE "expandable_segments:True"

static bool sets_expandable(const char *text)
{
	const char *line = text;

	while (line && *line) {
		const char *eol = strchrnul(line, '\n');
		char buf[1024], *hash;

		snprintf(buf, sizeof(buf), "%.*s", (int)(eol - line), line);
		hash = strchr(buf, '#');
		if (hash)
			*hash = '\0';
		if ((strstr(buf, "PYTORCH_CUDA_ALLOC_CONF") || strstr(buf, "PYTORCH_ALLOC_CONF")) &&
		    strstr(buf, EXPANDABLE))
			return true;
		line = *eol ? eol + 1 : eol;
	}
	return false;
}

struct alloc_arg {
	char where[300];
	size_t off;
};

static void alloc_file(struct dctx *c, void *arg, const char *file)
{
	struct alloc_arg *a = arg;
	char *text = p2ps_root_read(&c->root, file, NULL, false);

	if (text && sets_expandable(text) &&
	    !p2ps_catf(a->where, sizeof(a->where), &a->off, ", ", "%s", file) && !strstr(a->where, "..."))
		p2ps_catf(a->where, sizeof(a->where), &a->off, ", ", "...");
	free(text);
}

static void check_alloc_conf(struct dctx *c)
{
	static const char *const vars[] = { "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF" };
	struct alloc_arg a = { "", 0 };
	size_t i;

	if (c->root.live)
		for (i = 0; i < 2; i++)
			if (getenv(vars[i]) && strstr(getenv(vars[i]), EXPANDABLE))
				p2ps_catf(a.where, sizeof(a.where), &a.off, ", ", "the environment (%s)", vars[i]);
	alloc_file(c, &a, "/etc/environment");
	p2ps_dr_each_home(c, ".bashrc", alloc_file, &a);
	p2ps_dr_each_home(c, ".profile", alloc_file, &a);
	if (*a.where)
		p2ps_dr_add(c, "alloc-conf", NULL, P2PS_V_WARN, a.where,
			    "unset it for vLLM (or drop expandable_segments:True) before blaming P2P\nor run vLLM with --disable-custom-all-reduce",
			    "PyTorch " EXPANDABLE " in %s: vLLM's custom all-reduce then fails with 'invalid argument' (cudaIpcGetMemHandle refuses VMM memory), not a P2P fault",
			    a.where);
}

void p2ps_dr_vllm(struct dctx *c)
{
	struct vllm_arg va = { 0 };

	check_alloc_conf(c);

	if (c->root.live) {
		const char *root = getenv("VLLM_CACHE_ROOT"), *xdg = getenv("XDG_CACHE_HOME");
		char dir[600];

		/* the default, ~/.cache/vllm, is among the homes below */
		if (root && *root == '/') {
			vllm_dir(c, &va, root);
		} else if (xdg && *xdg == '/') {
			snprintf(dir, sizeof(dir), "%s/vllm", xdg);
			vllm_dir(c, &va, dir);
		}
	}
	p2ps_dr_each_home(c, ".cache/vllm", vllm_dir, &va);
	if (!va.files)
		p2ps_dr_add(c, "vllm-cache", NULL, P2PS_V_OK, "~/.cache/vllm", NULL,
			    "no vLLM P2P cache found");
}
