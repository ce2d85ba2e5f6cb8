// SPDX-License-Identifier: GPL-2.0
/* p2pctl check */
#include <errno.h>
#include <getopt.h>
#include <string.h>
#include <unistd.h>

#include <p2p-shim/profile.h>
#include "p2pctl.h"

static const char help[] =
	"Usage: p2pctl check [--module PATH | --kallsyms PATH [--driver-version V]]\n"
	"                    [--uvm-module PATH] [--force] [--json]\n\n"
	"Run p2p-shim's profile resolution and fingerprint rules offline: choose the\n"
	"profile for the driver version, find every hook target and destination, and\n"
	"compare each HAL stub's machine code with the profile.  Nothing is loaded.\n\n"
	"  -m, --module PATH        an nvidia.ko (also .ko.xz, .ko.zst, .ko.gz): symbols\n"
	"                           from .symtab, stub bytes from the file, version\n"
	"                           from .modinfo\n"
	"  -k, --kallsyms PATH      a kallsyms dump (plain or gzip; [nvidia] lines):\n"
	"                           names only, fingerprints are \"not checked\"\n"
	"  -u, --uvm-module PATH    an nvidia-uvm.ko: the UVM peer set's nvidia-uvm\n"
	"                           targets, and its copy-address call, from the file\n"
	"  -d, --driver-version V   driver version (instead of .modinfo; for kallsyms\n"
	"                           without it the profile is chosen by its symbols)\n"
	"  -f, --force              unknown version: check against the newest profile\n"
	"  -j, --json               print JSON: driver_version, profile, supported,\n"
	"                           hooks [{target, status}] and more\n"
	"  -h, --help               this help\n\n"
	"Without --module or --kallsyms: /proc/kallsyms and the running driver's version.\n"
	"Exit status 1 when the driver is not supported, or a file given is not there\n"
	"(the UVM peer set alone does not decide it).\n"
	P2PCTL_EXIT_CODES_HELP;

static const char *fp_state(const struct p2ps_check_report *r, const struct p2ps_check_item *it)
{
	if (it->fingerprint_checked)
		return it->ok || (strncmp(it->status, "body is not", 11) &&
				  !strstr(it->status, " does not call ")) ? "ok" : "changed";
	if (!r->fingerprints && *it->symbol && strchr(it->symbol, '_') &&
	    strcmp(it->symbol, it->target))
		return "not checked";
	return "n/a";
}

json_object *p2pctl_check_json(const struct p2ps_check_report *r, const char *source,
			       const char *path);

/* One hook of the profile or of the UVM peer set. */
static json_object *item_json(const struct p2ps_check_report *r, const struct p2ps_check_item *it)
{
	json_object *j = json_object_new_object();

	json_object_object_add(j, "target", json_object_new_string(it->target));
	json_object_object_add(j, "status", json_object_new_string(it->status));
	json_object_object_add(j, "symbol", p2pctl_json_str(it->symbol));
	json_object_object_add(j, "dest", p2pctl_json_str(it->dest));
	json_object_object_add(j, "fingerprint", json_object_new_string(fp_state(r, it)));
	return j;
}

json_object *p2pctl_check_json(const struct p2ps_check_report *r, const char *source,
			       const char *path)
{
	json_object *o = json_object_new_object(), *a;
	size_t i;

	json_object_object_add(o, "driver_version", p2pctl_json_str(r->driver_version));
	json_object_object_add(o, "version_source", p2pctl_json_str(r->version_source));
	json_object_object_add(o, "profile", p2pctl_json_str(r->profile));
	json_object_object_add(o, "profile_guessed", json_object_new_boolean(r->profile_guessed));
	json_object_object_add(o, "forced", json_object_new_boolean(r->forced));
	json_object_object_add(o, "supported", json_object_new_boolean(r->supported));
	json_object_object_add(o, "reason", p2pctl_json_str(r->reason));
	json_object_object_add(o, "source", json_object_new_string(source));
	json_object_object_add(o, "path", json_object_new_string(path));
	json_object_object_add(o, "fingerprints", json_object_new_string(
		r->fingerprints ? "checked" : "not checked"));
	json_object_object_add(o, "symbols", json_object_new_int64((int64_t)r->nr_symbols));
	a = json_object_new_array();
	for (i = 0; i < r->nr_hooks; i++)
		json_object_array_add(a, item_json(r, &r->hooks[i]));
	json_object_object_add(o, "hooks", a);
	a = json_object_new_array();
	for (i = 0; i < r->nr_calls; i++) {
		json_object *j = json_object_new_object();

		json_object_object_add(j, "target", json_object_new_string(r->calls[i].target));
		json_object_object_add(j, "status", json_object_new_string(r->calls[i].status));
		json_object_array_add(a, j);
	}
	json_object_object_add(o, "calls", a);
	if (r->nr_uvm_hooks) {
		json_object *u = json_object_new_object();

		json_object_object_add(u, "name", json_object_new_string(r->uvm_set));
		json_object_object_add(u, "checked", json_object_new_boolean(r->uvm_checked));
		json_object_object_add(u, "ok", json_object_new_boolean(r->uvm_ok));
		json_object_object_add(u, "reason", p2pctl_json_str(r->uvm_reason));
		a = json_object_new_array();
		for (i = 0; i < r->nr_uvm_hooks; i++)
			json_object_array_add(a, item_json(r, &r->uvm_hooks[i]));
		json_object_object_add(u, "hooks", a);
		json_object_object_add(o, "uvm_set", u);
	}
	return o;
}

