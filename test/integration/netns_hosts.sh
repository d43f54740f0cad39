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
# The job's secret reaches the ranks through the launch agent's environment, and is on no
# command line (docs/security.md); an agent that drops it stops the ranks at MPI_Init, saying so.
printf '%s' "$TEST_TMP" >"$TEST_TMP/dir"
out=$(run ip netns exec "$hub" "$MPIRUN" --host "$ha:1,$hb:1" -np 2 --launch-agent 'ip netns exec {host}' \
    --bootstrap-addr "$net.1" --timeout 60 sh -c 'f=$(cat '"$TEST_TMP/dir"')/s$MPIRUN_RANK
        [ ${#WEFT_JOB_SECRET} -eq 64 ] || { echo "rank $MPIRUN_RANK: no secret"; exit 1; }
        printf %s "$WEFT_JOB_SECRET" >"$f"
        if cat /proc/[0-9]*/cmdline 2>/dev/null | grep -aqF -f "$f"; then echo "rank $MPIRUN_RANK: secret on a command line"; exit 1; fi
        echo "rank $MPIRUN_RANK: secret in the environment only"' 2>&1) || fail "the secret through the agent: $out"
expect_in "rank 0: secret in the environment only" "$out" "the secret at rank 0"
expect_in "rank 1: secret in the environment only" "$out" "the secret at rank 1"
cmp -s "$TEST_TMP/s0" "$TEST_TMP/s1" || fail "the ranks got different secrets"
out=$(run ip netns exec "$hub" "$MPIRUN" --host "$ha:1,$hb:1" -np 2 \
    --launch-agent 'ip netns exec {host} env -u WEFT_JOB_SECRET' --bootstrap-addr "$net.1" --timeout 60 \
    "$WEFT_TEST_BUILDDIR/examples/hello" 2>&1) && fail "ranks without the job's secret ran: $out"
expect_in "WEFT_JOB_SECRET did not reach this process" "$out" "an agent that drops the secret"
# ssh passes no environment: with an agent named ssh, the secret goes as the first line of the
# remote command's input, and rank 0 still reads mpirun's input after it. The stand-in ssh
# enters the host's namespace with an empty environment and runs the command through a shell,
# as sshd does.
mkdir -p "$TEST_TMP/bin"
cat >"$TEST_TMP/bin/ssh" <<'SSH'
#!/bin/sh
host=$1
shift
exec ip netns exec "$host" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin sh -c "$*"
SSH
chmod +x "$TEST_TMP/bin/ssh"
out=$(printf 'mpirun-stdin-line\n' | run ip netns exec "$hub" "$MPIRUN" --host "$ha:1,$hb:1" -np 2 \
    --launch-agent "$TEST_TMP/bin/ssh" --bootstrap-addr "$net.1" --timeout 60 sh -c '
        [ ${#WEFT_JOB_SECRET} -eq 64 ] || { echo "rank $MPIRUN_RANK: no secret"; exit 1; }
        if [ "$MPIRUN_RANK" = 0 ]; then IFS= read -r x; echo "rank 0 read: $x"; fi
        echo "rank $MPIRUN_RANK: secret through ssh"' 2>&1) || fail "the secret through ssh: $out"
expect_in "rank 0 read: mpirun-stdin-line" "$out" "rank 0's input after the secret"
expect_in "rank 1: secret through ssh" "$out" "the secret through ssh at rank 1"
out=$(run ip netns exec "$hub" "$MPIRUN" --host "$ha:1,$hb:1" -np 2 --launch-agent "$TEST_TMP/bin/ssh" \
    --bootstrap-addr "$net.1" --timeout 60 -x WEFT_MCA_mca_base_component_path \
    "$WEFT_TEST_BUILDDIR/examples/hello" 2>&1 </dev/null) || fail "hello through ssh: $out"
expect_in "hello from rank 1 of 2" "$out" "hello through ssh"
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
echo "two namespace hosts ($net.2, $net.3): bootstrap and collectives right, trees on and off; the job's secret through the agent's environment (through ssh: its input), on no command line; mpirun listens on $net.1 only"
