// SPDX-License-Identifier: GPL-2.0
/*
 * armbench [N] [FLAGS]: time P2PS_IOC_ENABLE (resolve every target in
 * nvidia, check every stub, install every probe) and P2PS_IOC_DISABLE
 * (remove them, wait for wrappers in flight), N times each; print min,
 * median and max in microseconds.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <p2p-shim/uapi.h>

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void report(const char *what, double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp);
	printf("%-8s n=%d min_us=%.1f median_us=%.1f max_us=%.1f\n", what, n, v[0], v[n / 2],
	       v[n - 1]);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 50;
	unsigned int flags = argc > 2 ? strtoul(argv[2], NULL, 0) : 0;
	double *en = calloc(n, sizeof(double)), *dis = calloc(n, sizeof(double));
	int fd = open("/dev/" P2PS_DEVICE_NAME, O_RDONLY);
	int i;

	if (fd < 0 || !en || !dis || n < 1) {
		perror("armbench");
		return 1;
	}
	for (i = 0; i < n; i++) {
		struct p2ps_enable e = { .size = sizeof(e), .flags = flags };
		struct p2ps_disable d = { .size = sizeof(d) };
		double t0 = now_us(), t1, t2;

		if (ioctl(fd, P2PS_IOC_ENABLE, &e)) {
			fprintf(stderr, "enable: %s: %s %s\n", strerror(errno), e.target, e.reason);
			return 1;
		}
		t1 = now_us();
		if (ioctl(fd, P2PS_IOC_DISABLE, &d)) {
			fprintf(stderr, "disable: %s: %s\n", strerror(errno), d.reason);
			return 1;
		}
		t2 = now_us();
		en[i] = t1 - t0;
		dis[i] = t2 - t1;
	}
	report(flags ? "enable-dry" : "enable", en, n);
	report(flags ? "disable-dry" : "disable", dis, n);
	close(fd);
	return 0;
}
