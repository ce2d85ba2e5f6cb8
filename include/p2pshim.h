/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libp2pshim: userspace access to p2p-shim.
 *
 *   #include <p2pshim.h>      (pkg-config --cflags --libs libp2pshim)
 *
 * Conventions
 *   - No global state: everything that talks to the module goes through a
 *     handle from p2ps_open().  One handle must not be used by two threads
 *     at once; separate handles are independent.
 *   - Functions that can fail return 0 on success and a negative error code
 *     otherwise: -errno (e.g. -EPERM without CAP_SYS_ADMIN) or one of the
 *     library's own -P2PS_E* codes below.  p2ps_strerror() describes both.
 *   - Results that have a variable size are allocated by the library and
 *     released with the matching *_free() function.
 *
 * Two parts need no module at all: p2ps_doctor() (host checks, on a live
 * system or on a captured root tree) and p2ps_check_*() (the module's
 * profile resolution and fingerprint rules, run offline on a driver file).
 */
#ifndef P2PSHIM_H
#define P2PSHIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <p2p-shim/uapi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Library error codes (returned negated); above any errno value. */
enum p2ps_lib_error {
	P2PS_E_BASE = 4096,
	P2PS_E_NOT_LOADED = P2PS_E_BASE,	/* /dev/p2p-shim absent: module not loaded */
	P2PS_E_ABI,			/* module speaks another ABI version */
	P2PS_E_NO_FAMILY,		/* generic netlink family "p2p_shim" absent */
	P2PS_E_NETLINK,			/* netlink communication failed */
	P2PS_E_FORMAT,			/* input is not what was expected (ELF, kallsyms) */
	P2PS_E_NO_SYMTAB,		/* ELF file without .symtab (stripped) */
	P2PS_E_NO_VERSION,		/* driver version unknown (give it explicitly) */
	P2PS_E_COMPRESSION,		/* could not decompress .xz/.zst/.gz input */
	P2PS_E_TRUNCATED,		/* ELF file shorter than its headers say */
	P2PS_E_END,
};

/* Human-readable text for a (negative or positive) error code.  Never NULL. */
const char *p2ps_strerror(int err);

/* The library's version (the top VERSION file when it was built). */
const char *p2ps_lib_version(void);

/* ---------------------------------------------------------------- handles */

struct p2ps_handle;

/*
 * Open /dev/p2p-shim (or @dev_path if not NULL) and check the module's ABI
 * version.  -P2PS_E_NOT_LOADED if the device does not exist, -EACCES/-EPERM
 * if it may not be opened, -P2PS_E_ABI on an ABI mismatch.  The netlink
 * socket is opened lazily, on the first call that needs it.
 */
int p2ps_open(struct p2ps_handle **out, const char *dev_path);
void p2ps_close(struct p2ps_handle *h);

/* Module version (P2PS_IOC_VERSION): @abi and a NUL-terminated string. */
int p2ps_module_version(struct p2ps_handle *h, unsigned int *abi,
			char *buf, size_t len);

/* ---------------------------------------------------------------- status */

struct p2ps_hook_info {
	char target[P2PS_NAME_LEN];	/* symbol in nvidia */
	char dest[P2PS_NAME_LEN];	/* redirect destination, or "" */
	uint32_t kind;			/* enum p2ps_hook_kind */
	uint32_t state;			/* enum p2ps_hook_state */
	uint64_t hits;
	char last_error[P2PS_REASON_LEN];
};

/* A mapping's GPU that p2p-shim cannot name (attached before arming). */
#define P2PS_GPU_UNKNOWN	UINT32_MAX

struct p2ps_mapping_info {
	uint32_t gpu0, gpu1;		/* GPU instances, or P2PS_GPU_UNKNOWN */
	uint32_t conn_type;		/* enum p2ps_conn_type */
	uint32_t count;			/* references the driver holds */
	uint64_t dma_base, dma_size;	/* GPU1's BAR1 as GPU0 reaches it */
};

/* What the driver decided about a GPU's static BAR1 (P2PS_CMD_GET_GPUS). */
struct p2ps_gpu_info {
	uint32_t instance;		/* GPU instance */
	uint32_t static_bar1;		/* enum p2ps_sb1_state */
	uint32_t p2p_usable;		/* 1: static BAR1 that BAR1 P2P can map */
	uint32_t force_p2p;		/* 1: its ForceP2P came from p2p-shim */
	uint64_t bar1_addr, bar1_size;	/* 0: unknown */
	uint64_t console, mailbox;	/* BAR1 reserved below static BAR1 */
	uint64_t client_fb;		/* what the driver maps (0: not read) */
	uint64_t offset;		/* static BAR1's offset in BAR1 */
	char reason[P2PS_REASON_LEN];
};

