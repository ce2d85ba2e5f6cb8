# SPDX-License-Identifier: GPL-2.0
# Reliability: malformed generic netlink messages to the p2p_shim family
# (p2ps-nlfuzz), as root and as uid 1000, with the module armed and one
# live BAR1 mapping so that both dumps have something to say.  Every
# well-framed request must be answered, every error must be EINVAL,
# EOPNOTSUPP, EBUSY, ERANGE, EMSGSIZE, EPERM or E2BIG, and a proper
# GET_STATUS must still work every 50 messages.  Scale as rel-fuzz.
. /cases/lib.sh
limit=$(sed -n 's/.*p2ptest\.case_timeout=\([0-9]*\).*/\1/p' /proc/cmdline)
scale=$(( ${limit:-120} / 120 ))
[ "$scale" -ge 1 ] || scale=1
seed() { if [ "$scale" -eq 1 ]; then echo "$1"; else echo 0x$(head -c 8 /dev/urandom | xxd -p); fi; }
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

run p2ps-nlfuzz -s "$(seed 0x6e110001)" -n $((50000 * scale))
run p2ps-nlfuzz -s "$(seed 0x6e110002)" -n $((20000 * scale)) -u 1000
expect_eq "status unchanged" "$(p2pctl status)" "$before"

run nvflow unmap "$map" >/dev/null
run nvflow destroy "$obj" >/dev/null
run p2pctl disable
run rmmod nvidia
run rmmod p2p_shim
echo "rel-nlfuzz: $((70000 * scale)) messages in $(( $(date +%s) - t0 )) s"
