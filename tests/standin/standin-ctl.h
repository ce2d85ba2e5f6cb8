/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The stand-ins' debugfs control files take one command per write: "verb
 * arg...".  Shared by the stand-in nvidia (nv.c) and nvidia-uvm (uvm.c).
 */
#ifndef STANDIN_CTL_H
#define STANDIN_CTL_H

#include <linux/errno.h>
#include <linux/string.h>
#include <linux/uaccess.h>

/*
 * Copy the user's @count bytes into @cmd (@len bytes) and split them into
 * at most @max words in @argv: the word count, or a negative errno.
 */
static inline int standin_ctl_words(char *cmd, size_t len, const char __user *ubuf,
				    size_t count, char **argv, int max)
{
	char *rest, *tok;
	int argc = 0;

	if (!count || count >= len)
		return -EINVAL;
	if (copy_from_user(cmd, ubuf, count))
		return -EFAULT;
	cmd[count] = '\0';
	rest = strim(cmd);
	while ((tok = strsep(&rest, " \t\n")) != NULL) {
		if (!*tok)
			continue;
		if (argc == max)
			return -EINVAL;
		argv[argc++] = tok;
	}
	return argc ? argc : -EINVAL;
}

#endif
