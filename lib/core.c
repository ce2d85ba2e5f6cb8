// SPDX-License-Identifier: GPL-2.0
/* libp2pshim: handles, version, status, enable/disable, error strings. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "internal.h"

static const char *const lib_errors[] = {
	[P2PS_E_NOT_LOADED - P2PS_E_BASE] = "p2p-shim module not loaded (no /dev/p2p-shim)",
	[P2PS_E_ABI - P2PS_E_BASE] = "p2p-shim module speaks another ABI version",
	[P2PS_E_NO_FAMILY - P2PS_E_BASE] = "generic netlink family \"" P2PS_GENL_NAME "\" not found",
	[P2PS_E_NETLINK - P2PS_E_BASE] = "netlink communication with p2p-shim failed",
	[P2PS_E_FORMAT - P2PS_E_BASE] = "input file has an unexpected format",
	[P2PS_E_NO_SYMTAB - P2PS_E_BASE] = "ELF file has no symbol table (stripped)",
	[P2PS_E_NO_VERSION - P2PS_E_BASE] = "driver version unknown",
	[P2PS_E_COMPRESSION - P2PS_E_BASE] = "could not decompress the input",
	[P2PS_E_TRUNCATED - P2PS_E_BASE] = "ELF file is truncated (shorter than its headers say)",
};

const char *p2ps_strerror(int err)
{
	if (err < 0)
		err = -err;
	if (err == 0)
		return "success";
	if (err >= P2PS_E_BASE && err < P2PS_E_END)
		return lib_errors[err - P2PS_E_BASE];
	if (err >= P2PS_E_BASE)
		return "unknown libp2pshim error";
	return strerror(err);
}

const char *p2ps_lib_version(void)
{
	return P2PS_VERSION;
}

/* ---------------------------------------------------------------- names */

#define NAME(tab, v) ((v) < sizeof(tab) / sizeof(tab[0]) && tab[v] ? tab[v] : "unknown")

const char *p2ps_state_name(uint32_t s)
{
	static const char *const t[] = {
		[P2PS_STATE_DISABLED] = "disabled", [P2PS_STATE_WAITING] = "waiting",
		[P2PS_STATE_ARMED] = "armed", [P2PS_STATE_DRY_RUN] = "dry-run",
		[P2PS_STATE_RESIDUAL] = "residual",
	};
	return NAME(t, s);
}

const char *p2ps_hook_kind_name(uint32_t k)
{
	static const char *const t[] = {
		[P2PS_HOOK_REDIRECT] = "redirect", [P2PS_HOOK_ARG] = "arg",
		[P2PS_HOOK_RETURN] = "return", [P2PS_HOOK_COUNT] = "count",
	};
	return NAME(t, k);
}

const char *p2ps_hook_state_name(uint32_t s)
{
	static const char *const t[] = {
		[P2PS_HOOK_IDLE] = "idle", [P2PS_HOOK_INSTALLED] = "installed",
		[P2PS_HOOK_FAILED] = "failed",
	};
	return NAME(t, s);
}

const char *p2ps_sb1_state_name(uint32_t c)
{
	static const char *const t[] = {
		[P2PS_SB1_UNKNOWN] = "unknown", [P2PS_SB1_ON] = "on", [P2PS_SB1_OFF] = "off",
		[P2PS_SB1_FORCED] = "forced", [P2PS_SB1_FAILED] = "failed",
	};
	return NAME(t, c);
}

const char *p2ps_conn_type_name(uint32_t c)
{
	static const char *const t[] = {
		[P2PS_CONN_PCIE_BAR1] = "pcie-bar1",
		[P2PS_CONN_BAR1_WINDOW] = "bar1-window",
		[P2PS_CONN_STATIC_BAR1] = "static-bar1",
	};
	return NAME(t, c);
}

const char *p2ps_event_name(uint32_t e)
{
	static const char *const t[] = {
		[P2PS_EV_ARMED] = "armed", [P2PS_EV_DISARMED] = "disarmed",
		[P2PS_EV_DRIVER_ARRIVED] = "driver-arrived", [P2PS_EV_DRIVER_LEFT] = "driver-left",
		[P2PS_EV_MAPPING_CREATED] = "mapping-created",
		[P2PS_EV_MAPPING_REMOVED] = "mapping-removed", [P2PS_EV_REFUSED] = "refused",
	};
	return NAME(t, e);
}

