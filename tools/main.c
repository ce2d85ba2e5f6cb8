// SPDX-License-Identifier: GPL-2.0
#include "p2pctl.h"

int main(int argc, char **argv)
{
	return p2pctl_main(argc, argv);
}
