// SPDX-License-Identifier: GPL-2.0
/*
 * p2pctl in a new user's first hour: the silent failures an outside tester
 * found with bad inputs (each case failed before its fix).  A command that
 * cannot do what it says fails, says why, and with --json says it in JSON.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <json-c/json.h>

#include "p2pctl.h"

#include "p2pctl_run.h"

#define KALLSYMS FIXTURES "/h200-nvlink-580/driver/kallsyms-nvidia.txt.gz"

/* Run p2pctl with its standard output on /dev/full (a full disk or pipe). */
static int run_full(const char *first, ...)
{
	char *argv[32];
	int argc = 0, rc;
	va_list ap;
	FILE *o = fopen("/dev/full", "w"), *e = tmpfile();

	assert_non_null(o);
	assert_non_null(e);
	argv[argc++] = (char *)"p2pctl";
	va_start(ap, first);
	for (const char *a = first; a && argc < 31; a = va_arg(ap, const char *))
		argv[argc++] = (char *)a;
	va_end(ap);
	argv[argc] = NULL;
	p2pctl_out = o;
	p2pctl_err = e;
	rc = p2pctl_main(argc, argv);
	free(err_text);
	err_text = slurp(e);
	fclose(o);
	fclose(e);
	return rc;
}

static char *mktmpdir(void)
{
	char *d = strdup("/tmp/p2pctl-firsthour-XXXXXX");

	assert_non_null(d);
	assert_non_null(mkdtemp(d));
	return d;
}

static void rmtree(char *d)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d);
	assert_int_equal(system(cmd), 0);
	free(d);
}

/*
 * config --gpus with as many GPUs as the module takes (NV_MAX_DEVICES, 32),
 * each in its longest form: the whole list is written, or nothing is.
 */
static void test_config_gpus_long_list(void **state)
{
	char list[32 * 17 + 1] = "", want[sizeof(list) + 64], path[PATH_MAX], *dir = mktmpdir(), *text;
	size_t n = 0;
	FILE *f;

	(void)state;
	for (unsigned int i = 0; i < 32; i++)
		n += (size_t)snprintf(list + n, sizeof(list) - n, "%sffffffff:%02x:1f.0", i ? "," : "", i);
	snprintf(want, sizeof(want), "options p2p-shim enable=1 registry_gpus=%s\n", list);
	assert_int_equal(run("config", "--gpus", list, NULL), 0);
	assert_non_null(strstr(out_text, want));
	assert_non_null(strstr(out_text, "options nvidia NVreg_EnableResizableBar=1\n"));
	assert_int_equal(run("config", "--write", "--root", dir, "--gpus", list, NULL), 0);
	snprintf(path, sizeof(path), "%s/etc/modprobe.d/p2p-shim.conf", dir);
	f = fopen(path, "r");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	text = slurp(f);
	fclose(f);
	assert_non_null(strstr(text, want));
	free(text);
	rmtree(dir);
}

/* config names the driver version as check does: --driver-version (--driver: the old name). */
static void test_config_driver_version(void **state)
{
	(void)state;
	assert_int_equal(run("config", "--registry", "--driver-version", "580.142", NULL), 0);
	assert_non_null(strstr(out_text, "NVreg_RegistryDwords=\"ForceP2P=0x211;RMPcieP2PType=0x1\""));
	assert_int_equal(run("config", "--registry", "--driver", "580.142", NULL), 0);
	assert_int_equal(run("config", "--driver-version", "580.142", NULL), P2PCTL_EXIT_USAGE);
	assert_non_null(strstr(err_text, "--driver-version needs --registry"));
}