struct p2ps_status_info {
	/* From P2PS_IOC_STATUS. */
	uint32_t state;			/* enum p2ps_state */
	uint32_t flags;			/* P2PS_ENABLE_* */
	uint32_t nr_installed;		/* hooks installed */
	uint32_t live_mappings;
	uint32_t stale_gpus;		/* mask of GPU instances initialised before arming */
	uint64_t hits;
	char driver_version[P2PS_NAME_LEN];
	char profile[P2PS_NAME_LEN];
	/* From the netlink dumps; empty if @detail_error is not 0. */
	struct p2ps_hook_info *hooks;
	size_t nr_hooks;
	struct p2ps_mapping_info *mappings;
	size_t nr_mappings;
	int detail_error;		/* why the dumps failed (negative), or 0 */
	/* Per GPU, from a module that has the GPU dump; else none. */
	struct p2ps_gpu_info *gpus;
	size_t nr_gpus;
};

/*
 * Summary by ioctl, then per-hook and per-mapping detail by netlink dumps.
 * A failing dump does not fail the call: it sets @detail_error.
 * Release with p2ps_status_free().
 */
int p2ps_status(struct p2ps_handle *h, struct p2ps_status_info **out);
void p2ps_status_free(struct p2ps_status_info *st);

/* Names for enum values ("armed", "redirect", "installed", "pcie-bar1"). */
const char *p2ps_state_name(uint32_t state);
const char *p2ps_hook_kind_name(uint32_t kind);
const char *p2ps_hook_state_name(uint32_t state);
const char *p2ps_conn_type_name(uint32_t type);
/* "on", "off", "forced", "failed", "unknown" (enum p2ps_sb1_state). */
const char *p2ps_sb1_state_name(uint32_t state);

/* ---------------------------------------------------------------- enable/disable */

struct p2ps_enable_result {
	uint32_t state;			/* enum p2ps_state after the call */
	char target[P2PS_NAME_LEN];	/* on failure: the target that failed, or "" */
	char reason[P2PS_REASON_LEN];	/* on failure: why */
};

/*
 * Arm the module (P2PS_IOC_ENABLE) with P2PS_ENABLE_* @flags; needs
 * CAP_SYS_ADMIN.  On failure returns -errno and, when the module said why,
 * fills @res (which may be NULL).  Unknown flags: -EINVAL, not sent.
 */
int p2ps_enable(struct p2ps_handle *h, uint32_t flags, struct p2ps_enable_result *res);

/*
 * Disarm (P2PS_IOC_DISABLE).  On -EBUSY, @busy (if not NULL) receives the
 * module's list of live GPU pairs.
 */
int p2ps_disable(struct p2ps_handle *h, char *busy, size_t busylen);

/* ---------------------------------------------------------------- events */

struct p2ps_event_info {
	uint32_t event;			/* enum p2ps_event */
	uint32_t flags;			/* P2PS_A_FLAGS, if present */
	uint32_t uid;			/* P2PS_A_UID, if present */
	bool has_uid;
	bool has_mapping;
	char driver_version[P2PS_NAME_LEN];
	char profile[P2PS_NAME_LEN];
	char reason[P2PS_REASON_LEN];
	struct p2ps_mapping_info mapping;
};

typedef void (*p2ps_event_cb)(const struct p2ps_event_info *ev, void *arg);

/*
 * Join the "events" multicast group.  Afterwards either poll
 * p2ps_event_fd() for POLLIN and call p2ps_event_dispatch(), or call
 * p2ps_event_wait() which does both.  @cb runs once per event, from
 * dispatch/wait, in the caller's thread.
 */
int p2ps_event_subscribe(struct p2ps_handle *h, p2ps_event_cb cb, void *arg);
int p2ps_event_fd(struct p2ps_handle *h);
/* Handle whatever is pending without blocking; returns events handled or <0. */
int p2ps_event_dispatch(struct p2ps_handle *h);
/* Wait up to @timeout_ms (-1: forever) and dispatch; 0 on timeout. */
int p2ps_event_wait(struct p2ps_handle *h, int timeout_ms);
/* "armed", "disarmed", "driver-arrived", ... */
const char *p2ps_event_name(uint32_t event);

