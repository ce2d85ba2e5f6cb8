// SPDX-License-Identifier: GPL-2.0
/*
 * p2pctl: argument validation, exit codes, JSON shape, and consistency of
 * --help with the man page.  The command handlers run in-process with their
 * output captured.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <p2p-shim/bdf.h>
#include <json-c/json.h>

#include "p2pctl.h"

#include "p2pctl_run.h"

static const char *const commands[] = {
	"enable", "disable", "status", "monitor", "doctor", "check", "config", "version", "report",
};

/* The CUDA commands: their own exit codes (3: no CUDA driver or GPU). */
static const char *const cuda_commands[] = { "verify", "bench" };

static void test_help(void **state)
{
	unsigned int i;
	char usage[64];

	(void)state;
	assert_int_equal(run("--help", NULL), 0);
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		assert_non_null(strstr(out_text, commands[i]));
	assert_non_null(strstr(out_text, "Exit status"));
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		assert_int_equal(run(commands[i], "--help", NULL), 0);
		snprintf(usage, sizeof(usage), "Usage: p2pctl %s", commands[i]);
		assert_non_null(strstr(out_text, usage));
		assert_non_null(strstr(out_text, "3 p2p-shim module"));
		assert_int_equal(run("help", commands[i], NULL), 0);
		assert_non_null(strstr(out_text, usage));
	}
}

static void test_usage_errors(void **state)
{
	unsigned int i;

	(void)state;
	assert_int_equal(run(NULL), P2PCTL_EXIT_USAGE);
	assert_int_equal(run("frobnicate", NULL), P2PCTL_EXIT_USAGE);
	assert_non_null(strstr(err_text, "unknown command"));
	assert_int_equal(run("help", "frobnicate", NULL), P2PCTL_EXIT_USAGE);
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		assert_int_equal(run(commands[i], "--no-such-option", NULL), P2PCTL_EXIT_USAGE);
		assert_int_equal(run(commands[i], "extra-argument", NULL), P2PCTL_EXIT_USAGE);
		assert_non_null(strstr(err_text, "unexpected argument"));
	}
	assert_int_equal(run("check", "--module", "a.ko", "--kallsyms", "b", NULL), P2PCTL_EXIT_USAGE);
	assert_non_null(strstr(err_text, "not both"));
	assert_int_equal(run("check", "--kallsyms", "x", "--driver-version", "five", NULL),
			 P2PCTL_EXIT_USAGE);
	assert_int_equal(run("check", "--module", NULL), P2PCTL_EXIT_USAGE);
	assert_int_equal(run("monitor", "--count", "0", NULL), P2PCTL_EXIT_USAGE);
	assert_int_equal(run("monitor", "--count", "3x", NULL), P2PCTL_EXIT_USAGE);
	assert_int_equal(run("doctor", "--root", "/nonexistent/dir", NULL), P2PCTL_EXIT_USAGE);
	assert_int_equal(run("doctor", "--topo", "/nonexistent/file", NULL), P2PCTL_EXIT_USAGE);
	assert_int_equal(run("config", "--root", "/tmp", NULL), P2PCTL_EXIT_USAGE);
}

static void test_not_loaded(void **state)
{
	(void)state;
	setenv("P2PCTL_DEVICE", "/nonexistent/p2p-shim", 1);
	assert_int_equal(run("status", NULL), P2PCTL_EXIT_NOT_LOADED);
	assert_non_null(strstr(err_text, "not loaded"));
	assert_int_equal(run("status", "--json", NULL), P2PCTL_EXIT_NOT_LOADED);
	assert_int_equal(run("enable", "--dry-run", NULL), P2PCTL_EXIT_NOT_LOADED);
	assert_int_equal(run("disable", NULL), P2PCTL_EXIT_NOT_LOADED);
	assert_int_equal(run("monitor", NULL), P2PCTL_EXIT_NOT_LOADED);
	/* monitor --json is one object per line: its error object too, on one line */
	assert_int_equal(run("monitor", "--json", NULL), P2PCTL_EXIT_NOT_LOADED);
	assert_non_null(strstr(out_text, "\"error\""));
	assert_ptr_equal(strchr(out_text, '\n'), out_text + strlen(out_text) - 1);
	assert_int_equal(run("version", NULL), 0);
	assert_non_null(strstr(out_text, "not loaded"));
	assert_non_null(strstr(out_text, P2PS_VERSION));
	unsetenv("P2PCTL_DEVICE");
}

/* All of @f, from its start. */
static char *slurp_file(FILE *f)
{
	fseek(f, 0, SEEK_END);
	return slurp(f);
}

static json_object *parse_json(void)
{
	json_object *o = json_tokener_parse(out_text);

	if (!o)
		fail_msg("not JSON: %s", out_text);
	return o;
}

