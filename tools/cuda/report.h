/* SPDX-License-Identifier: GPL-2.0 */
#ifndef P2P_CUDA_REPORT_H
#define P2P_CUDA_REPORT_H

#include <stdio.h>
#include <json-c/json.h>

#include "opts.h"
#include "stats.h"

#define CAL_MAX 8

struct cell {
	int present;		/* measured (else "n/a" / null) */
	int method;		/* index into the method names given to the formatter */
	int timeouts;		/* runs whose delay kernel timed out */
	int staged;		/* a P2P=Enabled cell without peer access: the driver staged it */
	int checked;		/* the copied data was compared with the source (1 = equal) */
	struct stats st;
	double cal[CAL_MAX];	/* calibration value per method; < 0: not tried */
};

struct matrix {
	const char *key;	/* JSON key, e.g. "uni_p2p_on" */
	const char *title;	/* cuda-samples' heading */
	const char *unit;	/* "GB/s" or "us" */
	int n;
	struct cell c[P2P_MAX_GPUS * P2P_MAX_GPUS];
};

void matrix_init(struct matrix *m, const char *key, const char *title, const char *unit, int n);

/*
 * The sample's layout ("   D\D     0      1" then one row per source GPU,
 * medians), followed by the spread (min..max) and, when names is not NULL,
 * the copy method chosen for each cell. Absent cells print "n/a".
 */
void matrix_print(FILE *f, const struct matrix *m, const char *const *names);

/* {"title","unit","median":[[..]],"min","max","q1","q3","n","method"[,"calibration"]}
 * (rows = source GPU; absent cells are null). */
json_object *matrix_json(const struct matrix *m, const char *const *names, int nnames);

/*
 * A heatmap of the medians of m as a standalone SVG document. Returns 0, or
 * -1 on a write error.
 */
int matrix_svg(FILE *f, const struct matrix *m, const char *subtitle);

/* XML-escape s into out (always NUL-terminated). */
void xml_escape(char *out, size_t outlen, const char *s);

#endif
