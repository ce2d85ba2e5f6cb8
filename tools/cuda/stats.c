// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>

#include "stats.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double stats_quantile_sorted(const double *s, int n, double p)
{
	double h, f;
	int lo;

	if (n <= 0)
		return 0.0;
	if (p <= 0.0)
		return s[0];
	if (p >= 1.0)
		return s[n - 1];
	h = (n - 1) * p;
	lo = (int)h;
	f = h - lo;
	if (lo + 1 >= n)
		return s[n - 1];
	return s[lo] + f * (s[lo + 1] - s[lo]);
}

int stats_compute(const double *v, int n, struct stats *out)
{
	double *s, sum = 0.0;

	memset(out, 0, sizeof(*out));
	if (n < 1)
		return -1;
	s = malloc(sizeof(*s) * n);
	if (!s)
		return -1;
	memcpy(s, v, sizeof(*s) * n);
	qsort(s, n, sizeof(*s), cmp_double);
	for (int i = 0; i < n; i++)
		sum += s[i];
	out->n = n;
	out->min = s[0];
	out->max = s[n - 1];
	out->median = stats_quantile_sorted(s, n, 0.5);
	out->q1 = stats_quantile_sorted(s, n, 0.25);
	out->q3 = stats_quantile_sorted(s, n, 0.75);
	out->mean = sum / n;
	free(s);
	return 0;
}
