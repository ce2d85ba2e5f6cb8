// SPDX-License-Identifier: GPL-2.0
/* p2pctl report on captured trees: sections, the JSON twin, redaction. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "p2pctl.h"
#include "redact.h"

#include "p2pctl_run.h"

#define H200 FIXTURES "/h200-nvlink-580/root"

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "r");
	char *s;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	s = slurp(f);
	fclose(f);
	return s;
}

/* -o FILE: text and FILE.json, identifiers replaced, what was not read listed */
static void test_report_files(void **state)
{
	char tmpl[] = "/tmp/p2ps-report-XXXXXX", path[128], jpath[160];
	const char *dir = mkdtemp(tmpl);
	json_object *j, *sec, *doc, *o;
	char *text;
	size_t i;
	bool found = false;

	(void)state;
	assert_non_null(dir);
	snprintf(path, sizeof(path), "%s/report.txt", dir);
	snprintf(jpath, sizeof(jpath), "%s.json", path);
	assert_int_equal(run("report", "--root", H200, "-o", path, NULL), 0);
	assert_non_null(strstr(out_text, "report.txt.json"));
	text = read_text(path);
	/* the sections a bug report needs */
	assert_non_null(strstr(text, "== versions"));
	assert_non_null(strstr(text, "p2pctl " P2PS_VERSION));
	assert_non_null(strstr(text, "== kernel"));
	assert_non_null(strstr(text, "6.18.44-fc-v657-gpu"));
	assert_non_null(strstr(text, "580.159.04"));
	assert_non_null(strstr(text, "== doctor: p2pctl doctor (exit status 1)"));
	assert_non_null(strstr(text, "native P2P over NVLink"));
	assert_non_null(strstr(text, "== check: p2pctl check"));
	assert_non_null(strstr(text, "profile: gen-b"));
	assert_non_null(strstr(text, "NV18"));			/* topology */
	/* kernel log: NVRM lines of the capture, not its command line */
	assert_non_null(strstr(text, "NVRM: loading NVIDIA UNIX Open Kernel Module"));
	assert_null(strstr(text, "$ bash -c dmesg"));
	/* UUIDs replaced */
	assert_null(strstr(text, "GPU-411ef592"));
	assert_non_null(strstr(text, "GPU 0: NVIDIA H200 (UUID: GPU-<uuid>)"));
	assert_non_null(strstr(text, "== could not read"));
	assert_non_null(strstr(text, "status: needs the live module"));
	free(text);

	j = json_object_from_file(jpath);
	assert_non_null(j);
	assert_true(json_object_object_get_ex(j, "sections", &sec));
	assert_true(json_object_object_get_ex(sec, "doctor", &doc));
	assert_true(json_object_object_get_ex(doc, "output", &o));
	assert_true(json_object_is_type(o, json_type_object));		/* doctor --json, parsed */
	assert_true(json_object_object_get_ex(o, "checks", &o));
	assert_true(json_object_array_length(o) > 10);
	assert_true(json_object_object_get_ex(doc, "exit_status", &o));
	assert_int_equal(json_object_get_int(o), 1);
	assert_true(json_object_object_get_ex(j, "could_not_read", &o));
	for (i = 0; i < json_object_array_length(o); i++)
		found |= !!strstr(json_object_get_string(json_object_array_get_idx(o, i)), "status");
	assert_true(found);
	assert_true(json_object_object_get_ex(j, "identifiers_removed", &o));
	assert_true(json_object_get_boolean(o));
	assert_null(strstr(json_object_to_json_string_ext(j, JSON_C_TO_STRING_NOSLASHESCAPE), "GPU-6a0f33a9"));
	json_object_put(j);
	unlink(jpath);
	unlink(path);
	rmdir(dir);
}

static void test_report_full_and_usage(void **state)
{
	(void)state;
	assert_int_equal(run("report", "--root", H200, "--full", NULL), 0);
	assert_non_null(strstr(out_text, "GPU-411ef592-ab1a-1f41-c20e-5bacf3284765"));
	assert_int_equal(run("report", "--root", H200, "--json", NULL), 0);
	assert_non_null(strstr(out_text, "\"sections\""));
	assert_null(strstr(out_text, "GPU-411ef592"));
	/* the captured H100: the VM verdict and NCCL reach the report */
	assert_int_equal(run("report", "--root", FIXTURES "/h100-vm-580/root", NULL), 0);
	assert_non_null(strstr(out_text, "virtual machine: CPU flag 'hypervisor'"));
	assert_non_null(strstr(out_text, "NCCL 2.28.3"));
	assert_int_equal(run("report", "--root", "/nonexistent/dir", NULL), P2PCTL_EXIT_USAGE);
	assert_int_equal(run("report", "--json", "-o", "/tmp/x", NULL), P2PCTL_EXIT_USAGE);
	assert_int_equal(run("report", "extra", NULL), P2PCTL_EXIT_USAGE);
}

