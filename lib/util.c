// SPDX-License-Identifier: GPL-2.0
/* libp2pshim: p2ps_sanitize(), decompression (files.c: files; run.c: programs). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <signal.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <linux/openat2.h>
#include <unistd.h>

#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

#include "internal.h"

#define MAX_FILE (1UL << 30)

char *p2ps_sanitize(char *s)
{
	unsigned char *p = (unsigned char *)s;

	while (*p) {
		unsigned char c = *p;
		size_t n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 :
			   (c & 0xf8) == 0xf0 ? 4 : 0;
		uint32_t cp = n == 2 ? c & 0x1f : n == 3 ? c & 0x0f : c & 0x07;
		size_t i;
		bool ok = n > 0;

		for (i = 1; ok && i < n; i++) {
			if ((p[i] & 0xc0) != 0x80)
				ok = false;
			else
				cp = cp << 6 | (p[i] & 0x3f);
		}
		/* overlong forms, surrogates, past U+10FFFF, C0/C1 controls, DEL */
		if (ok && n > 1 && (cp < (n == 2 ? 0x80u : n == 3 ? 0x800u : 0x10000u) ||
				    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff || (cp >= 0x80 && cp < 0xa0)))
			ok = false;
		if (ok && n == 1 && (c < 0x20 || c == 0x7f) && c != '\t')
			ok = false;
		if (!ok) {
			*p++ = '?';	/* one byte at a time: the rest is judged again */
			continue;
		}
		p += n;
	}
	return s;
}

/* ---------------------------------------------------------------- decompression */

static int grow(unsigned char **buf, size_t *cap, size_t need)
{
	unsigned char *n;
	size_t c = *cap ? *cap : 1 << 20;

	while (c < need) {
		if (c >= MAX_FILE)
			return -EFBIG;
		c *= 2;
	}
	if (c == *cap)
		return 0;
	n = realloc(*buf, c);
	if (!n)
		return -ENOMEM;
	*buf = n;
	*cap = c;
	return 0;
}

static int unxz(const unsigned char *in, size_t inlen, unsigned char **out, size_t *outlen)
{
	lzma_stream s = LZMA_STREAM_INIT;
	unsigned char *buf = NULL;
	size_t cap = 0;
	lzma_ret ret;

	if (lzma_stream_decoder(&s, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK)
		return -P2PS_E_COMPRESSION;
	s.next_in = in;
	s.avail_in = inlen;
	do {
		if (grow(&buf, &cap, s.total_out + 65536)) {
			ret = LZMA_MEM_ERROR;
			break;
		}
		s.next_out = buf + s.total_out;
		s.avail_out = cap - s.total_out;
		ret = lzma_code(&s, LZMA_FINISH);
	} while (ret == LZMA_OK);
	*outlen = s.total_out;
	lzma_end(&s);
	if (ret != LZMA_STREAM_END) {
		free(buf);
		return -P2PS_E_COMPRESSION;
	}
	*out = buf;
	return 0;
}

static int unzstd(const unsigned char *in, size_t inlen, unsigned char **out, size_t *outlen)
{
	ZSTD_DStream *z = ZSTD_createDStream();
	ZSTD_inBuffer ib = { in, inlen, 0 };
	unsigned char *buf = NULL;
	size_t cap = 0, len = 0, r;

	if (!z)
		return -ENOMEM;
	ZSTD_initDStream(z);
	for (;;) {
		ZSTD_outBuffer ob;

		if (grow(&buf, &cap, len + 65536))
			goto fail;
		ob.dst = buf + len;
		ob.size = cap - len;
		ob.pos = 0;
		r = ZSTD_decompressStream(z, &ob, &ib);
		if (ZSTD_isError(r))
			goto fail;
		len += ob.pos;
		if (r == 0 && ib.pos == ib.size)
			break;		/* last frame complete */
		if (ib.pos == ib.size && ob.pos < ob.size)
			goto fail;	/* truncated */
	}
	ZSTD_freeDStream(z);
	*out = buf;
	*outlen = len;
	return 0;
fail:
	ZSTD_freeDStream(z);
	free(buf);
	return -P2PS_E_COMPRESSION;
}

static int ungz(const unsigned char *in, size_t inlen, unsigned char **out, size_t *outlen)
{
	z_stream s;
	unsigned char *buf = NULL;
	size_t cap = 0;
	int ret;

	memset(&s, 0, sizeof(s));
	if (inflateInit2(&s, 15 + 32) != Z_OK)
		return -P2PS_E_COMPRESSION;
	s.next_in = (unsigned char *)in;
	s.avail_in = (uInt)inlen;
	do {
		if (grow(&buf, &cap, s.total_out + 65536)) {
			ret = Z_MEM_ERROR;
			break;
		}
		s.next_out = buf + s.total_out;
		s.avail_out = (uInt)(cap - s.total_out);
		ret = inflate(&s, Z_NO_FLUSH);
	} while (ret == Z_OK);
	*outlen = s.total_out;
	inflateEnd(&s);
	if (ret != Z_STREAM_END) {
		free(buf);
		return -P2PS_E_COMPRESSION;
	}
	*out = buf;
	return 0;
}

int p2ps_decompress(const unsigned char *in, size_t inlen, unsigned char **out, size_t *outlen)
{
	if (inlen >= 6 && !memcmp(in, "\xfd" "7zXZ\0", 6))
		return unxz(in, inlen, out, outlen);
	if (inlen >= 4 && !memcmp(in, "\x28\xb5\x2f\xfd", 4))
		return unzstd(in, inlen, out, outlen);
	if (inlen >= 2 && in[0] == 0x1f && in[1] == 0x8b)
		return ungz(in, inlen, out, outlen);
	*out = malloc(inlen ? inlen : 1);
	if (!*out)
		return -ENOMEM;
	memcpy(*out, in, inlen);
	*outlen = inlen;
	return 0;
}
