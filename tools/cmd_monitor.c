// SPDX-License-Identifier: GPL-2.0
/* p2pctl monitor */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "p2pctl.h"

static const char help[] =
	"Usage: p2pctl monitor [--json] [--count N]\n\n"
	"Print p2p-shim's events (armed, disarmed, driver arrived/left, mapping\n"
	"created/removed, refused) as they happen, one per line, until interrupted.\n\n"
	"  -j, --json     one JSON object per line\n"
	"  -c, --count N  exit after N events\n"
	"  -h, --help     this help\n\n"
	P2PCTL_EXIT_CODES_HELP;

struct mon {
	bool json;
	long seen;
};

json_object *p2pctl_event_json(const struct p2ps_event_info *ev);

json_object *p2pctl_event_json(const struct p2ps_event_info *ev)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "time", json_object_new_int64((int64_t)time(NULL)));
	json_object_object_add(o, "event", json_object_new_string(p2ps_event_name(ev->event)));
	if (*ev->driver_version)
		json_object_object_add(o, "driver_version", json_object_new_string(ev->driver_version));
	if (*ev->profile)
		json_object_object_add(o, "profile", json_object_new_string(ev->profile));
	if (*ev->reason)
		json_object_object_add(o, "reason", json_object_new_string(ev->reason));
	if (ev->flags)
		json_object_object_add(o, "flags", json_object_new_int64(ev->flags));
	if (ev->has_uid)
		json_object_object_add(o, "uid", json_object_new_int64(ev->uid));
	if (ev->has_mapping) {
		json_object *m = json_object_new_object();

		json_object_object_add(m, "gpu0", p2pctl_json_gpu(ev->mapping.gpu0));
		json_object_object_add(m, "gpu1", p2pctl_json_gpu(ev->mapping.gpu1));
		json_object_object_add(m, "conn_type",
				       json_object_new_string(p2ps_conn_type_name(ev->mapping.conn_type)));
		json_object_object_add(m, "count", json_object_new_int64(ev->mapping.count));
		json_object_object_add(m, "dma_size", json_object_new_uint64(ev->mapping.dma_size));
		json_object_object_add(o, "mapping", m);
	}
	return o;
}

static void on_event(const struct p2ps_event_info *ev, void *arg)
{
	struct mon *m = arg;

	m->seen++;
	if (m->json) {
		json_object *o = p2pctl_event_json(ev);

		fprintf(p2pctl_out, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
	} else {
		char ts[32];
		time_t now = time(NULL);
		struct tm tm;

		strftime(ts, sizeof(ts), "%Y-%m-%d %H:%M:%S", localtime_r(&now, &tm));
		fprintf(p2pctl_out, "%s  %-16s", ts, p2ps_event_name(ev->event));
		if (*ev->driver_version)
			fprintf(p2pctl_out, " driver=%s", ev->driver_version);
		if (*ev->profile)
			fprintf(p2pctl_out, " profile=%s", ev->profile);
		/* Events carry no DMA base (any user may listen): status shows it to root. */
		if (ev->has_mapping) {
			char g0[16], g1[16];

			p2pctl_gpu_str(g0, sizeof(g0), ev->mapping.gpu0);
			p2pctl_gpu_str(g1, sizeof(g1), ev->mapping.gpu1);
			fprintf(p2pctl_out, " gpus=%s,%s refs=%u", g0, g1, ev->mapping.count);
		}
		if (ev->has_uid)
			fprintf(p2pctl_out, " uid=%u", ev->uid);
		if (*ev->reason)
			fprintf(p2pctl_out, " reason=\"%s\"", ev->reason);
		fputc('\n', p2pctl_out);
	}
	fflush(p2pctl_out);
}

int cmd_monitor(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "count", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct mon m = { false, 0 };
	struct p2ps_handle *h;
	long count = 0;
	int c, err, rc;
	char *end;

	p2pctl_getopt_reset();
	while ((c = getopt_long(argc, argv, "+jc:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j': m.json = true; break;
		case 'c':
			count = strtol(optarg, &end, 10);
			if (*end || count <= 0)
				return p2pctl_usage("monitor", "--count needs a positive number");
			break;
		case 'h': fputs(help, p2pctl_out); return 0;
		default: return p2pctl_usage("monitor", "invalid option");
		}
	}
	if (optind < argc)
		return p2pctl_usage("monitor", "unexpected argument '%s'", argv[optind]);
	rc = p2pctl_open("monitor", &h);
	if (rc)
		return rc;
	err = p2ps_event_subscribe(h, on_event, &m);
	while (!err && (!count || m.seen < count)) {
		int n = p2ps_event_wait(h, -1);

		if (n < 0)
			err = n;
	}
	p2ps_close(h);
	if (err) {
		p2pctl_error("monitor", "%s", p2ps_strerror(err));
		return p2pctl_exit_for(err);
	}
	return 0;
}