/* ---------------------------------------------------------------- doctor */

enum p2ps_verdict {
	P2PS_V_OK = 0,
	P2PS_V_SKIP = 1,		/* not applicable or not determinable here */
	P2PS_V_WARN = 2,
	P2PS_V_FAIL = 3,		/* a blocker */
};
const char *p2ps_verdict_name(enum p2ps_verdict v);	/* "ok", "skip", "warn", "fail" */

struct p2ps_finding {
	char check[32];			/* stable id: "kprobes", "lockdown", "bar1", ... */
	char subject[48];		/* "", a PCI address, or "0000:01:00.0 0000:02:00.0" */
	enum p2ps_verdict verdict;
	char detail[256];		/* what was found, one line */
	/*
	 * What to do about it ("" if ok): one line per fix, '\n' between
	 * them ("try now: ..." and "permanent: ...", or the alternatives);
	 * whole lines only, never a command cut short.  A line that starts
	 * "# " is a command to run as root, as it stands: printed whole,
	 * never wrapped, so that it can be copied.
	 */
	char remedy[512];
	char source[96];		/* where it was read from */
};

/* Path between two GPUs. */
enum p2ps_pcie_path {
	P2PS_PATH_UNKNOWN = 0,
	P2PS_PATH_SWITCH,		/* below a common PCIe switch/bridge */
	P2PS_PATH_ROOT_COMPLEX,		/* different root ports of one host bridge */
	P2PS_PATH_HOST_BRIDGES,		/* different host bridges, same NUMA node */
	P2PS_PATH_CROSS_SOCKET,		/* different NUMA nodes */
};
const char *p2ps_pcie_path_name(enum p2ps_pcie_path p);

enum p2ps_native {
	P2PS_NATIVE_UNKNOWN = 0,
	P2PS_NATIVE_NONE,		/* PCIe only: the shim is what enables P2P */
	P2PS_NATIVE_NVLINK,		/* NVLink: shim not needed */
};

/*
 * Static BAR1 (all of VRAM mapped through BAR1 once, at GPU initialisation):
 * what the installed driver is expected to decide, by its rules
 * (docs/cards.md), with the registry keys p2p-shim supplies.
 */
enum p2ps_static_bar1 {
	P2PS_SB_UNKNOWN = 0,
	P2PS_SB_YES,
	P2PS_SB_NO,
	P2PS_SB_UNALIGNED,		/* on, but after the console: peers can't map it (565-575) */
	P2PS_SB_INIT_FAILS,		/* forced where it can't fit: GPU initialisation fails */
};
const char *p2ps_static_bar1_name(enum p2ps_static_bar1 s);	/* "yes", "no", ... */

/* What a GPU pair gets. */
enum p2ps_p2p {
	P2PS_P2P_UNKNOWN = 0,
	P2PS_P2P_BAR1,			/* BAR1 P2P with p2p-shim */
	P2PS_P2P_NATIVE,		/* the stock driver's own P2P: NVLink, or Hopper's BAR1 P2P */
	P2PS_P2P_NONE,
};
const char *p2ps_p2p_name(enum p2ps_p2p p);	/* "bar1", "native", "none", "unknown" */

struct p2ps_gpu {
	char bdf[16];			/* "0000:01:00.0" */
	uint16_t device;		/* PCI device id */
	uint32_t pci_class;
	char name[64];			/* "NVIDIA GeForce RTX 4090", or "" */
	char arch[16];			/* "Ada", "Hopper", ... or "unknown" */
	uint64_t vram;			/* bytes; 0 if unknown */
	uint64_t bar1;			/* bytes; 0 if unknown */
	int numa_node;			/* -1 if unknown */
	char path[512];			/* sysfs real path, relative to the root (37 bridges) */
	/* appended for the per-GPU verdicts */
	char chip[8];			/* "AD102", ... (from the device id) or "" */
	char vram_source[24];		/* "nominal" (device id) or "nvidia-smi" */
	uint64_t vram_mib;		/* nvidia-smi memory.total (MiB), or 0; @vram is then
					 * that rounded up to whole GiB */
	int display;			/* boot_vga: 1 boot display, 0 not, -1 unknown */
	enum p2ps_static_bar1 static_bar1;
	char static_bar1_why[200];
	/* appended: the bound driver ("nvidia", "vfio-pci", "nouveau", "" none
	 * bound) and whether that is known (a captured tree may not record it) */
	char driver[32];
	bool driver_known;
};

