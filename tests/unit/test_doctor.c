// SPDX-License-Identifier: GPL-2.0
/* p2ps_doctor() verdicts on fixture root trees (tests/fixtures/). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <p2p-shim/readrule.h>
#include "doctor.h"

/* doctor on the tree @root, with @fixture's nvidia-smi output */
static struct p2ps_doctor_report *doctor_at(const char *root, const char *fixture, const char *topo)
{
	struct p2ps_doctor_opts o = { 0 };
	struct p2ps_doctor_report *r = NULL;
	char smi[512];
	char *smi_text;

	/* nvidia-smi --query-gpu output, where the fixture has it (as p2pctl reads it) */
	snprintf(smi, sizeof(smi), "%s/%s/cmd/nvidia-smi-query.txt", FIXTURES, fixture);
	smi_text = p2ps_read_file(smi, NULL, false);
	o.root = root;
	o.topo_text = topo;
	o.topo_source = "test";
	o.smi_query_text = smi_text;
	assert_int_equal(p2ps_doctor(&o, &r), 0);
	assert_non_null(r);
	free(smi_text);
	return r;
}

static struct p2ps_doctor_report *doctor(const char *fixture, const char *topo)
{
	char root[512];

	snprintf(root, sizeof(root), "%s/%s/root", FIXTURES, fixture);
	return doctor_at(root, fixture, topo);
}

/* doctor on a copy of @fixture's tree after the shell command @edit ran in it */
static struct p2ps_doctor_report *doctor_edited_topo(const char *fixture, const char *edit,
						     const char *topo)
{
	char tmpl[] = "/tmp/p2ps-doctor-XXXXXX", cmd[2048], root[512];
	const char *dir = mkdtemp(tmpl);
	struct p2ps_doctor_report *r;

	assert_non_null(dir);
	snprintf(root, sizeof(root), "%s/root", dir);
	snprintf(cmd, sizeof(cmd), "cp -r '%s/%s/root' '%s' && cd '%s' && %s",
		 FIXTURES, fixture, root, root, edit);
	assert_int_equal(system(cmd), 0);
	r = doctor_at(root, fixture, topo);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	return r;
}

static struct p2ps_doctor_report *doctor_edited(const char *fixture, const char *edit)
{
	return doctor_edited_topo(fixture, edit, NULL);
}

/* The shell command that sets the fixture's RegistryDwordsPerDevice to @v (a literal). */
#define PER_DEVICE(v) "sed -i '/^RegistryDwordsPerDevice:/d' proc/driver/nvidia/params && " \
	"echo 'RegistryDwordsPerDevice: \"" v "\"' >>proc/driver/nvidia/params"

static const struct p2ps_finding *finding(const struct p2ps_doctor_report *r, const char *check,
					  const char *subject)
{
	const struct p2ps_finding *f = p2ps_doctor_find(r, check, subject);

	if (!f)
		fail_msg("no finding %s %s", check, subject ? subject : "");
	return f;
}

#define GPU0 "0000:01:00.0"
#define GPU1 "0000:02:00.0"
#define PAIR GPU0 " " GPU1

static enum p2ps_verdict verdict(const struct p2ps_doctor_report *r, const char *check,
				 const char *subject)
{
	const struct p2ps_finding *f = p2ps_doctor_find(r, check, subject);

	if (!f)
		fail_msg("no finding %s %s", check, subject ? subject : "");
	return f->verdict;
}

static void test_4090_pair(void **state)
{
	struct p2ps_doctor_report *r = doctor("rtx4090-pair", NULL);
	size_t i;

	(void)state;
	assert_string_equal(r->kernel_release, "6.1.0-28-amd64");
	assert_string_equal(r->driver_version, "580.95.05");
	assert_true(r->open_module);
	assert_string_equal(r->profile, "gen-b");
	assert_int_equal(r->nr_gpus, 2);
	assert_string_equal(r->gpus[0].bdf, "0000:01:00.0");
	assert_string_equal(r->gpus[0].name, "NVIDIA GeForce RTX 4090");
	assert_string_equal(r->gpus[0].arch, "Ada");
	assert_int_equal(r->gpus[0].bar1, 32ULL << 30);
	assert_int_equal(r->gpus[0].vram, 24ULL << 30);
	assert_int_equal(r->nr_pairs, 1);
	assert_int_equal(r->pairs[0].path, P2PS_PATH_ROOT_COMPLEX);
	assert_int_equal(r->pairs[0].native, P2PS_NATIVE_NONE);
	/*
	 * all ok except "module not loaded" (and the check that needs it) and
	 * 580.95.05's devicesLock inversion
	 */
	assert_int_equal(r->nr_fail, 0);
	assert_int_equal(r->nr_warn, 2);
	assert_int_equal(verdict(r, "module", NULL), P2PS_V_WARN);
	assert_int_equal(verdict(r, "driver-lock", NULL), P2PS_V_WARN);
	assert_non_null(strstr(p2ps_doctor_find(r, "module", NULL)->remedy, "modprobe"));
	for (i = 0; i < r->nr_findings; i++) {
		const struct p2ps_finding *f = &r->findings[i];

		/* this fixture has no link, display, CPU or NCCL files */
		if (!strcmp(f->check, "link") || !strcmp(f->check, "display") || !strcmp(f->check, "vm") ||
		    !strcmp(f->check, "nccl"))
			assert_int_equal(f->verdict, P2PS_V_SKIP);
		else if (strcmp(f->check, "module") && strcmp(f->check, "stale-gpus") &&
			 strcmp(f->check, "driver-lock"))
			assert_int_equal(f->verdict, P2PS_V_OK);
		if (f->verdict == P2PS_V_OK)
			assert_string_equal(f->remedy, "");
	}
	assert_int_equal(verdict(r, "kprobes", NULL), P2PS_V_OK);
	assert_int_equal(verdict(r, "lockdown", NULL), P2PS_V_OK);
	assert_int_equal(verdict(r, "secure-boot", NULL), P2PS_V_OK);
	assert_int_equal(verdict(r, "iommu", NULL), P2PS_V_OK);
	assert_int_equal(verdict(r, "bar1", "0000:02:00.0"), P2PS_V_OK);
	assert_int_equal(verdict(r, "native-p2p", "0000:01:00.0 0000:02:00.0"), P2PS_V_OK);
	assert_int_equal(r->gpus[0].static_bar1, P2PS_SB_YES);
	assert_int_equal(r->gpus[0].display, -1);	/* no boot_vga in this fixture */
	assert_string_equal(r->gpus[0].vram_source, "nominal");
	assert_int_equal(r->pairs[0].p2p, P2PS_P2P_BAR1);
	p2ps_doctor_free(r);
}

static void test_small_bar(void **state)
{
	struct p2ps_doctor_report *r = doctor("rtx4090-smallbar", NULL);
	const struct p2ps_finding *f;

	(void)state;
	assert_int_equal(r->gpus[0].bar1, 256ULL << 20);
	f = p2ps_doctor_find(r, "bar1", "0000:03:00.0");
	assert_non_null(f);
	assert_int_equal(f->verdict, P2PS_V_FAIL);
	assert_non_null(strstr(f->detail, "256 MiB"));
	assert_non_null(strstr(f->remedy, "Resizable BAR"));
	assert_non_null(strstr(f->remedy, "NVreg_EnableResizableBar=1"));
	assert_int_equal(verdict(r, "rebar-param", NULL), P2PS_V_FAIL);
	assert_int_equal(r->pairs[0].path, P2PS_PATH_SWITCH);
	/* the additions: no static BAR1 (warn per GPU), no P2P for the pair (fail) */
	assert_int_equal(r->gpus[0].static_bar1, P2PS_SB_NO);
	assert_int_equal(verdict(r, "static-bar1", "0000:03:00.0"), P2PS_V_WARN);
	assert_int_equal(r->pairs[0].p2p, P2PS_P2P_NONE);
	assert_int_equal(verdict(r, "p2p", "0000:03:00.0 0000:04:00.0"), P2PS_V_FAIL);
	assert_int_equal(r->nr_fail, 4);
	p2ps_doctor_free(r);
}

static void test_proprietary(void **state)
{
	struct p2ps_doctor_report *r = doctor("proprietary-550", NULL);
	const struct p2ps_finding *f = p2ps_doctor_find(r, "nvidia", NULL);

	(void)state;
	assert_false(r->open_module);
	assert_string_equal(r->driver_version, "550.54.15");
	assert_int_equal(f->verdict, P2PS_V_FAIL);
	assert_non_null(strstr(f->detail, "proprietary"));
	assert_non_null(strstr(f->remedy, "open"));
	/* no profile applies to the proprietary module: not "profile OK" beside it */
	assert_int_equal(verdict(r, "profile", NULL), P2PS_V_SKIP);
	assert_string_equal(r->profile, "");
	assert_int_equal(r->nr_pairs, 0);
	p2ps_doctor_free(r);
}

static void test_no_kprobes(void **state)
{
	struct p2ps_doctor_report *r = doctor("no-kprobes", NULL);
	const struct p2ps_finding *f = p2ps_doctor_find(r, "kprobes", NULL);

	(void)state;
	/* release from /proc/version, config from /boot/config-<release> */
	assert_string_equal(r->kernel_release, "6.8.0-custom");
	assert_int_equal(f->verdict, P2PS_V_FAIL);
	assert_non_null(strstr(f->detail, "kprobes missing"));
	assert_non_null(strstr(f->source, "/boot/config-6.8.0-custom"));
	assert_int_equal(verdict(r, "iommu", NULL), P2PS_V_WARN);
	assert_int_equal(r->pairs[0].path, P2PS_PATH_CROSS_SOCKET);
	assert_int_equal(verdict(r, "pcie-path", "0000:17:00.0 0000:b1:00.0"), P2PS_V_WARN);
	assert_int_equal(r->nr_fail, 1);
	p2ps_doctor_free(r);
}

#define H200_TOPO FIXTURES "/h200-nvlink-580/cmd/nvidia-smi-topo-m.txt"

static void test_h200_nvlink(void **state)
{
	char *topo = p2ps_read_file(H200_TOPO, NULL, false);
	struct p2ps_doctor_report *r;
	const struct p2ps_finding *f;
	const char *pair = "0000:00:06.0 0000:00:07.0";

	(void)state;
	assert_non_null(topo);
	r = doctor("h200-nvlink-580", topo);
	free(topo);
	assert_string_equal(r->kernel_release, "6.18.44-fc-v657-gpu");
	assert_string_equal(r->driver_version, "580.159.04");
	assert_true(r->open_module);
	assert_int_equal(r->nr_gpus, 2);
	assert_string_equal(r->gpus[1].name, "NVIDIA H200");
	assert_string_equal(r->gpus[1].arch, "Hopper");
	assert_int_equal(r->gpus[0].bar1, 256ULL << 30);
	f = p2ps_doctor_find(r, "kprobes", NULL);
	assert_int_equal(f->verdict, P2PS_V_FAIL);
	assert_non_null(strstr(f->detail, "kprobes missing"));
	assert_string_equal(f->source, "/proc/config.gz");
	assert_int_equal(verdict(r, "sig-enforce", NULL), P2PS_V_FAIL);
	assert_int_equal(verdict(r, "modules-disabled", NULL), P2PS_V_FAIL);
	assert_int_equal(verdict(r, "lockdown", NULL), P2PS_V_FAIL);
	assert_int_equal(verdict(r, "iommu", NULL), P2PS_V_OK);
	assert_int_equal(r->pairs[0].native, P2PS_NATIVE_NVLINK);
	assert_non_null(strstr(r->pairs[0].native_source, "NV18"));
	f = p2ps_doctor_find(r, "native-p2p", pair);
	assert_non_null(strstr(f->detail, "shim not needed"));
	assert_int_equal(r->pairs[0].path, P2PS_PATH_ROOT_COMPLEX);
	/* 143771 MiB seen: 141 GiB; BAR1 256 GiB holds it */
	assert_int_equal(r->gpus[0].vram, 141ULL << 30);
	assert_int_equal(r->gpus[0].static_bar1, P2PS_SB_YES);
	assert_int_equal(r->pairs[0].p2p, P2PS_P2P_NATIVE);
	assert_int_equal(verdict(r, "p2p", pair), P2PS_V_OK);
	p2ps_doctor_free(r);

	/* Without nvidia-smi output: the nvlink core plus Hopper. */
	r = doctor("h200-nvlink-580", NULL);
	assert_int_equal(r->pairs[0].native, P2PS_NATIVE_NVLINK);
	assert_non_null(strstr(r->pairs[0].native_source, "/proc/driver/nvidia-nvlink"));
	p2ps_doctor_free(r);
}

/* RTX 5090: BAR1 32 GiB, VRAM 32 GiB (32607 MiB seen): the automatic rule can't fit it. */
static void test_5090_pair(void **state)
{
	struct p2ps_doctor_report *r = doctor("rtx5090-pair", NULL);
	const struct p2ps_finding *f;

	(void)state;
	assert_string_equal(r->gpus[0].chip, "GB202");
	assert_string_equal(r->gpus[0].vram_source, "nvidia-smi");
	assert_int_equal(r->gpus[0].vram_mib, 32607);
	assert_int_equal(r->gpus[0].vram, 32ULL << 30);
	assert_int_equal(r->gpus[0].bar1, 32ULL << 30);
	assert_int_equal(r->gpus[0].display, 0);
	/* the existing BAR1 check still says BAR1 covers VRAM ... */
	assert_int_equal(verdict(r, "bar1", GPU0), P2PS_V_OK);
	/*
	 * ... the driver's rule says no (VRAM + reserves > 32766 MiB), but
	 * p2p-shim (static_bar1 not N) forces it: 32606 MiB + 64 MiB fit.
	 */
	assert_int_equal(r->gpus[0].static_bar1, P2PS_SB_YES);
	assert_int_equal(r->gpus[1].static_bar1, P2PS_SB_YES);
	f = finding(r, "static-bar1", GPU1);
	assert_int_equal(f->verdict, P2PS_V_OK);
	assert_non_null(strstr(f->detail, "forced by p2p-shim"));
	assert_non_null(strstr(f->detail, "32606 MiB"));
	assert_int_equal(r->pairs[0].p2p, P2PS_P2P_BAR1);
	assert_int_equal(verdict(r, "p2p", PAIR), P2PS_V_OK);
	assert_int_equal(r->nr_fail, 0);
	p2ps_doctor_free(r);
}

/* The same pair with p2p-shim loaded static_bar1=N: the driver's rule alone. */
static void test_5090_pair_noforce(void **state)
{
	struct p2ps_doctor_report *r = doctor_edited("rtx5090-pair",
		"mkdir -p sys/module/p2p_shim/parameters && echo N >sys/module/p2p_shim/parameters/static_bar1");
	const struct p2ps_finding *f;

	(void)state;
	assert_int_equal(r->gpus[0].static_bar1, P2PS_SB_NO);
	assert_int_equal(r->gpus[1].static_bar1, P2PS_SB_NO);
	f = finding(r, "static-bar1", GPU1);
	assert_int_equal(f->verdict, P2PS_V_WARN);
	assert_non_null(strstr(f->detail, "automatic rule"));
	assert_non_null(strstr(f->detail, "32766 MiB usable"));
	/* 580 with p2p-shim's keys: no mailbox, no console, so forcing fits */
	assert_non_null(strstr(f->remedy, "RMForceStaticBar1=1"));
	assert_non_null(strstr(f->remedy, "fits"));
	assert_int_equal(r->pairs[0].p2p, P2PS_P2P_NONE);
	f = finding(r, "p2p", PAIR);
	assert_int_equal(f->verdict, P2PS_V_FAIL);
	assert_non_null(strstr(f->detail, "static BAR1 no"));
	assert_non_null(strstr(f->remedy, "RMForceStaticBar1=1"));
	assert_int_equal(r->nr_fail, 1);
	p2ps_doctor_free(r);
}

/*
 * The same pair with the user's RMBar1ApertureSizeMB=32660: the driver's
 * rules use that aperture, and p2p-shim does not force (52 MiB would be
 * left for dynamic BAR1 mappings, not 64); the remedy names the key.
 */
static void test_5090_pair_aperture(void **state)
{
	struct p2ps_doctor_report *r = doctor_edited("rtx5090-pair",
		"sed -i 's/^RegistryDwords: .*/RegistryDwords: \"RMBar1ApertureSizeMB=32660\"/' "
		"proc/driver/nvidia/params");
	const struct p2ps_finding *f;

	(void)state;
	assert_int_equal(r->gpus[0].static_bar1, P2PS_SB_NO);
	assert_int_equal(r->gpus[1].static_bar1, P2PS_SB_NO);
	f = finding(r, "static-bar1", GPU1);
	assert_int_equal(f->verdict, P2PS_V_WARN);
	assert_non_null(strstr(f->detail, "32658 MiB usable"));
	assert_non_null(strstr(f->detail, "p2p-shim does not force it: RMBar1ApertureSizeMB"));
	assert_non_null(strstr(f->remedy, "take RMBar1ApertureSizeMB out of NVreg_RegistryDwords"));
	assert_int_equal(r->pairs[0].p2p, P2PS_P2P_NONE);
	p2ps_doctor_free(r);
}

/*
 * The user's keys as the driver reads them (os-registry.c, osapi.c,
 * registry.c in 580.142): spaces dropped, names without case, the last
 * setting wins, a token that is not exactly name=value skipped, and a GPU's
 * own RegistryDwordsPerDevice entries before the global RegistryDwords.
 */
