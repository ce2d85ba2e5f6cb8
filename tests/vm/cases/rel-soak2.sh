# SPDX-License-Identifier: GPL-2.0
# vm-tags: long-boot
# Reliability soak, part 2 of 3: the same as rel-soak1 (see there).
. /cases/rel-soak1.sh
