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

/*
 * The decoders inflate through one 64 KiB chunk at a time into a sink:
 * the whole image (p2ps_decompress()) or only its last bytes
 * (p2ps_decompress_tail(): a module's signature marker), so a small file
 * that inflates to a GiB costs a GiB only where all of it is wanted.
 */
#define CHUNK 65536
struct sink {
	unsigned char *buf;
	size_t len, cap;
	size_t keep;		/* 0: everything (up to MAX_FILE); else only the last @keep bytes */
	size_t total;
};

static int sink_put(struct sink *k, const unsigned char *p, size_t n)
{
	/* A decoder's empty chunk: nothing to copy, and k->buf may still be NULL. */
	if (!n)
		return 0;
	k->total += n;
	if (k->keep) {
		if (n >= k->keep) {
			memcpy(k->buf, p + n - k->keep, k->keep);
			k->len = k->keep;
		} else {
			size_t drop = k->len + n > k->keep ? k->len + n - k->keep : 0;

			memmove(k->buf, k->buf + drop, k->len - drop);
			memcpy(k->buf + k->len - drop, p, n);
			k->len += n - drop;
		}
		return 0;
	}
	if (!k->buf || k->len + n > k->cap) {
		size_t c = k->cap ? k->cap : 1 << 20;
		unsigned char *nb;

		while (c < k->len + n) {
			if (c >= MAX_FILE)
				return -EFBIG;
			c *= 2;
		}
		nb = realloc(k->buf, c);
		if (!nb)
			return -ENOMEM;
		k->buf = nb;
		k->cap = c;
	}
	memcpy(k->buf + k->len, p, n);
	k->len += n;
	return 0;
}

static int unxz(const unsigned char *in, size_t inlen, struct sink *k)
{
	lzma_stream s = LZMA_STREAM_INIT;
	unsigned char chunk[CHUNK];
	lzma_ret ret;
	int err = 0;

	if (lzma_stream_decoder(&s, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK)
		return -P2PS_E_COMPRESSION;
	s.next_in = in;
	s.avail_in = inlen;
	do {
		s.next_out = chunk;
		s.avail_out = sizeof(chunk);
		ret = lzma_code(&s, LZMA_FINISH);
		err = sink_put(k, chunk, sizeof(chunk) - s.avail_out);
	} while (ret == LZMA_OK && !err);
	lzma_end(&s);
	return err ? err : ret == LZMA_STREAM_END ? 0 : -P2PS_E_COMPRESSION;
}

static int unzstd(const unsigned char *in, size_t inlen, struct sink *k)
{
	ZSTD_DStream *z = ZSTD_createDStream();
	ZSTD_inBuffer ib = { in, inlen, 0 };
	unsigned char chunk[CHUNK];
	int err = 0;
	size_t r;

	if (!z)
		return -ENOMEM;
	ZSTD_initDStream(z);
	for (;;) {
		ZSTD_outBuffer ob = { chunk, sizeof(chunk), 0 };

		r = ZSTD_decompressStream(z, &ob, &ib);
		if (ZSTD_isError(r)) {
			err = -P2PS_E_COMPRESSION;
			break;
		}
		err = sink_put(k, chunk, ob.pos);
		if (err || (r == 0 && ib.pos == ib.size))
			break;		/* last frame complete */
		if (ib.pos == ib.size && ob.pos < ob.size) {
			err = -P2PS_E_COMPRESSION;	/* truncated */
			break;
		}
	}
	ZSTD_freeDStream(z);
	return err;
}

static int ungz(const unsigned char *in, size_t inlen, struct sink *k)
{
	unsigned char chunk[CHUNK];
	z_stream s;
	int ret, err = 0;

	memset(&s, 0, sizeof(s));
	if (inflateInit2(&s, 15 + 32) != Z_OK)
		return -P2PS_E_COMPRESSION;
	s.next_in = (unsigned char *)in;
	s.avail_in = (uInt)inlen;
	do {
		s.next_out = chunk;
		s.avail_out = sizeof(chunk);
		ret = inflate(&s, Z_NO_FLUSH);
		if (ret == Z_OK || ret == Z_STREAM_END)
			err = sink_put(k, chunk, sizeof(chunk) - s.avail_out);
	} while (ret == Z_OK && !err);
	inflateEnd(&s);
	return err ? err : ret == Z_STREAM_END ? 0 : -P2PS_E_COMPRESSION;
}

static int decompress(const unsigned char *in, size_t inlen, struct sink *k)
{
	if (inlen >= 6 && !memcmp(in, "\xfd" "7zXZ\0", 6))
		return unxz(in, inlen, k);
	if (inlen >= 4 && !memcmp(in, "\x28\xb5\x2f\xfd", 4))
		return unzstd(in, inlen, k);
	if (inlen >= 2 && in[0] == 0x1f && in[1] == 0x8b)
		return ungz(in, inlen, k);
	return sink_put(k, in, inlen);
}

int p2ps_decompress(const unsigned char *in, size_t inlen, unsigned char **out, size_t *outlen)
{
	struct sink k = { 0 };
	int err = decompress(in, inlen, &k);

	if (!err && !k.buf)
		k.buf = malloc(1);
	if (!err && !k.buf)
		err = -ENOMEM;
	if (err) {
		free(k.buf);
		return err;
	}
	*out = k.buf;
	*outlen = k.len;
	return 0;
}

int p2ps_decompress_tail(const unsigned char *in, size_t inlen, unsigned char *tail, size_t keep,
			 size_t *taillen)
{
	struct sink k = { .buf = tail, .keep = keep };
	int err = keep ? decompress(in, inlen, &k) : -EINVAL;

	*taillen = k.len;
	return err;
}