static void test_registry_keys(void **state)
{
	static const struct {
		const char *dwords, *per_device, *bdf, *key;
		long want;
		const char *option;
	} t[] = {
		{ "\"RMForceStaticBar1=1\"", "", GPU0, "RMForceStaticBar1", 1, "NVreg_RegistryDwords" },
		{ " RMForceP2PType = 2 ; RMForceStaticBar1=1", "", NULL, "RMForceP2PType", 2, "NVreg_RegistryDwords" },
		{ "rmforcestaticbar1=0", "", GPU0, "RMForceStaticBar1", 0, "NVreg_RegistryDwords" },
		{ "RMForceStaticBar1=1;RMForceStaticBar1=0", "", GPU0, "RMForceStaticBar1", 0, NULL },
		{ "RMBar1ApertureSizeMB=0x7f94", "", GPU0, "RMBar1ApertureSizeMB", 32660, NULL },
		{ "XRMForceStaticBar1=1", "", GPU0, "RMForceStaticBar1", -1, NULL },
		{ "RMForceStaticBar1=1=2", "", GPU0, "RMForceStaticBar1", -1, NULL },
		{ "RMForceStaticBar1=", "", GPU0, "RMForceStaticBar1", -1, NULL },
		/* per device: the GPU's own entries first; the others get the global value */
		{ "RMForceStaticBar1=1", "pci=0000:01:00.0;RMForceStaticBar1=0", GPU0, "RMForceStaticBar1", 0,
		  "NVreg_RegistryDwordsPerDevice and NVreg_RegistryDwords" },
		{ "", "pci=0000:01:00.0;RMForceStaticBar1=0", GPU0, "RMForceStaticBar1", 0,
		  "NVreg_RegistryDwordsPerDevice" },
		{ "RMForceStaticBar1=1", "pci=0000:01:00.0;RMForceStaticBar1=0", GPU1, "RMForceStaticBar1", 1,
		  "NVreg_RegistryDwords" },
		/* the pci= forms: bus:slot, domain:bus:slot, domain:bus:slot.func */
		{ "", "pci=01:00;RMForceP2PType=0", GPU0, "RMForceP2PType", 0, "NVreg_RegistryDwordsPerDevice" },
		{ "", "pci=0:1:0;RMForceP2PType=0", GPU0, "RMForceP2PType", 0, NULL },
		{ "", "pci=0000:01:00.1;RMForceP2PType=0", GPU0, "RMForceP2PType", -1, NULL },
		{ "", "pci=0000:01:00.8;RMForceP2PType=0", GPU0, "RMForceP2PType", -1, NULL },
		{ "", "pci=01;RMForceP2PType=0", GPU0, "RMForceP2PType", -1, NULL },
		/* keys before any pci=, or after one naming another GPU, are not this GPU's */
		{ "", "RMForceP2PType=0;pci=0000:02:00.0;RMForceP2PType=2", GPU0, "RMForceP2PType", -1, NULL },
		{ "", "pci=0000:01:00.0;RMForceP2PType=0;pci=0000:02:00.0;RMForceP2PType=2", GPU1,
		  "RMForceP2PType", 2, NULL },
		{ "", "pci=0000:01:00.0;RMForceP2PType=0;pci=0000:02:00.0;RMForceP2PType=2", GPU0,
		  "RMForceP2PType", 0, NULL },
		/* the global option has no sections: a pci= there is just a key */
		{ "pci=0000:02:00.0;RMForceP2PType=2", "", GPU0, "RMForceP2PType", 2, NULL },
		/* pci_str_to_bdf checks nothing after the slot; find_pci takes 8-bit bus and slot */
		{ "", "pci=0000:01:00:1;RMForceP2PType=0", GPU0, "RMForceP2PType", 0, NULL },
		{ "", "pci=0000:101:00.0;RMForceP2PType=0", GPU0, "RMForceP2PType", 0, NULL },
		{ "", "pci=:01:00;RMForceP2PType=0", GPU0, "RMForceP2PType", 0, NULL },
		/* simple_strtoul: no sign, wraps, 32 bits kept; only /proc's outer quotes go */
		{ "RMForceStaticBar1=-1", "", GPU0, "RMForceStaticBar1", 0, NULL },
		{ "RMForceStaticBar1=+1", "", GPU0, "RMForceStaticBar1", 0, NULL },
		{ "RMForceStaticBar1=99999999999999999999", "", GPU0, "RMForceStaticBar1", 1661992959, NULL },
		{ "RMForceStaticBar1=010", "", GPU0, "RMForceStaticBar1", 8, NULL },
		{ "\"\"RMForceStaticBar1=1\"\"", "", GPU0, "RMForceStaticBar1", -1, NULL },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		const char *option = NULL;
		long v = p2ps_dr_user_key(t[i].dwords, t[i].per_device, t[i].bdf, t[i].key, &option);

		if (v != t[i].want || (t[i].option && strcmp(option, t[i].option)))
			fail_msg("case %zu: %s / %s for %s: got %ld from %s, want %ld", i, t[i].dwords,
				 t[i].per_device, t[i].bdf ? t[i].bdf : "-", v, option, t[i].want);
	}
}

/*
 * RMForceStaticBar1=0 for the first GPU only, in RegistryDwordsPerDevice
 * (bus:slot form): the driver turns static BAR1 off there, and the remedy
 * names the option the key is in; the second GPU keeps p2p-shim's forcing.
 */
static void test_5090_pair_per_device(void **state)
{
	struct p2ps_doctor_report *r = doctor_edited("rtx5090-pair",
		PER_DEVICE("pci=01:00;RMForceStaticBar1=0"));
	const struct p2ps_finding *f;

	(void)state;
	assert_int_equal(r->gpus[0].static_bar1, P2PS_SB_NO);
	assert_int_equal(r->gpus[1].static_bar1, P2PS_SB_YES);
	f = finding(r, "static-bar1", GPU0);
	assert_int_equal(f->verdict, P2PS_V_WARN);
	assert_non_null(strstr(f->remedy, "take RMForceStaticBar1=0 out of NVreg_RegistryDwordsPerDevice"));
	assert_int_equal(r->pairs[0].p2p, P2PS_P2P_NONE);
	p2ps_doctor_free(r);
}

/* RMForceStaticBar1=1 on a 5090 pair whose first GPU drives the boot display. */
static void test_5090_forced(void **state)
{
	struct p2ps_doctor_report *r = doctor("rtx5090-forced", NULL);
	const struct p2ps_finding *f;

	(void)state;
	assert_int_equal(r->gpus[0].display, 1);
	/* 580 maps static BAR1 at ALIGN_UP(console, 512 MiB): 512 + 32606 > 32766 */
	assert_int_equal(r->gpus[0].static_bar1, P2PS_SB_INIT_FAILS);
	f = finding(r, "static-bar1", GPU0);
	assert_int_equal(f->verdict, P2PS_V_FAIL);
	assert_non_null(strstr(f->detail, "fails to initialise"));
	assert_non_null(strstr(f->remedy, "move the display"));
	/* without the console it starts at 0 and fits */
	assert_int_equal(r->gpus[1].static_bar1, P2PS_SB_YES);
	assert_int_equal(verdict(r, "static-bar1", GPU1), P2PS_V_OK);
	assert_non_null(strstr(r->gpus[1].static_bar1_why, "RMForceStaticBar1=1"));
	assert_int_equal(r->pairs[0].p2p, P2PS_P2P_NONE);
	assert_int_equal(verdict(r, "p2p", PAIR), P2PS_V_FAIL);
	assert_int_equal(r->nr_fail, 2);
	p2ps_doctor_free(r);
}

/* A 4090 driving the boot display: 580 pads the console to 512 MiB and still fits. */
static void test_4090_display(void **state)
{
	struct p2ps_doctor_report *r = doctor("rtx4090-display", NULL);
	const struct p2ps_finding *f;

	(void)state;
	assert_int_equal(r->gpus[0].display, 1);
	assert_int_equal(r->gpus[1].display, 0);
	assert_int_equal(r->gpus[0].static_bar1, P2PS_SB_YES);
	assert_non_null(strstr(r->gpus[0].static_bar1_why, "after the console"));
	f = finding(r, "static-bar1", GPU0);
	assert_non_null(strstr(f->detail, "drives the boot display"));
	assert_int_equal(r->pairs[0].p2p, P2PS_P2P_BAR1);
	assert_int_equal(verdict(r, "p2p", PAIR), P2PS_V_OK);
	assert_int_equal(r->nr_fail, 0);
	p2ps_doctor_free(r);

	/* 570: static BAR1 goes right after the console, not 512 MiB aligned */
	r = doctor("rtx4090-display-570", NULL);
	assert_string_equal(r->profile, "gen-a1");
	assert_int_equal(r->gpus[0].static_bar1, P2PS_SB_UNALIGNED);
	f = finding(r, "static-bar1", GPU0);
	assert_int_equal(f->verdict, P2PS_V_WARN);
	assert_non_null(strstr(f->detail, "512 MiB-aligned"));
	assert_non_null(strstr(f->remedy, "580"));
	assert_int_equal(r->gpus[1].static_bar1, P2PS_SB_YES);
	assert_non_null(strstr(r->gpus[1].static_bar1_why, "RMForceP2PType=2"));
	assert_int_equal(r->pairs[0].p2p, P2PS_P2P_NONE);
	f = finding(r, "p2p", PAIR);
	assert_int_equal(f->verdict, P2PS_V_FAIL);
	assert_non_null(strstr(f->remedy, "move the display"));
	p2ps_doctor_free(r);

	/* 575: the automatic rule (p2p-shim's RMForceStaticBar1=2) counts the console, same placement */
	r = doctor("rtx4090-display-575", NULL);
	assert_string_equal(r->profile, "gen-a2");
	assert_int_equal(r->gpus[0].static_bar1, P2PS_SB_UNALIGNED);
	assert_int_equal(r->gpus[1].static_bar1, P2PS_SB_YES);
	assert_non_null(strstr(r->gpus[1].static_bar1_why, "automatic rule"));
	assert_int_equal(r->pairs[0].p2p, P2PS_P2P_NONE);
	p2ps_doctor_free(r);

	/* 565: decided before the console, at offset 0 */
	r = doctor("rtx4090-display-565", NULL);
	assert_int_equal(r->gpus[0].static_bar1, P2PS_SB_YES);
	assert_non_null(strstr(r->gpus[0].static_bar1_why, "565"));
	assert_int_equal(r->pairs[0].p2p, P2PS_P2P_BAR1);
	assert_int_equal(verdict(r, "p2p", PAIR), P2PS_V_OK);
	p2ps_doctor_free(r);
}

/*
 * The same NVLink pair with RMForceP2PType set per device: doctor's own
 * remedy (0 on both) keeps NVLink; 2 on one GPU, without p2p-shim's keys,
 * turns the driver's NVLink check off as the global key would.
 */
static void test_nvlink_per_device(void **state)
{
	static const char topo[] =
		"\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
		"GPU0\t X \tNV4\t0-31\t0\t\tN/A\n"
		"GPU1\tNV4\t X \t0-31\t0\t\tN/A\n";
	struct p2ps_doctor_report *r;

	(void)state;
	r = doctor_edited_topo("rtx4090-display-570",
		PER_DEVICE("pci=" GPU0 ";RMForceP2PType=0;pci=" GPU1 ";RMForceP2PType=0"), topo);
	assert_int_equal(r->pairs[0].p2p, P2PS_P2P_NATIVE);
	assert_int_equal(verdict(r, "native-p2p", PAIR), P2PS_V_OK);
	p2ps_doctor_free(r);

	/* The driver checks the pair's first GPU (the lower instance) only. */
	r = doctor_edited_topo("rtx4090-display-570",
		"mkdir -p sys/module/p2p_shim/parameters && echo N >sys/module/p2p_shim/parameters/registry_defaults && "
		PER_DEVICE("pci=" GPU0 ";RMForceP2PType=2"), topo);
	assert_int_equal(r->pairs[0].p2p, P2PS_P2P_BAR1);
	assert_non_null(strstr(finding(r, "native-p2p", PAIR)->detail, "turned off by RMForceP2PType=2 on " GPU0));
	p2ps_doctor_free(r);
	r = doctor_edited_topo("rtx4090-display-570",
		"mkdir -p sys/module/p2p_shim/parameters && echo N >sys/module/p2p_shim/parameters/registry_defaults && "
		PER_DEVICE("pci=" GPU1 ";RMForceP2PType=2"), topo);
	assert_int_equal(r->pairs[0].p2p, P2PS_P2P_NATIVE);
	p2ps_doctor_free(r);
	/* Above the last type (C2C, 4 before 575) the driver keeps DEFAULT. */
	r = doctor_edited_topo("rtx4090-display-570",
		PER_DEVICE("pci=" GPU0 ";RMForceP2PType=5;pci=" GPU1 ";RMForceP2PType=5"), topo);
	assert_int_equal(r->pairs[0].p2p, P2PS_P2P_NATIVE);
	p2ps_doctor_free(r);
	/* From 575 p2p-shim sets no RMForceP2PType, but the user's PCIEP2P (1) still refuses. */
	r = doctor_edited_topo("rtx4090-display-575",
		"sed -i 's/^RegistryDwords: .*/RegistryDwords: \"RMForceP2PType=1\"/' proc/driver/nvidia/params", topo);
	assert_int_equal(r->pairs[0].p2p, P2PS_P2P_BAR1);
	p2ps_doctor_free(r);
}

/*
 * 595 parses RegistryDwordsPerDevice in a GPU's probe before that GPU is in
 * the list pci= is looked up in: a GPU's entries reach it only in a later
 * GPU's probe, so the pair's last GPU (02:00) never gets them, and with
 * GpuInitOnProbe=1 neither does.
 */
static void test_595_per_device(void **state)
{
	static const char edit[] =
		"sed -i 's/580\\.95\\.05/595.45.04/g' proc/driver/nvidia/version && "
		PER_DEVICE("pci=" GPU0 ";RMForceStaticBar1=0;pci=" GPU1 ";RMForceStaticBar1=0");
	struct p2ps_doctor_report *r = doctor_edited("rtx5090-pair", edit);

	(void)state;
	assert_string_equal(r->driver_version, "595.45.04");
	assert_int_equal(r->gpus[0].static_bar1, P2PS_SB_NO);
	assert_int_equal(r->gpus[1].static_bar1, P2PS_SB_YES);
	p2ps_doctor_free(r);

	r = doctor_edited("rtx5090-pair", "echo 'GpuInitOnProbe: 1' >>proc/driver/nvidia/params && "
			  "sed -i 's/580\\.95\\.05/595.45.04/g' proc/driver/nvidia/version && "
			  PER_DEVICE("pci=" GPU0 ";RMForceStaticBar1=0;pci=" GPU1 ";RMForceStaticBar1=0"));
	assert_int_equal(r->gpus[0].static_bar1, P2PS_SB_YES);
	assert_int_equal(r->gpus[1].static_bar1, P2PS_SB_YES);
	p2ps_doctor_free(r);

	/* 580: both GPUs have theirs */
	r = doctor_edited("rtx5090-pair",
			  PER_DEVICE("pci=" GPU0 ";RMForceStaticBar1=0;pci=" GPU1 ";RMForceStaticBar1=0"));
	assert_int_equal(r->gpus[0].static_bar1, P2PS_SB_NO);
	assert_int_equal(r->gpus[1].static_bar1, P2PS_SB_NO);
	p2ps_doctor_free(r);
}

/* RTX 4090 D modded to 48 GiB (VRAM from nvidia-smi) + RTX 4090, both BAR1 32 GiB. */
/*
 * An NVLink pair (nvidia-smi topo NV4) on 570: p2p-shim's RMForceP2PType=2
 * turns the driver's NVLink check off, so the pair gets PCIe BAR1; doctor
 * says so and how to keep NVLink.  On 575 the shim does not set that key.
 * (The boards of these fixtures are 4090s; only the driver and the topology
 * matter to this rule.)
 */
static void test_nvlink_forced_type(void **state)
{
	static const char topo[] =
		"\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
		"GPU0\t X \tNV4\t0-31\t0\t\tN/A\n"
		"GPU1\tNV4\t X \t0-31\t0\t\tN/A\n";
	struct p2ps_doctor_report *r = doctor("rtx4090-display-570", topo);
	const struct p2ps_finding *f;

	(void)state;
	assert_int_equal(r->pairs[0].native, P2PS_NATIVE_NVLINK);
	f = finding(r, "native-p2p", PAIR);
	assert_int_equal(f->verdict, P2PS_V_WARN);
	assert_non_null(strstr(f->detail, "turned off by RMForceP2PType=2"));
	f = finding(r, "p2p", PAIR);
	assert_int_equal(f->verdict, P2PS_V_WARN);
	assert_int_equal(r->pairs[0].p2p, P2PS_P2P_BAR1);
	assert_non_null(strstr(f->detail, "PCIe BAR1 instead"));
	assert_non_null(strstr(f->remedy, "pci=" GPU0 ";RMForceP2PType=0;pci=" GPU1 ";RMForceP2PType=0"));
	p2ps_doctor_free(r);

	r = doctor("rtx4090-display-575", topo);
	f = finding(r, "native-p2p", PAIR);
	assert_int_equal(f->verdict, P2PS_V_OK);
	assert_non_null(strstr(f->detail, "shim not needed"));
	assert_int_equal(r->pairs[0].p2p, P2PS_P2P_NATIVE);
	p2ps_doctor_free(r);
}

/*
 * A driver version that is not MAJOR.MINOR[.PATCH] (here from
 * /sys/module/nvidia/version, where the procfs line names none) has no
 * profile: p2p-shim does not arm and supplies no RMForceP2PType, so the
 * NVLink pair keeps NVLink.  Before the version was parsed in one place,
 * doctor read its leading digits (570) and predicted PCIe BAR1.
 */
static void test_nvlink_odd_version(void **state)
{
	static const char topo[] =
		"\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
		"GPU0\t X \tNV4\t0-31\t0\t\tN/A\n"
		"GPU1\tNV4\t X \t0-31\t0\t\tN/A\n";
	struct p2ps_doctor_report *r = doctor_edited_topo("rtx4090-display-570",
		"sed -i 's/570\\.148\\.08 //' proc/driver/nvidia/version && "
		"echo 570.148.08-custom >sys/module/nvidia/version", topo);

	(void)state;
	assert_string_equal(r->driver_version, "570.148.08-custom");
	assert_string_equal(r->profile, "");
	assert_int_equal(r->pairs[0].native, P2PS_NATIVE_NVLINK);
	assert_int_equal(r->pairs[0].p2p, P2PS_P2P_NATIVE);
	p2ps_doctor_free(r);
}