struct p2ps_pair {
	unsigned int a, b;		/* indexes into gpus[] */
	enum p2ps_pcie_path path;
	enum p2ps_native native;
	char native_source[96];		/* what @native was decided from */
	/* appended for the per-pair verdicts */
	enum p2ps_p2p p2p;
	char p2p_why[200];
};

struct p2ps_doctor_report {
	char kernel_release[96];
	char driver_version[P2PS_NAME_LEN];	/* "" if nvidia is not loaded */
	char profile[P2PS_NAME_LEN];		/* "" if none */
	bool open_module;
	struct p2ps_finding *findings;
	size_t nr_findings;
	struct p2ps_gpu *gpus;
	size_t nr_gpus;
	struct p2ps_pair *pairs;
	size_t nr_pairs;
	unsigned int nr_fail, nr_warn;
	/* appended: the answer, "P2P possible for N of M pairs (K blocked: ...)" */
	unsigned int nr_usable_gpus;	/* GPUs nvidia drives (or may: no driver links) */
	unsigned int nr_p2p_possible;	/* pairs with native P2P, or bar1 and no host blocker */
	char summary[320];
};

struct p2ps_doctor_opts {
	const char *root;		/* root prefix; NULL or "/" for the live system */
	const char *topo_text;		/* output of `nvidia-smi topo -m`, or NULL */
	const char *topo_source;	/* where topo_text came from, for messages */
	/* `nvidia-smi --query-gpu=...,pci.bus_id,...,memory.total... --format=csv`
	 * output (any columns, with a header), or NULL: measured VRAM per GPU */
	const char *smi_query_text;
	struct p2ps_handle *h;		/* module handle for live status, or NULL */
	/* "nvidia-smi topo -m: timed out after 10 s (killed)" or NULL: a warning */
	const char *smi_error;
	/*
	 * Or NULL.  Called with every path the checks open (P2PS_TRACE_OPEN),
	 * list (P2PS_TRACE_LIST) or resolve (P2PS_TRACE_REALPATH) under the
	 * root, as given, before the root is applied: `p2pctl report --capture`
	 * copies exactly what doctor read.
	 */
	void (*trace)(void *arg, const char *path, int how);
	void *trace_arg;
};
enum { P2PS_TRACE_OPEN, P2PS_TRACE_LIST, P2PS_TRACE_REALPATH };

/*
 * Run the host checks.  Files are read under @opts->root; sysfs links are
 * followed for real, or looked up in ROOT/.symlinks (the format written by
 * tests/fixtures/capture-host) when the root tree has no real links.
 * Returns 0 (even with failing checks: see nr_fail) or a negative error.
 */
int p2ps_doctor(const struct p2ps_doctor_opts *opts, struct p2ps_doctor_report **out);
void p2ps_doctor_free(struct p2ps_doctor_report *r);
/* The finding with id @check (and @subject, if not NULL), or NULL. */
const struct p2ps_finding *p2ps_doctor_find(const struct p2ps_doctor_report *r,
					    const char *check, const char *subject);

/*
 * The report said once, as `p2pctl doctor` prints it: findings that differ
 * only in their subject are one line, blockers first (then warnings, skips,
 * oks, each in the order the checks ran); one remedy line per line of
 * the findings' remedies (a fix), said once;
 * one pairs line per answer and reason.  GPUs are named by their index in
 * the report's gpus[] ("0, 1", "all 8 GPUs"), pairs as "0-1" ("0-1, 0-2",
 * "all 28 pairs", "all 28 pairs but 0-1, 2-3"); "" is the host.  Pointers
 * into the report stay valid while it lives.  Release with
 * p2ps_doctor_digest_free().
 */