static json_object *key(json_object *o, const char *k, json_type t)
{
	json_object *v = NULL;

	if (!json_object_object_get_ex(o, k, &v))
		fail_msg("no key %s", k);
	if (t != json_type_null)
		assert_int_equal(json_object_get_type(v), t);
	return v;
}

#define KALLSYMS FIXTURES "/h200-nvlink-580/driver/kallsyms-nvidia.txt.gz"

static void test_check_json(void **state)
{
	json_object *o, *hooks;
	size_t i;

	(void)state;
	assert_int_equal(run("check", "--kallsyms", KALLSYMS, "--driver-version", "580.159.04",
			     "--json", NULL), 0);
	o = parse_json();
	assert_string_equal(json_object_get_string(key(o, "driver_version", json_type_string)),
			    "580.159.04");
	assert_string_equal(json_object_get_string(key(o, "profile", json_type_string)), "gen-b");
	assert_true(json_object_get_boolean(key(o, "supported", json_type_boolean)));
	assert_string_equal(json_object_get_string(key(o, "fingerprints", json_type_string)),
			    "not checked");
	hooks = key(o, "hooks", json_type_array);
	assert_true(json_object_array_length(hooks) > 0);
	for (i = 0; i < json_object_array_length(hooks); i++) {
		json_object *h = json_object_array_get_idx(hooks, i);

		key(h, "target", json_type_string);
		assert_string_equal(json_object_get_string(key(h, "status", json_type_string)), "ok");
	}
	json_object_put(o);

	/* unsupported: exit 1, supported false, profile null */
	assert_int_equal(run("check", "--kallsyms", KALLSYMS, "--driver-version", "545.29.06",
			     "--json", NULL), P2PCTL_EXIT_NOT_MET);
	o = parse_json();
	assert_false(json_object_get_boolean(key(o, "supported", json_type_boolean)));
	assert_null(key(o, "profile", json_type_null));
	json_object_put(o);

	/* human output: aligned table */
	assert_int_equal(run("check", "--kallsyms", KALLSYMS, NULL), 0);
	assert_non_null(strstr(out_text, "TARGET"));
	assert_non_null(strstr(out_text, "not checked"));
	assert_int_equal(run("check", "--module", "/nonexistent.ko", NULL), P2PCTL_EXIT_NOT_MET);
}

/*
 * A kallsyms list without nvidia (what `p2pctl check` reads on a host where
 * nvidia is not loaded): exit 1 as p2pctl(8) defines it, "not supported",
 * saying why, not "unexpected format".
 */
static void test_check_no_nvidia(void **state)
{
	char path[] = "/tmp/p2pctl-kallsyms-XXXXXX";
	const char syms[] = "ffffffff81000000 T _stext\n"
			    "ffffffffc0a01000 t ext4_fill_super\t[ext4]\n";
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, syms, sizeof(syms) - 1), (ssize_t)(sizeof(syms) - 1));
	close(fd);
	assert_int_equal(run("check", "--kallsyms", path, NULL), P2PCTL_EXIT_NOT_MET);
	assert_non_null(strstr(err_text, "NOT supported"));
	assert_non_null(strstr(err_text, "no nvidia symbols"));
	assert_null(strstr(err_text, "unexpected format"));
	assert_int_equal(run("check", "--kallsyms", path, "--json", NULL), P2PCTL_EXIT_NOT_MET);
	assert_non_null(strstr(err_text, "no nvidia symbols"));
	unlink(path);
}

/*
 * doctor --json for scripts: schema_version and the tool's version; enums
 * as tokens (pcie_path, static_bar1.expected); a subject as an array of
 * addresses (a pair's two, a GPU's one; null for the host); remedies an
 * array, a fix each (none for an ok).
 */