static void test_4090d_48g(void **state)
{
	struct p2ps_doctor_report *r = doctor("rtx4090d-48g", NULL);
	const struct p2ps_finding *f;

	(void)state;
	assert_int_equal(r->gpus[0].vram, 48ULL << 30);	/* not the nominal 24 GiB */
	assert_int_equal(verdict(r, "bar1", GPU0), P2PS_V_FAIL);
	assert_int_equal(r->gpus[0].static_bar1, P2PS_SB_NO);
	f = finding(r, "static-bar1", GPU0);
	assert_non_null(strstr(f->remedy, "none in software"));
	assert_non_null(strstr(f->remedy, "GPU initialisation fail"));
	assert_int_equal(r->gpus[1].static_bar1, P2PS_SB_YES);
	assert_int_equal(r->pairs[0].p2p, P2PS_P2P_NONE);
	f = finding(r, "p2p", PAIR);
	assert_int_equal(f->verdict, P2PS_V_FAIL);
	assert_non_null(strstr(f->detail, GPU0));
	p2ps_doctor_free(r);
}

/*
 * RTX 3090 + RTX 4090: static BAR1 on both, but two generations: the
 * module's caps guard refuses the pair (rules/gpurule.c, Correctness III
 * item 6), so doctor says none.
 */
static void test_3090_4090(void **state)
{
	struct p2ps_doctor_report *r = doctor("rtx3090-4090", NULL);
	const struct p2ps_finding *f;

	(void)state;
	assert_string_equal(r->gpus[0].chip, "GA102");
	assert_string_equal(r->gpus[1].chip, "AD102");
	assert_string_equal(r->gpus[0].arch, "Ampere");
	assert_string_equal(r->gpus[1].arch, "Ada");
	assert_int_equal(r->gpus[0].static_bar1, P2PS_SB_YES);
	assert_int_equal(r->gpus[1].static_bar1, P2PS_SB_YES);
	assert_int_equal(r->pairs[0].p2p, P2PS_P2P_NONE);
	f = finding(r, "p2p", PAIR);
	assert_int_equal(f->verdict, P2PS_V_FAIL);
	assert_non_null(strstr(f->detail, "two generations (Ampere 2204 + Ada 2684)"));
	assert_non_null(strstr(f->remedy, "CUDA_VISIBLE_DEVICES"));
	p2ps_doctor_free(r);
}

/* Two 3090s below root ports of two Intel I/O hubs (570). */
static void test_ioh_split(void **state)
{
	struct p2ps_doctor_report *r = doctor("ioh-split", NULL);
	const struct p2ps_finding *f;

	(void)state;
	assert_int_equal(r->gpus[0].static_bar1, P2PS_SB_YES);
	assert_int_equal(r->gpus[1].static_bar1, P2PS_SB_YES);
	assert_int_equal(r->pairs[0].p2p, P2PS_P2P_NONE);
	f = finding(r, "p2p", "0000:03:00.0 0000:83:00.0");
	assert_int_equal(f->verdict, P2PS_V_FAIL);
	assert_non_null(strstr(f->detail, "Intel I/O hubs"));
	assert_non_null(strstr(f->detail, "6f08"));
	p2ps_doctor_free(r);
}

/*
 * 550/560 (gen-0, issue 27): served, with the 550 static-BAR1 rule
 * (RMForceP2PType=2 and BAR1 - 128 KiB >= VRAM, offset 0 before the
 * console), one fixture per card of docs/cards.md on 550.163.01.
 */
static void test_550_cards(void **state)
{
	struct p2ps_doctor_report *r;
	const struct p2ps_finding *f;

	(void)state;
	/* 2x 4090, GPU 0 drives the display: both static BAR1, BAR1 P2P */
	r = doctor("rtx4090-display-550", NULL);
	assert_string_equal(r->driver_version, "550.163.01");
	assert_string_equal(r->profile, "gen-0");
	assert_int_equal(verdict(r, "profile", NULL), P2PS_V_OK);
	assert_int_equal(r->gpus[0].display, 1);
	assert_int_equal(r->gpus[0].static_bar1, P2PS_SB_YES);
	assert_non_null(strstr(r->gpus[0].static_bar1_why, "550/560 rule"));
	assert_non_null(strstr(r->gpus[0].static_bar1_why, "offset 0"));
	assert_int_equal(r->gpus[1].static_bar1, P2PS_SB_YES);
	assert_int_equal(r->pairs[0].p2p, P2PS_P2P_BAR1);
	assert_int_equal(verdict(r, "p2p", PAIR), P2PS_V_OK);
	assert_null(strstr(p2ps_doctor_find(r, "p2p", PAIR)->detail, "not served"));
	assert_int_equal(r->nr_fail, 0);
	p2ps_doctor_free(r);

	/* 4090 D 48 GiB: BAR1 32 GiB can't hold it, no key to force: none */
	r = doctor("rtx4090d-48g-550", NULL);
	assert_int_equal(r->gpus[0].static_bar1, P2PS_SB_NO);
	f = finding(r, "static-bar1", GPU0);
	assert_non_null(strstr(f->detail, "550/560 rule"));
	assert_non_null(strstr(f->remedy, "none on 550/560"));
	assert_int_equal(r->gpus[1].static_bar1, P2PS_SB_YES);
	assert_int_equal(r->pairs[0].p2p, P2PS_P2P_NONE);
	assert_int_equal(verdict(r, "p2p", PAIR), P2PS_V_FAIL);
	p2ps_doctor_free(r);

	/* 3090 + 4090: static BAR1 on both, two generations: none (rules/gpurule.c) */
	r = doctor("rtx3090-4090-550", NULL);
	assert_int_equal(r->gpus[0].static_bar1, P2PS_SB_YES);
	assert_int_equal(r->gpus[1].static_bar1, P2PS_SB_YES);
	assert_int_equal(r->pairs[0].p2p, P2PS_P2P_NONE);
	assert_int_equal(verdict(r, "p2p", PAIR), P2PS_V_FAIL);
	p2ps_doctor_free(r);

	/* 256 MiB BAR1: no static BAR1, the ReBAR remedy */
	r = doctor("rtx4090-smallbar-550", NULL);
	assert_int_equal(r->gpus[0].static_bar1, P2PS_SB_NO);
	assert_non_null(strstr(finding(r, "static-bar1", GPU0)->remedy, "Resizable BAR"));
	assert_int_equal(r->pairs[0].p2p, P2PS_P2P_NONE);
	p2ps_doctor_free(r);

	/* 5090 on 550: GB202 unknown to the driver */
	r = doctor("rtx5090-pair-550", NULL);
	assert_int_equal(r->gpus[0].static_bar1, P2PS_SB_NO);
	assert_non_null(strstr(r->gpus[0].static_bar1_why, "does not support GB202"));
	assert_non_null(strstr(finding(r, "static-bar1", GPU0)->remedy, "570.86.16"));
	assert_int_equal(r->pairs[0].p2p, P2PS_P2P_NONE);
	p2ps_doctor_free(r);
}

/* ---------------------------------------------------------------- issue 23 */

static uint8_t *read_cfg(const char *rel, size_t *len)
{
	char path[512];
	uint8_t *b;

	snprintf(path, sizeof(path), "%s/%s", FIXTURES, rel);
	b = (uint8_t *)p2ps_read_file(path, len, false);
	assert_non_null(b);
	return b;
}

#define P03 "0000:03:00.0 0000:04:00.0"

/*
 * setpci's "=DATA:MASK" of an ACS try-now remedy, done as setpci does it
 * (read, keep the bits outside MASK, or in DATA) on @ctrl.
 */
static unsigned int setpci_write(const char *remedy, const char *port, unsigned int ctrl)
{
	char pat[64];
	const char *p;
	unsigned int data, mask;

	snprintf(pat, sizeof(pat), "-s %s ECAP_ACS+6.w=", port);
	p = strstr(remedy, pat);
	assert_non_null(p);
	assert_int_equal(sscanf(p + strlen(pat), "%x:%x", &data, &mask), 2);
	return (ctrl & ~mask) | data;
}

/* The ACS try-now remedy, run as setpci would on the fixture's control registers. */
static void test_acs_setpci(void **state)
{
	static const char *const ports[] = { "0000:02:08.0", "0000:02:10.0" };
	struct p2ps_doctor_report *r;
	const struct p2ps_finding *f;
	char rel[256];
	size_t i, len;

	(void)state;
	r = doctor("plx-acs", NULL);
	f = finding(r, "acs", P03);
	for (i = 0; i < 2; i++) {
		uint8_t *b;
		unsigned int ctrl, now;
		int off;

		snprintf(rel, sizeof(rel), "plx-acs/root/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/%s/config",
			 ports[i]);
		b = read_cfg(rel, &len);
		off = p2ps_pci_ext_cap(b, len, P2PS_PCI_EXT_CAP_ACS);
		assert_true(off > 0);
		ctrl = b[off + 6] | (unsigned int)b[off + 7] << 8;
		now = setpci_write(f->remedy, ports[i], ctrl);
		/* redirect and egress control off, every other bit as it was */
		assert_int_equal(now & (P2PS_ACS_RR | P2PS_ACS_CR | P2PS_ACS_EC), 0);
		assert_int_equal(now & ~(P2PS_ACS_RR | P2PS_ACS_CR | P2PS_ACS_EC),
				 ctrl & ~(P2PS_ACS_RR | P2PS_ACS_CR | P2PS_ACS_EC));
		assert_int_not_equal(now, ctrl);
		free(b);
	}
	p2ps_doctor_free(r);
}

/*
 * ACS's permanent remedy: every port in one parameter, within a remedy;
 * without the domain where that is what fits (all 0000, the kernel's
 * default); else no list rather than part of one.
 */
static void test_acs_param(void **state)
{
	char bdf[16][16], buf[256], want[256];
	size_t off = 0;
	int i;

	(void)state;
	for (i = 0; i < 16; i++)
		snprintf(bdf[i], sizeof(bdf[i]), "0000:%02x:%02x.0", 0x41 + i / 4, 8 * (i % 4));
	p2ps_dr_acs_param(buf, sizeof(buf), (const char (*)[16])bdf, 8, false);
	assert_true(strlen(buf) < sizeof(buf) - 1);
	for (i = 0, *want = '\0'; i < 8; i++)
		p2ps_catf(want, sizeof(want), &off, ";", "%s", bdf[i]);
	assert_non_null(strstr(buf, want));
	/* 13 ports: as 41:00.0;...; 16 do not fit at all */
	p2ps_dr_acs_param(buf, sizeof(buf), (const char (*)[16])bdf, 13, false);
	assert_null(strstr(buf, "0000:"));
	assert_non_null(strstr(buf, "=\\\"41:00.0;41:08.0;"));
	assert_non_null(strstr(buf, ";44:00.0\\\"\" in /etc/default/grub"));
	p2ps_dr_acs_param(buf, sizeof(buf), (const char (*)[16])bdf, 16, false);
	assert_non_null(strstr(buf, "PORT;PORT;..."));
	assert_null(strstr(buf, "41:00.0"));
	/* another domain: the domain stays, so fewer fit */
	bdf[0][3] = '1';
	p2ps_dr_acs_param(buf, sizeof(buf), (const char (*)[16])bdf, 13, false);
	assert_non_null(strstr(buf, "PORT;PORT;..."));
	p2ps_dr_acs_param(buf, sizeof(buf), (const char (*)[16])bdf, 2, false);
	assert_non_null(strstr(buf, "=\\\"0001:41:00.0;0000:41:08.0\\\"\""));
	/* more ports than were kept */
	p2ps_dr_acs_param(buf, sizeof(buf), (const char (*)[16])bdf, 2, true);
	assert_non_null(strstr(buf, "PORT;PORT;..."));
}

/*
 * A remedy holds a line per fix; p2ps_dr_add() keeps whole lines only:
 * one that would not fit goes, with those after it, never cut short.
 */
static void test_remedy_lines(void **state)
{
	struct p2ps_doctor_report rep = { 0 };
	struct dctx c = { .r = &rep };
	char big[800], xs[301];
	const struct p2ps_finding *f;

	(void)state;
	memset(xs, 'x', 300);
	xs[300] = '\0';
	/* 300 + 1 + 249 > 511: the second line does not fit whole */
	snprintf(big, sizeof(big), "%s\nsetpci -s 0000:02:08.0 %.226s\nthird", xs, xs);
	p2ps_dr_add(&c, "t", NULL, P2PS_V_WARN, "", big, "two fixes");
	p2ps_dr_add(&c, "t2", NULL, P2PS_V_WARN, "", "first\n\nsecond \x1b[31m\n", "ok");
	assert_int_equal(c.err, 0);
	f = &rep.findings[0];
	assert_int_equal(strlen(f->remedy), 300);
	assert_null(strchr(f->remedy, '\n'));
	/* empty lines dropped, each line sanitized on its own, the '\n' kept */
	f = &rep.findings[1];
	assert_string_equal(f->remedy, "first\nsecond ?[31m");
	free(rep.findings);
}

/* The extended capability walk, on the real H100's config space and a switch port. */
static void test_ext_cap(void **state)
{
	size_t len;
	uint8_t *b = read_cfg("h100-vm-580/root/sys/devices/pci0000:00/0000:00:06.0/config", &len);
	uint8_t loop[0x200] = { 0 };

	(void)state;
	assert_int_equal(len, 4096);
	/* the chain starts with an id-0 header at 0x100 that only points on */
	assert_int_equal(p2ps_pci_ext_cap(b, len, 0x18), 0x12c);	/* LTR */
	assert_int_equal(p2ps_pci_ext_cap(b, len, 0x01), 0x1b8);	/* AER */
	assert_int_equal(p2ps_pci_ext_cap(b, len, 0x03), 0x2f0);	/* DSN, last */
	assert_int_equal(p2ps_pci_ext_cap(b, len, P2PS_PCI_EXT_CAP_ACS), 0);	/* an endpoint: none */
	/* what a normal user reads: the first 64 bytes */
	assert_int_equal(p2ps_pci_ext_cap(b, 64, 0x01), -1);
	free(b);
	/* PEX 8747 downstream port: ACS last, after pointers that go down and up */
	b = read_cfg("plx-acs/root/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:08.0/config", &len);
	assert_int_equal(p2ps_pci_ext_cap(b, len, P2PS_PCI_EXT_CAP_ACS), 0xf24);
	assert_int_equal(b[0xf24 + 6] & (P2PS_ACS_RR | P2PS_ACS_CR), P2PS_ACS_RR | P2PS_ACS_CR);
	free(b);
	/* a header pointing at itself, and one pointing past the end */
	loop[0x100] = 0x01;
	loop[0x102] = 0x01;
	loop[0x103] = 0x10;		/* next = 0x100 */
	assert_int_equal(p2ps_pci_ext_cap(loop, sizeof(loop), 0x0d), -1);
	loop[0x103] = 0x30;		/* next = 0x300 > len */
	assert_int_equal(p2ps_pci_ext_cap(loop, sizeof(loop), 0x0d), -1);
	assert_int_equal(p2ps_pcie_gen("16.0 GT/s PCIe"), 4);
	assert_int_equal(p2ps_pcie_gen("2.5 GT/s PCIe"), 1);
	assert_int_equal(p2ps_pcie_gen("Unknown"), 0);
}

static void test_acs(void **state)
{
	struct p2ps_doctor_report *r;
	const struct p2ps_finding *f;

	(void)state;
	/* PLX switch with redirect on both downstream ports: warn, narrow remedy */
	r = doctor("plx-acs", NULL);
	f = finding(r, "acs", P03);
	assert_int_equal(f->verdict, P2PS_V_WARN);
	assert_non_null(strstr(f->detail, "0000:02:08.0 (ReqRedir CmpltRedir"));
	assert_non_null(strstr(f->detail, "0000:02:10.0"));
	/* the pair: one fix, try now, each port's register named to setpci */
	assert_string_equal(f->remedy, "try now, as root (until reboot or reset; the devices "
			    "below lose isolation from each other, while their IOMMU groups still claim it):\n"
			    "# setpci -s 0000:02:08.0 ECAP_ACS+6.w=0000:002c -s 0000:02:10.0 ECAP_ACS+6.w=0000:002c");
	assert_null(strstr(f->remedy, "pcie_acs_override="));
	/* the root port and upstream port are not named */
	assert_null(strstr(f->detail, "0000:00:01.0"));
	assert_null(strstr(f->detail, "0000:01:00.0"));
	/* the host: the one parameter, every port, quoted for grub.cfg's ';' */
	f = finding(r, "acs", "");
	assert_int_equal(f->verdict, P2PS_V_WARN);
	assert_non_null(strstr(f->detail, "2 switch ports between GPUs (0000:02:08.0 0000:02:10.0)"));
	assert_non_null(strstr(f->remedy, "permanent: GRUB_CMDLINE_LINUX=\"... "
			       "pci=disable_acs_redir=\\\"0000:02:08.0;0000:02:10.0\\\"\" in /etc/default/grub "));
	assert_non_null(strstr(f->remedy, "then update-grub, reboot"));
	assert_null(strchr(f->remedy, '\n'));
	p2ps_doctor_free(r);
	/* the same switch with redirect off */
	r = doctor("plx-noacs", NULL);
	f = finding(r, "acs", P03);
	assert_int_equal(f->verdict, P2PS_V_OK);
	assert_non_null(strstr(f->detail, "0000:02:08.0 0000:02:10.0"));
	p2ps_doctor_free(r);
	/* no common switch: the redirect on the chipset's port changes nothing */
	r = doctor("amd-chipset", NULL);
	assert_int_equal(verdict(r, "acs", "0000:01:00.0 0000:04:00.0"), P2PS_V_OK);
	p2ps_doctor_free(r);
	/* no config space captured */
	r = doctor("rtx4090-smallbar", NULL);
	f = finding(r, "acs", P03);
	assert_int_equal(f->verdict, P2PS_V_SKIP);
	assert_non_null(strstr(f->detail, "root"));
	p2ps_doctor_free(r);
}