/* config --remove: the file config --write wrote is gone; twice is no error. */
static void test_config_remove(void **state)
{
	char path[PATH_MAX], *dir = mktmpdir();

	(void)state;
	assert_int_equal(run("config", "--write", "--root", dir, "--registry", "--driver-version", "580.142",
			     NULL), 0);
	snprintf(path, sizeof(path), "%s/etc/modprobe.d/p2p-shim.conf", dir);
	assert_int_equal(access(path, F_OK), 0);
	assert_int_equal(run("config", "--remove", "--root", dir, NULL), 0);
	assert_non_null(strstr(out_text, "removed "));
	assert_non_null(strstr(out_text, "update-initramfs -u"));
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(run("config", "-x", "--root", dir, NULL), 0);
	assert_non_null(strstr(out_text, "nothing to remove"));
	assert_int_equal(run("config", "--remove", "--write", NULL), P2PCTL_EXIT_USAGE);
	assert_int_equal(run("config", "--remove", "--gpus", "03:00.0", NULL), P2PCTL_EXIT_USAGE);
	rmtree(dir);
}

/*
 * config --write that cannot finish (a full disk: here a file size limit)
 * keeps the old file whole and leaves nothing beside it; it used to leave
 * it truncated, and so "edited".
 */
/* The whole file at @path, NUL-terminated. */
static char *read_whole(const char *path)
{
	FILE *f = fopen(path, "r");
	char *s;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	s = slurp(f);
	fclose(f);
	return s;
}

static void test_config_write_atomic(void **state)
{
	char path[PATH_MAX], cmd[PATH_MAX + 64], *dir = mktmpdir(), *before, *after;
	struct rlimit old, lim;

	(void)state;
	assert_int_equal(run("config", "--write", "--root", dir, NULL), 0);
	snprintf(path, sizeof(path), "%s/etc/modprobe.d/p2p-shim.conf", dir);
	before = read_whole(path);
	assert_non_null(before);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = 400;	/* the new file is over 600 bytes; the messages fit */
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	assert_int_not_equal(run("config", "--write", "--root", dir, "--registry",
				 "--driver-version", "580.142", NULL), 0);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_DFL);
	after = read_whole(path);
	assert_non_null(after);
	assert_string_equal(after, before);
	snprintf(cmd, sizeof(cmd), "test $(ls -A '%s/etc/modprobe.d' | wc -l) -eq 1", dir);
	assert_int_equal(system(cmd), 0);
	free(before);
	free(after);
	rmtree(dir);
}

/* A full standard output is an error, for every command that prints. */
static void test_stdout_full(void **state)
{
	(void)state;
	assert_int_equal(run_full("config", NULL), P2PCTL_EXIT_NOT_MET);
	assert_non_null(strstr(err_text, "standard output"));
	assert_int_equal(run_full("config", "--help", NULL), P2PCTL_EXIT_NOT_MET);
	assert_int_equal(run_full("check", "-k", KALLSYMS, "-d", "580.159.04", NULL),
			 P2PCTL_EXIT_NOT_MET);
	assert_non_null(strstr(err_text, "standard output"));
	assert_int_equal(run_full("check", "--json", "-k", KALLSYMS, "-d", "580.159.04", NULL),
			 P2PCTL_EXIT_NOT_MET);
	assert_int_equal(run_full("version", NULL), P2PCTL_EXIT_NOT_MET);
	assert_int_equal(run_full("--help", NULL), P2PCTL_EXIT_NOT_MET);
	/* what already failed keeps its own status */
	assert_int_equal(run_full("config", "--bogus", NULL), P2PCTL_EXIT_USAGE);
}

/* report -o FILE: a FILE that cannot take the report is no "wrote". */
static void test_report_output_full(void **state)
{
	(void)state;
	assert_int_equal(run("report", "--no-cuda", "-o", "/dev/full", NULL), P2PCTL_EXIT_NOT_MET);
	/* nor a twin beside it (as root, before the fix: /dev/full.json) */
	assert_int_equal(access("/dev/full.json", F_OK), -1);
	assert_null(strstr(out_text, "wrote"));
	assert_non_null(strstr(err_text, "/dev/full"));
}

/* Empty paths are usage errors, before anything is read or written. */
static void test_empty_paths(void **state)
{
	(void)state;
	assert_int_equal(run("report", "--capture", "", NULL), P2PCTL_EXIT_USAGE);
	assert_non_null(strstr(err_text, "--capture"));
	assert_int_equal(run("report", "--output", "", NULL), P2PCTL_EXIT_USAGE);
	assert_non_null(strstr(err_text, "--output"));
}