static void print_human(const struct p2ps_check_report *r, const char *source, const char *path,
			FILE *f)
{
	struct p2pctl_table t;
	size_t i;

	fprintf(f, "%s: %s (%zu function symbols)\n", source, path, r->nr_symbols);
	fprintf(f, "driver version: %s%s%s%s\n", *r->driver_version ? r->driver_version : "unknown",
		*r->version_source ? " (" : "", r->version_source, *r->version_source ? ")" : "");
	fprintf(f, "profile: %s%s%s\n", *r->profile ? r->profile : "none",
		r->profile_guessed ? " (chosen by symbols)" : "", r->forced ? " (forced)" : "");
	fprintf(f, "fingerprints: %s\n\n", r->fingerprints ? "checked" : "not checked (names only)");
	if (r->nr_hooks) {
		p2pctl_table_init(&t, 5);
		p2pctl_table_row(&t, "TARGET", "SYMBOL", "DEST", "FINGERPRINT", "STATUS");
		for (i = 0; i < r->nr_hooks; i++) {
			const struct p2ps_check_item *it = &r->hooks[i];

			p2pctl_table_row(&t, it->target, *it->symbol ? it->symbol : "-",
					 *it->dest ? it->dest : "-", fp_state(r, it), it->status);
		}
		for (i = 0; i < r->nr_calls; i++)
			p2pctl_table_row(&t, r->calls[i].target, *r->calls[i].symbol ? r->calls[i].symbol : "-",
					 "(called)", "n/a", r->calls[i].status);
		p2pctl_table_print(&t, f, "");
		p2pctl_table_free(&t);
		fputc('\n', f);
	}
	if (r->nr_uvm_hooks) {
		p2pctl_table_init(&t, 3);
		p2pctl_table_row(&t, "UVM PEER SET", "SYMBOL", "STATUS");
		for (i = 0; i < r->nr_uvm_hooks; i++) {
			const struct p2ps_check_item *it = &r->uvm_hooks[i];

			p2pctl_table_row(&t, it->target, *it->symbol ? it->symbol : "-", it->status);
		}
		p2pctl_table_print(&t, f, "");
		p2pctl_table_free(&t);
		fputc('\n', f);
	}
	if (r->supported)
		fprintf(f, "supported%s%s\n", *r->reason ? ": " : "", r->reason);
	else
		fprintf(f, "NOT supported: %s\n", *r->reason ? r->reason : "see above");
	/* The module arms the profile without the set; it then says so. */
	if (r->nr_uvm_hooks && r->uvm_ok)
		fprintf(f, "UVM peer set %s: arms with nvidia-uvm\n", r->uvm_set);
	else if (r->nr_uvm_hooks && !r->uvm_checked && !strstr(r->uvm_reason, "not checked: "))
		fprintf(f, "UVM peer set %s: not checked: %s\n", r->uvm_set, r->uvm_reason);
	else if (r->nr_uvm_hooks && !r->uvm_checked)
		fprintf(f, "UVM peer set %s: not checked (no nvidia-uvm symbols: check the running "
			"driver with nvidia-uvm loaded, or its kallsyms)\n", r->uvm_set);
	else if (r->nr_uvm_hooks)
		fprintf(f, "UVM peer set %s: would NOT arm: %s (managed memory between BAR1 peers "
			"stays wrong; device memory P2P is not affected)\n", r->uvm_set, r->uvm_reason);
}

