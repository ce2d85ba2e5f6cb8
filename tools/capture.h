/* SPDX-License-Identifier: GPL-2.0 */
/* p2pctl report --capture: a tree that `doctor --root` reads (capture.c). */
#ifndef P2PCTL_CAPTURE_H
#define P2PCTL_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>

struct p2pctl_capture;
struct p2pctl_redact;
/*
 * Start a capture into @dir (DIR/root must not exist: -EEXIST) of the
 * tree @root (NULL: the live system), redacted by @red (its own
 * --full says whether).
 */
int p2pctl_capture_new(const char *dir, const char *root, struct p2pctl_redact *red,
		       struct p2pctl_capture **out);
/* struct p2ps_doctor_opts.trace, with the capture as its argument. */
void p2pctl_capture_trace(void *arg, const char *path, int how);
/* A line of /proc/PID/maps that a capture keeps (what doctor reads of a process). */
bool p2pctl_capture_kept_line(const char *line, size_t len);
/* DIR/cmd/@name.txt (the first one written for a name stays). */
int p2pctl_capture_cmd(struct p2pctl_capture *c, const char *name, const char *text);
/* Copy what was traced, write .symlinks, MISSING and kallsyms; free @c. */
int p2pctl_capture_finish(struct p2pctl_capture *c, const char *root);

#endif