/*
 * check -k GOOD -u BAD: a BAD that is there but no nvidia-uvm leaves the
 * profile's verdict standing (the UVM peer set does not decide the exit
 * status, p2pctl(8)); the set is "not checked", naming the file.  A BAD
 * that does not exist (a typo) is an error of its own, naming it, not GOOD.
 */
static void test_check_bad_uvm_module(void **state)
{
	char bad[] = "/tmp/p2pctl-uvm-XXXXXX";
	json_object *o, *v;
	int fd = mkstemp(bad);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "not an ELF file\n", 16), 16);
	close(fd);
	assert_int_equal(run("check", "-k", KALLSYMS, "-d", "580.159.04", "-u", bad, NULL), 0);
	assert_non_null(strstr(out_text, "not checked"));
	assert_non_null(strstr(out_text, bad));
	assert_null(strstr(err_text, KALLSYMS));
	assert_int_equal(run("check", "--json", "-k", KALLSYMS, "-d", "580.159.04", "-u", bad, NULL), 0);
	o = json_tokener_parse(out_text);
	assert_non_null(o);
	assert_true(json_object_object_get_ex(o, "supported", &v));
	assert_true(json_object_get_boolean(v));
	json_object_put(o);
	unlink(bad);
	/* not there at all */
	assert_int_equal(run("check", "-k", KALLSYMS, "-d", "580.159.04", "-u", "/nonexistent/nvidia-uvm.ko",
			     NULL), P2PCTL_EXIT_NOT_MET);
	assert_non_null(strstr(err_text, "--uvm-module /nonexistent/nvidia-uvm.ko: No such file or directory"));
	assert_null(strstr(err_text, KALLSYMS));
	assert_int_equal(run("check", "-u", "/typo", NULL), P2PCTL_EXIT_NOT_MET);
}

/* check --module on a cut-off ELF file: "truncated", not "stripped". */
static void test_check_truncated_elf(void **state)
{
	char path[] = "/tmp/p2pctl-truncated-XXXXXX";
	int fd = mkstemp(path);
	FILE *in = fopen(TOPDIR "/tools/p2pctl", "r");
	char buf[65536];
	size_t n, total = 0;
	struct stat st;

	(void)state;
	assert_true(fd >= 0);
	assert_non_null(in);
	assert_int_equal(fstat(fileno(in), &st), 0);
	/* the first half: the ELF header, its section headers cut away */
	while (total < (size_t)st.st_size / 2 && (n = fread(buf, 1, sizeof(buf), in)) > 0) {
		assert_int_equal(write(fd, buf, n), (ssize_t)n);
		total += n;
	}
	fclose(in);
	close(fd);
	assert_int_equal(run("check", "--module", path, NULL), P2PCTL_EXIT_NOT_MET);
	assert_non_null(strstr(err_text, "truncated"));
	assert_null(strstr(err_text, "stripped"));
	unlink(path);
}

/* doctor --root must name a captured tree, not a file or an empty directory. */
static void test_doctor_root_not_a_tree(void **state)
{
	char *dir = mktmpdir();

	(void)state;
	assert_int_equal(run("doctor", "--root", "/etc/passwd", NULL), P2PCTL_EXIT_USAGE);
	assert_non_null(strstr(err_text, "not a directory"));
	assert_int_equal(run("doctor", "--root", dir, NULL), P2PCTL_EXIT_USAGE);
	assert_non_null(strstr(err_text, "no captured host"));
	assert_null(strstr(out_text, "VERDICT"));
	rmtree(dir);
}

