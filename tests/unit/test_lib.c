// SPDX-License-Identifier: GPL-2.0
/*
 * libp2pshim against a mock of the ioctl and netlink layers: version, status
 * (summary + dumps), enable/disable results, event parsing, error strings.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include <p2p-shim/profile.h>
#include "internal.h"

struct mock {
	unsigned int abi;
	int enable_err, disable_err, dump_err;
	uint32_t got_flags;
	unsigned long last_req;
	int ioctls;
};

static int mock_ioctl(void *ctx, unsigned long req, void *arg)
{
	struct mock *m = ctx;

	m->ioctls++;
	m->last_req = req;
	switch (req) {
	case P2PS_IOC_VERSION: {
		struct p2ps_version *v = arg;

		if (v->size != sizeof(*v))
			return -EINVAL;
		v->abi = m->abi;
		strcpy(v->module, "0.1.0-test");
		return 0;
	}
	case P2PS_IOC_STATUS: {
		struct p2ps_status *s = arg;

		if (s->size != sizeof(*s))
			return -EINVAL;
		s->state = P2PS_STATE_ARMED;
		s->flags = P2PS_ENABLE_FORCE;
		s->hooks = 2;
		s->live_mappings = 1;
		s->stale_gpus = 0x5;
		s->hits = 42;
		strcpy(s->driver_version, "580.159.04");
		strcpy(s->profile, "gen-b");
		return 0;
	}
	case P2PS_IOC_ENABLE: {
		struct p2ps_enable *e = arg;

		if (e->size != sizeof(*e) || e->pad)
			return -EINVAL;
		m->got_flags = e->flags;
		if (m->enable_err) {
			strcpy(e->target, "kbusCreateP2PMappingForBar1P2P_395e98");
			strcpy(e->reason, "body differs at +4");
			e->state = P2PS_STATE_DISABLED;
			return m->enable_err;
		}
		e->state = e->flags & P2PS_ENABLE_DRY_RUN ? P2PS_STATE_DRY_RUN : P2PS_STATE_ARMED;
		return 0;
	}
	case P2PS_IOC_DISABLE: {
		struct p2ps_disable *d = arg;

		if (d->size != sizeof(*d) || d->flags)
			return -EINVAL;
		if (m->disable_err == -EBUSY)
			strcpy(d->reason, "0-1 (2 refs), 2-3 (1 ref)");
		return m->disable_err;
	}
	}
	return -ENOTTY;
}

static struct nl_msg *new_msg(int cmd)
{
	struct nl_msg *msg = nlmsg_alloc();

	assert_non_null(msg);
	assert_non_null(genlmsg_put(msg, 0, 0, 0x20, 0, 0, (uint8_t)cmd, P2PS_GENL_VERSION));
	return msg;
}

static int deliver(struct nl_msg *msg, int (*cb)(struct nlattr **, void *), void *arg)
{
	struct nlattr *tb[P2PS_A_MAX + 1];
	int err;

	assert_int_equal(p2ps_parse_msg(msg, tb), 0);
	err = cb(tb, arg);
	nlmsg_free(msg);
	return err;
}

static int mock_dump(void *ctx, int cmd, int (*cb)(struct nlattr **, void *), void *arg)
{
	struct mock *m = ctx;
	struct nl_msg *msg;
	struct nlattr *n;
	int i, err;

	if (m->dump_err)
		return m->dump_err;
	if (cmd == P2PS_CMD_GET_HOOKS) {
		for (i = 0; i < 3; i++) {
			msg = new_msg(cmd);
			n = nla_nest_start(msg, P2PS_A_HOOK);
			nla_put_string(msg, P2PS_HOOK_A_TARGET, i == 2 ? "osReadRegistryDword" :
				       "kbusHasPcieBar1P2PMapping_d69453");
			nla_put_u32(msg, P2PS_HOOK_A_KIND, i == 2 ? P2PS_HOOK_RETURN : P2PS_HOOK_REDIRECT);
			nla_put_u32(msg, P2PS_HOOK_A_STATE, P2PS_HOOK_INSTALLED);
			nla_put_u64(msg, P2PS_HOOK_A_HITS, 1000ULL * (i + 1));
			nla_put_string(msg, P2PS_HOOK_A_LAST_ERROR, "");
			if (i < 2)
				nla_put_string(msg, P2PS_HOOK_A_DEST, "kbusHasPcieBar1P2PMapping_GH100");
			nla_nest_end(msg, n);
			err = deliver(msg, cb, arg);
			if (err)
				return err;
		}
	} else if (cmd == P2PS_CMD_GET_MAPPINGS) {
		msg = new_msg(cmd);
		n = nla_nest_start(msg, P2PS_A_MAPPING);
		nla_put_u32(msg, P2PS_MAP_A_GPU0, 0);
		nla_put_u32(msg, P2PS_MAP_A_GPU1, 1);
		nla_put_u32(msg, P2PS_MAP_A_CONN_TYPE, P2PS_CONN_PCIE_BAR1);
		nla_put_u32(msg, P2PS_MAP_A_COUNT, 2);
		nla_put_u64(msg, P2PS_MAP_A_DMA_BASE, 0x6000000000ULL);
		nla_put_u64(msg, P2PS_MAP_A_DMA_SIZE, 32ULL << 30);
		nla_nest_end(msg, n);
		return deliver(msg, cb, arg);
	}
	return 0;
}

static struct p2ps_handle *open_mock(struct mock *m)
{
	struct p2ps_backend be = { mock_ioctl, mock_dump, NULL, m };
	struct p2ps_handle *h = NULL;

	assert_int_equal(p2ps_open_backend(&h, &be), 0);
	return h;
}

static void test_version(void **state)
{
	struct mock m = { .abi = P2PS_ABI_VERSION };
	struct p2ps_handle *h = open_mock(&m);
	char buf[P2PS_NAME_LEN];
	unsigned int abi = 0;

	(void)state;
	assert_int_equal(p2ps_module_version(h, &abi, buf, sizeof(buf)), 0);
	assert_int_equal(abi, P2PS_ABI_VERSION);
	assert_string_equal(buf, "0.1.0-test");
	assert_string_equal(p2ps_lib_version(), P2PS_VERSION);
	p2ps_close(h);
}

static void test_abi_mismatch(void **state)
{
	struct mock m = { .abi = P2PS_ABI_VERSION + 1 };
	struct p2ps_backend be = { mock_ioctl, mock_dump, NULL, &m };
	struct p2ps_handle *h = (void *)1;

	(void)state;
	assert_int_equal(p2ps_open_backend(&h, &be), -P2PS_E_ABI);
	assert_null(h);
}

static void test_open_not_loaded(void **state)
{
	struct p2ps_handle *h = (void *)1;

	(void)state;
	assert_int_equal(p2ps_open(&h, "/nonexistent/p2p-shim"), -P2PS_E_NOT_LOADED);
	assert_null(h);
	/* a file that is not the device: the ioctl fails with ENOTTY */
	assert_int_equal(p2ps_open(&h, "/dev/null"), -ENOTTY);
	assert_null(h);
}

