/* SPDX-License-Identifier: GPL-2.0 */
/* p2pctl: shared declarations of the command files. */
#ifndef P2PCTL_H
#define P2PCTL_H

#include <limits.h>
#include <stdio.h>
#include <json-c/json.h>
#include <p2pshim.h>
#include <p2p-shim/strutil.h>

/* Exit codes (documented in --help and p2pctl(8)). */
enum {
	P2PCTL_EXIT_OK = 0,		/* success */
	P2PCTL_EXIT_NOT_MET = 1,	/* condition not met, or an operation failed */
	P2PCTL_EXIT_USAGE = 2,		/* usage error */
	P2PCTL_EXIT_NOT_LOADED = 3,	/* p2p-shim module not loaded */
	P2PCTL_EXIT_PERM = 4,		/* permission denied */
};

#define P2PCTL_EXIT_CODES_HELP \
	"Exit status: 0 success; 1 condition not met (doctor found a blocker, check\n" \
	"says unsupported) or the operation failed; 2 usage error; 3 p2p-shim module\n" \
	"not loaded (verify, bench: no CUDA driver or GPUs); 4 permission denied.\n"

/* Where commands print; tests point these elsewhere. */
extern FILE *p2pctl_out;
extern FILE *p2pctl_err;

struct p2pctl_cmd {
	const char *name;
	int (*handler)(int argc, char **argv);
	const char *summary;
	bool json_lines;	/* --json is one object per line (monitor): so is its error */
};

int p2pctl_main(int argc, char **argv);

/*
 * What p2ps_doctor() reads besides files, as `p2pctl doctor` gathers it:
 * nvidia-smi's topology and memory (live, under the deadline), or
 * DIR/../cmd/nvidia-smi-topo-m.txt and nvidia-smi-query.txt with a root
 * (@topo: a file that overrides the topology).  -ENOENT: @topo unreadable.
 */
#define P2PCTL_SMI_QUERY "--query-gpu=pci.bus_id,memory.total --format=csv"
struct p2pctl_doctor_in {
	char *topo_text, *smi_text;
	char src[PATH_MAX + 16];	/* where topo_text came from */
	char smi_err[200];		/* nvidia-smi timed out or died, or "" */
};
int p2pctl_doctor_inputs(const char *root, const char *topo, struct p2pctl_doctor_in *in);
void p2pctl_doctor_inputs_free(struct p2pctl_doctor_in *in);
/*
 * doctor --json's schema: 1 = tokens for pcie_path and static_bar1.expected,
 * a finding's subject an array of addresses (or null), schema_version and
 * tool_version at the top; 2 = a finding's remedies an array, one fix each
 * (was remedy, a string or null).
 */
#define P2PCTL_DOCTOR_SCHEMA 2
json_object *p2pctl_doctor_json(const struct p2ps_doctor_report *r, const char *root);

int cmd_enable(int argc, char **argv);
int cmd_disable(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_monitor(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_config(int argc, char **argv);
int cmd_version(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_bench(int argc, char **argv);
/* Built from tools/cuda/ when CUDA_CMDS is set (see tools/Makefile). */

/* common.c */
/*
 * p2ps_run() for the programs doctor and report ask (nvidia-smi, lspci,
 * dkms, ...), saying on p2pctl_err what it waits for when @progress.  A
 * program that timed out once in this p2pctl is not called again: a hung
 * nvidia-smi hangs every call, and each would wait its own deadline
 * (-ETIMEDOUT at once then).  p2pctl_run_reset() forgets them (tests).
 */
int p2pctl_run(char *const argv[], int timeout_ms, size_t max_out, bool merge_stderr, char **out,
	       bool progress);
void p2pctl_run_reset(void);
/* Print "p2pctl: CMD: MSG" on p2pctl_err. */
void p2pctl_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Exit code for a library error. */
int p2pctl_exit_for(int err);
/* Open the module handle, printing why not; returns exit code (0: ok). */
int p2pctl_open(const char *cmd, struct p2ps_handle **h);
/* Usage error: message, hint, P2PCTL_EXIT_USAGE. */
int p2pctl_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Reset getopt state before parsing a command's arguments. */
void p2pctl_getopt_reset(void);
/* Print and release a JSON object. */
void p2pctl_json_print(json_object *o);
/* Whether this command printed JSON (p2pctl_main's error object goes only where none was). */
extern bool p2pctl_json_printed;
/* Whether the command line asked for JSON (--json or -j). */
extern bool p2pctl_json_wanted;
/* The last message p2pctl_error() or p2pctl_usage() printed, or "" (for that object). */
const char *p2pctl_last_error(void);
void p2pctl_error_reset(void);
json_object *p2pctl_json_str(const char *s);	/* NULL (json null) for "" */
/* A mapping's GPU instance: "?" and json null for P2PS_GPU_UNKNOWN. */
void p2pctl_gpu_str(char *buf, size_t len, uint32_t instance);
json_object *p2pctl_json_gpu(uint32_t instance);

/*
 * Strings: p2ps_strlcpy(), p2ps_trim(), p2ps_catf(), one with the library's
 * (<p2p-shim/strutil.h>, static inline; the library exports none).
 */

/* A table printed with aligned columns. */
struct p2pctl_table {
	unsigned int ncols, nrows, cap;
	char **cells;			/* nrows x ncols, strdup'd */
};
void p2pctl_table_init(struct p2pctl_table *t, unsigned int ncols);
void p2pctl_table_row(struct p2pctl_table *t, ...);	/* ncols strings */
void p2pctl_table_print(struct p2pctl_table *t, FILE *f, const char *indent);
void p2pctl_table_free(struct p2pctl_table *t);
/*
 * The same in lines of at most @width columns: each column but the last at
 * most @maxw[c] wide (0 or @maxw NULL: its widest cell), the last one what
 * is left; a cell wider than its column wraps onto the next lines of it.
 */
void p2pctl_table_print_wrapped(struct p2pctl_table *t, FILE *f, const char *indent, size_t width,
				const size_t *maxw);
/*
 * Bytes of @s that go on a line of @w columns: up to the last space that
 * fits (then *@skip: the spaces after it), else a word too long broken
 * after a '/', ',', ';', '_' or '=', else at the width.  All of @s if it
 * fits.
 */
size_t p2pctl_wrap_next(const char *s, size_t w, size_t *skip);
/* @first then @text, wrapped at @width columns, later lines indented by @indent. */
void p2pctl_wrap(FILE *f, const char *first, const char *text, size_t indent, size_t width);
/* Text output fits this many columns (doctor). */
#define P2PCTL_COLUMNS 100

#endif