int cmd_check(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "module", required_argument, NULL, 'm' },
		{ "kallsyms", required_argument, NULL, 'k' },
		{ "uvm-module", required_argument, NULL, 'u' },
		{ "driver-version", required_argument, NULL, 'd' },
		{ "force", no_argument, NULL, 'f' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *module = NULL, *kallsyms = NULL, *uvm_module = NULL, *version = NULL, *source;
	struct p2ps_check_input in = { 0 };
	char live_ver[P2PS_NAME_LEN];
	struct p2ps_check_report *r;
	unsigned int flags = 0;
	bool json = false, live = false;
	int c, err;

	p2pctl_getopt_reset();
	while ((c = getopt_long(argc, argv, "+m:k:u:d:fjh", opts, NULL)) != -1) {
		switch (c) {
		case 'm': module = optarg; break;
		case 'k': kallsyms = optarg; break;
		case 'u': uvm_module = optarg; break;
		case 'd': version = optarg; break;
		case 'f': flags |= P2PS_CHECK_FORCE; break;
		case 'j': json = true; break;
		case 'h': fputs(help, p2pctl_out); return 0;
		default: return p2pctl_usage("check", "invalid option");
		}
	}
	if (optind < argc)
		return p2pctl_usage("check", "unexpected argument '%s'", argv[optind]);
	if (module && kallsyms)
		return p2pctl_usage("check", "give --module or --kallsyms, not both");
	/*
	 * The UVM peer set does not decide the exit status, but a file that
	 * is not there is a typo, not a set "not checked": say so, as for
	 * --module.
	 */
	if (uvm_module && access(uvm_module, F_OK)) {
		p2pctl_error("check", "--uvm-module %s: %s", uvm_module, strerror(errno));
		return P2PCTL_EXIT_NOT_MET;
	}
	if (version) {
		unsigned int a, b, d;

		if (p2ps_parse_version(version, &a, &b, &d))
			return p2pctl_usage("check", "--driver-version '%s': expected MAJOR.MINOR[.PATCH]",
					    version);
	}
	if (!module && !kallsyms) {
		/*
		 * The running driver: its version as the module carries it (what
		 * p2p-shim keys on), else the first N.N[.N] word of the procfs
		 * line ("... Kernel Module for x86_64  580.142  Release Build ...":
		 * not the digits of "x86_64").
		 */
		FILE *f = fopen("/sys/module/nvidia/version", "r");
		char line[512], *w, *save = NULL;
		unsigned int a, b, d;

		kallsyms = "/proc/kallsyms";
		live = true;
		if (!version && f && fgets(line, sizeof(line), f) &&
		    sscanf(line, "%63s", live_ver) == 1 && !p2ps_parse_version(live_ver, &a, &b, &d))
			version = live_ver;
		if (f)
			fclose(f);
		f = version ? NULL : fopen("/proc/driver/nvidia/version", "r");
		if (f && fgets(line, sizeof(line), f)) {
			for (w = strtok_r(line, " \t\n", &save); w && !version;
			     w = strtok_r(NULL, " \t\n", &save))
				if (strlen(w) < sizeof(live_ver) && !p2ps_parse_version(w, &a, &b, &d)) {
					strcpy(live_ver, w);
					version = live_ver;
				}
		}
		if (f)
			fclose(f);
	}
	source = module ? "module" : "kallsyms";
	in.module = module;
	in.kallsyms = module ? NULL : kallsyms;
	in.uvm_module = uvm_module;
	in.version = version;
	in.flags = flags;
	err = p2ps_check(&in, &r);
	if (err == -P2PS_E_FORMAT && !module) {
		/* A kallsyms list without a single nvidia text symbol. */
		if (live)
			p2pctl_error("check", "NOT supported here: nvidia is not loaded (no nvidia "
				     "symbols in %s); check a driver file with --module PATH", kallsyms);
		else
			p2pctl_error("check", "NOT supported: %s has no nvidia symbols (a kallsyms "
				     "dump taken while nvidia was loaded is needed)", kallsyms);
		return P2PCTL_EXIT_NOT_MET;
	}
	if (err) {
		p2pctl_error("check", "%s%s%s: %s", module ? module : kallsyms,
			     uvm_module ? " or " : "", uvm_module ? uvm_module : "", p2ps_strerror(err));
		return p2pctl_exit_for(err) == P2PCTL_EXIT_PERM ? P2PCTL_EXIT_PERM : P2PCTL_EXIT_NOT_MET;
	}
	if (json)
		p2pctl_json_print(p2pctl_check_json(r, source, module ? module : kallsyms));
	else
		print_human(r, source, module ? module : kallsyms, p2pctl_out);
	c = r->supported ? 0 : P2PCTL_EXIT_NOT_MET;
	p2ps_check_free(r);
	return c;
}