static void test_status(void **state)
{
	struct mock m = { .abi = P2PS_ABI_VERSION };
	struct p2ps_handle *h = open_mock(&m);
	struct p2ps_status_info *st = NULL;

	(void)state;
	assert_int_equal(p2ps_status(h, &st), 0);
	assert_int_equal(st->state, P2PS_STATE_ARMED);
	assert_int_equal(st->flags, P2PS_ENABLE_FORCE);
	assert_int_equal(st->nr_installed, 2);
	assert_int_equal(st->stale_gpus, 5);
	assert_int_equal(st->hits, 42);
	assert_string_equal(st->driver_version, "580.159.04");
	assert_string_equal(st->profile, "gen-b");
	assert_int_equal(st->detail_error, 0);
	assert_int_equal(st->nr_hooks, 3);
	assert_string_equal(st->hooks[0].target, "kbusHasPcieBar1P2PMapping_d69453");
	assert_string_equal(st->hooks[0].dest, "kbusHasPcieBar1P2PMapping_GH100");
	assert_int_equal(st->hooks[2].kind, P2PS_HOOK_RETURN);
	assert_string_equal(st->hooks[2].dest, "");
	assert_int_equal(st->hooks[2].hits, 3000);
	assert_int_equal(st->nr_mappings, 1);
	assert_int_equal(st->mappings[0].gpu1, 1);
	assert_int_equal(st->mappings[0].count, 2);
	assert_int_equal(st->mappings[0].dma_base, 0x6000000000ULL);
	assert_string_equal(p2ps_conn_type_name(st->mappings[0].conn_type), "pcie-bar1");
	p2ps_status_free(st);

	/* A failing dump still gives the summary. */
	m.dump_err = -P2PS_E_NO_FAMILY;
	assert_int_equal(p2ps_status(h, &st), 0);
	assert_int_equal(st->detail_error, -P2PS_E_NO_FAMILY);
	assert_int_equal(st->nr_hooks, 0);
	assert_null(st->hooks);
	assert_string_equal(st->profile, "gen-b");
	p2ps_status_free(st);
	p2ps_close(h);
}