/* doctor's "initramfs" finding on ROOT: its verdict and detail ("" if none). */
static const char *initramfs_finding(const char *root, char *detail, size_t len)
{
	static char verdict[16];
	json_object *o, *a, *f, *v;

	verdict[0] = '\0';
	detail[0] = '\0';
	run("doctor", "--json", "--root", root, NULL);
	o = json_tokener_parse(out_text);
	assert_non_null(o);
	assert_true(json_object_object_get_ex(o, "checks", &a));
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		f = json_object_array_get_idx(a, i);
		assert_true(json_object_object_get_ex(f, "check", &v));
		if (strcmp(json_object_get_string(v), "initramfs"))
			continue;
		assert_true(json_object_object_get_ex(f, "verdict", &v));
		snprintf(verdict, sizeof(verdict), "%s", json_object_get_string(v));
		assert_true(json_object_object_get_ex(f, "detail", &v));
		snprintf(detail, len, "%s", json_object_get_string(v));
	}
	json_object_put(o);
	return verdict;
}

/*
 * nvidia in the initramfs (early KMS) without p2p-shim and its modprobe.d
 * file: the GPUs come up stale, and doctor says so.  The image as Debian
 * builds it: an uncompressed cpio (microcode), then a compressed one.
 */
static void test_doctor_initramfs(void **state)
{
	char *dir = mktmpdir(), cmd[4096], detail[512];

	(void)state;
	snprintf(cmd, sizeof(cmd),
		 "set -e; cd '%s'; mkdir -p proc/sys/kernel etc boot early/kernel/x86/microcode "
		 "main/usr/lib/modules/6.1.0-t/kernel/drivers/video main/etc/modprobe.d; "
		 "echo 6.1.0-t >proc/sys/kernel/osrelease; echo x >early/kernel/x86/microcode/GenuineIntel.bin; "
		 "echo ko >main/usr/lib/modules/6.1.0-t/kernel/drivers/video/nvidia.ko.xz; "
		 "mk() { (cd early && find . | cpio -o -H newc --quiet) >boot/initrd.img-6.1.0-t; "
		 "(cd main && find . | cpio -o -H newc --quiet) | gzip >>boot/initrd.img-6.1.0-t; }; mk", dir);
	assert_int_equal(system(cmd), 0);
	assert_string_equal(initramfs_finding(dir, detail, sizeof(detail)), "warn");
	assert_non_null(strstr(detail, "not p2p-shim.ko and modprobe.d/p2p-shim.conf"));
	assert_non_null(strstr(detail, "stale"));
	/* the module alone is not enough: its softdep is what loads it first */
	snprintf(cmd, sizeof(cmd), "set -e; cd '%s'; mkdir -p main/usr/lib/modules/6.1.0-t/updates; "
		 "echo ko >main/usr/lib/modules/6.1.0-t/updates/p2p-shim.ko; "
		 "(cd early && find . | cpio -o -H newc --quiet) >boot/initrd.img-6.1.0-t; "
		 "(cd main && find . | cpio -o -H newc --quiet) | gzip >>boot/initrd.img-6.1.0-t", dir);
	assert_int_equal(system(cmd), 0);
	assert_string_equal(initramfs_finding(dir, detail, sizeof(detail)), "warn");
	assert_non_null(strstr(detail, "not modprobe.d/p2p-shim.conf"));
	snprintf(cmd, sizeof(cmd), "set -e; cd '%s'; echo 'softdep nvidia pre: p2p-shim' "
		 ">main/etc/modprobe.d/p2p-shim.conf; "
		 "(cd early && find . | cpio -o -H newc --quiet) >boot/initrd.img-6.1.0-t; "
		 "(cd main && find . | cpio -o -H newc --quiet) | gzip >>boot/initrd.img-6.1.0-t", dir);
	assert_int_equal(system(cmd), 0);
	assert_string_equal(initramfs_finding(dir, detail, sizeof(detail)), "ok");
	/* no nvidia in it: nothing to do */
	snprintf(cmd, sizeof(cmd), "set -e; cd '%s'; rm -rf main/usr; "
		 "(cd main && find . | cpio -o -H newc --quiet) | gzip >boot/initrd.img-6.1.0-t", dir);
	assert_int_equal(system(cmd), 0);
	assert_string_equal(initramfs_finding(dir, detail, sizeof(detail)), "ok");
	assert_non_null(strstr(detail, "nvidia is not in"));
	/* no initramfs at all (a captured tree): no finding */
	snprintf(cmd, sizeof(cmd), "rm -f '%s/boot/initrd.img-6.1.0-t'", dir);
	assert_int_equal(system(cmd), 0);
	assert_string_equal(initramfs_finding(dir, detail, sizeof(detail)), "");
	/* one there but not readable (dracut's name; here a directory): said, not skipped */
	snprintf(cmd, sizeof(cmd), "mkdir '%s/boot/initramfs-6.1.0-t.img'", dir);
	assert_int_equal(system(cmd), 0);
	assert_string_equal(initramfs_finding(dir, detail, sizeof(detail)), "skip");
	assert_non_null(strstr(detail, "initramfs-6.1.0-t.img: not readable"));
	rmtree(dir);
}