static void test_doctor_json_schema(void **state)
{
	json_object *o, *checks, *c, *pair, *gpu, *rem;
	size_t i, k;
	bool saw_pair = false, saw_gpu = false, saw_host = false, saw_two = false;

	(void)state;
	run("doctor", "--root", FIXTURES "/h200-nvlink-580/root", "--json", NULL);
	o = parse_json();
	assert_int_equal(json_object_get_int(key(o, "schema_version", json_type_int)), 2);
	assert_string_equal(json_object_get_string(key(o, "tool_version", json_type_string)),
			    P2PS_VERSION);
	checks = key(o, "checks", json_type_array);
	for (i = 0; i < json_object_array_length(checks); i++) {
		const char *check;
		json_object *subj;

		c = json_object_array_get_idx(checks, i);
		check = json_object_get_string(key(c, "check", json_type_string));
		assert_true(json_object_object_get_ex(c, "subject", &subj));
		rem = key(c, "remedies", json_type_array);
		assert_false(json_object_object_get_ex(c, "remedy", NULL));
		if (!strcmp(json_object_get_string(key(c, "verdict", json_type_string)), "ok"))
			assert_int_equal(json_object_array_length(rem), 0);
		for (k = 0; k < json_object_array_length(rem); k++)
			assert_null(strchr(json_object_get_string(json_object_array_get_idx(rem, k)), '\n'));
		if (!strcmp(check, "lockdown")) {
			/* sign it, or another kernel: two fixes */
			assert_int_equal(json_object_array_length(rem), 2);
			assert_non_null(strstr(json_object_get_string(json_object_array_get_idx(rem, 1)),
					       "or use a kernel without forced lockdown"));
			saw_two = true;
		}
		if (!strcmp(check, "pcie-path")) {
			assert_true(json_object_is_type(subj, json_type_array));
			assert_int_equal(json_object_array_length(subj), 2);
			assert_string_equal(json_object_get_string(json_object_array_get_idx(subj, 1)),
					    "0000:00:07.0");
			saw_pair = true;
		} else if (!strcmp(check, "bar1")) {
			assert_true(json_object_is_type(subj, json_type_array));
			assert_int_equal(json_object_array_length(subj), 1);
			saw_gpu = true;
		} else if (!strcmp(check, "kprobes")) {
			assert_null(subj);
			saw_host = true;
		}
	}
	assert_true(saw_pair && saw_gpu && saw_host && saw_two);
	pair = json_object_array_get_idx(key(o, "pairs", json_type_array), 0);
	assert_string_equal(json_object_get_string(key(pair, "pcie_path", json_type_string)),
			    "root_complex");
	gpu = json_object_array_get_idx(key(o, "gpus", json_type_array), 0);
	assert_string_equal(json_object_get_string(key(key(gpu, "static_bar1", json_type_object),
						       "expected", json_type_string)), "yes");
	json_object_put(o);
}

static void test_doctor_cli(void **state)
{
	json_object *o, *checks, *pairs, *gpus;
	size_t i;

	(void)state;
	assert_int_equal(run("doctor", "--root", FIXTURES "/rtx4090-pair/root", NULL), 0);
	assert_non_null(strstr(out_text, "VERDICT"));
	assert_non_null(strstr(out_text, "0 blockers, 2 warnings"));
	assert_int_equal(run("doctor", "--root", FIXTURES "/h200-nvlink-580/root", "--json", NULL),
			 P2PCTL_EXIT_NOT_MET);
	o = parse_json();
	key(o, "kernel_release", json_type_string);
	assert_true(json_object_get_boolean(key(o, "open_module", json_type_boolean)));
	assert_int_equal(json_object_get_int(key(key(o, "summary", json_type_object), "fail",
						 json_type_int)), 4);
	checks = key(o, "checks", json_type_array);
	for (i = 0; i < json_object_array_length(checks); i++) {
		json_object *c = json_object_array_get_idx(checks, i);
		const char *v = json_object_get_string(key(c, "verdict", json_type_string));

		key(c, "check", json_type_string);
		key(c, "detail", json_type_string);
		assert_true(!strcmp(v, "ok") || !strcmp(v, "warn") || !strcmp(v, "fail") ||
			    !strcmp(v, "skip"));
	}
	gpus = key(o, "gpus", json_type_array);
	assert_int_equal(json_object_array_length(gpus), 2);
	assert_string_equal(json_object_get_string(key(json_object_array_get_idx(gpus, 0),
						       "pci_address", json_type_string)), "0000:00:06.0");
	pairs = key(o, "pairs", json_type_array);
	assert_int_equal(json_object_array_length(pairs), 1);
	/* --root picked up ../cmd/nvidia-smi-topo-m.txt */
	assert_string_equal(json_object_get_string(key(json_object_array_get_idx(pairs, 0),
						       "native_p2p", json_type_string)), "nvlink");
	assert_false(json_object_get_boolean(key(json_object_array_get_idx(pairs, 0),
						 "shim_needed", json_type_boolean)));
	assert_string_equal(json_object_get_string(key(json_object_array_get_idx(pairs, 0),
						       "p2p", json_type_string)), "native");
	json_object_put(o);

	/* per GPU and per pair verdicts: a 5090 pair (VRAM from ../cmd/nvidia-smi-query.txt) */
	assert_int_equal(run("doctor", "--root", FIXTURES "/rtx5090-pair/root", NULL), 0);
	assert_non_null(strstr(out_text, "forced by p2p-shim"));
	assert_non_null(strstr(out_text, "\nGPUs:\n"));
	assert_non_null(strstr(out_text, "STATIC-BAR1"));
	assert_non_null(strstr(out_text, "32607 MiB"));
	assert_non_null(strstr(out_text, "\nPairs:\n"));
	assert_int_equal(run("doctor", "--root", FIXTURES "/rtx4090-display/root", "--json", NULL), 0);
	o = parse_json();
	gpus = key(o, "gpus", json_type_array);
	assert_true(json_object_get_boolean(key(json_object_array_get_idx(gpus, 0), "display",
						json_type_boolean)));
	assert_string_equal(json_object_get_string(key(json_object_array_get_idx(gpus, 0), "chip",
						       json_type_string)), "AD102");
	assert_int_equal(json_object_get_int64(key(json_object_array_get_idx(gpus, 0), "vram_smi_mib",
						   json_type_int)), 24564);
	assert_string_equal(json_object_get_string(key(key(json_object_array_get_idx(gpus, 0),
							   "static_bar1", json_type_object),
						       "expected", json_type_string)), "yes");
	pairs = key(o, "pairs", json_type_array);
	assert_string_equal(json_object_get_string(key(json_object_array_get_idx(pairs, 0),
						       "p2p", json_type_string)), "bar1");
	key(json_object_array_get_idx(pairs, 0), "p2p_why", json_type_string);
	json_object_put(o);
}