static void test_enable(void **state)
{
	struct mock m = { .abi = P2PS_ABI_VERSION };
	struct p2ps_handle *h = open_mock(&m);
	struct p2ps_enable_result res;

	(void)state;
	assert_int_equal(p2ps_enable(h, P2PS_ENABLE_DRY_RUN, &res), 0);
	assert_int_equal(m.got_flags, P2PS_ENABLE_DRY_RUN);
	assert_int_equal(res.state, P2PS_STATE_DRY_RUN);
	assert_string_equal(res.target, "");

	/* unknown flags never reach the module */
	m.ioctls = 0;
	assert_int_equal(p2ps_enable(h, 0x80, &res), -EINVAL);
	assert_int_equal(m.ioctls, 0);

	m.enable_err = -ENOEXEC;
	assert_int_equal(p2ps_enable(h, P2PS_ENABLE_FORCE, &res), -ENOEXEC);
	assert_string_equal(res.target, "kbusCreateP2PMappingForBar1P2P_395e98");
	assert_string_equal(res.reason, "body differs at +4");
	m.enable_err = -EPERM;
	assert_int_equal(p2ps_enable(h, 0, NULL), -EPERM);
	p2ps_close(h);
}

static void test_disable(void **state)
{
	struct mock m = { .abi = P2PS_ABI_VERSION };
	struct p2ps_handle *h = open_mock(&m);
	char busy[P2PS_REASON_LEN];

	(void)state;
	assert_int_equal(p2ps_disable(h, busy, sizeof(busy)), 0);
	assert_string_equal(busy, "");
	m.disable_err = -EBUSY;
	assert_int_equal(p2ps_disable(h, busy, sizeof(busy)), -EBUSY);
	assert_string_equal(busy, "0-1 (2 refs), 2-3 (1 ref)");
	assert_int_equal(p2ps_disable(h, busy, 4), -EBUSY);
	assert_string_equal(busy, "0-1");
	p2ps_close(h);
}

static void test_event_parse(void **state)
{
	struct nl_msg *msg = new_msg(P2PS_CMD_EVENT);
	struct nlattr *tb[P2PS_A_MAX + 1], *n;
	struct p2ps_event_info ev;

	(void)state;
	nla_put_u32(msg, P2PS_A_EVENT, P2PS_EV_MAPPING_CREATED);
	nla_put_u32(msg, P2PS_A_UID, 0);
	n = nla_nest_start(msg, P2PS_A_MAPPING);
	nla_put_u32(msg, P2PS_MAP_A_GPU0, 2);
	nla_put_u32(msg, P2PS_MAP_A_GPU1, 3);
	nla_put_u64(msg, P2PS_MAP_A_DMA_BASE, 0x1234);
	nla_nest_end(msg, n);
	assert_int_equal(p2ps_parse_msg(msg, tb), 0);
	assert_int_equal(p2ps_parse_event(tb, &ev), 0);
	assert_int_equal(ev.event, P2PS_EV_MAPPING_CREATED);
	assert_true(ev.has_uid);
	assert_true(ev.has_mapping);
	assert_int_equal(ev.mapping.gpu0, 2);
	assert_int_equal(ev.mapping.dma_base, 0x1234);
	assert_string_equal(p2ps_event_name(ev.event), "mapping-created");
	nlmsg_free(msg);

	/* A GPU the module cannot name (attached before arming) has no instance: unknown, not GPU 0. */
	msg = new_msg(P2PS_CMD_EVENT);
	nla_put_u32(msg, P2PS_A_EVENT, P2PS_EV_MAPPING_CREATED);
	n = nla_nest_start(msg, P2PS_A_MAPPING);
	nla_put_u32(msg, P2PS_MAP_A_GPU0, 0);
	nla_nest_end(msg, n);
	assert_int_equal(p2ps_parse_msg(msg, tb), 0);
	assert_int_equal(p2ps_parse_event(tb, &ev), 0);
	assert_true(ev.has_mapping);
	assert_int_equal(ev.mapping.gpu0, 0);
	assert_int_equal(ev.mapping.gpu1, P2PS_GPU_UNKNOWN);
	nlmsg_free(msg);

	/* As the module sends it: the explicit value, which an old reader cannot take for GPU 0. */
	msg = new_msg(P2PS_CMD_EVENT);
	nla_put_u32(msg, P2PS_A_EVENT, P2PS_EV_MAPPING_CREATED);
	n = nla_nest_start(msg, P2PS_A_MAPPING);
	nla_put_u32(msg, P2PS_MAP_A_GPU0, P2PS_MAP_GPU_UNKNOWN);
	nla_put_u32(msg, P2PS_MAP_A_GPU1, 1);
	nla_nest_end(msg, n);
	assert_int_equal(p2ps_parse_msg(msg, tb), 0);
	assert_int_equal(p2ps_parse_event(tb, &ev), 0);
	assert_int_equal(ev.mapping.gpu0, P2PS_GPU_UNKNOWN);
	assert_int_equal(ev.mapping.gpu1, 1);
	nlmsg_free(msg);

	msg = new_msg(P2PS_CMD_EVENT);
	nla_put_u32(msg, P2PS_A_EVENT, P2PS_EV_ARMED);
	nla_put_string(msg, P2PS_A_PROFILE, "gen-b");
	nla_put_string(msg, P2PS_A_DRIVER_VERSION, "580.159.04");
	nla_put_u32(msg, P2PS_A_FLAGS, P2PS_ENABLE_DRY_RUN);
	assert_int_equal(p2ps_parse_msg(msg, tb), 0);
	assert_int_equal(p2ps_parse_event(tb, &ev), 0);
	assert_false(ev.has_uid);
	assert_false(ev.has_mapping);
	assert_string_equal(ev.profile, "gen-b");
	assert_string_equal(ev.driver_version, "580.159.04");
	assert_int_equal(ev.flags, P2PS_ENABLE_DRY_RUN);
	nlmsg_free(msg);

	/* no event attribute: rejected */
	msg = new_msg(P2PS_CMD_EVENT);
	nla_put_string(msg, P2PS_A_REASON, "x");
	assert_int_equal(p2ps_parse_msg(msg, tb), 0);
	assert_int_equal(p2ps_parse_event(tb, &ev), -P2PS_E_NETLINK);
	nlmsg_free(msg);
}