/* h200-nvlink-580 with the report-identifiers overlay, in a new directory; its root */
static char *identifier_tree(char *dir)
{
	static char root[160];
	char cmd[1024];

	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "cp -r '%s/h200-nvlink-580/root' '%s/h200-nvlink-580/cmd' "
		 "'%s/h200-nvlink-580/driver' '%s' && cp -r '%s/report-identifiers/root' "
		 "'%s/report-identifiers/cmd' '%s'", FIXTURES, FIXTURES, FIXTURES, dir, FIXTURES,
		 FIXTURES, dir);
	assert_int_equal(system(cmd), 0);
	/* the first GPU's fabric GUID and host id: values, as a fabric-attached host prints them */
	snprintf(cmd, sizeof(cmd), "sed -i -e '0,/GPU Fabric GUID .*: N\\/A/s//GPU Fabric GUID : 0x5a1b2c3d4e5f6071/' "
		 "-e '0,/Host ID .*: N\\/A/s//Host ID : 0x00007c3e91a4/' '%s/cmd/nvidia-smi-q.txt'", dir);
	assert_int_equal(system(cmd), 0);
	snprintf(root, sizeof(root), "%s/root", dir);
	return root;
}

static void rm_rf(const char *dir)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* No user, host, home directory, serial number or UUID survives; --full keeps them. */
static void test_report_identifiers(void **state)
{
	static const char *const leaks[] = {
		"alice", "ws-alice-01", "1653924043557", "1653924043501", "48-b0-2d-ff",
		"1324622000123", "GPU-411ef592", "0b7c7a0e-1f3a", "4A:1B:77", "\033",
		/* issue 44: GPU PDI, fabric GUID, host id; IPs and MACs on the command line and in the log */
		"aa6d352d4f85e95e", "5a1b2c3d4e5f6071", "7c3e91a4", "192.168.1.50",
		"52:54:00:12:34:56", "52-54-00-12-34-57", "fd00:1234", "10.42.0.7", "b8:ce:f6:0a",
		"fe80::bace", "10.1.2.3",
		/* host names: ip='s fifth field, hostname=, a domain (domainname, etc/hosts) */
		"wsbox7", "gpu-node-7", "lab.example",
		/* the module signer's name; a home outside /home and its user (/etc/passwd) */
		"Acme GPU Lab", "/data/users", "zelda",
	};
	char tmpl[] = "/tmp/p2ps-report-XXXXXX", path[160], jpath[176];
	const char *root = identifier_tree(tmpl);
	char *text, *json;
	size_t i, nr_leaks = 0;

	(void)state;
	snprintf(path, sizeof(path), "%s/report.txt", tmpl);
	snprintf(jpath, sizeof(jpath), "%s.json", path);
	assert_int_equal(run("report", "--root", root, "-o", path, NULL), 0);
	text = read_text(path);
	json = read_text(jpath);
	for (i = 0; i < sizeof(leaks) / sizeof(leaks[0]); i++) {
		if (strstr(text, leaks[i]) || strstr(json, leaks[i])) {
			print_message("'%s' in the report\n", leaks[i]);
			nr_leaks++;
		}
	}
	assert_int_equal(nr_leaks, 0);
	/* the header says what was replaced */
	assert_non_null(strstr(text, "replaced: UUIDs (<uuid>), serial numbers (<serial>), "
			       "GPU PDIs (<pdi>), fabric GUIDs (<guid>), host ids (<host-id>), "
			       "signing key ids (<key>), module signers (<signer>), "));
	assert_non_null(strstr(text, "MAC addresses (<mac>), "));
	assert_non_null(strstr(text, "home directories (/home/<user>, <home>), "));
	assert_non_null(strstr(text, "; --full keeps them\n"));
	assert_non_null(strstr(text, "(<user>@<host>)"));
	assert_non_null(strstr(text, "/home/<user>/.local/lib/python3.12"));
	assert_non_null(strstr(text, "GPU UUID                                           : GPU-<uuid>"));
	/* the sections a maintainer needs */
	assert_non_null(strstr(text, "== cmdline: cat /proc/cmdline\n"));
	assert_non_null(strstr(text, "root=UUID=<uuid> ro quiet iommu=pt ifname=eth0:<mac> "
			       "ip=<ipv4>::<ipv4>:255.255.255.0:<host>:eth0:none ip=[<ipv6>]::[<ipv6>]:64::eth0:none "
			       "BOOTIF=<mac> ?[2J hostname=<host> systemd.hostname=<host>"));
	/* a netmask, 0.0.0.0, loopback and a version stay; an FQDN goes whole */
	assert_non_null(strstr(text, "NVRM: <host>: mirror.<host> 0.0.0.0 127.0.0.1 version 1.2.3.4 at <ipv4>.\n"));
	assert_non_null(strstr(text, "GPU PDI                                            : <pdi>"));
	assert_non_null(strstr(text, "GPU Fabric GUID : <guid>"));
	assert_non_null(strstr(text, "Host ID : <host-id>"));
	assert_non_null(strstr(text, "RDMA peer <ipv4> (<mac>, <ipv6>) behind iommu"));
	assert_non_null(strstr(text, "<home>/venvs/llm/lib/python3.12"));
	assert_non_null(strstr(text, "== nvidia-params: cat /proc/driver/nvidia/params\n"));
	assert_non_null(strstr(text, "RegistryDwords"));
	assert_non_null(strstr(text, "/etc/modprobe.d/nvidia.conf: options nvidia NVreg_EnableResizableBar=1"));
	assert_null(strstr(text, "blacklist floppy"));
	assert_non_null(strstr(text, "== lspci: lspci -D -vvv (GPUs and the bridges above them)\n"));
	assert_non_null(strstr(text, "0000:00:07.0 3D controller"));
	assert_non_null(strstr(text, "[SN] Serial number: <serial>"));
	assert_null(strstr(text, "Virtio network device"));
	assert_non_null(strstr(text, "== iomem: cat /proc/iomem\n"));
	assert_non_null(strstr(text, "== nvidia-smi-q: nvidia-smi -q\n"));
	assert_non_null(strstr(text, "== dkms: dkms status\np2p-shim/0.9.0"));
	assert_non_null(strstr(text, "== modules: modinfo p2p_shim nvidia (signer, version)\n"));
	assert_non_null(strstr(text, "signer:         <signer>"));
	assert_non_null(strstr(text, "== libcuda\nlibcuda.so.1 => /usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04"));
	/* the kernel log's evidence: IOMMU faults, AER, BAR 1 */
	assert_non_null(strstr(text, "DMAR: [DMA Write NO_PASID] Request device [00:06.0] fault"));
	assert_non_null(strstr(text, "AER: Corrected error"));
	assert_non_null(strstr(text, "BAR 1: no space for"));
	assert_non_null(strstr(text, "can't assign; no space"));
	assert_non_null(strstr(text, "iommu: Default domain type: Translated"));
	assert_non_null(strstr(text, "NVRM: a line with ?[2J an escape"));
	free(text);
	free(json);
	/* --full: as they were (control characters still stripped) */
	assert_int_equal(run("report", "--root", root, "--full", NULL), 0);
	assert_non_null(strstr(out_text, "(alice@ws-alice-01)"));
	assert_non_null(strstr(out_text, "/home/alice/.local"));
	assert_non_null(strstr(out_text, "1324622000123"));
	assert_non_null(strstr(out_text, "ip=192.168.1.50::"));
	assert_non_null(strstr(out_text, "signer:         Acme GPU Lab"));
	assert_null(strstr(out_text, "\033"));
	rm_rf(tmpl);
}