/* Every line of @text within @w columns (ASCII), none ending in a blank. */
static void assert_fits(const char *name, const char *text, size_t w)
{
	const char *p = text;

	while (*p) {
		size_t n = strcspn(p, "\n");

		if (n > w || (n && p[n - 1] == ' '))
			fail_msg("%s: line of %zu columns: %.*s", name, n, (int)n, p);
		p += n + (p[n] == '\n');
	}
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/*
 * doctor's text says a finding once: eight 5090s on one
 * EPYC, 28 pairs, in fewer than 90 lines within 100 columns, each check's
 * line naming its GPUs or pairs; blockers first; one line per remedy.
 */
static void test_doctor_said_once(void **state)
{
	const char *p, *q;

	(void)state;
	assert_int_equal(run("doctor", "--root", FIXTURES "/epyc-8x5090/root", NULL), 0);
	assert_fits("epyc-8x5090", out_text, P2PCTL_COLUMNS);
	assert_true(count(out_text, "\n") < 90);
	assert_int_equal(count(out_text, "\nOK       acs "), 1);
	assert_non_null(strstr(out_text, "\nOK       acs               all 28 pairs "));
	assert_non_null(strstr(out_text, "\nOK       gpu               all 8 GPUs "));
	assert_non_null(strstr(out_text, "\nOK       pcie-path         0-1, 2-3, 4-5,  PCIe path: same root complex\n"));
	assert_non_null(strstr(out_text, "\n  all 28 pairs  bar1  static BAR1 on both GPUs"));
	assert_non_null(strstr(out_text, "\n  7  0000:c2:00.0  GB202 "));
	assert_non_null(strstr(out_text, "\n0 blockers, 3 warnings\n"));
	/* blockers, warnings, skips, oks */
	assert_int_equal(run("doctor", "--root", FIXTURES "/h100-vm-580/root", NULL), P2PCTL_EXIT_NOT_MET);
	assert_fits("h100-vm-580", out_text, P2PCTL_COLUMNS);
	p = strstr(out_text, "\nFAIL     gpus ");
	q = strstr(out_text, "\nWARN     driver-lock ");
	assert_non_null(p);
	assert_non_null(q);
	assert_true(p < q && strstr(out_text, "\nFAIL     kprobes ") < p);
	assert_true(q < strstr(out_text, "\nSKIP ") && strstr(out_text, "\nSKIP ") < strstr(out_text, "\nOK "));
	/* two GPUs with the same link warning: one line, one remedy */
	assert_int_equal(run("doctor", "--root", FIXTURES "/plx-acs/root", NULL), 0);
	assert_int_equal(count(out_text, "\nWARN     link "), 1);
	assert_non_null(strstr(out_text, "\nWARN     link              0, 1 "));
	assert_int_equal(count(out_text, "use an x16 slot"), 1);
	assert_non_null(strstr(out_text, "\n  link 0, 1: use an x16 slot wired to the CPU;"));
	/* ACS: a remedy line per fix, the pair's try-now and the host's one parameter */
	/* the command whole, on a line of its own: a paste runs it as printed */
	assert_non_null(strstr(out_text, "\n  acs 0-1: try now, as root (until reboot or reset;"));
	assert_non_null(strstr(out_text, "\n  acs 0-1:\n    # setpci -s 0000:02:08.0 ECAP_ACS+6.w=0000:002c "
				    "-s 0000:02:10.0 ECAP_ACS+6.w=0000:002c\n"));
	assert_non_null(strstr(out_text, "\n  acs: permanent: GRUB_CMDLINE_LINUX=\"..."));
	assert_non_null(strstr(out_text, "\n0 blockers, 6 warnings\n"));
}

/* Wrapping: at spaces; a word longer than the line after a '/', '_', ..., else at the width. */
static void test_wrap(void **state)
{
	size_t skip;

	(void)state;
	assert_int_equal(p2pctl_wrap_next("short", 10, &skip), 5);
	assert_int_equal(p2pctl_wrap_next("one two three", 9, &skip), 7);
	assert_int_equal(skip, 1);
	assert_int_equal(p2pctl_wrap_next("one two   three", 10, &skip), 7);
	assert_int_equal(skip, 3);
	assert_int_equal(p2pctl_wrap_next("/home/user/lib/libnccl.so.2", 12, &skip), 11);
	assert_int_equal(skip, 0);
	assert_int_equal(p2pctl_wrap_next("abcdefghijklmnop", 10, &skip), 10);
	/* a subject longer than its column: after its '_' */
	assert_int_equal(p2pctl_wrap_next("CUDA_VISIBLE_DEVICES=0,1", 14, &skip), 13);
	assert_int_equal(p2pctl_wrap_next("\xc3\xa9\xc3\xa9\xc3\xa9", 2, &skip), 4);	/* not half a character */
}

/*
 * doctor's text on every fixture tree is tests/fixtures/NAME/doctor.txt
 * (with its exit status), within 100 columns.  P2PS_UPDATE_EXPECTED=1
 * rewrites those files from what doctor prints now.
 */
static void test_doctor_expected(void **state)
{
	char cmd[1024], path[512];
	FILE *ls;
	size_t n = 0;

	(void)state;
	snprintf(cmd, sizeof(cmd), "cd '%s' && ls -d */root | sed 's,/root$,,'", FIXTURES);
	ls = popen(cmd, "r");
	assert_non_null(ls);
	while (fgets(path, sizeof(path), ls)) {
		char name[256], *want, *got;
		size_t len;
		int rc;
		FILE *f;

		snprintf(name, sizeof(name), "%.*s", (int)strcspn(path, "\n"), path);
		snprintf(path, sizeof(path), "%s/%s/root", FIXTURES, name);
		rc = run("doctor", "--root", path, NULL);
		len = strlen(out_text);
		got = malloc(len + 32);
		assert_non_null(got);
		snprintf(got, len + 32, "%sexit status %d\n", out_text, rc);
		assert_fits(name, out_text, P2PCTL_COLUMNS);
		snprintf(path, sizeof(path), "%s/%s/doctor.txt", FIXTURES, name);
		if (getenv("P2PS_UPDATE_EXPECTED")) {
			f = fopen(path, "w");
			assert_non_null(f);
			fputs(got, f);
			fclose(f);
		}
		f = fopen(path, "r");
		if (!f)
			fail_msg("%s: no expected output (P2PS_UPDATE_EXPECTED=1 writes it)", path);
		want = slurp_file(f);
		fclose(f);
		if (strcmp(want, got))
			fail_msg("%s: doctor's text differs from %s:\n%s", name, path, got);
		free(want);
		free(got);
		n++;
	}
	pclose(ls);
	assert_true(n >= 25);
}

/*
 * --gpus scopes the shim's registry keys to the GPUs named (registry_gpus=
 * of the module), instead of keys in nvidia's own options that stay, and
 * force the stock driver's mailbox offer, when p2p-shim is not loaded.
 */
static void test_config_gpus(void **state)
{
	(void)state;
	assert_int_equal(run("config", "--gpus", "0000:03:00.0,04:00.0", NULL), 0);
	assert_non_null(strstr(out_text, "options p2p-shim enable=1 registry_gpus=0000:03:00.0,04:00.0\n"));
	assert_null(strstr(out_text, "RegistryDwords"));
	assert_null(strstr(out_text, "ForceP2P"));
	assert_int_equal(run("config", "-g", "1:0.0", NULL), 0);
	assert_non_null(strstr(out_text, "registry_gpus=1:0.0\n"));
	/* Bad lists: a clear usage error, nothing printed to write. */
	assert_int_equal(run("config", "--gpus", "0000:zz:00.0", NULL), P2PCTL_EXIT_USAGE);
	assert_non_null(strstr(err_text, "'0000:zz:00.0' is not a list of PCI addresses"));
	assert_int_equal(run("config", "--gpus", "03:00.1", NULL), P2PCTL_EXIT_USAGE);
	assert_int_equal(run("config", "--gpus", "03:00.0,", NULL), P2PCTL_EXIT_USAGE);
	assert_int_equal(run("config", "--gpus", "", NULL), P2PCTL_EXIT_USAGE);
	assert_int_equal(run("config", "--gpus", "03:00.0;04:00.0", NULL), P2PCTL_EXIT_USAGE);
	assert_int_equal(run("config", "--gpus", "03:00.0", "--registry", "--driver", "580.142", NULL),
			 P2PCTL_EXIT_USAGE);
	/* A VMD domain (10000 and above): the module takes it (rules/bdf.c), so p2pctl does. */
	assert_int_equal(run("config", "--gpus", "10000:01:00.0", NULL), 0);
	assert_non_null(strstr(out_text, "registry_gpus=10000:01:00.0\n"));
	/* What libc's sscanf let through: a 0x prefix, a sign, a space, a bus of three digits. */
	assert_int_equal(run("config", "--gpus", "0x0000:03:00.0", NULL), P2PCTL_EXIT_USAGE);
	assert_int_equal(run("config", "--gpus", "0000:+3:00.0", NULL), P2PCTL_EXIT_USAGE);
	assert_int_equal(run("config", "--gpus", "0000: 3:00.0", NULL), P2PCTL_EXIT_USAGE);
	assert_int_equal(run("config", "--gpus", "0000:103:00.0", NULL), P2PCTL_EXIT_USAGE);
	assert_int_equal(run("config", "--gpus", "123456789:03:00.0", NULL), P2PCTL_EXIT_USAGE);
}

/* rules/bdf.c, the one parser of a GPU address (module and p2pctl). */
static void test_parse_bdf(void **state)
{
	static const struct {
		const char *s;
		int ret;
		uint64_t dbd;
	} cases[] = {
		{ "0000:03:00.0", 0, 0x0300 }, { "3:1f.0", 0, 0x031f }, { "0001:c1:00.0", 0, 0x10000c100 },
		{ "10000:01:00.0", 0, 0x1000000000100 }, { "ffffffff:ff:1f.0", 0, 0xffffffff0000ff1f },
		{ "03:00.1", -1, 0 }, { "03:20.0", -1, 0 }, { "03:00", -1, 0 }, { "0:0:0:0.0", -1, 0 },
		{ "03:00.0 ", -1, 0 }, { "", -1, 0 }, { ":03:00.0", -1, 0 }, { "03::00.0", -1, 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t dbd = 0;

		assert_int_equal(p2ps_parse_bdf(cases[i].s, strlen(cases[i].s), &dbd), cases[i].ret);
		if (!cases[i].ret)
			assert_int_equal(dbd, cases[i].dbd);
	}
}

static void test_config(void **state)
{
	char tmpl[] = "/tmp/p2pctl-config-XXXXXX", path[256], buf[1024];
	const char *dir = mkdtemp(tmpl);
	FILE *f;
	size_t n;

	(void)state;
	assert_int_equal(run("config", NULL), 0);
	assert_non_null(strstr(out_text, "softdep nvidia pre: p2p-shim\n"));
	assert_non_null(strstr(out_text, "options nvidia NVreg_EnableResizableBar=1\n"));
	assert_null(strstr(out_text, "RegistryDwords"));
	/* Each generation's keys: RMForceP2PType=2 is BAR1 only before 575. */
	assert_int_equal(run("config", "--registry", "--driver", "570.148.08", NULL), 0);
	assert_non_null(strstr(out_text,
		"NVreg_RegistryDwords=\"ForceP2P=0x211;RMForceP2PType=0x2\""));
	assert_int_equal(run("config", "--registry", "--driver", "550.163.01", NULL), 0);
	assert_non_null(strstr(out_text,
		"NVreg_RegistryDwords=\"ForceP2P=0x211;RMForceP2PType=0x2\""));
	assert_int_equal(run("config", "-R", "-d", "575.64.05", NULL), 0);
	assert_non_null(strstr(out_text,
		"NVreg_RegistryDwords=\"ForceP2P=0x211;RMPcieP2PType=0x1;RMForceStaticBar1=0x2\""));
	assert_int_equal(run("config", "--registry", "--driver", "580.142", NULL), 0);
	assert_non_null(strstr(out_text,
		"NVreg_RegistryDwords=\"ForceP2P=0x211;RMPcieP2PType=0x1\""));
	assert_null(strstr(out_text, "RMForceP2PType"));
	assert_int_not_equal(run("config", "--registry", "--driver", "999.1", NULL), 0);
	assert_non_null(strstr(err_text, "driver 999.1 has no profile"));
	assert_int_equal(run("config", "--driver", "580.142", NULL), P2PCTL_EXIT_USAGE);
	assert_int_equal(run("config", "--write", "--root", dir, NULL), 0);
	snprintf(path, sizeof(path), "%s/etc/modprobe.d/p2p-shim.conf", dir);
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	assert_non_null(strstr(buf, "softdep nvidia pre: p2p-shim"));
	unlink(path);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	assert_int_equal(system(path), 0);
}

/* The whole of @path into @buf (at most @len - 1 bytes, NUL-terminated); "" where absent. */
static void read_text(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n = 0;

	if (f) {
		n = fread(buf, 1, len - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void append_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "a");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/*
 * The first line's sum is POSIX cksum(1)'s of the lines below, as the
 * package's postrm and make uninstall compute it (`tail -n +2 | cksum`), and
 * `config` prints what --write writes.
 */
static void test_config_sum(void **state)
{
	static const char *const variants[][4] = {
		{ NULL }, { "--gpus", "0000:03:00.0,04:00.0", NULL },
		{ "--registry", "--driver-version", "580.142", NULL },
		{ "--registry", "--driver-version", "575.64.05", NULL },
	};
	char tmpl[] = "/tmp/p2pctl-sum-XXXXXX", path[256], cmd[512], want[64], got[64],
	     text[2048];
	const char *dir = mkdtemp(tmpl);
	unsigned int crc;
	size_t i, len;
	FILE *p;

	(void)state;
	assert_non_null(dir);
	snprintf(path, sizeof(path), "%s/etc/modprobe.d/p2p-shim.conf", dir);
	for (i = 0; i < sizeof(variants) / sizeof(variants[0]); i++) {
		const char *const *v = variants[i];

		assert_int_equal(run("config", "--write", "--root", dir, v[0], v[1], v[2], NULL), 0);
		read_text(path, text, sizeof(text));
		assert_int_equal(run("config", v[0], v[1], v[2], NULL), 0);
		assert_string_equal(out_text, text);
		assert_int_equal(sscanf(text, "# Written by p2pctl config (cksum %u %zu of the lines below).\n",
					&crc, &len), 2);
		snprintf(want, sizeof(want), "%u %zu\n", crc, len);
		snprintf(cmd, sizeof(cmd), "tail -n +2 '%s' | cksum", path);
		p = popen(cmd, "r");
		assert_non_null(p);
		assert_non_null(fgets(got, sizeof(got), p));
		assert_int_equal(pclose(p), 0);
		assert_string_equal(got, want);
		assert_int_equal(run("config", "--remove", "--root", dir, NULL), 0);
		assert_int_equal(access(path, F_OK), -1);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/*
 * --remove and --write leave alone a file edited since p2pctl wrote it, and
 * one an older p2pctl wrote (no sum): an error naming --force, exit 1.  With
 * --force they go ahead.  A file p2pctl did not write stays even then.
 */
static void test_config_edited(void **state)
{
	char tmpl[] = "/tmp/p2pctl-edited-XXXXXX", path[256], cmd[300], before[2048],
	     after[2048];
	const char *dir = mkdtemp(tmpl);

	(void)state;
	assert_non_null(dir);
	snprintf(path, sizeof(path), "%s/etc/modprobe.d/p2p-shim.conf", dir);

	/* as written: p2pctl's own, to overwrite (another --gpus) or remove */
	assert_int_equal(run("config", "--write", "--root", dir, NULL), 0);
	assert_int_equal(run("config", "--write", "--root", dir, "--gpus", "03:00.0", NULL), 0);
	assert_int_equal(run("config", "--remove", "--root", dir, NULL), 0);
	assert_non_null(strstr(out_text, "removed "));
	assert_int_equal(access(path, F_OK), -1);

	/* edited, its first line kept */
	assert_int_equal(run("config", "--write", "--root", dir, "--registry", "-d", "580.142", NULL), 0);
	append_text(path, "options nvidia NVreg_EnableMSI=0\n");
	read_text(path, before, sizeof(before));
	assert_int_equal(run("config", "--remove", "--root", dir, NULL), P2PCTL_EXIT_NOT_MET);
	assert_non_null(strstr(err_text, "edited since p2pctl config wrote it"));
	assert_non_null(strstr(err_text, "not removed"));
	assert_non_null(strstr(err_text, "--force"));
	assert_int_equal(run("config", "--write", "--root", dir, NULL), P2PCTL_EXIT_NOT_MET);
	assert_non_null(strstr(err_text, "not overwritten"));
	read_text(path, after, sizeof(after));
	assert_string_equal(after, before);
	assert_int_equal(run("config", "--write", "--force", "--root", dir, NULL), 0);
	read_text(path, after, sizeof(after));
	assert_null(strstr(after, "EnableMSI"));
	assert_int_equal(run("config", "--remove", "--root", dir, NULL), 0);

	/* edited by a changed line, and by a changed sum */
	assert_int_equal(run("config", "--write", "--root", dir, NULL), 0);
	snprintf(cmd, sizeof(cmd), "sed -i 's/enable=1/enable=0/' '%s'", path);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(run("config", "--remove", "--root", dir, NULL), P2PCTL_EXIT_NOT_MET);
	assert_int_equal(run("config", "-x", "-f", "--root", dir, NULL), 0);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(run("config", "--write", "--root", dir, NULL), 0);
	snprintf(cmd, sizeof(cmd), "sed -i '1s/cksum [0-9]*/cksum 1/' '%s'", path);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(run("config", "--remove", "--root", dir, NULL), P2PCTL_EXIT_NOT_MET);
	assert_non_null(strstr(err_text, "edited since"));

	/* an older p2pctl's: no sum, so perhaps edited */
	write_text(path, "# Written by p2pctl config: p2p-shim (PCIe BAR1 P2P on the stock open driver).\n"
		   "softdep nvidia pre: p2p-shim\n");
	assert_int_equal(run("config", "--remove", "--root", dir, NULL), P2PCTL_EXIT_NOT_MET);
	assert_non_null(strstr(err_text, "older p2pctl config"));
	assert_int_equal(run("config", "--write", "--root", dir, NULL), P2PCTL_EXIT_NOT_MET);
	assert_int_equal(run("config", "--remove", "--force", "--root", dir, NULL), 0);
	assert_int_equal(access(path, F_OK), -1);

	/* not p2pctl's: never, --force or not */
	write_text(path, "softdep nvidia pre: p2p-shim\n");
	assert_int_equal(run("config", "--remove", "--force", "--root", dir, NULL), P2PCTL_EXIT_NOT_MET);
	assert_non_null(strstr(err_text, "not written by p2pctl config"));
	assert_int_equal(run("config", "--write", "--force", "--root", dir, NULL), P2PCTL_EXIT_NOT_MET);
	read_text(path, after, sizeof(after));
	assert_string_equal(after, "softdep nvidia pre: p2p-shim\n");
	/* an empty one neither */
	write_text(path, "");
	assert_int_equal(run("config", "--remove", "--force", "--root", dir, NULL), P2PCTL_EXIT_NOT_MET);
	assert_int_equal(access(path, F_OK), 0);

	/* --force with neither --write nor --remove */
	assert_int_equal(run("config", "--force", NULL), P2PCTL_EXIT_USAGE);
	assert_int_equal(run("config", "--remove", "--gpus", "03:00.0", NULL), P2PCTL_EXIT_USAGE);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* Every long option in out_text (a --help) appears in the man page text. */
static void check_options_documented(const char *man, const char *cmd)
{
	const char *p;

	for (p = out_text; (p = strstr(p, "--")); ) {
		char opt[64];
		size_t n = 2;

		while (p[n] && (p[n] == '-' || (p[n] >= 'a' && p[n] <= 'z')))
			n++;
		snprintf(opt, sizeof(opt), "%.*s", (int)n, p);
		p += n;
		if (n > 2 && !strstr(man, opt))
			fail_msg("man page lacks option %s of '%s'", opt, cmd);
	}
}

/* Every command and every long option of --help appears in p2pctl.8. */
static void test_man_page(void **state)
{
	char *man = NULL, *clean, *p, *q;
	size_t len = 0, i;
	FILE *f = fopen(TOPDIR "/tools/p2pctl.8", "r");

	(void)state;
	assert_non_null(f);
	assert_true(getdelim(&man, &len, '\0', f) > 0);
	fclose(f);
	clean = calloc(1, strlen(man) + 1);
	for (p = man, q = clean; *p; p++)	/* roff "\-" -> "-" */
		if (!(p[0] == '\\' && p[1] == '-'))
			*q++ = *p;
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		char need[64];

		snprintf(need, sizeof(need), "p2pctl %s", commands[i]);
		if (!strstr(clean, need))
			fail_msg("man page lacks '%s'", need);
		assert_int_equal(run(commands[i], "--help", NULL), 0);
		check_options_documented(clean, commands[i]);
	}
	for (i = 0; i < sizeof(cuda_commands) / sizeof(cuda_commands[0]); i++) {
		char need[64];

		snprintf(need, sizeof(need), "p2pctl %s", cuda_commands[i]);
		if (!strstr(clean, need))
			fail_msg("man page lacks '%s'", need);
		assert_int_equal(run(cuda_commands[i], "--help", NULL), 0);
		snprintf(need, sizeof(need), "Usage: p2pctl %s", cuda_commands[i]);
		assert_non_null(strstr(out_text, need));
		check_options_documented(clean, cuda_commands[i]);
		assert_int_equal(run(cuda_commands[i], "--no-such-option", NULL), P2PCTL_EXIT_USAGE);
	}
	assert_non_null(strstr(clean, "EXIT STATUS"));
	free(clean);
	free(man);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_help),
		cmocka_unit_test(test_usage_errors),
		cmocka_unit_test(test_not_loaded),
		cmocka_unit_test(test_check_json),
		cmocka_unit_test(test_check_no_nvidia),
		cmocka_unit_test(test_doctor_cli),
		cmocka_unit_test(test_doctor_json_schema),
		cmocka_unit_test(test_doctor_said_once),
		cmocka_unit_test(test_wrap),
		cmocka_unit_test(test_doctor_expected),
		cmocka_unit_test(test_config),
		cmocka_unit_test(test_config_gpus),
		cmocka_unit_test(test_config_sum),
		cmocka_unit_test(test_config_edited),
		cmocka_unit_test(test_parse_bdf),
		cmocka_unit_test(test_man_page),
	};
	int rc = cmocka_run_group_tests_name("p2pctl", tests, NULL, NULL);

	free(out_text);
	free(err_text);
	return rc;
}