static void test_strerror(void **state)
{
	int e;

	(void)state;
	assert_string_equal(p2ps_strerror(0), "success");
	assert_string_equal(p2ps_strerror(-EPERM), strerror(EPERM));
	assert_string_equal(p2ps_strerror(EBUSY), strerror(EBUSY));
	assert_non_null(strstr(p2ps_strerror(-P2PS_E_NOT_LOADED), "not loaded"));
	assert_non_null(strstr(p2ps_strerror(-P2PS_E_NO_FAMILY), P2PS_GENL_NAME));
	for (e = P2PS_E_BASE; e < P2PS_E_END; e++) {
		assert_non_null(p2ps_strerror(-e));
		assert_true(strlen(p2ps_strerror(-e)) > 5);
	}
	assert_string_equal(p2ps_strerror(-(P2PS_E_END + 5)), "unknown libp2pshim error");
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(p2ps_state_name(P2PS_STATE_WAITING), "waiting");
	assert_string_equal(p2ps_state_name(99), "unknown");
	assert_string_equal(p2ps_hook_kind_name(P2PS_HOOK_ARG), "arg");
	assert_string_equal(p2ps_hook_state_name(P2PS_HOOK_FAILED), "failed");
	assert_string_equal(p2ps_event_name(P2PS_EV_REFUSED), "refused");
	assert_string_equal(p2ps_event_name(0), "unknown");
}

