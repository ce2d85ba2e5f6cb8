/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libp2pshim internals, shared by the library's files and the unit tests.
 * Not installed.
 */
#ifndef P2PSHIM_INTERNAL_H
#define P2PSHIM_INTERNAL_H

#include <stdio.h>
#include <p2pshim.h>
#include <p2p-shim/strutil.h>

struct nl_sock;
struct nl_msg;
struct nlattr;

/*
 * What a handle talks to.  The default backend does ioctl(2) on the device
 * and generic netlink; unit tests install their own to play the module.
 */
struct p2ps_backend {
	/* Returns 0 or -errno; @arg is the P2PS_IOC_* argument struct. */
	int (*ioctl)(void *ctx, unsigned long req, void *arg);
	/*
	 * Run a netlink dump of @cmd (P2PS_CMD_GET_HOOKS/MAPPINGS); call @cb
	 * with each message's attributes (indexed by P2PS_A_*).  0 or <0.
	 */
	int (*dump)(void *ctx, int cmd,
		    int (*cb)(struct nlattr **tb, void *arg), void *arg);
	void (*close)(void *ctx);
	void *ctx;
};

struct p2ps_handle {
	int fd;
	struct p2ps_backend be;
	/* netlink (default backend) */
	struct nl_sock *sk;
	int family;
	/* events */
	struct nl_sock *ev_sk;
	p2ps_event_cb ev_cb;
	void *ev_arg;
};

/* Open a handle on @be (tests); checks the ABI like p2ps_open(). */
int p2ps_open_backend(struct p2ps_handle **out, const struct p2ps_backend *be);

/* netlink.c */
int p2ps_nl_dump(void *ctx, int cmd, int (*cb)(struct nlattr **tb, void *arg), void *arg);
int p2ps_parse_hook(struct nlattr *nest, struct p2ps_hook_info *out);
int p2ps_parse_mapping(struct nlattr *nest, struct p2ps_mapping_info *out);
int p2ps_parse_gpu(struct nlattr *nest, struct p2ps_gpu_info *out);
/* @tb indexed by P2PS_A_*, P2PS_A_MAX + 1 entries. */
int p2ps_parse_event(struct nlattr **tb, struct p2ps_event_info *out);
/* Parse one generic netlink message of family @family into @tb. */
int p2ps_parse_msg(struct nl_msg *msg, struct nlattr **tb);
void p2ps_nl_close(struct p2ps_handle *h);

/*
 * files.c: files under a root prefix.  Every path is resolved inside the
 * root: symlinks are followed within the tree (an absolute target starts at
 * the root, ".." stops there), never out of it (openat2 RESOLVE_IN_ROOT, or
 * p2ps_root_resolve() where that is missing).  Reads take regular files
 * only, opened non-blocking (no FIFO, no device), and at most
 * P2PS_ROOT_READ_MAX bytes (else NULL with errno EFBIG).  The public part
 * (p2ps_root_new(), p2ps_root_open(), ...) is in p2pshim.h.
 */
#define P2PS_ROOT_READ_MAX ((size_t)4 << 20)
/* ROOT/.symlinks: larger than this, the tree is refused (-EFBIG), not read without it */
#define P2PS_LINKS_MAX ((size_t)256 << 20)
struct p2ps_link {
	const char *path, *real;	/* into p2ps_root.links, not NUL-terminated */
	size_t plen, rlen;
};
struct p2ps_root {
	char dir[4096];		/* "" for the live system */
	bool live;
	char *links;		/* contents of ROOT/.symlinks, or NULL */
	struct p2ps_link *link;	/* its lines, sorted by link path (files.c) */
	size_t nr_links;
	int fd;			/* the root directory (O_PATH), -1 if live */
	void (*trace)(void *arg, const char *path, int how);	/* p2ps_doctor_opts */
	void *trace_arg;
};
/* Tests: set to take p2ps_root_resolve() instead of openat2. */
extern int p2ps_root_no_openat2;
int p2ps_root_init(struct p2ps_root *r, const char *root);
void p2ps_root_fini(struct p2ps_root *r);
/* ROOT + path into buf (for messages: open through p2ps_root_open()). */
const char *p2ps_root_path(const struct p2ps_root *r, const char *path, char *buf, size_t len);
/*
 * The canonical path ("/a/b") of @path inside the root, every link followed
 * under it (the last one only if @follow_last); 0 or -errno (-ENOENT when a
 * component is missing, -ELOOP after 40 links).
 */
int p2ps_root_resolve(const struct p2ps_root *r, const char *path, bool follow_last,
		      char *out, size_t len);
/* Read a whole file (gzip transparently if @gz); NUL-terminated; NULL if absent. */
char *p2ps_root_read(const struct p2ps_root *r, const char *path, size_t *len, bool gz);
/* First line of a file, trimmed; false if absent. */
bool p2ps_root_line(const struct p2ps_root *r, const char *path, char *buf, size_t len);
bool p2ps_root_exists(const struct p2ps_root *r, const char *path);

/* Whole files (p2ps_read_file_max(), p2pshim.h) from an open @fd (taken, closed). */
char *p2ps_read_fd(int fd, size_t *len, bool gz, size_t max);
/* p2ps_read_file_max() with a cap of 1 GiB (kernel modules). */
char *p2ps_read_file(const char *path, size_t *len, bool gz);
/* p2ps_strlcpy(), p2ps_trim(), p2ps_catf(): include/p2p-shim/strutil.h, p2pctl's too. */
/* Decompress a whole .xz/.zst/.gz buffer chosen by magic; or copy. */
int p2ps_decompress(const unsigned char *in, size_t inlen, unsigned char **out, size_t *outlen);
/*
 * The last @keep bytes of the decompressed @in into @tail (*@taillen of
 * them), in constant memory whatever it inflates to.
 */
int p2ps_decompress_tail(const unsigned char *in, size_t inlen, unsigned char *tail, size_t keep,
			 size_t *taillen);

/* run.c: p2ps_run() and its kin are public (p2pshim.h). */

/*
 * PCI config space (doctor_platform.c).  Offset of extended capability @id
 * in @cfg (@len bytes, as read from sysfs `config`), 0 if absent; -1 if the
 * extended space is not there (fewer than 260 bytes: not root) or the list
 * is malformed.
 */
int p2ps_pci_ext_cap(const uint8_t *cfg, size_t len, uint16_t id);
#define P2PS_PCI_EXT_CAP_ACS 0x000d
/* ACS control bits (PCIe r6.0 7.7.8.3) */
#define P2PS_ACS_SV 0x01	/* source validation */
#define P2PS_ACS_TB 0x02	/* translation blocking */
#define P2PS_ACS_RR 0x04	/* P2P request redirect */
#define P2PS_ACS_CR 0x08	/* P2P completion redirect */
#define P2PS_ACS_UF 0x10	/* upstream forwarding */
#define P2PS_ACS_EC 0x20	/* P2P egress control */
#define P2PS_ACS_DT 0x40	/* direct translated P2P */
/* "2.5 GT/s PCIe" -> 1 ... "64.0 GT/s PCIe" -> 6; 0 if unknown */
int p2ps_pcie_gen(const char *speed);
/* "2.27.5" etc.: <0, 0, >0 as strcmp */
int p2ps_version_cmp(const char *a, const char *b);

#endif