/*
 * Absolute links in a --root tree (for /proc/cmdline, modprobe.d, the
 * capture's command output) point into the tree, never out of it: report
 * reads through the same confined open as doctor (issue 44).
 */
static void test_report_confined(void **state)
{
	char tmpl[] = "/tmp/p2ps-report-XXXXXX", cmd[2048];
	const char *root = identifier_tree(tmpl);

	(void)state;
	snprintf(cmd, sizeof(cmd), "cd '%s' && mkdir -p outside && echo OUTSIDE-CMDLINE >outside/cmdline && "
		 "echo 'options nvidia OUTSIDE-MODPROBE' >outside/evil.conf && "
		 "echo OUTSIDE-SMI >outside/smi.txt && echo OUTSIDE-IOMEM >outside/iomem && "
		 "ln -sfn \"$PWD/outside/cmdline\" root/proc/cmdline && "
		 "ln -sfn \"$PWD/outside/iomem\" root/proc/iomem && "
		 "ln -sfn \"$PWD/outside/evil.conf\" root/etc/modprobe.d/evil.conf && "
		 "ln -sfn \"$PWD/outside/smi.txt\" cmd/nvidia-smi-q.txt", tmpl);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(run("report", "--root", root, NULL), 0);
	assert_null(strstr(out_text, "OUTSIDE-CMDLINE"));
	assert_null(strstr(out_text, "OUTSIDE-MODPROBE"));
	assert_null(strstr(out_text, "OUTSIDE-SMI"));
	assert_null(strstr(out_text, "OUTSIDE-IOMEM"));
	/* the rest of the tree is still read */
	assert_non_null(strstr(out_text, "/etc/modprobe.d/nvidia.conf: options nvidia NVreg_EnableResizableBar=1"));
	rm_rf(tmpl);
}