/* The CUDA commands' arguments are checked before CUDA is looked for. */
static void test_cuda_args_up_front(void **state)
{
	(void)state;
	assert_int_equal(run("verify", "--tests", "", NULL), P2PCTL_EXIT_USAGE);
	assert_non_null(strstr(err_text, "--tests"));
	assert_int_equal(run("bench", "--plot", "/nonexistent/dir/plot.svg", NULL), P2PCTL_EXIT_USAGE);
	assert_non_null(strstr(err_text, "/nonexistent/dir/plot.svg"));
	assert_int_equal(run("bench", "--plot", "", NULL), P2PCTL_EXIT_USAGE);
	/* -j is --json's short form on every command that has --json */
	assert_int_not_equal(run("verify", "-j", NULL), P2PCTL_EXIT_USAGE);
	assert_int_not_equal(run("bench", "-j", NULL), P2PCTL_EXIT_USAGE);
}

/* --json on a failure: an error object on stdout, the same exit status. */
static void test_json_error_object(void **state)
{
	static const char *const cases[][8] = {
		{ "check", "--json", "-k", "/nonexistent/kallsyms", NULL },
		{ "check", "-j", "--module", "/nonexistent/nvidia.ko", NULL },
		{ "doctor", "--json", "--root", "/nonexistent/root", NULL },
		{ "status", "--json", NULL },
		{ "monitor", "--json", "--count", "x", NULL },
		{ "bench", "--json", "--plot", "/nonexistent/dir/p.svg", NULL },
		{ "frob", "--json", NULL },	/* no such command */
	};
	json_object *o, *e, *v;

	(void)state;
	setenv("P2PCTL_DEVICE", "/nonexistent/p2p-shim", 1);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *const *a = cases[i];
		int rc = run(a[0], a[1], a[2], a[3], a[4], NULL);

		assert_int_not_equal(rc, 0);
		o = json_tokener_parse(out_text);
		if (!o)
			fail_msg("p2pctl %s %s: not JSON on stdout: '%s'", a[0], a[1], out_text);
		assert_true(json_object_object_get_ex(o, "error", &e));
		assert_true(json_object_object_get_ex(e, "message", &v));
		assert_true(strlen(json_object_get_string(v)) > 0);
		assert_true(json_object_object_get_ex(e, "exit_status", &v));
		assert_int_equal(json_object_get_int(v), rc);
		assert_true(json_object_object_get_ex(e, "command", &v));
		assert_string_equal(json_object_get_string(v), a[0]);
		json_object_put(o);
	}
	unsetenv("P2PCTL_DEVICE");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_gpus_long_list),
		cmocka_unit_test(test_config_driver_version),
		cmocka_unit_test(test_config_remove),
		cmocka_unit_test(test_config_write_atomic),
		cmocka_unit_test(test_stdout_full),
		cmocka_unit_test(test_report_output_full),
		cmocka_unit_test(test_empty_paths),
		cmocka_unit_test(test_check_bad_uvm_module),
		cmocka_unit_test(test_check_truncated_elf),
		cmocka_unit_test(test_doctor_root_not_a_tree),
		cmocka_unit_test(test_doctor_initramfs),
		cmocka_unit_test(test_cuda_args_up_front),
		cmocka_unit_test(test_json_error_object),
	};
	int rc = cmocka_run_group_tests_name("firsthour", tests, NULL, NULL);

	free(out_text);
	free(err_text);
	return rc;
}