static void test_link(void **state)
{
	struct p2ps_doctor_report *r;
	const struct p2ps_finding *f;

	(void)state;
	/* Gen4 GPUs behind a Gen3 root port and switch */
	r = doctor("plx-acs", NULL);
	f = finding(r, "link", "0000:03:00.0");
	assert_int_equal(f->verdict, P2PS_V_WARN);
	assert_non_null(strstr(f->detail, "Gen3 x16 of Gen4 x16"));
	assert_non_null(strstr(f->detail, "limits the path to Gen3"));
	assert_null(strstr(f->detail, "idle"));		/* capped, not idle */
	p2ps_doctor_free(r);
	r = doctor("plx-noacs", NULL);
	assert_int_equal(verdict(r, "link", "0000:03:00.0"), P2PS_V_OK);
	assert_int_equal(verdict(r, "link", "0000:04:00.0"), P2PS_V_OK);
	p2ps_doctor_free(r);
	/* GPU 1 behind the X570 chipset at x4; GPU 0 idle at Gen1 (fine) */
	r = doctor("amd-chipset", NULL);
	f = finding(r, "link", "0000:04:00.0");
	assert_int_equal(f->verdict, P2PS_V_WARN);
	assert_non_null(strstr(f->detail, "trained to x4 of x16"));
	assert_non_null(strstr(f->detail, "behind the chipset (0000:02:00.0, 1022:57ad)"));
	assert_non_null(strstr(f->remedy, "CPU"));
	f = finding(r, "link", "0000:01:00.0");
	assert_int_equal(f->verdict, P2PS_V_OK);
	assert_non_null(strstr(f->detail, "idle GPUs train down"));
	p2ps_doctor_free(r);
	/* in a VM the links are emulated */
	r = doctor("qemu-guest", NULL);
	assert_int_equal(verdict(r, "link", "0000:01:00.0"), P2PS_V_SKIP);
	p2ps_doctor_free(r);
}

static void test_numa(void **state)
{
	struct p2ps_doctor_report *r;
	const struct p2ps_finding *f;

	(void)state;
	r = doctor("no-kprobes", NULL);		/* two sockets */
	f = finding(r, "pcie-path", "0000:17:00.0 0000:b1:00.0");
	assert_int_equal(f->verdict, P2PS_V_WARN);
	assert_non_null(strstr(f->detail, "pci0000:16 NUMA 0, pci0000:b0 NUMA 1"));
	assert_non_null(strstr(f->detail, "socket interconnect"));
	p2ps_doctor_free(r);
	/*
	 * One EPYC socket, two host bridges: the field measures line rate
	 * between them (Infinity Fabric), so no warning there; an Intel host
	 * with the same tree is still warned.
	 */
	r = doctor("epyc-hostbridges", NULL);
	f = finding(r, "pcie-path", "0000:41:00.0 0000:c1:00.0");
	assert_int_equal(r->pairs[0].path, P2PS_PATH_HOST_BRIDGES);
	assert_int_equal(f->verdict, P2PS_V_OK);
	assert_non_null(strstr(f->detail, "one AMD socket"));
	p2ps_doctor_free(r);
	r = doctor_edited("epyc-hostbridges", "sed -i 's/AuthenticAMD/GenuineIntel/' proc/cpuinfo");
	f = finding(r, "pcie-path", "0000:41:00.0 0000:c1:00.0");
	assert_int_equal(f->verdict, P2PS_V_WARN);
	assert_non_null(strstr(f->detail, "between root complexes"));
	p2ps_doctor_free(r);
	r = doctor("plx-noacs", NULL);
	assert_int_equal(verdict(r, "pcie-path", P03), P2PS_V_OK);
	p2ps_doctor_free(r);
}

/* The CPUs' sockets (physical_package_id) of ioh-split's 16 CPUs: 0-7 on 0, 8-15 on 1. */
#define CPU_SOCKETS "for i in $(seq 0 15); do d=sys/devices/system/cpu/cpu$i/topology; " \
	"mkdir -p $d && echo $((i / 8)) >$d/physical_package_id; done"
#define IOH_A "sys/devices/pci0000:00/0000:00:03.0/0000:03:00.0"
#define IOH_B "sys/devices/pci0000:80/0000:80:03.0/0000:83:00.0"

/*
 * numa_node -1 (NUMA off, or a firmware without _PXM): the socket of a GPU
 * is that of its local CPUs (local_cpulist, else its bus's cpulistaffinity).
 */
static void test_numa_cpulist(void **state)
{
	struct p2ps_doctor_report *r;
	const struct p2ps_finding *f;

	(void)state;
	r = doctor_edited("ioh-split", "echo -1 >" IOH_A "/numa_node && echo -1 >" IOH_B "/numa_node && "
			  "echo 0-7 >" IOH_A "/local_cpulist && echo 8-15 >" IOH_B "/local_cpulist && "
			  CPU_SOCKETS);
	f = finding(r, "pcie-path", "0000:03:00.0 0000:83:00.0");
	assert_int_equal(r->pairs[0].path, P2PS_PATH_CROSS_SOCKET);
	assert_non_null(strstr(f->detail, "pci0000:00 socket 0, pci0000:80 socket 1 (local CPUs)"));
	p2ps_doctor_free(r);
	/* the bus's cpulistaffinity where the device has no local_cpulist */
	r = doctor_edited("ioh-split", "echo -1 >" IOH_A "/numa_node && echo -1 >" IOH_B "/numa_node && "
			  "mkdir -p sys/devices/pci0000:00/pci_bus/0000:00 sys/devices/pci0000:80/pci_bus/0000:80 && "
			  "echo 0-3,4-7 >sys/devices/pci0000:00/pci_bus/0000:00/cpulistaffinity && "
			  "echo 8-15 >sys/devices/pci0000:80/pci_bus/0000:80/cpulistaffinity && " CPU_SOCKETS);
	assert_int_equal(r->pairs[0].path, P2PS_PATH_CROSS_SOCKET);
	p2ps_doctor_free(r);
	/* local CPUs on both sockets (one NUMA node for all): not told apart */
	r = doctor_edited("ioh-split", "echo -1 >" IOH_A "/numa_node && echo -1 >" IOH_B "/numa_node && "
			  "echo 0-15 >" IOH_A "/local_cpulist && echo 0-15 >" IOH_B "/local_cpulist && "
			  CPU_SOCKETS);
	assert_int_equal(r->pairs[0].path, P2PS_PATH_HOST_BRIDGES);
	f = finding(r, "pcie-path", "0000:03:00.0 0000:83:00.0");
	assert_non_null(strstr(f->detail, "pci0000:00 NUMA -1, pci0000:80 NUMA -1"));
	p2ps_doctor_free(r);
}

static void test_vm(void **state)
{
	struct p2ps_doctor_report *r;
	const struct p2ps_finding *f;

	(void)state;
	r = doctor("qemu-guest", NULL);
	f = finding(r, "vm", NULL);
	assert_int_equal(f->verdict, P2PS_V_WARN);
	assert_non_null(strstr(f->detail, "DMI QEMU"));
	assert_non_null(strstr(f->detail, "host bridge 8086:29c0"));
	assert_non_null(strstr(f->remedy, "CHIPSET_NOT_SUPPORTED"));
	p2ps_doctor_free(r);
	/* the lent H100 (captured read-only): a VM by the CPU flag alone */
	r = doctor("h100-vm-580", NULL);
	f = finding(r, "vm", NULL);
	assert_int_equal(f->verdict, P2PS_V_WARN);
	assert_non_null(strstr(f->detail, "hypervisor"));
	p2ps_doctor_free(r);
	r = doctor("plx-acs", NULL);
	assert_int_equal(verdict(r, "vm", NULL), P2PS_V_OK);
	p2ps_doctor_free(r);
	r = doctor("rtx4090-pair", NULL);
	assert_int_equal(verdict(r, "vm", NULL), P2PS_V_SKIP);
	p2ps_doctor_free(r);
}

static void test_display(void **state)
{
	struct p2ps_doctor_report *r;
	const struct p2ps_finding *f;

	(void)state;
	/* 580: the boot display GPU keeps static BAR1 (at 512 MiB) */
	r = doctor("amd-chipset", NULL);
	f = finding(r, "display", GPU0);
	assert_int_equal(f->verdict, P2PS_V_OK);
	assert_non_null(strstr(f->detail, "boot display"));
	assert_non_null(strstr(f->detail, "fb0 (nvidia-drmdrmfb)"));
	assert_non_null(strstr(f->detail, "1 connected DRM connector"));
	assert_non_null(strstr(f->detail, "512 MiB"));
	assert_int_equal(verdict(r, "display", "0000:04:00.0"), P2PS_V_OK);
	p2ps_doctor_free(r);
	/* 570: after the console, unaligned: warn, move the display */
	r = doctor("rtx4090-display-570", NULL);
	f = finding(r, "display", GPU0);
	assert_int_equal(f->verdict, P2PS_V_WARN);
	assert_non_null(strstr(f->detail, "570-575"));
	assert_non_null(strstr(f->remedy, "move the display"));
	f = finding(r, "display", GPU1);
	assert_int_equal(f->verdict, P2PS_V_OK);
	p2ps_doctor_free(r);
	/* 550: decided before the console */
	r = doctor("rtx4090-display-550", NULL);
	f = finding(r, "display", GPU0);
	assert_int_equal(f->verdict, P2PS_V_OK);
	assert_non_null(strstr(f->detail, "before the console"));
	p2ps_doctor_free(r);
	r = doctor("rtx4090-pair", NULL);
	assert_int_equal(verdict(r, "display", GPU0), P2PS_V_SKIP);
	p2ps_doctor_free(r);
}

/*
 * NCCL keeps GPUs at NODE (across host bridges) or SYS (across sockets)
 * distance on shared memory unless NCCL_P2P_LEVEL=SYS: doctor names it for
 * the bar1 pairs there, once, and not for pairs under one root complex.
 */
static void test_nccl_p2p_level(void **state)
{
	struct p2ps_doctor_report *r;
	const struct p2ps_finding *f;

	(void)state;
	r = doctor("epyc-hostbridges", NULL);
	f = finding(r, "nccl-p2p-level", NULL);
	assert_int_equal(f->verdict, P2PS_V_WARN);
	assert_non_null(strstr(f->detail, "0000:41:00.0 0000:c1:00.0 (NODE)"));
	assert_non_null(strstr(f->remedy, "NCCL_P2P_LEVEL=SYS"));
	p2ps_doctor_free(r);
	r = doctor("no-kprobes", NULL);		/* two sockets */
	assert_non_null(strstr(finding(r, "nccl-p2p-level", NULL)->detail, "(SYS)"));
	p2ps_doctor_free(r);
	r = doctor("ioh-split", NULL);		/* no P2P at all there: nothing to unlock */
	assert_null(p2ps_doctor_find(r, "nccl-p2p-level", NULL));
	p2ps_doctor_free(r);
	r = doctor("rtx4090-pair", NULL);
	assert_null(p2ps_doctor_find(r, "nccl-p2p-level", NULL));
	p2ps_doctor_free(r);
}

/* Whether some nccl finding's detail holds @text. */
static const struct p2ps_finding *nccl_with(const struct p2ps_doctor_report *r, const char *text)
{
	size_t i;

	for (i = 0; i < r->nr_findings; i++)
		if (!strcmp(r->findings[i].check, "nccl") && strstr(r->findings[i].detail, text))
			return &r->findings[i];
	fail_msg("no nccl finding with '%s'", text);
	return NULL;
}

#define NCCL_LIB(dir, v) "mkdir -p " dir " && printf '\\177ELF..NCCL version " v "+cuda12\\0' >" dir "/libnccl.so.2"

/*
 * NCCL where people install it: a virtualenv or conda under a home or
 * /opt (not only ~/.local), and, live or captured, the copies running
 * processes have mapped (/proc/PID/maps): sudo strips VIRTUAL_ENV.
 */
static void test_nccl_places(void **state)
{
	struct p2ps_doctor_report *r;
	const struct p2ps_finding *f;

	(void)state;
	r = doctor_edited("rtx4090-pair",
			  NCCL_LIB("home/bob/.venv/lib/python3.12/site-packages/nvidia/nccl/lib", "2.26.2") " && "
			  NCCL_LIB("opt/miniconda3/envs/train/lib", "2.28.3") " && "
			  NCCL_LIB("home/bob/src/build/nccl", "2.19.3") " && mkdir -p proc/4242 && "
			  "echo '7f00-7f10 r-xp 00000000 08:01 12 /home/bob/src/build/nccl/libnccl.so.2' "
			  ">proc/4242/maps");
	f = nccl_with(r, "/home/bob/.venv/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2");
	assert_int_equal(f->verdict, P2PS_V_WARN);
	f = nccl_with(r, "/opt/miniconda3/envs/train/lib/libnccl.so.2");
	assert_int_equal(f->verdict, P2PS_V_OK);
	assert_non_null(strstr(f->source, "conda"));
	f = nccl_with(r, "/home/bob/src/build/nccl/libnccl.so.2");
	assert_int_equal(f->verdict, P2PS_V_WARN);
	assert_non_null(strstr(f->source, "mapped by process 4242"));
	p2ps_doctor_free(r);
}

static void test_nccl(void **state)
{
	struct p2ps_doctor_report *r;
	const struct p2ps_finding *f;

	(void)state;
	assert_true(p2ps_version_cmp("2.21.5", "2.27.5") < 0);
	assert_true(p2ps_version_cmp("2.27.5", "2.27.5") == 0);
	assert_true(p2ps_version_cmp("2.27.10", "2.27.5") > 0);
	assert_true(p2ps_version_cmp("2.28.3", "2.27.5") > 0);
	/* pip's NCCL in a user's ~/.local: version from the library's own string */
	r = doctor("amd-chipset", NULL);
	f = finding(r, "nccl", NULL);
	assert_int_equal(f->verdict, P2PS_V_WARN);
	assert_non_null(strstr(f->detail, "NCCL 2.21.5"));
	assert_non_null(strstr(f->detail, "/home/ana/.local/lib/python3.11/site-packages/nvidia/nccl/lib"));
	assert_non_null(strstr(f->source, "version string"));
	assert_non_null(strstr(f->remedy, "2.27.5"));
	p2ps_doctor_free(r);
	/* the system's, through ld.so.conf.d and the libnccl.so.2 link */
	r = doctor("qemu-guest", NULL);
	f = finding(r, "nccl", NULL);
	assert_int_equal(f->verdict, P2PS_V_OK);
	assert_non_null(strstr(f->detail, "NCCL 2.28.3"));
	p2ps_doctor_free(r);
	r = doctor("h100-vm-580", NULL);
	assert_non_null(strstr(finding(r, "nccl", NULL)->detail, "2.28.3"));
	p2ps_doctor_free(r);
	r = doctor("rtx4090-pair", NULL);
	assert_int_equal(verdict(r, "nccl", NULL), P2PS_V_SKIP);
	p2ps_doctor_free(r);
}

static void test_vllm(void **state)
{
	struct p2ps_doctor_report *r;
	const struct p2ps_finding *f;

	(void)state;
	/* "no P2P" cached for a pair with BAR1 P2P: stale */
	r = doctor("amd-chipset", NULL);
	f = finding(r, "vllm-cache", "CUDA_VISIBLE_DEVICES=0,1");
	assert_int_equal(r->pairs[0].p2p, P2PS_P2P_BAR1);
	assert_int_equal(f->verdict, P2PS_V_WARN);
	assert_non_null(strstr(f->detail, "0->1, 1->0"));
	assert_string_equal(f->remedy,
			    "rm /home/ana/.cache/vllm/gpu_p2p_access_cache_for_0,1.json (vLLM tests P2P again on its next start)");
	p2ps_doctor_free(r);
	/* "no P2P" where there is none: consistent */
	r = doctor("rtx4090d-48g-550", NULL);
	assert_int_equal(r->pairs[0].p2p, P2PS_P2P_NONE);
	assert_int_equal(verdict(r, "vllm-cache", "CUDA_VISIBLE_DEVICES=0,1"), P2PS_V_OK);
	p2ps_doctor_free(r);
	r = doctor("rtx4090-pair", NULL);
	assert_int_equal(verdict(r, "vllm-cache", NULL), P2PS_V_OK);
	p2ps_doctor_free(r);
	/* "P2P" cached where doctor says none: vLLM would use custom all-reduce without it */
	r = doctor_edited("rtx4090d-48g-550", "sed -i 's/\"0->1\": false/\"0->1\": true/' "
			  "home/ana/.cache/vllm/gpu_p2p_access_cache_for_0,1.json");
	assert_int_equal(r->pairs[0].p2p, P2PS_P2P_NONE);
	f = finding(r, "vllm-cache", "CUDA_VISIBLE_DEVICES=0,1");
	assert_int_equal(f->verdict, P2PS_V_WARN);
	assert_string_equal(f->detail, "vLLM cached \"P2P\" for 0->1, which doctor says has none: "
			    "vLLM would run its custom all-reduce without P2P");
	assert_string_equal(f->remedy, "rm /home/ana/.cache/vllm/gpu_p2p_access_cache_for_0,1.json "
			    "(vLLM tests P2P again on its next start)");
	p2ps_doctor_free(r);
}

/*
 * Run @fn(@arg) in a child process and fail unless it exits 0 within @secs
 * seconds (a read that hangs must fail the test, not hang the suite).
 */