static void test_versions(void **state)
{
	unsigned int a, b, c;

	(void)state;
	assert_int_equal(p2ps_parse_version("580.159.04", &a, &b, &c), 0);
	assert_int_equal(a, 580);
	assert_int_equal(b, 159);
	assert_int_equal(c, 4);
	assert_int_equal(p2ps_parse_version("595.45", &a, &b, &c), 0);
	assert_int_equal(b, 45);
	assert_int_equal(c, 0);
	assert_int_not_equal(p2ps_parse_version("580", &a, &b, &c), 0);
	assert_int_not_equal(p2ps_parse_version("x.1", &a, &b, &c), 0);
	assert_int_not_equal(p2ps_parse_version("", &a, &b, &c), 0);
	assert_non_null(p2ps_profile_for_version("580.159.04"));
	assert_non_null(p2ps_profile_for_version("595.45.04"));
	assert_null(p2ps_profile_for_version("545.29.06"));
	assert_string_equal(p2ps_profile_for_version("550.163.01")->name, "gen-0");
	assert_string_equal(p2ps_profile_for_version("550.54.15")->name, "gen-0");
	assert_string_equal(p2ps_profile_for_version("560.35.03")->name, "gen-0");
	assert_null(p2ps_profile_for_version("555.58.02"));
	assert_non_null(strstr(p2ps_unsupported_reason("555.58.02"), "not verified"));
	assert_non_null(strstr(p2ps_unsupported_reason("545.29.06"), "before 550"));
	assert_null(p2ps_unsupported_reason("550.163.01"));
	assert_null(p2ps_profile_for_version("garbage"));
	assert_true(p2ps_is_stub_of("kbusGetBar1P2PDmaInfo_395e98", "kbusGetBar1P2PDmaInfo"));
	assert_false(p2ps_is_stub_of("kbusGetBar1P2PDmaInfo_GH100", "kbusGetBar1P2PDmaInfo"));
	assert_false(p2ps_is_stub_of("kbusGetBar1P2PDmaInfo_395e98x", "kbusGetBar1P2PDmaInfo"));
	assert_true(p2ps_is_clone_suffix(".isra.0"));
	assert_true(p2ps_is_clone_suffix(".constprop.1"));
	assert_false(p2ps_is_clone_suffix(".cold"));
}

/*
 * p2ps_strlcpy(): cut to fit and terminated; and a source without its NUL
 * (a fixed field) is read no further than fits (ASan: no overflow).
 */
static void test_strlcpy(void **state)
{
	const char field[4] = { 'a', 'b', 'c', 'd' };	/* no NUL */
	char dst[4];

	(void)state;
	memset(dst, 'x', sizeof(dst));
	p2ps_strlcpy(dst, "ab", sizeof(dst));
	assert_string_equal(dst, "ab");
	p2ps_strlcpy(dst, "abcdef", sizeof(dst));
	assert_string_equal(dst, "abc");
	p2ps_strlcpy(dst, field, 3);
	assert_string_equal(dst, "ab");
	p2ps_strlcpy(dst, field, sizeof(dst));
	assert_string_equal(dst, "abc");
	p2ps_strlcpy(dst, "zz", 1);
	assert_string_equal(dst, "");
	dst[0] = 'q';
	p2ps_strlcpy(dst, "zz", 0);	/* nothing written */
	assert_int_equal(dst[0], 'q');
}

/* p2ps_trim(): white space off both ends, in place; all-blank is "". */
static void test_trim(void **state)
{
	char a[] = " \t ab c\r\n", b[] = " \n\t ", c[] = "abc";

	(void)state;
	assert_string_equal(p2ps_trim(a), "ab c");
	assert_ptr_equal(p2ps_trim(a), a + 3);
	assert_string_equal(p2ps_trim(b), "");
	assert_ptr_equal(p2ps_trim(c), c);
	assert_string_equal(c, "abc");
}

/* p2ps_catf(): separators between items, and a cut item leaves the offset where it was. */
static void test_catf(void **state)
{
	char buf[16];
	size_t off = 0;

	(void)state;
	assert_true(p2ps_catf(buf, sizeof(buf), &off, "; ", "a%d", 1));
	assert_true(p2ps_catf(buf, sizeof(buf), &off, "; ", "%s", "b"));
	assert_string_equal(buf, "a1; b");
	assert_int_equal(off, 5);
	assert_false(p2ps_catf(buf, sizeof(buf), &off, "; ", "%s", "too long to fit"));
	assert_int_equal(off, 5);
	assert_string_equal(buf, "a1; b");	/* not "a1; b; too lo" */
	assert_true(p2ps_catf(buf, sizeof(buf), &off, "; ", "c"));
	assert_string_equal(buf, "a1; b; c");
	off = sizeof(buf);
	assert_false(p2ps_catf(buf, sizeof(buf), &off, "; ", "d"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_version),
		cmocka_unit_test(test_abi_mismatch),
		cmocka_unit_test(test_open_not_loaded),
		cmocka_unit_test(test_status),
		cmocka_unit_test(test_enable),
		cmocka_unit_test(test_disable),
		cmocka_unit_test(test_event_parse),
		cmocka_unit_test(test_strerror),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_versions),
		cmocka_unit_test(test_strlcpy),
		cmocka_unit_test(test_trim),
		cmocka_unit_test(test_catf),
	};

	return cmocka_run_group_tests_name("lib", tests, NULL, NULL);
}