struct p2ps_digest_line {
	const struct p2ps_finding *finding;	/* the first of them */
	size_t nr;			/* findings it stands for */
	char *who;			/* their subjects */
};
struct p2ps_digest_remedy {
	char *who;			/* "lockdown; sig-enforce", "link 0, 1" */
	const char *remedy;		/* one line of their remedies (the digest's own copy) */
};
struct p2ps_digest_pair {
	enum p2ps_p2p p2p;
	const char *why;
	size_t nr;			/* pairs it stands for */
	char *who;
};
struct p2ps_doctor_digest {
	struct p2ps_digest_line *lines;
	size_t nr_lines;
	struct p2ps_digest_remedy *remedies;
	size_t nr_remedies;
	struct p2ps_digest_pair *pairs;
	size_t nr_pairs;
	unsigned int nr_fail, nr_warn;	/* lines, not findings */
};
int p2ps_doctor_digest(const struct p2ps_doctor_report *r, struct p2ps_doctor_digest **out);
void p2ps_doctor_digest_free(struct p2ps_doctor_digest *d);
/* The subjects of @n findings of @r, as the digest names them; NULL: no memory. */
char *p2ps_doctor_who(const struct p2ps_doctor_report *r, const struct p2ps_finding *const *fs,
		      size_t n);

/* ---------------------------------------------------------------- host files */

/*
 * What doctor reads, as p2pctl's report and its capture read it too: files
 * under a root prefix (a captured tree, or the live system).  Every path
 * is resolved inside the root: links are followed within the tree (an
 * absolute target starts at the root, ".." stops there), never out of it.
 * Reads take regular files only, opened non-blocking (no FIFO, no
 * device), and at most a cap.
 */
struct p2ps_root;
/* @dir: the tree; NULL, "" or "/" for the live system.  0 or -errno. */
int p2ps_root_new(struct p2ps_root **out, const char *dir);
void p2ps_root_free(struct p2ps_root *r);
/* open(2) @path resolved inside the root (O_CLOEXEC added); -1 with errno. */
int p2ps_root_open(const struct p2ps_root *r, const char *path, int flags);
/*
 * @path resolved inside the root and opened for reading if it is a regular
 * file; else -1 with errno.  It is checked before it is opened (an O_PATH
 * open first), so a device node's open method never runs.
 */
int p2ps_root_open_regular(const struct p2ps_root *r, const char *path);
/* A whole file (gzip transparently if @gz), NUL-terminated, at most @max bytes; else NULL. */
char *p2ps_root_read_max(const struct p2ps_root *r, const char *path, size_t *len, bool gz,
			 size_t max);
/* Real path of @path (following links, or ROOT/.symlinks), relative to the root. */
bool p2ps_root_realpath(const struct p2ps_root *r, const char *path, char *buf, size_t len);
/* Names of the entries of a directory, including links from ROOT/.symlinks; 0 or -errno. */
int p2ps_root_list(const struct p2ps_root *r, const char *dir, char ***names, size_t *n);
void p2ps_free_list(char **names, size_t n);

/*
 * @fd (taken: closed on failure) if it is a regular file; else -errno (a
 * FIFO, a device: -EINVAL; a directory: -EISDIR).
 */
int p2ps_fd_regular(int fd);
/* A whole regular file, NUL-terminated, of at most @max bytes (else NULL, errno EFBIG). */
char *p2ps_read_file_max(const char *path, size_t *len, bool gz, size_t max);
/*
 * Replace, in place, every byte that is not part of valid UTF-8 and every
 * control character (C0 but tab, DEL, C1) with '?': text from sysfs, DMI or
 * a file that may reach a terminal or JSON.  Returns @s.
 */
char *p2ps_sanitize(char *s);

/*
 * Run a program under a deadline.  @argv[0] is looked up in PATH; stdin is
 * /dev/null, stderr goes to /dev/null (or with stdout if @merge_err).  At
 * most @cap bytes of its output are kept, in *@out (NUL-terminated; also
 * set on a timeout, with what came before it).  After @timeout_ms its
 * process group is killed (SIGKILL) and -ETIMEDOUT returned; -ENOENT if it
 * is not there; else its exit status (128 + the signal if one ended it).
 */
#define P2PS_RUN_TIMEOUT_MS 10000
int p2ps_run(char *const argv[], int timeout_ms, size_t cap, bool merge_err, char **out);
/* P2PCTL_CMD_TIMEOUT (seconds) if set and sane, else P2PS_RUN_TIMEOUT_MS. */
int p2ps_run_timeout_ms(void);
/* "timed out after 10 s (killed)", "not found", "exit status 6", ... for @rc */
void p2ps_run_describe(int rc, int timeout_ms, char *buf, size_t len);

/* ---------------------------------------------------------------- check */

struct p2ps_check_item {
	char target[128];		/* the profile's target (stub base name) */
	char symbol[128];		/* the symbol it resolved to, or "" */
	char dest[128];			/* redirect destination, or "" */
	bool ok;
	bool fingerprint_checked;	/* stub bytes were compared */
	char status[256];		/* "ok" or the reason */
};

