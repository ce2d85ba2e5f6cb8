/* SPDX-License-Identifier: GPL-2.0 */
#ifndef P2P_CUDA_STATS_H
#define P2P_CUDA_STATS_H

/* Summary of n samples. Quartiles interpolate linearly between order
 * statistics (numpy's default, "type 7"); median is q2. */
struct stats {
	int n;
	double median, min, max, q1, q3, mean;
};

/* 0, or -1 when n < 1 (out is then all zero). v is not modified. */
int stats_compute(const double *v, int n, struct stats *out);
/* The p-quantile (0..1) of sorted[0..n-1], type 7. */
double stats_quantile_sorted(const double *sorted, int n, double p);

#endif
