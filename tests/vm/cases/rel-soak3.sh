# SPDX-License-Identifier: GPL-2.0
# Reliability soak, part 3 of 3: the same as rel-soak1 (see there).
. /cases/rel-soak1.sh