static void bounded(int (*fn)(void *), void *arg, unsigned int secs)
{
	pid_t pid;
	int st = 0;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		alarm(secs);
		_exit(fn(arg));
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (WIFSIGNALED(st))
		fail_msg("killed by signal %d (SIGALRM %d: over %u s)", WTERMSIG(st), SIGALRM, secs);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/* A file read: a FIFO, a link to /dev/zero, a huge sparse file. */
static int read_fifo(void *arg)
{
	char *s = p2ps_read_file(arg, NULL, false);

	return !s && errno == EINVAL ? 0 : 1;
}

static int read_devzero(void *arg)
{
	char *s = p2ps_read_file(arg, NULL, false);

	return !s && errno == EINVAL ? 0 : 2;
}

static int read_huge(void *arg)
{
	struct p2ps_root root;
	char *s;
	int rc;

	if (p2ps_root_init(&root, arg))
		return 3;
	s = p2ps_root_read(&root, "/proc/cpuinfo", NULL, false);
	rc = !s && errno == EFBIG ? 0 : 4;
	free(s);
	p2ps_root_fini(&root);
	return rc;
}

static void test_read_regular_only(void **state)
{
	char tmpl[] = "/tmp/p2ps-read-XXXXXX", path[512];
	const char *dir = mkdtemp(tmpl);

	(void)state;
	assert_non_null(dir);
	snprintf(path, sizeof(path), "%s/fifo", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	bounded(read_fifo, path, 5);
	snprintf(path, sizeof(path), "%s/zero", dir);
	assert_int_equal(symlink("/dev/zero", path), 0);
	bounded(read_devzero, path, 5);
	/* 1 GiB of holes as /proc/cpuinfo: refused past the cap, not read whole */
	snprintf(path, sizeof(path), "mkdir -p %s/proc && truncate -s 1G %s/proc/cpuinfo", dir, dir);
	assert_int_equal(system(path), 0);
	bounded(read_huge, (void *)dir, 5);
	/* a small regular file still reads */
	snprintf(path, sizeof(path), "echo 'vendor_id : x' >%s/proc/cpuinfo", dir);
	assert_int_equal(system(path), 0);
	snprintf(path, sizeof(path), "%s/proc/cpuinfo", dir);
	{
		char *s = p2ps_read_file(path, NULL, false);

		assert_non_null(s);
		assert_string_equal(s, "vendor_id : x\n");
		free(s);
	}
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	assert_int_equal(system(path), 0);
}

/* doctor on the root @arg: 0 when it ends with a report */
static int doctor_child(void *arg)
{
	struct p2ps_doctor_opts o = { .root = arg };
	struct p2ps_doctor_report *r = NULL;

	if (p2ps_doctor(&o, &r) || !r)
		return 1;
	p2ps_doctor_free(r);
	return 0;
}

/*
 * A FIFO where a vLLM cache file is expected (any local user can make one
 * in their ~/.cache/vllm): doctor must neither block on it nor drop it silently.
 */
static void test_vllm_fifo(void **state)
{
	char tmpl[] = "/tmp/p2ps-doctor-XXXXXX", cmd[2048], root[512];
	const char *dir = mkdtemp(tmpl);
	const char *cache = "home/ana/.cache/vllm/gpu_p2p_access_cache_for_0,1.json";
	struct p2ps_doctor_report *r;
	const struct p2ps_finding *f;

	(void)state;
	assert_non_null(dir);
	snprintf(root, sizeof(root), "%s/root", dir);
	snprintf(cmd, sizeof(cmd), "cp -r '%s/amd-chipset/root' '%s' && cd '%s' && rm %s && mkfifo %s",
		 FIXTURES, root, root, cache, cache);
	assert_int_equal(system(cmd), 0);
	bounded(doctor_child, root, 10);
	r = doctor_at(root, "amd-chipset", NULL);
	f = finding(r, "vllm-cache", NULL);
	assert_int_equal(f->verdict, P2PS_V_WARN);
	assert_non_null(strstr(f->detail, "not a regular file"));
	p2ps_doctor_free(r);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/*
 * Links inside a --root tree are followed inside it, never out of it: an
 * absolute target starts at the root, ".." stops there.  Both ways of
 * resolving: openat2(RESOLVE_IN_ROOT) and the walk for kernels without it.
 */
static void test_root_escape(void **state)
{
	char tmpl[] = "/tmp/p2ps-out-XXXXXX", otmpl[] = "/tmp/p2ps-doctor-XXXXXX";
	const char *out = mkdtemp(tmpl), *dir = mkdtemp(otmpl);
	char cmd[4096], root[512];
	static const char *const ver = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  %s  "
				       "Release Build  (x@y)  Tue Sep 23 09:51:27 UTC 2025";
	struct p2ps_doctor_report *r;
	int pass;

	(void)state;
	assert_non_null(out);
	assert_non_null(dir);
	snprintf(root, sizeof(root), "%s/root", dir);
	snprintf(cmd, sizeof(cmd), "cp -r '%s/rtx4090-pair/root' '%s' && "
		 "printf '%s\\n' 999.99.99 >'%s/version' && mkdir -p '%s/elsewhere' && "
		 "printf '%s\\n' 575.64.05 >'%s/elsewhere/version'",
		 FIXTURES, root, ver, out, root, ver, root);
	assert_int_equal(system(cmd), 0);
	for (pass = 0; pass < 2; pass++) {
		p2ps_root_no_openat2 = pass;
		/* absolute, out of the tree: read as ROOT/tmp/...: absent */
		snprintf(cmd, sizeof(cmd), "ln -sfn '%s/version' '%s/proc/driver/nvidia/version'", out, root);
		assert_int_equal(system(cmd), 0);
		r = doctor_at(root, "rtx4090-pair", NULL);
		assert_string_not_equal(r->driver_version, "999.99.99");
		assert_string_equal(r->driver_version, "");	/* absent: not loaded */
		p2ps_doctor_free(r);
		/* relative, climbing past the root */
		snprintf(cmd, sizeof(cmd), "ln -sfn '../../../../../../../../../../../../..%s/version' "
			 "'%s/proc/driver/nvidia/version'", out, root);
		assert_int_equal(system(cmd), 0);
		r = doctor_at(root, "rtx4090-pair", NULL);
		assert_string_equal(r->driver_version, "");
		p2ps_doctor_free(r);
		/* absolute, inside the tree: followed there */
		snprintf(cmd, sizeof(cmd), "ln -sfn /elsewhere/version '%s/proc/driver/nvidia/version'", root);
		assert_int_equal(system(cmd), 0);
		r = doctor_at(root, "rtx4090-pair", NULL);
		assert_string_equal(r->driver_version, "575.64.05");
		p2ps_doctor_free(r);
	}
	p2ps_root_no_openat2 = 0;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", dir, out);
	assert_int_equal(system(cmd), 0);
}

/*
 * GPUs 20 bridges deep (two, behind 19 common ones) are found and paired;
 * one 40 deep is named, not dropped silently.
 */
static void test_deep_tree(void **state)
{
	char tmpl[] = "/tmp/p2ps-deep-XXXXXX", cmd[8192];
	const char *dir = mkdtemp(tmpl);
	struct p2ps_doctor_opts o = { 0 };
	struct p2ps_doctor_report *r = NULL;
	const struct p2ps_finding *f;

	(void)state;
	assert_non_null(dir);
	/* gpu D PARENT: a GPU at sysfs path PARENT/0000:D:00.0, linked from /sys/bus/pci/devices */
	snprintf(cmd, sizeof(cmd), "cd '%s' && mkdir -p sys/bus/pci/devices && "
		 "gpu() { d=\"$2/0000:$1:00.0\"; mkdir -p \".$d\" && echo 0x10de >\".$d/vendor\" && "
		 "echo 0x2684 >\".$d/device\" && echo 0x030000 >\".$d/class\" && "
		 "printf '0xf2000000 0xf2ffffff 0x40200\\n0x4000000000 0x47ffffffff 0x14220c\\n' "
		 ">\".$d/resource\" && ln -s \"../../../..$d\" \"sys/bus/pci/devices/0000:$1:00.0\"; } && "
		 "p=/sys/devices/pci0000:00; for i in $(seq 1 19); do "
		 "p=\"$p/0000:$(printf %%02x $((i - 1))):$(printf %%02x $i).0\"; done && "
		 "gpu 41 \"$p/0000:13:01.0\" && gpu 42 \"$p/0000:13:02.0\" && "
		 "q=/sys/devices/pci0000:80; for i in $(seq 1 40); do "
		 "q=\"$q/0000:$(printf %%02x $((i + 128))):00.0\"; done && gpu c1 \"$q\"", dir);
	assert_int_equal(system(cmd), 0);
	o.root = dir;
	assert_int_equal(p2ps_doctor(&o, &r), 0);
	assert_int_equal(r->nr_gpus, 2);
	assert_string_equal(r->gpus[0].bdf, "0000:41:00.0");
	assert_non_null(strstr(r->gpus[0].path, "/0000:12:13.0/0000:13:01.0/0000:41:00.0"));
	assert_int_equal(r->nr_pairs, 1);
	assert_int_equal(r->pairs[0].path, P2PS_PATH_SWITCH);
	f = finding(r, "gpu", "0000:c1:00.0");
	assert_int_equal(f->verdict, P2PS_V_WARN);
	assert_string_equal(f->detail, "NVIDIA device 2684 more than 36 bridges deep: not checked");
	p2ps_doctor_free(r);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* The command line as the kernel reads it: whole, token by token. */
static void test_cmdline_iommu(void **state)
{
	struct p2ps_dr_cmdline_iommu o;

	(void)state;
	p2ps_dr_cmdline_iommu("ro quiet amd_iommu=pt", &o);
	assert_int_equal(o.passthrough, -1);	/* not an option: no passthrough */
	assert_true(o.bogus_pt);
	p2ps_dr_cmdline_iommu("ro iommu=pt", &o);
	assert_int_equal(o.passthrough, 1);
	assert_false(o.bogus_pt);
	p2ps_dr_cmdline_iommu("iommu=pt iommu.passthrough=0", &o);
	assert_int_equal(o.passthrough, 0);	/* the last one wins */
	p2ps_dr_cmdline_iommu("iommu.passthrough=1 intel_iommu=on", &o);
	assert_int_equal(o.passthrough, 1);
	p2ps_dr_cmdline_iommu("xiommu=pt foo=\"a iommu=pt\"", &o);
	assert_int_equal(o.passthrough, -1);	/* parts of other tokens */
	p2ps_dr_cmdline_iommu("ro -- iommu=pt", &o);
	assert_int_equal(o.passthrough, -1);	/* init's */
	p2ps_dr_cmdline_iommu("iommu=force,pt amd_iommu=off", &o);
	assert_int_equal(o.passthrough, 1);
	assert_true(o.off);
	p2ps_dr_cmdline_iommu(NULL, &o);
	assert_int_equal(o.passthrough, -1);
}

/*
 * The IOMMU verdict from facts (amd-chipset: one IOMMU unit): amd_iommu=pt
 * is no passthrough; iommu=pt past byte 1024 is; a GPU group's type wins
 * over the command line.
 */
static void test_iommu_facts(void **state)
{
	char tmpl[] = "/tmp/p2ps-doctor-XXXXXX", cmd[4096], root[512], path[2048];
	const char *dir = mkdtemp(tmpl);
	struct p2ps_doctor_report *r;
	struct p2ps_doctor_digest *d;
	const struct p2ps_finding *f;
	size_t i;

	(void)state;
	r = doctor_edited("amd-chipset", "sed -i 's/amd_iommu=on/amd_iommu=pt/' proc/cmdline");
	f = finding(r, "iommu", NULL);
	assert_int_equal(f->verdict, P2PS_V_WARN);
	assert_non_null(strstr(f->remedy, "amd_iommu=pt/intel_iommu=pt are not kernel options"));
	/* no group type read: translation is not known per GPU, so not said, and no pair blocked */
	assert_string_equal(f->detail, "IOMMU on (1 unit), DMA translation unknown per GPU (no IOMMU group type)");
	assert_null(strstr(f->remedy, "fault;"));
	assert_non_null(strstr(f->remedy, "if a GPU's /sys/kernel/iommu_groups/N/type is DMA or DMA-FQ"));
	/* the literal line to edit, as for a parameter to remove */
	assert_non_null(strstr(f->remedy, "add iommu=pt inside GRUB_CMDLINE_LINUX=\"...\" in /etc/default/grub, "
				   "then update-grub"));
	assert_int_equal(r->nr_p2p_possible, 1);
	assert_string_equal(r->summary, "P2P possible for 1 of 1 pair");
	p2ps_doctor_free(r);
	/* passthrough turned off on the command line: translated, the pair blocked */
	r = doctor_edited("amd-chipset", "sed -i 's/amd_iommu=on/amd_iommu=on iommu=nopt/' proc/cmdline");
	f = finding(r, "iommu", NULL);
	assert_int_equal(f->verdict, P2PS_V_WARN);
	assert_string_equal(f->detail,
			    "IOMMU translates DMA for every GPU (passthrough turned off on the command line)");
	assert_non_null(strstr(f->remedy, "delete iommu=nopt and iommu.passthrough=0 (or =n, =no, =off) from "
				   "GRUB_CMDLINE_LINUX=\"...\" and GRUB_CMDLINE_LINUX_DEFAULT=\"...\""));
	assert_int_equal(r->nr_p2p_possible, 0);
	/* the pair's own failure cites the command line, not a group type it never read */
	snprintf(cmd, sizeof(cmd), "%s %s", r->gpus[0].bdf, r->gpus[1].bdf);
	f = finding(r, "iommu", cmd);
	assert_int_equal(f->verdict, P2PS_V_FAIL);
	assert_string_equal(f->source, "/proc/cmdline");
	assert_null(strstr(f->remedy, "iommu_group type"));
	assert_non_null(strstr(f->remedy, "GRUB_CMDLINE_LINUX_DEFAULT"));
	assert_non_null(strstr(r->summary, "IOMMU translates its DMA"));
	p2ps_doctor_free(r);
	r = doctor_edited("amd-chipset", "printf 'ro %01200d iommu=pt\\n' 0 >proc/cmdline");
	f = finding(r, "iommu", NULL);
	assert_int_equal(f->verdict, P2PS_V_OK);
	assert_string_equal(f->detail, "IOMMU in passthrough mode (1 unit)");
	p2ps_doctor_free(r);

	/* groups: identity for both GPUs, though the command line says nothing */
	assert_non_null(dir);
	snprintf(root, sizeof(root), "%s/root", dir);
	snprintf(cmd, sizeof(cmd), "cp -r '%s/amd-chipset/root' '%s' && mkdir -p "
		 "'%s/sys/kernel/iommu_groups/7' '%s/sys/kernel/iommu_groups/8' && "
		 "echo identity >'%s/sys/kernel/iommu_groups/7/type' && "
		 "echo DMA-FQ >'%s/sys/kernel/iommu_groups/8/type'", FIXTURES, root, root, root, root, root);
	assert_int_equal(system(cmd), 0);
	r = doctor_at(root, "amd-chipset", NULL);
	assert_int_equal(verdict(r, "iommu", NULL), P2PS_V_WARN);
	assert_int_equal(r->nr_gpus, 2);
	for (i = 0; i < r->nr_gpus; i++) {
		snprintf(path, sizeof(path), "%s%s/iommu_group", root, r->gpus[i].path);
		assert_int_equal(symlink("/sys/kernel/iommu_groups/7", path), 0);
	}
	p2ps_doctor_free(r);
	r = doctor_at(root, "amd-chipset", NULL);
	f = finding(r, "iommu", NULL);
	assert_int_equal(f->verdict, P2PS_V_OK);
	assert_string_equal(f->detail, "IOMMU passthrough for every GPU (group type identity)");
	snprintf(cmd, sizeof(cmd), "%s %s", r->gpus[0].bdf, r->gpus[1].bdf);
	assert_null(p2ps_doctor_find(r, "iommu", cmd));
	assert_int_equal(r->nr_p2p_possible, 1);
	/* one GPU translated: a warning naming it, whatever the command line says */
	snprintf(path, sizeof(path), "%s%s/iommu_group", root, r->gpus[1].path);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(symlink("/sys/kernel/iommu_groups/8", path), 0);
	snprintf(cmd, sizeof(cmd), "sed -i 's/amd_iommu=on/iommu=pt/' '%s/proc/cmdline'", root);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "IOMMU translates DMA for %s (group type DMA-FQ)", r->gpus[1].bdf);
	p2ps_doctor_free(r);
	r = doctor_at(root, "amd-chipset", NULL);
	f = finding(r, "iommu", NULL);
	assert_int_equal(f->verdict, P2PS_V_WARN);
	assert_string_equal(f->detail, cmd);
	/* ... and the bar1 pair it is in is blocked: a failure, counted in the answer */
	snprintf(cmd, sizeof(cmd), "%s %s", r->gpus[0].bdf, r->gpus[1].bdf);
	f = finding(r, "iommu", cmd);
	assert_int_equal(f->verdict, P2PS_V_FAIL);
	assert_non_null(strstr(f->remedy, "add iommu=pt inside GRUB_CMDLINE_LINUX=\"...\" in /etc/default/grub"));
	assert_int_equal(r->nr_p2p_possible, 0);
	assert_non_null(strstr(r->summary, "P2P possible for 0 of 1 pair (1 blocked: "));
	assert_non_null(strstr(r->summary, "IOMMU translates its DMA"));
	/* the pair itself says so: its row, pairs[].p2p (JSON) and the digest */
	assert_int_equal(r->nr_pairs, 1);
	assert_int_equal(r->pairs[0].p2p, P2PS_P2P_NONE);
	assert_non_null(strstr(r->pairs[0].p2p_why, "blocked"));
	assert_non_null(strstr(r->pairs[0].p2p_why, "IOMMU"));
	assert_int_equal(p2ps_doctor_digest(r, &d), 0);
	assert_int_equal(d->nr_pairs, 1);
	assert_int_equal(d->pairs[0].p2p, P2PS_P2P_NONE);
	assert_string_equal(d->pairs[0].who, "0-1");
	assert_non_null(strstr(d->pairs[0].why, "blocked"));
	assert_non_null(strstr(d->pairs[0].why, "IOMMU"));
	p2ps_doctor_digest_free(d);
	p2ps_doctor_free(r);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/*
 * A GPU bound to vfio-pci (or to nothing, while nvidia is loaded) has no
 * P2P: no bar1 pair for it.  amd-chipset's tree records driver links in
 * .symlinks once they are added.
 */
static void test_bound_driver(void **state)
{
	char tmpl[] = "/tmp/p2ps-doctor-XXXXXX", cmd[4096], root[512];
	const char *dir = mkdtemp(tmpl);
	struct p2ps_doctor_report *r;
	const struct p2ps_finding *f;
	char p0[512], p1[512], b1[16], subj[48];

	(void)state;
	assert_non_null(dir);
	snprintf(root, sizeof(root), "%s/root", dir);
	snprintf(cmd, sizeof(cmd), "cp -r '%s/amd-chipset/root' '%s'", FIXTURES, root);
	assert_int_equal(system(cmd), 0);
	r = doctor_at(root, "amd-chipset", NULL);
	assert_int_equal(r->nr_pairs, 1);
	assert_int_equal(r->pairs[0].p2p, P2PS_P2P_BAR1);
	p2ps_strlcpy(p0, r->gpus[0].path, sizeof(p0));
	p2ps_strlcpy(p1, r->gpus[1].path, sizeof(p1));
	p2ps_strlcpy(b1, r->gpus[1].bdf, sizeof(b1));
	snprintf(subj, sizeof(subj), "%s %s", r->gpus[0].bdf, b1);
	p2ps_doctor_free(r);
	snprintf(cmd, sizeof(cmd), "printf '%%s/driver\\t../x\\t/sys/bus/pci/drivers/nvidia\\n"
		 "%%s/driver\\t../x\\t/sys/bus/pci/drivers/vfio-pci\\n' '%s' '%s' >>'%s/.symlinks'",
		 p0, p1, root);
	assert_int_equal(system(cmd), 0);
	r = doctor_at(root, "amd-chipset", NULL);
	assert_string_equal(r->gpus[0].driver, "nvidia");
	assert_string_equal(r->gpus[1].driver, "vfio-pci");
	assert_int_equal(r->pairs[0].p2p, P2PS_P2P_NONE);
	f = finding(r, "p2p", subj);
	assert_int_equal(f->verdict, P2PS_V_FAIL);
	snprintf(cmd, sizeof(cmd), "P2P: none (%s is bound to vfio-pci, not nvidia)", b1);
	assert_string_equal(f->detail, cmd);
	p2ps_doctor_free(r);
	/* unbound, while nvidia is loaded */
	snprintf(cmd, sizeof(cmd), "sed -i '/vfio-pci/d' '%s/.symlinks'", root);
	assert_int_equal(system(cmd), 0);
	r = doctor_at(root, "amd-chipset", NULL);
	assert_int_equal(r->pairs[0].p2p, P2PS_P2P_NONE);
	snprintf(cmd, sizeof(cmd), "%s is bound to no driver, not nvidia", b1);
	assert_string_equal(r->pairs[0].p2p_why, cmd);
	p2ps_doctor_free(r);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/*
 * The driver's devicesLock inversion (580.65.06 up to the 610.57.04 fix):
 * a warning on those versions, none before.
 */
static void test_driver_lock(void **state)
{
	struct p2ps_doctor_report *r;
	const struct p2ps_finding *f;

	(void)state;
	r = doctor_edited("rtx4090-pair", "sed -i 's/580.95.05/595.45.04/' proc/driver/nvidia/version");
	f = finding(r, "driver-lock", NULL);
	assert_int_equal(f->verdict, P2PS_V_WARN);
	assert_non_null(strstr(f->detail, "devicesLock"));
	p2ps_doctor_free(r);
	r = doctor_edited("rtx4090-pair", "sed -i 's/580.95.05/580.65.06/' proc/driver/nvidia/version");
	assert_non_null(p2ps_doctor_find(r, "driver-lock", NULL));
	p2ps_doctor_free(r);
	r = doctor_edited("rtx4090-pair", "sed -i 's/580.95.05/580.65.05/' proc/driver/nvidia/version");
	assert_null(p2ps_doctor_find(r, "driver-lock", NULL));
	p2ps_doctor_free(r);
	r = doctor_edited("rtx4090-pair", "sed -i 's/580.95.05/570.148.08/' proc/driver/nvidia/version");
	assert_null(p2ps_doctor_find(r, "driver-lock", NULL));
	p2ps_doctor_free(r);
}

/*
 * /proc/cpuinfo as `p2pctl status` and doctor both read it
 * (p2ps_host_cpu_parse): the first processor only, "model name" is not
 * "model", tabs before the colon.
 */
static void test_host_cpu_parse(void **state)
{
	struct p2ps_host_cpu cpu;

	(void)state;
	assert_true(p2ps_host_cpu_parse("processor\t: 0\nvendor_id\t: GenuineIntel\n"
					"cpu family\t: 6\nmodel\t\t: 143\n"
					"model name\t: Intel(R) Xeon(R) Platinum 8480+\n\n"
					"processor\t: 1\nvendor_id\t: AuthenticAMD\n", &cpu));
	assert_string_equal(cpu.vendor_id, "GenuineIntel");
	assert_int_equal(cpu.vendor, P2PS_CPU_INTEL);
	assert_int_equal(cpu.family, 6);
	assert_int_equal(cpu.model, 143);
	assert_true(p2ps_host_cpu_parse("vendor_id : AuthenticAMD\nmodel name : AMD EPYC\n"
					"cpu family : 25\nmodel : 1\n", &cpu));
	assert_int_equal(cpu.vendor, P2PS_CPU_AMD);
	assert_int_equal(cpu.model, 1);
	/* no model line before the block ends: not known */
	assert_false(p2ps_host_cpu_parse("vendor_id : AuthenticAMD\ncpu family : 25\n\nmodel : 1\n",
					 &cpu));
	assert_false(p2ps_host_cpu_parse(NULL, &cpu));
	assert_false(p2ps_host_cpu_parse("", &cpu));
}

/* The driver's BAR1 peer-read rule (rules/readrule.c), shared with the module. */
static void test_readrule(void **state)
{
	(void)state;
	/* a common switch: always */
	assert_true(p2ps_bar1_reads_allowed(580, P2PS_CPU_INTEL, 6, 183, true));
	assert_true(p2ps_bar1_reads_allowed(580, P2PS_CPU_OTHER, 0, 0, true));
	/* AMD: every family from 0x12 on (cpu.c: RYZEN, or "assuming new Ryzen") */
	assert_false(p2ps_bar1_reads_allowed(580, P2PS_CPU_AMD, 0x10, 2, false));	/* K10 */
	assert_false(p2ps_bar1_reads_allowed(580, P2PS_CPU_AMD, 0x11, 3, false));	/* K11 */
	assert_true(p2ps_bar1_reads_allowed(580, P2PS_CPU_AMD, 0x15, 2, false));	/* Bulldozer */
	assert_true(p2ps_bar1_reads_allowed(580, P2PS_CPU_AMD, 0x16, 0, false));
	assert_true(p2ps_bar1_reads_allowed(580, P2PS_CPU_AMD, 0x17, 1, false));
	assert_true(p2ps_bar1_reads_allowed(580, P2PS_CPU_AMD, 0x19, 0x61, false));
	assert_true(p2ps_bar1_reads_allowed(580, P2PS_CPU_AMD, 0x1a, 0x11, false));
	/* 550-565 name AMD families 0x17 and 0x19 only (no "new Ryzen" default) */
	assert_true(p2ps_bar1_reads_allowed(565, P2PS_CPU_AMD, 0x19, 0x21, false));
	assert_false(p2ps_bar1_reads_allowed(565, P2PS_CPU_AMD, 0x1a, 0x44, false));	/* Zen 5 */
	assert_false(p2ps_bar1_reads_allowed(550, P2PS_CPU_AMD, 0x15, 2, false));
	assert_true(p2ps_bar1_reads_allowed(570, P2PS_CPU_AMD, 0x1a, 0x44, false));
	/* the switches the driver knows (pcie_switch_ref.h) */
	assert_true(p2ps_pcie_switch_known(0x10b5, 0x8747));	/* PLX PEX 8747 */
	assert_true(p2ps_pcie_switch_known(0x10b5, 0x9797));
	assert_true(p2ps_pcie_switch_known(0x11f8, 0x4052));	/* Microchip Switchtec */
	assert_true(p2ps_pcie_switch_known(0x10de, 0x05b7));	/* BR04 */
	assert_false(p2ps_pcie_switch_known(0x1000, 0xc010));	/* Broadcom PEX88000 */
	assert_false(p2ps_pcie_switch_known(0x1b21, 0x1182));	/* ASMedia */
	assert_false(p2ps_pcie_switch_known(0x104c, 0x8232));	/* TI XIO3130 (QEMU's) */
	/* Intel: Sapphire Rapids only */
	assert_true(p2ps_bar1_reads_allowed(580, P2PS_CPU_INTEL, 6, 143, false));
	assert_false(p2ps_bar1_reads_allowed(580, P2PS_CPU_INTEL, 6, 207, false));	/* Emerald Rapids */
	assert_false(p2ps_bar1_reads_allowed(580, P2PS_CPU_INTEL, 6, 173, false));	/* Granite Rapids */
	assert_false(p2ps_bar1_reads_allowed(580, P2PS_CPU_INTEL, 6, 183, false));	/* i9-14900K */
	assert_false(p2ps_bar1_reads_allowed(580, P2PS_CPU_INTEL, 6, 158, false));	/* i9-9900KF */
	assert_false(p2ps_bar1_reads_allowed(580, P2PS_CPU_INTEL, 7, 143, false));
	assert_false(p2ps_bar1_reads_allowed(580, P2PS_CPU_OTHER, 0x18, 0, false));	/* Hygon */
}

/* doctor warns on BAR1 pairs of hosts that fail the rule (amd-chipset: no switch). */
static void test_bar1_reads(void **state)
{
	struct p2ps_doctor_report *r;
	const struct p2ps_finding *f;

	(void)state;
	r = doctor_edited("amd-chipset", "printf 'processor\\t: 0\\nvendor_id\\t: GenuineIntel\\n"
			  "cpu family\\t: 6\\nmodel\\t\\t: 183\\n\\nprocessor\\t: 1\\nmodel\\t\\t: 143\\n' "
			  ">proc/cpuinfo");
	/* p2p-shim's caps guard follows the rule: no P2P for the pair */
	assert_int_equal(r->pairs[0].p2p, P2PS_P2P_NONE);
	assert_non_null(strstr(r->pairs[0].p2p_why, "no BAR1 peer reads"));
	f = finding(r, "bar1-reads", NULL);
	assert_int_equal(f->verdict, P2PS_V_WARN);
	assert_non_null(strstr(f->detail, "(GenuineIntel family 6 model 183 here)"));
	assert_non_null(strstr(f->remedy, "peer_reads=1"));
	p2ps_doctor_free(r);
	/* the user's opt-in: BAR1 P2P, with the warning */
	r = doctor_edited("amd-chipset", "printf 'vendor_id : GenuineIntel\ncpu family : 6\n"
			  "model : 183\n' >proc/cpuinfo; mkdir -p sys/module/p2p_shim/parameters; "
			  "echo Y >sys/module/p2p_shim/parameters/peer_reads");
	assert_int_equal(r->pairs[0].p2p, P2PS_P2P_BAR1);
	f = finding(r, "bar1-reads", NULL);
	assert_non_null(strstr(f->detail, "peer_reads=1 offers BAR1 P2P anyway"));
	p2ps_doctor_free(r);
	/* Sapphire Rapids passes */
	r = doctor_edited("amd-chipset", "printf 'vendor_id : GenuineIntel\\ncpu family : 6\\n"
			  "model : 143\\n' >proc/cpuinfo");
	assert_null(p2ps_doctor_find(r, "bar1-reads", NULL));
	p2ps_doctor_free(r);
	/*
	 * Below one known switch (PLX), on that Intel host: reads allowed.
	 * Then the second GPU moved below a second PLX switch nested in the
	 * first: its nearest switch is the inner one, which the module takes
	 * (kmod/static_bar1.c switch_of), so no common switch, as the module says.
	 */
	r = doctor_edited("plx-noacs", "printf 'vendor_id : GenuineIntel\\ncpu family : 6\\n"
			  "model : 183\\n' >proc/cpuinfo");
	assert_int_equal(r->pairs[0].p2p, P2PS_P2P_BAR1);
	assert_null(p2ps_doctor_find(r, "bar1-reads", NULL));
	p2ps_doctor_free(r);
	r = doctor_edited("plx-noacs", "printf 'vendor_id : GenuineIntel\\ncpu family : 6\\n"
			  "model : 183\\n' >proc/cpuinfo; "
			  "cd sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:10.0 && "
			  "mkdir -p 0000:05:00.0/0000:06:00.0 && "
			  "{ cp ../* 0000:05:00.0/ 2>/dev/null; cp ../0000:02:08.0/* 0000:06:00.0/ 2>/dev/null; true; } && "
			  "mv 0000:04:00.0 0000:05:00.0/0000:06:00.0/ && cd - >/dev/null && "
			  "sed -i 's|0000:02:10.0/0000:04:00.0|0000:02:10.0/0000:05:00.0/0000:06:00.0/0000:04:00.0|g' "
			  ".symlinks");
	assert_int_equal(r->nr_gpus, 2);
	assert_int_equal(r->pairs[0].p2p, P2PS_P2P_NONE);
	assert_non_null(strstr(r->pairs[0].p2p_why, "no BAR1 peer reads"));
	p2ps_doctor_free(r);
	/* a Ryzen 5950X (Zen 3, family 25) passes */
	r = doctor_edited("amd-chipset", "printf 'vendor_id : AuthenticAMD\ncpu family : 25\n"
			  "model : 33\n' >proc/cpuinfo");
	assert_null(p2ps_doctor_find(r, "bar1-reads", NULL));
	p2ps_doctor_free(r);
}

/*
 * A driver without a profile (555: refused on purpose; 610: not known yet)
 * gives every pair `none` with `p2pctl check`'s reason, and --force only
 * where check would allow it.
 */
static void test_no_profile(void **state)
{
	struct p2ps_doctor_report *r;
	const struct p2ps_finding *f;

	(void)state;
	r = doctor_edited("rtx4090-pair", "sed -i 's/580.95.05/555.58.02/' proc/driver/nvidia/version");
	assert_string_equal(r->driver_version, "555.58.02");
	assert_string_equal(r->profile, "");
	f = finding(r, "profile", NULL);
	assert_int_equal(f->verdict, P2PS_V_FAIL);
	assert_non_null(strstr(f->detail, "555.x is not verified"));
	assert_null(strstr(f->remedy, "--force"));
	assert_int_equal(r->nr_pairs, 1);
	assert_int_equal(r->pairs[0].p2p, P2PS_P2P_NONE);
	assert_non_null(strstr(r->pairs[0].p2p_why, "no profile for driver 555.58.02: 555.x is not verified"));
	assert_int_equal(finding(r, "p2p", NULL)->verdict, P2PS_V_FAIL);
	p2ps_doctor_free(r);
	r = doctor_edited("rtx4090-pair", "sed -i 's/580.95.05/610.57.04/' proc/driver/nvidia/version");
	f = finding(r, "profile", NULL);
	assert_int_equal(f->verdict, P2PS_V_FAIL);
	assert_non_null(strstr(f->remedy, "p2pctl enable --force"));
	assert_int_equal(r->pairs[0].p2p, P2PS_P2P_NONE);
	assert_string_equal(r->pairs[0].p2p_why, "no profile for driver 610.57.04: p2p-shim does not arm");
	p2ps_doctor_free(r);
}

/*
 * p2p-shim already loaded (DKMS signed it, the key is enrolled): lockdown,
 * Secure Boot, sig_enforce and modules_disabled are no blockers then.
 * h100-vm-580: lockdown forced by the config, sig_enforce Y, modules_disabled 1.
 */
static void test_loaded_signed(void **state)
{
	struct p2ps_doctor_report *r;

	(void)state;
	r = doctor("h100-vm-580", NULL);
	assert_int_equal(verdict(r, "lockdown", NULL), P2PS_V_FAIL);
	/* forced lockdown: the same literal MOK steps as Secure Boot's */
	assert_non_null(strstr(finding(r, "lockdown", NULL)->remedy, "mokutil --import /var/lib/dkms/mok.pub"));
	assert_non_null(strstr(finding(r, "sig-enforce", NULL)->remedy, "in MokManager Enroll MOK"));
	assert_int_equal(verdict(r, "sig-enforce", NULL), P2PS_V_FAIL);
	assert_int_equal(verdict(r, "modules-disabled", NULL), P2PS_V_FAIL);
	p2ps_doctor_free(r);
	r = doctor_edited("h100-vm-580", "mkdir -p sys/module/p2p_shim");
	assert_int_equal(verdict(r, "lockdown", NULL), P2PS_V_OK);
	assert_int_equal(verdict(r, "secure-boot", NULL), P2PS_V_OK);
	assert_int_equal(verdict(r, "sig-enforce", NULL), P2PS_V_OK);
	assert_string_equal(finding(r, "sig-enforce", NULL)->detail,
			    "p2p-shim is loaded: the kernel accepted its signature (or needs none)");
	assert_int_equal(verdict(r, "modules-disabled", NULL), P2PS_V_OK);
	/* kprobes missing stays a blocker, loaded or not */
	assert_int_equal(verdict(r, "kprobes", NULL), P2PS_V_FAIL);
	p2ps_doctor_free(r);
}

#define MODDIR "lib/modules/6.18.44-fc-v657-gpu/updates/dkms"
#define SIG_MAGIC "~Module signature appended~\\n"

/*
 * Not loaded yet, but installed signed (DKMS signs with its MOK): lockdown
 * and signature enforcement take it if the key is enrolled, so they warn
 * (and block no pair) instead of failing; an unsigned one still fails.
 */
static void test_signed_module(void **state)
{
	struct p2ps_doctor_report *r;

	(void)state;
	r = doctor_edited("h100-vm-580", "mkdir -p " MODDIR " && printf '\\177ELF...sig" SIG_MAGIC "' >"
			  MODDIR "/p2p-shim.ko");
	assert_int_equal(verdict(r, "lockdown", NULL), P2PS_V_WARN);
	assert_int_equal(verdict(r, "sig-enforce", NULL), P2PS_V_WARN);
	assert_non_null(strstr(finding(r, "sig-enforce", NULL)->detail,
			       "/lib/modules/6.18.44-fc-v657-gpu/updates/dkms/p2p-shim.ko is signed"));
	assert_non_null(strstr(finding(r, "lockdown", NULL)->remedy, "mokutil"));
	/* modules_disabled refuses any module, signed or not */
	assert_int_equal(verdict(r, "modules-disabled", NULL), P2PS_V_FAIL);
	p2ps_doctor_free(r);
	/* compressed (gzip here; zstd and xz the same way) */
	r = doctor_edited("h100-vm-580", "mkdir -p " MODDIR " && printf '\\177ELF...sig" SIG_MAGIC "' | gzip >"
			  MODDIR "/p2p-shim.ko.gz");
	assert_int_equal(verdict(r, "sig-enforce", NULL), P2PS_V_WARN);
	p2ps_doctor_free(r);
	/* installed unsigned: still refused */
	r = doctor_edited("h100-vm-580", "mkdir -p lib/modules/6.18.44-fc-v657-gpu/extra && "
			  "printf '\\177ELF...' >lib/modules/6.18.44-fc-v657-gpu/extra/p2p-shim.ko");
	assert_int_equal(verdict(r, "lockdown", NULL), P2PS_V_FAIL);
	assert_int_equal(verdict(r, "sig-enforce", NULL), P2PS_V_FAIL);
	p2ps_doctor_free(r);
}

/* The one answer: "P2P possible for N of M pairs (K blocked: ...)". */
static void test_summary(void **state)
{
	struct p2ps_doctor_report *r;

	(void)state;
	r = doctor("rtx4090-pair", NULL);
	assert_string_equal(r->summary, "P2P possible for 1 of 1 pair");
	assert_int_equal(r->nr_p2p_possible, 1);
	assert_int_equal(r->nr_usable_gpus, 2);
	assert_null(p2ps_doctor_find(r, "gpus", NULL));
	p2ps_doctor_free(r);
	/* one GPU: a blocker, not "0 blockers" */
	r = doctor("h100-vm-580", NULL);
	assert_int_equal(verdict(r, "gpus", NULL), P2PS_V_FAIL);
	assert_string_equal(r->summary, "P2P possible for 0 pairs: 1 usable GPU");
	p2ps_doctor_free(r);
	/* a bar1 pair on a host that can't load p2p-shim */
	r = doctor("no-kprobes", NULL);
	assert_string_equal(r->summary, "P2P possible for 0 of 1 pair (1 blocked: host: kprobes)");
	/* and its row says so: none, blocked, what it would be (issue 44) */
	assert_int_equal(r->pairs[0].p2p, P2PS_P2P_NONE);
	assert_non_null(strstr(r->pairs[0].p2p_why, "blocked: host: kprobes (else bar1: "));
	p2ps_doctor_free(r);
	/* a pair blocked on its own, with its reason */
	r = doctor("rtx4090-smallbar", NULL);
	assert_int_equal(r->nr_p2p_possible, 0);
	assert_string_equal(r->summary, "P2P possible for 0 of 1 pair (1 blocked: 0000:03:00.0: static BAR1 no "
			    "(BAR1 P2P needs it on both GPUs))");
	p2ps_doctor_free(r);
	/* NVLink needs no shim: possible whatever the host */
	r = doctor("h200-nvlink-580", H200_TOPO);
	assert_int_equal(r->nr_p2p_possible, r->nr_pairs);
	p2ps_doctor_free(r);
}

/*
 * Said once: on eight GPUs (28 pairs) the findings that
 * differ only in their subject are one line naming the GPUs or pairs,
 * blockers first; a remedy several findings share is one line.
 */
static void test_digest(void **state)
{
	struct p2ps_doctor_report *r;
	struct p2ps_doctor_digest *d;
	const struct p2ps_finding *fs[28], *f;
	size_t i, n = 0, acs = 0;
	int last = P2PS_V_FAIL;
	char *who;

	(void)state;
	r = doctor("epyc-8x5090", NULL);
	assert_int_equal(r->nr_gpus, 8);
	assert_int_equal(r->nr_pairs, 28);
	assert_int_equal(p2ps_doctor_digest(r, &d), 0);
	for (i = 0; i < d->nr_lines; i++) {
		const struct p2ps_digest_line *l = &d->lines[i];

		/* blockers, then warnings, skips, oks */
		assert_true((int)l->finding->verdict <= last);
		last = (int)l->finding->verdict;
		if (!strcmp(l->finding->check, "acs")) {
			acs++;
			assert_int_equal(l->nr, 28);
			assert_string_equal(l->who, "all 28 pairs");
		}
		if (!strcmp(l->finding->check, "gpu"))
			assert_string_equal(l->who, "all 8 GPUs");
		if (!strcmp(l->finding->check, "pcie-path") && strstr(l->finding->detail, "same root"))
			assert_string_equal(l->who, "0-1, 2-3, 4-5, 6-7");
	}
	assert_int_equal(acs, 1);
	/* 24 pairs across host bridges: named until the detail is full, then "..." */
	f = finding(r, "nccl-p2p-level", NULL);
	assert_non_null(strstr(f->detail, "not P2P: 0000:01:00.0 0000:41:00.0 (NODE), "));
	assert_string_equal(f->detail + strlen(f->detail) - 5, ", ...");
	/* 155 findings, 35 lines */
	assert_true(r->nr_findings > 150);
	assert_true(d->nr_lines < 40);
	assert_int_equal(d->nr_warn, r->nr_warn);
	assert_int_equal(d->nr_pairs, 1);
	assert_string_equal(d->pairs[0].who, "all 28 pairs");
	p2ps_doctor_digest_free(d);
	/* more than half of the pairs: the others named */
	for (i = 0; i < r->nr_findings; i++)
		if (!strcmp(r->findings[i].check, "acs") && strcmp(r->findings[i].subject, "0000:01:00.0 0000:02:00.0") &&
		    strcmp(r->findings[i].subject, "0000:c1:00.0 0000:c2:00.0"))
			fs[n++] = &r->findings[i];
	who = p2ps_doctor_who(r, fs, n);
	assert_string_equal(who, "all 28 pairs but 0-1, 6-7");
	free(who);
	who = p2ps_doctor_who(r, fs, 3);
	assert_string_equal(who, "0-2, 0-3, 0-4");
	free(who);
	p2ps_doctor_free(r);

	/* two GPUs: a link warning each, one remedy; a blocker ahead of the warnings */
	r = doctor("plx-acs", NULL);
	assert_int_equal(p2ps_doctor_digest(r, &d), 0);
	for (i = n = 0; i < d->nr_remedies; i++)
		if (strstr(d->remedies[i].remedy, "use an x16 slot")) {
			n++;
			assert_string_equal(d->remedies[i].who, "link 0, 1");
		}
	assert_int_equal(n, 1);
	assert_int_equal(d->nr_warn, r->nr_warn - 1);
	p2ps_doctor_digest_free(d);
	p2ps_doctor_free(r);
	r = doctor("h100-vm-580", NULL);
	assert_int_equal(p2ps_doctor_digest(r, &d), 0);
	for (i = 0; i < d->nr_fail; i++)
		assert_int_equal(d->lines[i].finding->verdict, P2PS_V_FAIL);
	assert_string_equal(d->lines[d->nr_fail - 1].finding->check, "gpus");	/* the last check */
	assert_int_equal(d->lines[d->nr_fail].finding->verdict, P2PS_V_WARN);
	p2ps_doctor_digest_free(d);
	p2ps_doctor_free(r);
}

/* Control characters and invalid UTF-8 from sysfs/DMI never reach the output. */
static void test_sanitize(void **state)
{
	struct p2ps_doctor_report *r;
	const struct p2ps_finding *f;
	char s1[] = "a\x1b[2Jb\xff\xc3(\t\xc2\x9b""c\xe2\x82\xac\xed\xa0\x80\xc0\xaf\x7f";

	(void)state;
	/* ESC, a lone 0xff, a broken pair, tab kept, C1 CSI, a euro sign kept,
	 * a surrogate, an overlong '/', DEL */
	assert_string_equal(p2ps_sanitize(s1), "a?[2Jb?" "?(\t?" "?c\xe2\x82\xac?" "?" "?" "?" "?" "?");
	r = doctor_edited("qemu-guest", "printf 'QEMU\\033[2J\\377' >sys/class/dmi/id/sys_vendor");
	f = finding(r, "vm", NULL);
	assert_null(strchr(f->detail, '\x1b'));
	assert_non_null(strstr(f->detail, "DMI QEMU?[2J?"));
	p2ps_doctor_free(r);
}

/* Real symlinks in a temporary tree instead of .symlinks. */
static void test_real_symlinks(void **state)
{
	char tmpl[] = "/tmp/p2ps-root-XXXXXX", path[512];
	const char *dir = mkdtemp(tmpl);
	const char *dev = "/sys/devices/pci0000:40/0000:40:03.1/0000:41:00.0";
	struct p2ps_doctor_opts o = { 0 };
	struct p2ps_doctor_report *r = NULL;
	static const char *const files[][2] = {
		{ "vendor", "0x10de\n" }, { "device", "0x2b85\n" }, { "class", "0x030000\n" },
		{ "resource", "0x00000000f2000000 0x00000000f2ffffff 0x0000000000040200\n"
			      "0x0000004000000000 0x00000047ffffffff 0x000000000014220c\n" },
	};
	unsigned int i;
	FILE *f;

	(void)state;
	assert_non_null(dir);
	snprintf(path, sizeof(path), "mkdir -p '%s%s' '%s/sys/bus/pci/devices'", dir, dev, dir);
	assert_int_equal(system(path), 0);
	for (i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "%s%s/%s", dir, dev, files[i][0]);
		f = fopen(path, "w");
		assert_non_null(f);
		fputs(files[i][1], f);
		fclose(f);
	}
	snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/0000:41:00.0", dir);
	assert_int_equal(symlink("../../../devices/pci0000:40/0000:40:03.1/0000:41:00.0", path), 0);
	o.root = dir;
	assert_int_equal(p2ps_doctor(&o, &r), 0);
	assert_int_equal(r->nr_gpus, 1);
	assert_string_equal(r->gpus[0].path, dev);
	assert_string_equal(r->gpus[0].arch, "Blackwell");
	assert_int_equal(r->gpus[0].bar1, 32ULL << 30);
	assert_int_equal(verdict(r, "bar1", "0000:41:00.0"), P2PS_V_OK);
	/*
	 * no driver: the rules of 580+; a 5090's 32 GiB can't take VRAM plus
	 * reserves, but p2p-shim forces it (nominal VRAM less 1/256 fits)
	 */
	assert_int_equal(r->gpus[0].static_bar1, P2PS_SB_YES);
	assert_non_null(strstr(r->gpus[0].static_bar1_why, "forced by p2p-shim"));
	assert_non_null(strstr(p2ps_doctor_find(r, "static-bar1", "0000:41:00.0")->source, "580+"));
	/* nothing else present: driver and kprobes unknown, no crash */
	assert_int_equal(verdict(r, "nvidia", NULL), P2PS_V_WARN);
	assert_int_equal(verdict(r, "kprobes", NULL), P2PS_V_WARN);
	p2ps_doctor_free(r);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	assert_int_equal(system(path), 0);
}

/* ---- hostile trees: what a --root tree may hold to make doctor costly or act */

/* doctor on @arg's tree in a child: its peak RSS in KiB on the pipe @arg[1] */
struct rss_arg {
	const char *root;
	int fd;
};

static int doctor_rss(void *p)
{
	struct rss_arg *a = p;
	struct p2ps_doctor_opts o = { .root = a->root };
	struct p2ps_doctor_report *r = NULL;
	const struct p2ps_finding *f;
	struct rusage ru;
	long kib;
	int rc;

	if (p2ps_doctor(&o, &r) || !r)
		return 1;
	f = p2ps_doctor_find(r, "lockdown", NULL);
	/* the module's signature (its last bytes) was seen: a warning, not a blocker */
	rc = f && f->verdict == P2PS_V_WARN && strstr(f->detail, "is signed") ? 0 : 2;
	p2ps_doctor_free(r);
	getrusage(RUSAGE_SELF, &ru);
	kib = ru.ru_maxrss;
	if (write(a->fd, &kib, sizeof(kib)) != sizeof(kib))
		return 3;
	return rc;
}

/*
 * A 256 MiB module that compresses to a few hundred KiB: doctor wants its
 * last 28 bytes (the signature marker) and must not hold the whole image.
 */
static void test_module_bomb(void **state)
{
	char tmpl[] = "/tmp/p2ps-bomb-XXXXXX", cmd[2048], root[512];
	const char *dir = mkdtemp(tmpl);
	struct rss_arg a;
	int fds[2];
	long kib = 0;

	(void)state;
	assert_non_null(dir);
	snprintf(root, sizeof(root), "%s/root", dir);
	snprintf(cmd, sizeof(cmd), "cp -r '%s/rtx4090-pair/root' '%s' && cd '%s' && "
		 "echo 'none [integrity] confidentiality' >sys/kernel/security/lockdown && "
		 "m=lib/modules/6.1.0-28-amd64/updates/dkms && mkdir -p $m && "
		 "{ head -c 256M /dev/zero; printf '~Module signature appended~\\n'; } | gzip -1 >$m/p2p-shim.ko.gz",
		 FIXTURES, root, root);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(pipe(fds), 0);
	a.root = root;
	a.fd = fds[1];
	bounded(doctor_rss, &a, 60);
	assert_int_equal(read(fds[0], &kib, sizeof(kib)), sizeof(kib));
	close(fds[0]);
	close(fds[1]);
	/* far below the 256 MiB the image inflates to (ASan's own shadow included) */
	if (kib > 160 * 1024)
		fail_msg("doctor peaked at %ld MiB on a 256 MiB module", kib / 1024);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/*
 * A capture of a large host: .symlinks over the old 4 MiB read cap, the
 * GPUs' own links at its end.  Read and indexed, not dropped (the GPUs
 * vanished); one that can't be read at all refuses the tree.
 */
static void test_symlinks_large(void **state)
{
	struct p2ps_doctor_report *r;
	struct p2ps_doctor_opts o = { 0 };
	char tmpl[] = "/tmp/p2ps-links-XXXXXX", cmd[2048], root[512];
	const char *dir = mkdtemp(tmpl);

	(void)state;
	r = doctor_edited("rtx4090-pair",
			  "mv .symlinks links.gpu && seq 1 90000 | "
			  "sed 's|.*|/sys/class/net/veth&\\t../../devices/virtual/net/veth&\\t/sys/devices/virtual/net/veth&|' "
			  ">.symlinks && cat links.gpu >>.symlinks && test $(stat -c %s .symlinks) -gt 5000000");
	assert_int_equal(r->nr_gpus, 2);
	assert_int_equal(r->nr_pairs, 1);
	p2ps_doctor_free(r);
	/* .symlinks not a file: the tree is refused, not read without its links */
	assert_non_null(dir);
	snprintf(root, sizeof(root), "%s/root", dir);
	snprintf(cmd, sizeof(cmd), "cp -r '%s/rtx4090-pair/root' '%s' && rm '%s/.symlinks' && mkdir '%s/.symlinks'",
		 FIXTURES, root, root, root);
	assert_int_equal(system(cmd), 0);
	o.root = root;
	r = NULL;
	assert_int_equal(p2ps_doctor(&o, &r), -EISDIR);
	assert_null(r);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/*
 * A device node or FIFO where doctor reads a file is checked before it is
 * opened: an open would run its driver's open method (a watchdog arms).
 * inotify sees every open for reading, none for an O_PATH look.
 */
static void test_node_not_opened(void **state)
{
	char tmpl[] = "/tmp/p2ps-node-XXXXXX", cmd[2048], root[512], node[600], ev[4096];
	const char *dir = mkdtemp(tmpl);
	struct p2ps_doctor_opts o = { 0 };
	struct p2ps_doctor_report *r = NULL;
	char *s;
	int in;

	(void)state;
	assert_non_null(dir);
	snprintf(root, sizeof(root), "%s/root", dir);
	snprintf(cmd, sizeof(cmd), "cp -r '%s/rtx4090-pair/root' '%s' && rm '%s/proc/driver/nvidia/version' && "
		 "mkfifo '%s/proc/driver/nvidia/version'", FIXTURES, root, root, root);
	assert_int_equal(system(cmd), 0);
	snprintf(node, sizeof(node), "%s/proc/driver/nvidia/version", root);
	in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	assert_true(in >= 0);
	assert_true(inotify_add_watch(in, node, IN_OPEN) >= 0);
	o.root = root;
	assert_int_equal(p2ps_doctor(&o, &r), 0);
	assert_string_equal(r->driver_version, "");
	p2ps_doctor_free(r);
	s = p2ps_read_file(node, NULL, false);
	assert_null(s);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	if (read(in, ev, sizeof(ev)) > 0)
		fail_msg("the FIFO was opened");
	assert_int_equal(errno, EAGAIN);
	close(in);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* ---- faults doctor missed (issue 44): each seen failing before its check */

#define PF0 "sys/devices/pci0000:00/0000:00:01.1/0000:01:00.0"
#define PF1 "sys/devices/pci0000:00/0000:00:01.2/0000:02:00.0"

/* How many findings of @check. */
static size_t count_check(const struct p2ps_doctor_report *r, const char *check)
{
	size_t i, n = 0;

	for (i = 0; i < r->nr_findings; i++)
		n += !strcmp(r->findings[i].check, check);
	return n;
}

/*
 * SR-IOV virtual functions of a GPU (vendor 10de, class 0302, a physfn
 * link to their GPU, as the kernel makes them) are not GPUs of their own.
 */
static void test_sriov_vfs(void **state)
{
	struct p2ps_doctor_report *r;
	const struct p2ps_finding *f;

	(void)state;
	r = doctor_edited("rtx4090-pair",
			  "echo 2 >" PF0 "/sriov_numvfs && echo 16 >" PF0 "/sriov_totalvfs && "
			  "for fn in 4 5; do d=sys/devices/pci0000:00/0000:00:01.1/0000:01:00.$fn; mkdir -p $d && "
			  "echo 0x10de >$d/vendor && echo 0x2684 >$d/device && echo 0x030200 >$d/class && "
			  "ln -s ../0000:01:00.0 $d/physfn && "
			  "printf '/sys/bus/pci/devices/0000:01:00.%s\\t../../../devices/pci0000:00/0000:00:01.1/0000:01:00.%s\\t/%s\\n' "
			  "$fn $fn $d >>.symlinks; done");
	assert_int_equal(r->nr_gpus, 2);
	assert_int_equal(r->nr_pairs, 1);
	f = finding(r, "sriov", NULL);
	assert_non_null(strstr(f->detail, "2 SR-IOV virtual functions"));
	assert_non_null(strstr(f->detail, "0000:01:00.4 (of 0000:01:00.0)"));
	assert_int_equal(r->nr_fail, 0);
	p2ps_doctor_free(r);
}

/* A GPU behind Intel VMD: its root port in domain 10000, the vmd driver's. */
static void test_vmd(void **state)
{
	struct p2ps_doctor_report *r;
	const struct p2ps_finding *f;

	(void)state;
	r = doctor_edited("rtx4090-pair",
			  "v=sys/devices/pci0000:00/0000:00:0e.0 && mkdir -p $v/pci10000:e0/10000:e0:06.0 && "
			  "echo 0x8086 >$v/vendor && echo 0x467f >$v/device && echo 0x010400 >$v/class && "
			  "mv " PF0 " $v/pci10000:e0/10000:e0:06.0/10000:e1:00.0 && "
			  "sed -i 's|^/sys/bus/pci/devices/0000:01:00.0\\t.*|/sys/bus/pci/devices/10000:e1:00.0\\t"
			  "../../../devices/pci0000:00/0000:00:0e.0/pci10000:e0/10000:e0:06.0/10000:e1:00.0\\t"
			  "/sys/devices/pci0000:00/0000:00:0e.0/pci10000:e0/10000:e0:06.0/10000:e1:00.0|' .symlinks");
	assert_int_equal(r->nr_gpus, 2);
	f = finding(r, "vmd", "10000:e1:00.0");
	assert_int_equal(f->verdict, P2PS_V_WARN);
	assert_non_null(strstr(f->detail, "endpoint 0000:00:0e.0, domain 10000"));
	assert_non_null(strstr(f->remedy, "VMD"));
	p2ps_doctor_free(r);
}

/*
 * numa_node -1 on a two-socket host: the kernel then lists every CPU as
 * the device's local ones, so the fallback can't tell; not "one socket".
 */
static void test_numa_unknown_two_sockets(void **state)
{
	struct p2ps_doctor_report *r;
	const struct p2ps_finding *f;

	(void)state;
	r = doctor_edited("epyc-hostbridges",
			  "find sys/devices -name numa_node | while read f; do echo -1 >$f; "
			  "echo 0-15 >$(dirname $f)/local_cpulist; done && " CPU_SOCKETS);
	f = finding(r, "pcie-path", "0000:41:00.0 0000:c1:00.0");
	assert_int_equal(f->verdict, P2PS_V_WARN);
	assert_null(strstr(f->detail, "one AMD socket"));
	assert_non_null(strstr(f->detail, "socket unknown on this 2-socket host"));
	assert_non_null(strstr(f->remedy, "NUMA"));
	p2ps_doctor_free(r);
}

/*
 * Kernel state doctor read from nowhere: kprobes compiled in but
 * disabled (debugfs), lockdown= and nomodule on the command line.  Host
 * blockers: the pair's row says blocked too, not bar1.
 */
static void test_kernel_switches(void **state)
{
	struct p2ps_doctor_report *r;
	struct p2ps_doctor_digest *d;
	const struct p2ps_finding *f;
	size_t i, n;

	(void)state;
	r = doctor_edited("rtx4090-pair", "mkdir -p sys/kernel/debug/kprobes && echo 0 >sys/kernel/debug/kprobes/enabled");
	f = finding(r, "kprobes", NULL);
	assert_int_equal(f->verdict, P2PS_V_FAIL);
	assert_non_null(strstr(f->remedy, "echo 1 > /sys/kernel/debug/kprobes/enabled"));
	assert_int_equal(r->nr_p2p_possible, 0);
	assert_int_equal(r->pairs[0].p2p, P2PS_P2P_NONE);
	assert_non_null(strstr(r->pairs[0].p2p_why, "blocked: host: kprobes"));
	p2ps_doctor_free(r);
	r = doctor_edited("rtx4090-pair", "rm sys/kernel/security/lockdown && sed -i 's/$/ lockdown=integrity/' proc/cmdline");
	f = finding(r, "lockdown", NULL);
	assert_int_equal(f->verdict, P2PS_V_FAIL);
	assert_string_equal(f->source, "/proc/cmdline");
	/* the token as the command line has it, where it is written; signing: a fix of its own */
	assert_string_equal(f->remedy, "in /etc/default/grub delete lockdown=integrity from "
			    "GRUB_CMDLINE_LINUX=\"...\" (and GRUB_CMDLINE_LINUX_DEFAULT=\"...\"), then "
			    "update-grub (grub2-mkconfig -o /boot/grub2/grub.cfg elsewhere) and reboot\n"
			    "or install it through DKMS (the p2p-shim-dkms package), which signs it, "
			    "then enrol DKMS's key: mokutil --import /var/lib/dkms/mok.pub (a one-time "
			    "password), reboot, in MokManager Enroll MOK, Continue, Yes, the password");
	assert_int_equal(p2ps_doctor_digest(r, &d), 0);
	for (i = n = 0; i < d->nr_remedies; i++)
		if (!strcmp(d->remedies[i].who, "lockdown")) {
			assert_null(strchr(d->remedies[i].remedy, '\n'));
			n++;
		}
	assert_int_equal(n, 2);
	p2ps_doctor_digest_free(d);
	p2ps_doctor_free(r);
	/* sig_enforce from the command line: the MOK steps, and where the token is written */
	r = doctor_edited("rtx4090-pair", "mkdir -p sys/module/module/parameters && "
			  "echo Y >sys/module/module/parameters/sig_enforce && "
			  "sed -i 's/$/ module.sig_enforce=1/' proc/cmdline");
	f = finding(r, "sig-enforce", NULL);
	assert_int_equal(f->verdict, P2PS_V_FAIL);
	assert_non_null(strstr(f->remedy, "mokutil --import /var/lib/dkms/mok.pub"));
	assert_non_null(strstr(f->remedy, "\nor in /etc/default/grub delete module.sig_enforce=1 from "
			       "GRUB_CMDLINE_LINUX=\"...\""));
	p2ps_doctor_free(r);
	r = doctor_edited("rtx4090-pair", "sed -i 's/$/ nomodule=1/' proc/cmdline");
	f = finding(r, "modules-disabled", NULL);
	assert_int_equal(f->verdict, P2PS_V_FAIL);
	assert_non_null(strstr(f->detail, "nomodule=1"));
	assert_non_null(strstr(f->remedy, "in /etc/default/grub delete nomodule=1 from GRUB_CMDLINE_LINUX=\"...\""));
	assert_int_equal(r->pairs[0].p2p, P2PS_P2P_NONE);
	p2ps_doctor_free(r);
}

/* The user's own ForceP2P=0 (read and write DISABLE): DISABLED_BY_REGKEY. */
static void test_user_force_p2p_off(void **state)
{
	struct p2ps_doctor_report *r;
	const struct p2ps_finding *f;

	(void)state;
	r = doctor_edited("rtx4090-pair", "sed -i 's/^RegistryDwords: .*/RegistryDwords: \"ForceP2P=0\"/' proc/driver/nvidia/params");
	assert_int_equal(r->pairs[0].p2p, P2PS_P2P_NONE);
	f = finding(r, "p2p", PAIR);
	assert_int_equal(f->verdict, P2PS_V_FAIL);
	assert_non_null(strstr(f->detail, "ForceP2P=0x0"));
	assert_non_null(strstr(f->remedy, "take ForceP2P out of NVreg_RegistryDwords"));
	p2ps_doctor_free(r);
	/* reads on, writes on: no finding against it */
	r = doctor_edited("rtx4090-pair", "sed -i 's/^RegistryDwords: .*/RegistryDwords: \"ForceP2P=0x11\"/' proc/driver/nvidia/params");
	assert_int_equal(r->pairs[0].p2p, P2PS_P2P_BAR1);
	p2ps_doctor_free(r);
}

/* NCCL's own configuration files turning P2P off. */
static void test_nccl_conf(void **state)
{
	struct p2ps_doctor_report *r;
	const struct p2ps_finding *f;

	(void)state;
	r = doctor_edited("rtx4090-pair", "mkdir -p etc home/ana && echo NCCL_P2P_DISABLE=1 >etc/nccl.conf && "
			  "printf '# mine\\nNCCL_P2P_LEVEL = LOC\\n' >home/ana/.nccl.conf");
	assert_int_equal(count_check(r, "nccl-conf"), 2);
	f = finding(r, "nccl-conf", NULL);
	assert_int_equal(f->verdict, P2PS_V_WARN);
	assert_non_null(strstr(f->detail, "NCCL_P2P_LEVEL=LOC in /home/ana/.nccl.conf"));
	p2ps_doctor_free(r);
}

/* AER correctable errors piling up on the bridge above a GPU (a riser). */
static void test_aer(void **state)
{
	struct p2ps_doctor_report *r;
	const struct p2ps_finding *f;

	(void)state;
	r = doctor_edited("rtx4090-pair",
			  "for d in sys/devices/pci0000:00/0000:00:01.1 " PF0 " " PF1 "; do "
			  "printf 'RxErr 0\\nBadTLP 0\\nBadDLLP 0\\nRollover 0\\nTimeout 0\\nNonFatalErr 0\\n"
			  "CorrIntErr 0\\nHeaderOF 0\\nTOTAL_ERR_COR 0\\n' >$d/aer_dev_correctable; done && "
			  "sed -i 's/^BadTLP 0/BadTLP 4711/; s/^TOTAL_ERR_COR 0/TOTAL_ERR_COR 4711/' "
			  "sys/devices/pci0000:00/0000:00:01.1/aer_dev_correctable");
	f = finding(r, "aer", GPU0);
	assert_int_equal(f->verdict, P2PS_V_WARN);
	assert_non_null(strstr(f->detail, "0000:00:01.1 4711"));
	assert_int_equal(verdict(r, "aer", GPU1), P2PS_V_OK);
	p2ps_doctor_free(r);
}

/* nvidia loaded, nvidia-uvm not; nvidia-smi's version mismatch after an upgrade. */
static void test_uvm_and_mismatch(void **state)
{
	struct p2ps_doctor_opts o = { 0 };
	struct p2ps_doctor_report *r;
	char root[512];

	(void)state;
	r = doctor_edited("rtx4090-pair", "sed -i '/^nvidia_uvm /d' proc/modules");
	assert_int_equal(verdict(r, "nvidia-uvm", NULL), P2PS_V_WARN);
	p2ps_doctor_free(r);
	r = doctor("rtx4090-pair", NULL);
	assert_null(p2ps_doctor_find(r, "nvidia-uvm", NULL));
	p2ps_doctor_free(r);
	snprintf(root, sizeof(root), "%s/rtx4090-pair/root", FIXTURES);
	o.root = root;
	o.smi_error = "nvidia-smi topo -m: Failed to initialize NVML: Driver/library version mismatch";
	r = NULL;
	assert_int_equal(p2ps_doctor(&o, &r), 0);
	assert_int_equal(verdict(r, "nvml", NULL), P2PS_V_FAIL);
	assert_non_null(strstr(finding(r, "nvml", NULL)->remedy, "reboot"));
	assert_int_equal(r->pairs[0].p2p, P2PS_P2P_NONE);
	p2ps_doctor_free(r);
}

/* NCCL in ~/venvs/NAME and in a project's .venv. */
static void test_nccl_venvs(void **state)
{
	struct p2ps_doctor_report *r;

	(void)state;
	r = doctor_edited("rtx4090-pair",
			  NCCL_LIB("home/ana/venvs/llm/lib/python3.12/site-packages/nvidia/nccl/lib", "2.21.5") " && "
			  NCCL_LIB("home/ana/chat/.venv/lib/python3.11/site-packages/nvidia/nccl/lib", "2.26.2"));
	assert_int_equal(nccl_with(r, "/home/ana/venvs/llm/lib/python3.12/")->verdict, P2PS_V_WARN);
	assert_int_equal(nccl_with(r, "/home/ana/chat/.venv/lib/python3.11/")->verdict, P2PS_V_WARN);
	p2ps_doctor_free(r);
}

/* PyTorch's expandable_segments: custom all-reduce's 'invalid argument' (FIELD.md N19). */
static void test_expandable_segments(void **state)
{
	struct p2ps_doctor_report *r;
	const struct p2ps_finding *f;

	(void)state;
	r = doctor_edited("rtx4090-pair", "mkdir -p etc home/ana && "
			  "echo 'PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True' >etc/environment && "
			  "echo '# export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True' >home/ana/.bashrc");
	f = finding(r, "alloc-conf", NULL);
	assert_int_equal(f->verdict, P2PS_V_WARN);
	assert_string_equal(f->source, "/etc/environment");	/* the comment in .bashrc is not */
	assert_non_null(strstr(f->detail, "invalid argument"));
	p2ps_doctor_free(r);
}

static void test_bad_root(void **state)
{
	struct p2ps_doctor_opts o = { .root = "/nonexistent/root" };
	struct p2ps_doctor_report *r = NULL;

	(void)state;
	assert_int_equal(p2ps_doctor(&o, &r), -ENOENT);
	assert_null(r);
	assert_string_equal(p2ps_verdict_name(P2PS_V_FAIL), "fail");
	assert_string_equal(p2ps_pcie_path_name(P2PS_PATH_SWITCH), "common switch");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_4090_pair),
		cmocka_unit_test(test_small_bar),
		cmocka_unit_test(test_proprietary),
		cmocka_unit_test(test_no_kprobes),
		cmocka_unit_test(test_h200_nvlink),
		cmocka_unit_test(test_5090_pair),
		cmocka_unit_test(test_5090_pair_noforce),
		cmocka_unit_test(test_5090_pair_aperture),
		cmocka_unit_test(test_registry_keys),
		cmocka_unit_test(test_5090_pair_per_device),
		cmocka_unit_test(test_595_per_device),
		cmocka_unit_test(test_5090_forced),
		cmocka_unit_test(test_4090_display),
		cmocka_unit_test(test_nvlink_forced_type),
		cmocka_unit_test(test_nvlink_odd_version),
		cmocka_unit_test(test_nvlink_per_device),
		cmocka_unit_test(test_4090d_48g),
		cmocka_unit_test(test_3090_4090),
		cmocka_unit_test(test_ioh_split),
		cmocka_unit_test(test_550_cards),
		cmocka_unit_test(test_ext_cap),
		cmocka_unit_test(test_acs),
		cmocka_unit_test(test_acs_setpci),
		cmocka_unit_test(test_acs_param),
		cmocka_unit_test(test_remedy_lines),
		cmocka_unit_test(test_link),
		cmocka_unit_test(test_numa),
		cmocka_unit_test(test_numa_cpulist),
		cmocka_unit_test(test_vm),
		cmocka_unit_test(test_display),
		cmocka_unit_test(test_nccl),
		cmocka_unit_test(test_nccl_places),
		cmocka_unit_test(test_nccl_p2p_level),
		cmocka_unit_test(test_vllm),
		cmocka_unit_test(test_real_symlinks),
		cmocka_unit_test(test_read_regular_only),
		cmocka_unit_test(test_vllm_fifo),
		cmocka_unit_test(test_root_escape),
		cmocka_unit_test(test_deep_tree),
		cmocka_unit_test(test_cmdline_iommu),
		cmocka_unit_test(test_iommu_facts),
		cmocka_unit_test(test_bound_driver),
		cmocka_unit_test(test_host_cpu_parse),
		cmocka_unit_test(test_readrule),
		cmocka_unit_test(test_driver_lock),
		cmocka_unit_test(test_bar1_reads),
		cmocka_unit_test(test_no_profile),
		cmocka_unit_test(test_loaded_signed),
		cmocka_unit_test(test_signed_module),
		cmocka_unit_test(test_summary),
		cmocka_unit_test(test_digest),
		cmocka_unit_test(test_sanitize),
		cmocka_unit_test(test_bad_root),
		cmocka_unit_test(test_module_bomb),
		cmocka_unit_test(test_symlinks_large),
		cmocka_unit_test(test_node_not_opened),
		cmocka_unit_test(test_sriov_vfs),
		cmocka_unit_test(test_vmd),
		cmocka_unit_test(test_numa_unknown_two_sockets),
		cmocka_unit_test(test_kernel_switches),
		cmocka_unit_test(test_user_force_p2p_off),
		cmocka_unit_test(test_nccl_conf),
		cmocka_unit_test(test_aer),
		cmocka_unit_test(test_uvm_and_mismatch),
		cmocka_unit_test(test_nccl_venvs),
		cmocka_unit_test(test_expandable_segments),
	};

	return cmocka_run_group_tests_name("doctor", tests, NULL, NULL);
}