struct p2ps_check_report {
	char driver_version[P2PS_NAME_LEN];	/* "" if unknown */
	char version_source[32];	/* "modinfo", "given", "" */
	char profile[P2PS_NAME_LEN];	/* "" if none */
	bool profile_guessed;		/* no version: chosen by matching symbols */
	bool forced;			/* newest profile used for an unknown version */
	bool supported;
	char reason[256];		/* why not supported, or "" */
	bool fingerprints;		/* bytes available (ELF) or names only (kallsyms) */
	struct p2ps_check_item *hooks;
	size_t nr_hooks;
	struct p2ps_check_item *calls;	/* functions the module calls */
	size_t nr_calls;
	size_t nr_symbols;		/* function symbols seen in the input */
	/*
	 * The UVM peer set for the driver version (docs/uvm.md), resolved as
	 * the module resolves it when nvidia-uvm is loaded: its first hook in
	 * nvidia, the rest in nvidia-uvm (a kallsyms dump's [nvidia_uvm]
	 * lines, or an nvidia-uvm.ko: p2ps_check(); an nvidia.ko alone has
	 * none: "not checked"), and from a file the copy-address function's
	 * call to the phys-address hook (the first nvidia-uvm item's
	 * fingerprint).  The module arms
	 * the profile without it when it fails, so it does not decide
	 * `supported`.
	 */
	char uvm_set[P2PS_NAME_LEN];	/* "" if the version has none, or is unknown */
	struct p2ps_check_item *uvm_hooks;
	size_t nr_uvm_hooks;
	bool uvm_checked;		/* nvidia-uvm's symbols were there */
	bool uvm_ok;			/* every hook of the set resolved */
	char uvm_reason[256];		/* why not, or "" */
};

#define P2PS_CHECK_FORCE	(1U << 0)	/* unknown version: use the newest profile */

/*
 * Offline check of a driver module file (nvidia.ko, .ko.xz, .ko.zst, .ko.gz):
 * profile from .modinfo version= (or @version if not NULL), then every hook
 * target and destination resolved in .symtab, stubs matched by name with
 * p2ps_is_stub_of() and by body with p2ps_match_code().
 */
int p2ps_check_module(const char *path, const char *version, unsigned int flags,
		      struct p2ps_check_report **out);
/*
 * The same on a kallsyms dump (lines "ADDR TYPE NAME [module]"; only
 * [nvidia] lines when any line names a module; plain or gzip).  Names only:
 * fingerprints are "not checked".  Without @version, the newest profile whose
 * names all resolve is chosen (profile_guessed).
 */
int p2ps_check_kallsyms(const char *path, const char *version, unsigned int flags,
			struct p2ps_check_report **out);
/*
 * Either of the two (@module or @kallsyms), and nvidia-uvm's symbols and
 * code for the UVM peer set from @uvm_module (an nvidia-uvm.ko) if not
 * NULL, instead of a kallsyms dump's [nvidia_uvm] lines.
 */
struct p2ps_check_input {
	const char *module;		/* nvidia.ko, or NULL */
	const char *kallsyms;		/* or a kallsyms dump */
	const char *uvm_module;		/* nvidia-uvm.ko, or NULL */
	const char *version;		/* or NULL */
	unsigned int flags;		/* P2PS_CHECK_* */
};
int p2ps_check(const struct p2ps_check_input *in, struct p2ps_check_report **out);
void p2ps_check_free(struct p2ps_check_report *r);

/*
 * The first CPU of /proc/cpuinfo, as NVIDIA's BAR1 peer-read host rule
 * (p2p-shim/readrule.h) sees it: `p2pctl status` and doctor read it alike.
 */
struct p2ps_host_cpu {
	char vendor_id[16];		/* "GenuineIntel", "AuthenticAMD", ... */
	int vendor;			/* enum p2ps_cpu_vendor (readrule.h) */
	unsigned int family, model;
	bool known;			/* vendor, family and model all found */
};
/* Parse a /proc/cpuinfo text; returns cpu->known. */
bool p2ps_host_cpu_parse(const char *text, struct p2ps_host_cpu *cpu);
/* This host's (/proc/cpuinfo); returns cpu->known. */
bool p2ps_host_cpu(struct p2ps_host_cpu *cpu);

#ifdef __cplusplus
}
#endif

#endif /* P2PSHIM_H */
