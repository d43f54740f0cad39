#!/bin/sh
# A job whose ranks run on two "hosts": two network namespaces with their own
# addresses on a bridge, reached through mpirun's launch agent
# (ip netns exec {host}). The bootstrap (handshake, socket table, tree links
# between the namespaces) and the job must complete, trees on and off; mpirun
# listens only on the address the ranks reach it at.
. "${WEFT_TEST_SRCDIR:?}/test/lib.sh"
MPIRUN="$WEFT_TEST_BUILDDIR/mpirun"
export WEFT_MCA_mca_base_component_path="${WEFT_TEST_COMPONENT_PATH:?}"
netns_hosts n

for trees in 1 0; do
    out=$(MPIRUN_USE_TREES=$trees run ip netns exec "$hub" "$MPIRUN" --host "$ha:2,$hb:2" -np 4 \
        --launch-agent 'ip netns exec {host}' --bootstrap-addr "$net.1" --timeout 60 \
        "$WEFT_TEST_BUILDDIR/test/integration/pmgr_collectives" 2>&1) || fail "pmgr_collectives across namespaces (trees $trees): $out"
    expect_in "pmgr collectives: 4 ranks, every call right" "$out" "pmgr_collectives"
done
# The ranks really ran in their namespaces, with their own addresses.
out=$(run ip netns exec "$hub" "$MPIRUN" --host "$ha:1,$hb:1" -np 2 --launch-agent 'ip netns exec {host}' \
    --bootstrap-addr "$net.1" --timeout 60 sh -c 'ip -4 -o addr show eth0 | awk "{print \$4}"' 2>&1) || fail "address probe: $out"
expect_in "$net.2/24" "$out" "rank 0 address"
expect_in "$net.3/24" "$out" "rank 1 address"
out=$(run ip netns exec "$hub" "$MPIRUN" --host "$ha:2,$hb:2" -np 4 --launch-agent 'ip netns exec {host}' \
    --bootstrap-addr "$net.1" --timeout 60 -x WEFT_MCA_mca_base_component_path \
    "$WEFT_TEST_BUILDDIR/test/integration/boot_exchange" 2>&1) || fail "boot_exchange across namespaces: $out"
expect_in "boot/pmgr, 4 ranks" "$out" "boot_exchange"
# With every rank elsewhere, mpirun listens on the one address they reach it at, not on
# every address of its machine.
ip netns exec "$hub" "$MPIRUN" --host "$ha:1,$hb:1" -np 2 --launch-agent 'ip netns exec {host}' \
    --bootstrap-addr "$net.1" --timeout 60 sleep 3 >"$TEST_TMP/listen.out" 2>&1 &
mp=$!
listeners=
for i in 1 2 3 4 5 6 7 8 9 10; do
    listeners=$(ip netns exec "$hub" ss -ltnH | awk '{print $4}')
    [ -n "$listeners" ] && break
    sleep 0.2
done
wait $mp || fail "listener probe job: $(cat "$TEST_TMP/listen.out")"
case "$listeners" in
"$net.1:"[0-9]*) ;;
*) fail "mpirun's bootstrap listener: expected $net.1:PORT only, got '$listeners'" ;;
esac
echo "two namespace hosts ($net.2, $net.3): bootstrap and collectives right, trees on and off"