/*
 * A hung nvidia-smi (and a hung lspci): each is called once, then skipped
 * for the rest of the report, and the report says what it waits for.
 * Counted calls, not seconds (a loaded machine can't make it miss).
 */
static void test_report_hung_tools(void **state)
{
	char tmpl[] = "/tmp/p2ps-report-XXXXXX", cmd[4096], env[1200], calls[200];
	const char *dir = mkdtemp(tmpl);
	char *old_path = strdup(getenv("PATH")), *s;
	int n_smi = 0, n_lspci = 0;

	(void)state;
	assert_non_null(dir);
	snprintf(calls, sizeof(calls), "%s/calls", dir);
	snprintf(cmd, sizeof(cmd), "for t in nvidia-smi lspci; do "
		 "printf '#!/bin/sh\necho %%s >>\"%s\"\nexec sleep 100\n' $t >'%s/'$t && chmod +x '%s/'$t; done",
		 calls, dir, dir);
	assert_int_equal(system(cmd), 0);
	snprintf(env, sizeof(env), "%s:%s", dir, old_path);
	setenv("PATH", env, 1);
	setenv("P2PCTL_CMD_TIMEOUT", "0.2", 1);
	assert_int_equal(run("report", "--no-cuda", NULL), 0);
	unsetenv("P2PCTL_CMD_TIMEOUT");
	setenv("PATH", old_path, 1);
	free(old_path);
	s = read_text(calls);
	for (char *p = s; (p = strstr(p, "nvidia-smi")); p++)
		n_smi++;
	for (char *p = s; (p = strstr(p, "lspci")); p++)
		n_lspci++;
	assert_int_equal(n_smi, 1);
	assert_int_equal(n_lspci, 1);
	assert_non_null(strstr(err_text, "(up to 0.2 s)"));
	assert_non_null(strstr(err_text, "timed out: not called again in this run"));
	free(s);
	rm_rf(dir);
}

/*
 * Sections reach the file as they are gathered: a fake nvidia-smi, run for
 * the "gpus" section, copies the file as it is then (a hang or a reset
 * there would keep that much).
 */
static void test_report_streams(void **state)
{
	char tmpl[] = "/tmp/p2ps-report-XXXXXX", path[160], snap[160], cmd[1024], env[1200];
	const char *dir = mkdtemp(tmpl);
	char *s, *old_path = strdup(getenv("PATH"));

	(void)state;
	assert_non_null(dir);
	snprintf(path, sizeof(path), "%s/report.txt", dir);
	snprintf(snap, sizeof(snap), "%s/snapshot.txt", dir);
	snprintf(cmd, sizeof(cmd), "printf '#!/bin/sh\\n[ \"$1\" = -L ] && cp \"%s\" \"%s\"\\n"
		 "echo \"GPU 0: fake\"\\n' >'%s/nvidia-smi' && chmod +x '%s/nvidia-smi'",
		 path, snap, dir, dir);
	assert_int_equal(system(cmd), 0);
	snprintf(env, sizeof(env), "%s:%s", dir, old_path);
	setenv("PATH", env, 1);
	assert_int_equal(run("report", "-o", path, NULL), 0);
	setenv("PATH", old_path, 1);
	free(old_path);
	s = read_text(snap);
	assert_non_null(strstr(s, "== versions"));
	assert_non_null(strstr(s, "== doctor"));
	assert_null(strstr(s, "== gpus"));
	free(s);
	rm_rf(dir);
}

