/* SPDX-License-Identifier: GPL-2.0 */
/* driver.c: finding the nvidia module and resolving symbols inside it. */
#ifndef _P2PS_DRIVER_H
#define _P2PS_DRIVER_H

struct module;
struct p2ps_hook;
struct p2ps_arm_error;

struct module *p2ps_driver_find(void);
struct module *p2ps_module_find(const char *name);
unsigned long p2ps_driver_lookup_size(struct module *mod, const char *name, unsigned long *size);
struct p2ps_object;
int p2ps_resolve_object(struct module *nv, struct module *mod, const struct p2ps_object *obj,
			struct p2ps_hook *hooks, struct p2ps_arm_error *err);
unsigned long p2ps_driver_lookup(struct module *mod, const char *name);

#endif /* _P2PS_DRIVER_H */
