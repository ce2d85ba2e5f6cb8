# SPDX-License-Identifier: GPL-2.0
# vm-tags: long-boot
# Reliability: malformed generic netlink messages to the p2p_shim family
# (p2ps-nlfuzz), as root and as uid 1000, with the module armed and one
# live BAR1 mapping so that both dumps have something to say.  Every
# well-framed request must be answered, every error must be EINVAL,
# EOPNOTSUPP, EBUSY, ERANGE, EMSGSIZE, EPERM or E2BIG, and a proper
# GET_STATUS must still work every 50 messages.  Scale and seeds as
# rel-fuzz (case_scale in lib.sh).
. /cases/lib.sh
t0=$(date +%s)

run insmod /lib/p2p-shim/p2p-shim.ko
run p2pctl enable
run insmod /lib/standin/580.159.04/nvidia.ko gpus='AD102@0000:01:00.0;AD102@0000:02:00.0'
out=$(nvflow create 0 1) || fail "create: $out"
obj=$(kv object "$out")
out=$(nvflow map "$obj" 0 0x200000 rm) || fail "map: $out"
map=$(kv mapping "$out")
before=$(p2pctl status)
expect_match "two ledger entries" "$before" 'mappings: +2'

fuzz p2ps-nlfuzz -s "$(seed 0x6e110001)" -n $((100000 * scale))
fuzz p2ps-nlfuzz -s "$(seed 0x6e110002)" -n $((40000 * scale)) -u 1000
expect_eq "status unchanged" "$(p2pctl status)" "$before"

run nvflow unmap "$map" >/dev/null
run nvflow destroy "$obj" >/dev/null
run p2pctl disable
run rmmod nvidia
run rmmod p2p_shim
record "rel-nlfuzz: $((140000 * scale)) messages at ${scale}x in $(( $(date +%s) - t0 )) s"