/* ---------------------------------------------------------------- handles */

static int dev_ioctl(void *ctx, unsigned long req, void *arg)
{
	int fd = *(int *)ctx;

	return ioctl(fd, req, arg) < 0 ? -errno : 0;
}

int p2ps_open_backend(struct p2ps_handle **out, const struct p2ps_backend *be)
{
	struct p2ps_handle *h;
	unsigned int abi;
	int err;

	*out = NULL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->fd = -1;
	h->family = -1;
	h->be = *be;
	err = p2ps_module_version(h, &abi, NULL, 0);
	if (!err && abi != P2PS_ABI_VERSION)
		err = -P2PS_E_ABI;
	if (err) {
		free(h);
		return err;
	}
	*out = h;
	return 0;
}

int p2ps_open(struct p2ps_handle **out, const char *dev_path)
{
	struct p2ps_backend be = { 0 };
	struct p2ps_handle *h;
	int fd, err;

	*out = NULL;
	fd = open(dev_path ? dev_path : "/dev/" P2PS_DEVICE_NAME, O_RDWR | O_CLOEXEC);
	if (fd < 0 && (errno == EACCES || errno == EPERM))
		fd = open(dev_path ? dev_path : "/dev/" P2PS_DEVICE_NAME, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ENODEV || errno == ENXIO ?
			-P2PS_E_NOT_LOADED : -errno;
	/* The backend context is the handle's own fd, set below. */
	h = calloc(1, sizeof(*h));
	if (!h) {
		close(fd);
		return -ENOMEM;
	}
	h->fd = fd;
	h->family = -1;
	be.ioctl = dev_ioctl;
	be.dump = p2ps_nl_dump;
	be.ctx = h;
	h->be = be;
	{
		unsigned int abi;

		err = p2ps_module_version(h, &abi, NULL, 0);
		if (!err && abi != P2PS_ABI_VERSION)
			err = -P2PS_E_ABI;
	}
	if (err) {
		p2ps_close(h);
		return err;
	}
	*out = h;
	return 0;
}

void p2ps_close(struct p2ps_handle *h)
{
	if (!h)
		return;
	p2ps_nl_close(h);
	if (h->be.close)
		h->be.close(h->be.ctx);
	if (h->fd >= 0)
		close(h->fd);
	free(h);
}

/*
 * The default backend's ioctl context is the handle (so that the netlink
 * dump can reach the socket); its fd is the handle's first member.
 */
static int do_ioctl(struct p2ps_handle *h, unsigned long req, void *arg)
{
	if (h->be.ioctl == dev_ioctl)
		return dev_ioctl(&h->fd, req, arg);
	if (!h->be.ioctl)
		return -ENOSYS;
	return h->be.ioctl(h->be.ctx, req, arg);
}

int p2ps_module_version(struct p2ps_handle *h, unsigned int *abi, char *buf, size_t len)
{
	struct p2ps_version v;
	int err;

	memset(&v, 0, sizeof(v));
	v.size = sizeof(v);
	err = do_ioctl(h, P2PS_IOC_VERSION, &v);
	if (err)
		return err;
	v.module[sizeof(v.module) - 1] = '\0';
	if (abi)
		*abi = v.abi;
	if (buf && len)
		p2ps_strlcpy(buf, v.module, len);
	return 0;
}

/* ---------------------------------------------------------------- status */

struct dump_ctx {
	struct p2ps_status_info *st;
	size_t cap;
	int err;
};

static int hook_cb(struct nlattr **tb, void *arg)
{
	struct dump_ctx *c = arg;
	struct p2ps_status_info *st = c->st;

	if (!tb[P2PS_A_HOOK])
		return 0;
	if (st->nr_hooks == c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 16;
		struct p2ps_hook_info *n = realloc(st->hooks, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		st->hooks = n;
		c->cap = ncap;
	}
	if (p2ps_parse_hook(tb[P2PS_A_HOOK], &st->hooks[st->nr_hooks]) == 0)
		st->nr_hooks++;
	return 0;
}

static int map_cb(struct nlattr **tb, void *arg)
{
	struct dump_ctx *c = arg;
	struct p2ps_status_info *st = c->st;

	if (!tb[P2PS_A_MAPPING])
		return 0;
	if (st->nr_mappings == c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 16;
		struct p2ps_mapping_info *n = realloc(st->mappings, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		st->mappings = n;
		c->cap = ncap;
	}
	if (p2ps_parse_mapping(tb[P2PS_A_MAPPING], &st->mappings[st->nr_mappings]) == 0)
		st->nr_mappings++;
	return 0;
}

static int gpu_cb(struct nlattr **tb, void *arg)
{
	struct dump_ctx *c = arg;
	struct p2ps_status_info *st = c->st;

	if (!tb[P2PS_A_GPU])
		return 0;
	if (st->nr_gpus == c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 8;
		struct p2ps_gpu_info *n = realloc(st->gpus, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		st->gpus = n;
		c->cap = ncap;
	}
	if (p2ps_parse_gpu(tb[P2PS_A_GPU], &st->gpus[st->nr_gpus]) == 0)
		st->nr_gpus++;
	return 0;
}

int p2ps_status(struct p2ps_handle *h, struct p2ps_status_info **out)
{
	struct p2ps_status s;
	struct p2ps_status_info *st;
	struct dump_ctx c;
	int err;

	*out = NULL;
	memset(&s, 0, sizeof(s));
	s.size = sizeof(s);
	err = do_ioctl(h, P2PS_IOC_STATUS, &s);
	if (err)
		return err;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->state = s.state;
	st->flags = s.flags;
	st->nr_installed = s.hooks;
	st->live_mappings = s.live_mappings;
	st->stale_gpus = s.stale_gpus;
	st->hits = s.hits;
	s.driver_version[sizeof(s.driver_version) - 1] = '\0';
	s.profile[sizeof(s.profile) - 1] = '\0';
	p2ps_strlcpy(st->driver_version, s.driver_version, sizeof(st->driver_version));
	p2ps_strlcpy(st->profile, s.profile, sizeof(st->profile));

	if (!h->be.dump) {
		st->detail_error = -ENOSYS;
	} else {
		memset(&c, 0, sizeof(c));
		c.st = st;
		err = h->be.dump(h->be.ctx, P2PS_CMD_GET_HOOKS, hook_cb, &c);
		if (!err) {
			c.cap = 0;
			err = h->be.dump(h->be.ctx, P2PS_CMD_GET_MAPPINGS, map_cb, &c);
		}
		if (err) {
			free(st->hooks);
			free(st->mappings);
			st->hooks = NULL;
			st->mappings = NULL;
			st->nr_hooks = st->nr_mappings = 0;
			st->detail_error = err;
		} else {
			/* A module without the GPU dump (before 15's ABI addition): none. */
			c.cap = 0;
			if (h->be.dump(h->be.ctx, P2PS_CMD_GET_GPUS, gpu_cb, &c)) {
				free(st->gpus);
				st->gpus = NULL;
				st->nr_gpus = 0;
			}
		}
	}
	*out = st;
	return 0;
}

void p2ps_status_free(struct p2ps_status_info *st)
{
	if (!st)
		return;
	free(st->hooks);
	free(st->mappings);
	free(st->gpus);
	free(st);
}

/* ---------------------------------------------------------------- enable */

int p2ps_enable(struct p2ps_handle *h, uint32_t flags, struct p2ps_enable_result *res)
{
	struct p2ps_enable e;
	int err;

	if (res)
		memset(res, 0, sizeof(*res));
	if (flags & ~P2PS_ENABLE_FLAGS)
		return -EINVAL;
	memset(&e, 0, sizeof(e));
	e.size = sizeof(e);
	e.flags = flags;
	err = do_ioctl(h, P2PS_IOC_ENABLE, &e);
	if (res) {
		e.target[sizeof(e.target) - 1] = '\0';
		e.reason[sizeof(e.reason) - 1] = '\0';
		res->state = e.state;
		p2ps_strlcpy(res->target, e.target, sizeof(res->target));
		p2ps_strlcpy(res->reason, e.reason, sizeof(res->reason));
	}
	return err;
}

int p2ps_disable(struct p2ps_handle *h, char *busy, size_t busylen)
{
	struct p2ps_disable d;
	int err;

	memset(&d, 0, sizeof(d));
	d.size = sizeof(d);
	err = do_ioctl(h, P2PS_IOC_DISABLE, &d);
	if (busy && busylen) {
		d.reason[sizeof(d.reason) - 1] = '\0';
		p2ps_strlcpy(busy, err == -EBUSY ? d.reason : "", busylen);
	}
	return err;
}