/* @s with every /home/ana as the capture names it, /home/user1 (in place: same length) */
static char *as_captured(char *s)
{
	char *p;

	while ((p = strstr(s, "/home/ana/"))) {
		memmove(p + 12, p + 10, strlen(p + 10) + 1);
		memcpy(p, "/home/user1/", 12);
	}
	return s;
}

/* doctor's text on @root (its JSON in *@json, without the "root" it names) */
static char *doctor_text(const char *root, char **json)
{
	char *text;
	json_object *j;

	run("doctor", "--root", root, NULL);
	text = malloc(strlen(out_text) * 2 + 1);
	assert_non_null(text);
	strcpy(text, out_text);
	run("doctor", "--root", root, "--json", NULL);
	j = json_tokener_parse(out_text);
	assert_non_null(j);
	json_object_object_del(j, "root");
	*json = malloc(strlen(json_object_to_json_string_ext(j, JSON_C_TO_STRING_NOSLASHESCAPE)) * 2 + 1);
	assert_non_null(*json);
	strcpy(*json, json_object_to_json_string_ext(j, JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(j);
	return text;
}

/*
 * report --capture DIR: a tree in the format doctor --root reads, holding
 * what doctor read; doctor on it says what it says on the original, word
 * for word (a home directory renamed /home/userN), on every kind of
 * fixture (links in .symlinks, switches, ACS, displays, a VM, NCCL and a
 * vLLM cache in a home).
 */
static void test_report_capture(void **state)
{
	static const char *const fixtures[] = {
		"h200-nvlink-580", "h100-vm-580", "rtx4090-pair", "plx-acs", "epyc-hostbridges",
		"rtx4090-display", "rtx5090-forced", "proprietary-550", "ioh-split", "amd-chipset",
	};
	char tmpl[] = "/tmp/p2ps-capture-XXXXXX", root[256], cap[512], capdir[128];
	size_t i;

	(void)state;
	assert_non_null(mkdtemp(tmpl));
	for (i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
		char *t0, *j0, *t1, *j1;

		snprintf(root, sizeof(root), "%s/%s/root", FIXTURES, fixtures[i]);
		snprintf(capdir, sizeof(capdir), "%s/%s", tmpl, fixtures[i]);
		snprintf(cap, sizeof(cap), "%s/root", capdir);
		assert_int_equal(run("report", "--root", root, "--capture", capdir, "-o",
				     "/dev/null", NULL), 0);
		t0 = doctor_text(root, &j0);
		t1 = doctor_text(cap, &j1);
		as_captured(t0);
		as_captured(j0);
		if (strcmp(t0, t1) || strcmp(j0, j1))
			fail_msg("%s: doctor differs on the capture:\n%s\n---\n%s", fixtures[i], t0, t1);
		free(t0);
		free(j0);
		free(t1);
		free(j1);
	}
	/* identifiers: replaced in what the capture holds, unless --full */
	snprintf(root, sizeof(root), "%s/h200-nvlink-580/root", FIXTURES);
	snprintf(capdir, sizeof(capdir), "%s/h200", tmpl);
	assert_int_equal(run("report", "--root", root, "--capture", capdir, "-o", "/dev/null", NULL), 0);
	snprintf(cap, sizeof(cap), "grep -rq 'builder@sandboxing' '%s'", capdir);
	assert_int_not_equal(system(cap), 0);
	snprintf(cap, sizeof(cap), "test -s '%s/cmd/nvidia-smi-topo-m.txt'", capdir);
	assert_int_equal(system(cap), 0);
	/* not over an existing tree */
	assert_int_equal(run("report", "--root", root, "--capture", capdir, "-o", "/dev/null", NULL),
			 P2PCTL_EXIT_USAGE);
	rm_rf(tmpl);
}

/* @path's bytes [@off, @off + @n) are all zero */
static bool zero_at(const char *path, long off, size_t n)
{
	unsigned char b[16];
	FILE *f = fopen(path, "rb");
	bool zero;

	assert_non_null(f);
	assert_int_equal(fseek(f, off, SEEK_SET), 0);
	assert_int_equal(fread(b, 1, n, f), n);
	fclose(f);
	zero = true;
	for (size_t i = 0; i < n; i++)
		zero &= !b[i];
	return zero;
}

/* how often @needle is in @hay */
static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/*
 * report --capture holds no more of a process than doctor reads (the
 * libnccl.so lines of /proc/PID/maps, redacted; nothing of a process that
 * maps none), no identifier of the report's kinds, and config space with
 * the Device Serial Number capability's serial zeroed (issue 44).  Every
 * home (learnt from passwd, /home/NAME, or one of a user passwd does not
 * know, by where a venv sits) becomes one /home/userN in the names and
 * the text alike, so that doctor on the capture still finds the mapped
 * NCCLs; no name and no .symlinks line keeps the user; a text file with a
 * NUL byte is redacted too.
 */
static void test_report_capture_redacted(void **state)
{
	static const char *const leaks[] = {
		"zelda", "secret-merger", "/srv/customer-x", "Acme GPU Lab", "192.168.1.50",
		"aa6d352d4f85e95e", "alice", "ldapbob", "10.99.88.77",
	};
	static const char dsn_port[] = "/root/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:08.0/config";
	char tmpl[] = "/tmp/p2ps-report-XXXXXX", tmpl2[] = "/tmp/p2ps-report-XXXXXX", cap[160];
	char cmd[1024], rep[192], *s, *t0;
	const char *root = identifier_tree(tmpl);
	size_t i, nr_leaks = 0;

	(void)state;
	/* a link in zelda's home, a user passwd lacks (LDAP), a NUL in a text file */
	snprintf(cmd, sizeof(cmd), "cd '%s' && mv data/users/zelda/venvs/llm data/users/zelda/venvs/llm-3.12 && "
		 "ln -s llm-3.12 data/users/zelda/venvs/llm && mkdir -p scratch/ldapbob proc/4244 && "
		 "cp -r data/users/zelda/venvs scratch/ldapbob/ && printf '7f0000000000-7f0000400000 r-xp "
		 "00000000 103:02 5 /scratch/ldapbob/venvs/llm/lib/python3.12/site-packages/nvidia/nccl/lib/"
		 "libnccl.so.2\n' >proc/4244/maps && printf '\\000 ip=10.99.88.77' >>proc/cmdline", root);
	assert_int_equal(system(cmd), 0);
	snprintf(cap, sizeof(cap), "%s/cap", tmpl);
	snprintf(rep, sizeof(rep), "%s/report.txt", tmpl);
	assert_int_equal(run("report", "--root", root, "--capture", cap, "-o", rep, NULL), 0);
	snprintf(cmd, sizeof(cmd), "test ! -e '%s/root/proc/4243/maps'", cap);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s/root/proc/4242/maps", cap);
	s = read_text(cmd);
	assert_non_null(strstr(s, " /home/user"));
	assert_non_null(strstr(s, "/venvs/llm/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2"));
	assert_null(strstr(s, "/usr/bin/python3.12"));
	free(s);
	for (i = 0; i < sizeof(leaks) / sizeof(leaks[0]); i++) {
		snprintf(cmd, sizeof(cmd), "grep -rqaF '%s' '%s' '%s'", leaks[i], cap, rep);
		if (!system(cmd)) {
			print_message("'%s' in the capture or the report\n", leaks[i]);
			nr_leaks++;
		}
		snprintf(cmd, sizeof(cmd), "test -z \"$(find '%s' -path '*%s*')\"", cap, leaks[i]);
		if (system(cmd)) {
			print_message("'%s' in the capture's names\n", leaks[i]);
			nr_leaks++;
		}
	}
	/* doctor on the capture finds the NCCLs it found on the original (3: alice, zelda, ldapbob) */
	run("doctor", "--root", root, NULL);
	t0 = strdup(out_text);
	assert_non_null(t0);
	snprintf(cmd, sizeof(cmd), "%s/root", cap);
	run("doctor", "--root", cmd, NULL);
	if (count(t0, "NCCL 2.26.2") != 3 || count(out_text, "NCCL 2.26.2") != 3) {
		print_message("doctor on the capture:\n%s\n---\non the original:\n%s", out_text, t0);
		nr_leaks++;
	}
	free(t0);
	assert_int_equal(nr_leaks, 0);
	rm_rf(tmpl);

	/*
	 * A switch port's Device Serial Number (extended capability 0x0003 at
	 * 0x100 of plx-acs's downstream port, which doctor reads for ACS; the
	 * fixture's is zero, so a serial is written there): header kept,
	 * serial zeroed; --full keeps it.
	 */
	assert_non_null(mkdtemp(tmpl2));
	snprintf(cap, sizeof(cap), "%s/cap", tmpl2);
	snprintf(cmd, sizeof(cmd), "cp -r '%s/plx-acs/root' '%s' && printf '\\021\\042\\063\\104' | "
		 "dd of='%s%s' bs=1 seek=%d conv=notrunc status=none", FIXTURES, tmpl2, tmpl2, dsn_port, 0x104);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s%s", tmpl2, dsn_port);
	assert_false(zero_at(cmd, 0x104, 8));
	snprintf(cmd, sizeof(cmd), "%s/root", tmpl2);
	assert_int_equal(run("report", "--root", cmd, "--capture", cap, "-o", "/dev/null", NULL), 0);
	snprintf(cmd, sizeof(cmd), "%s%s", cap, dsn_port);
	assert_false(zero_at(cmd, 0x100, 2));
	assert_true(zero_at(cmd, 0x104, 8));
	rm_rf(cap);
	snprintf(cmd, sizeof(cmd), "%s/root", tmpl2);
	assert_int_equal(run("report", "--root", cmd, "--full", "--capture", cap, "-o", "/dev/null", NULL), 0);
	snprintf(cmd, sizeof(cmd), "%s%s", cap, dsn_port);
	assert_false(zero_at(cmd, 0x104, 8));
	rm_rf(tmpl2);
}

/*
 * Live, with the fake libcuda of tests/unit/fakecuda (two GPUs): verify and
 * bench summaries land in the twin as objects, only with --cuda and after
 * the rest; without it (the default, or --no-cuda) they are left out.
 */
static void test_report_cuda(void **state)
{
	json_object *j, *sec, *v, *o;

	(void)state;
	setenv("P2PCTL_LIBCUDA", TOPDIR "/tests/unit/fakecuda/libcuda.so.1", 1);
	/* The fake NCCL (not the machine's own), and verify's ipc child. */
	setenv("P2PCTL_LIBNCCL", TOPDIR "/tests/unit/fakecuda/nccl/libnccl.so.2", 1);
	setenv("P2PCTL_SELF", TOPDIR "/tests/unit/obj/cuda_verify_child", 1);
	assert_int_equal(run("report", "--cuda", "--json", NULL), 0);
	j = json_tokener_parse(out_text);
	assert_non_null(j);
	assert_true(json_object_object_get_ex(j, "sections", &sec));
	assert_true(json_object_object_get_ex(sec, "verify", &v));
	assert_true(json_object_object_get_ex(v, "exit_status", &o));
	assert_int_equal(json_object_get_int(o), 0);
	assert_true(json_object_object_get_ex(v, "output", &o));
	assert_true(json_object_object_get_ex(o, "pairs", &o));
	assert_true(json_object_object_get_ex(sec, "bench", &v));
	assert_true(json_object_object_get_ex(v, "output", &o));
	assert_true(json_object_object_get_ex(o, "matrices", &o));
	json_object_put(j);
	assert_int_equal(run("report", "--no-cuda", NULL), 0);
	assert_non_null(strstr(out_text, "== verify\n(not run (give --cuda))"));
	assert_null(strstr(out_text, "== bench"));
	/* the default: no P2P traffic unless asked for */
	assert_int_equal(run("report", NULL), 0);
	assert_non_null(strstr(out_text, "== verify\n(not run (give --cuda))"));
	assert_null(strstr(out_text, "== bench"));
	/* asked for: verify and bench come after everything else */
	assert_int_equal(run("report", "--cuda", NULL), 0);
	assert_true(strstr(out_text, "== verify") > strstr(out_text, "== kernel-log"));
	unsetenv("P2PCTL_LIBCUDA");
}

/*
 * The table's patterns on single lines (issue 44's review): each input,
 * redacted, is the expected line; every miss is named before failing.
 */
static void test_redact_patterns(void **state)
{
	static const char *const cases[][2] = {
		/* IPv6: at a sentence's end, after a label, before a colon, IPv4-embedded */
		{ "link fe80::1.", "link <ipv6>." },
		{ "gid:fe80:0:0:0:bace:f6ff:fe0a:b0c", "gid:<ipv6>" },
		{ "addr fd00::50: down", "addr <ipv6>: down" },
		{ "to 2001:db8:1::10.0.0.1 ok", "to <ipv6> ok" },
		{ "std::vector", "std::vector" },
		/* MAC: before a colon or a dash; Cisco's dotted form */
		{ "mac 52:54:00:12:34:56: up", "mac <mac>: up" },
		{ "mac 52:54:00:12:34:56-x", "mac <mac>-x" },
		{ "cisco 5254.0012.3456 port", "cisco <mac> port" },
		/* not addresses: any, loopback, masks, versions */
		{ "bind 0.0.0.0 lo 127.0.0.1 mask 255.255.255.0", "bind 0.0.0.0 lo 127.0.0.1 mask 255.255.255.0" },
		{ "version 1.2.3.4, v1.2.3.4, Version: 4.3.2.1", "version 1.2.3.4, v1.2.3.4, Version: 4.3.2.1" },
		{ "at 10.1.2.3.", "at <ipv4>." },
		/* a PDI without 0x; N/A stays */
		{ "GPU PDI : 1234abcd", "GPU PDI : <pdi>" },
		{ "GPU PDI : N/A", "GPU PDI : N/A" },
		/* host names on the command line */
		{ "ip=10.0.0.2::10.0.0.1:255.255.255.0:node-a:eth0:off",
		  "ip=<ipv4>::<ipv4>:255.255.255.0:<host>:eth0:off" },
		{ "hostname=gpu7 systemd.hostname=gpu7.corp", "hostname=<host> systemd.hostname=<host>" },
	};
	struct p2pctl_redact red;
	size_t i, misses = 0;

	(void)state;
	assert_int_equal(p2pctl_redact_init(&red, false), 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *s = p2pctl_redact_text(&red, cases[i][0]);

		assert_non_null(s);
		if (strcmp(s, cases[i][1])) {
			print_message("'%s' -> '%s', not '%s'\n", cases[i][0], s, cases[i][1]);
			misses++;
		}
		free(s);
	}
	p2pctl_redact_free(&red);
	assert_int_equal(misses, 0);
}

/* The work of redacting @n bytes of @line repeated (each checked to be @want). */
static size_t redact_work(const char *line, const char *want, size_t n)
{
	size_t ll = strlen(line), wl = strlen(want), lines = n / ll, i, work;
	struct p2pctl_redact red;
	char *in = malloc(lines * ll + 1), *s;

	assert_non_null(in);
	for (i = 0; i < lines; i++)
		memcpy(in + i * ll, line, ll);
	in[lines * ll] = '\0';
	assert_int_equal(p2pctl_redact_init(&red, false), 0);
	s = p2pctl_redact_text(&red, in);
	assert_non_null(s);
	assert_int_equal(strlen(s), lines * wl);
	for (i = 0; i < lines && !memcmp(s + i * wl, want, wl); i++)
		;
	assert_int_equal(i, lines);
	work = red.scanned;
	free(s);
	free(in);
	p2pctl_redact_free(&red);
	return work;
}

/*
 * Redaction is linear: the bytes handed to regexec (each call may read its
 * string to the end, as the sanitizers' regexec does with strlen) grow as
 * the text, not as its square.  Four times the text: at most four times
 * the work (a pass that gives each call the rest of the text: about
 * sixteen).  Counted, not timed, so a busy machine passes.
 */
static void test_redact_linear(void **state)
{
	static const char line[] = "1.1.1.1 00:11:22:33:44:55 fe80::1 /home/ann ann@x.org 10.0.0.1\n";
	static const char want[] = "<ipv4> <mac> <ipv6> /home/<user> <user>@<host> <ipv4>\n";
	size_t w1, w4;

	(void)state;
	w1 = redact_work(line, want, (size_t)64 << 10);
	w4 = redact_work(line, want, (size_t)256 << 10);
	assert_true(w1 > 0);
	if (w4 > 4 * w1 + 4096)
		fail_msg("redacting 4x the text gave regexec %zu bytes, %.1fx the %zu of 1x", w4,
			 (double)w4 / (double)w1, w1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_report_files),
		cmocka_unit_test(test_report_full_and_usage),
		cmocka_unit_test(test_report_identifiers),
		cmocka_unit_test(test_report_streams),
		cmocka_unit_test(test_report_confined),
		cmocka_unit_test(test_report_hung_tools),
		cmocka_unit_test(test_report_capture),
		cmocka_unit_test(test_report_capture_redacted),
		cmocka_unit_test(test_report_cuda),
		cmocka_unit_test(test_redact_patterns),
		cmocka_unit_test(test_redact_linear),
	};

	if (getenv("CMOCKA_FILTER"))
		cmocka_set_test_filter(getenv("CMOCKA_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
