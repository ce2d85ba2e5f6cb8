// SPDX-License-Identifier: GPL-2.0
/*
 * `p2pctl doctor`: the running kernel's initramfs.  Where nvidia loads from
 * it (early KMS), it loads before the root file system's /etc/modprobe.d is
 * there: unless p2p-shim.ko and its modprobe.d file (softdep, enable=1) are
 * in the initramfs too, every GPU comes up before the shim is armed (stale).
 * The image is read as the kernel unpacks it: cpio "newc" archives one
 * after another, an uncompressed one first (CPU microcode) and a compressed
 * one last.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "doctor.h"

/* Debian and Ubuntu (initramfs-tools), dracut, mkinitcpio's default preset. */
static const char *const images[] = {
	"/boot/initrd.img-%s", "/boot/initramfs-%s.img", "/boot/initramfs-linux.img",
};

#define IMAGE_MAX ((size_t)1 << 30)
#define NEWC_HDR 110

struct seen {
	bool nvidia, shim, conf;
};

static size_t hexfield(const unsigned char *p)
{
	char h[9];

	memcpy(h, p, 8);
	h[8] = '\0';
	return (size_t)strtoul(h, NULL, 16);
}

static size_t align4(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

static void note(const char *name, size_t len, struct seen *s)
{
	const char *base = memrchr(name, '/', len);
	size_t blen;

	base = base ? base + 1 : name;
	blen = len - (size_t)(base - name);
	if (blen > 6 && !strncmp(base, "nvidia", 6) && memmem(base, blen, ".ko", 3))
		s->nvidia = true;
	if (!strncmp(base, "p2p-shim.ko", blen < 11 ? blen : 11) && blen >= 11)
		s->shim = true;
	if (len >= 24 && !memcmp(name + len - 24, "modprobe.d/p2p-shim.conf", 24))
		s->conf = true;
}

/*
 * The newc entries at @p: names into @s.  Returns the bytes of the archive
 * (through its trailer), 0 if @p holds none.
 */
static size_t scan_cpio(const unsigned char *p, size_t len, struct seen *s)
{
	size_t off = 0;

	while (len - off >= NEWC_HDR &&
	       (!memcmp(p + off, "070701", 6) || !memcmp(p + off, "070702", 6))) {
		size_t namesize = hexfield(p + off + 94), filesize = hexfield(p + off + 54);
		const char *name = (const char *)p + off + NEWC_HDR;

		if (!namesize || namesize > len - off - NEWC_HDR)
			return off;
		if (namesize == 11 && !memcmp(name, "TRAILER!!!", 11))
			return align4(off + NEWC_HDR + namesize);
		note(name, namesize - 1, s);
		off = align4(off + NEWC_HDR + namesize);
		if (filesize > len - off)
			return len;
		off = align4(off + filesize);
	}
	return off;
}

/* 0, or -errno / -P2PS_E_COMPRESSION: what @img holds, into @s. */
static int scan_image(const unsigned char *img, size_t len, struct seen *s)
{
	size_t off = 0, n;

	while (off < len) {
		unsigned char *out;
		size_t outlen;
		int err;

		while (off < len && !img[off])
			off++;	/* padding between the archives */
		if (off == len)
			return 0;
		n = scan_cpio(img + off, len - off, s);
		if (n) {
			off += n;
			continue;
		}
		/* the compressed archive: the last one */
		err = p2ps_decompress(img + off, len - off, &out, &outlen);
		if (err)
			return err;
		scan_cpio(out, outlen, s);
		free(out);
		return 0;
	}
	return 0;
}

#define REMEDY "put p2p-shim and /etc/modprobe.d/p2p-shim.conf (p2pctl config --write) in it: " \
	"initramfs-tools: echo p2p-shim >>/etc/initramfs-tools/modules; update-initramfs -u; " \
	"dracut: add_drivers+=\" p2p-shim \" and install_items+=\" /etc/modprobe.d/p2p-shim.conf \" " \
	"in /etc/dracut.conf.d/p2p-shim.conf; dracut -f; mkinitcpio: p2p-shim in MODULES before " \
	"nvidia, the file in FILES; mkinitcpio -P"

void p2ps_dr_initramfs(struct dctx *c)
{
	const char *rel = c->r->kernel_release;
	char path[320], lack[64] = "";
	unsigned char *img = NULL;
	struct seen s = { 0 };
	size_t i, len = 0;
	int err = 0;

	/* the first image there; one there but unreadable is said, not skipped */
	for (i = 0; i < sizeof(images) / sizeof(images[0]); i++) {
		snprintf(path, sizeof(path), images[i], rel);
		if (!p2ps_root_exists(&c->root, path))
			continue;
		img = (unsigned char *)p2ps_root_read_max(&c->root, path, &len, false, IMAGE_MAX);
		err = img ? 0 : errno;
		break;
	}
	/* none: a kernel booted without one, or a captured tree (too big to keep) */
	if (i == sizeof(images) / sizeof(images[0]))
		return;
	if (!img) {
		p2ps_dr_add(c, "initramfs", NULL, P2PS_V_SKIP, path, NULL,
		    "%s: not readable: %s%s", path, strerror(err ? err : EIO),
		    err == EACCES ? " (as root it is)" : "");
		return;
	}
	err = scan_image(img, len, &s);
	free(img);
	if (err) {
		p2ps_dr_add(c, "initramfs", NULL, P2PS_V_SKIP, path, NULL,
		    "%s: %s", path, p2ps_strerror(err));
		return;
	}
	if (!s.nvidia) {
		p2ps_dr_add(c, "initramfs", NULL, P2PS_V_OK, path, NULL,
		    "nvidia is not in %s: it loads after /etc/modprobe.d is there", path);
		return;
	}
	if (s.shim && s.conf) {
		p2ps_dr_add(c, "initramfs", NULL, P2PS_V_OK, path, NULL,
		    "%s holds nvidia, p2p-shim and p2p-shim.conf: armed before nvidia there too", path);
		return;
	}
	snprintf(lack, sizeof(lack), "%s%s%s", s.shim ? "" : "p2p-shim.ko",
		 !s.shim && !s.conf ? " and " : "", s.conf ? "" : "modprobe.d/p2p-shim.conf");
	p2ps_dr_add(c, "initramfs", NULL, P2PS_V_WARN, path, REMEDY,
	    "%s holds nvidia but not %s: nvidia loads from it (early KMS) before p2p-shim, "
	    "and the GPUs come up stale", path, lack);
}
