#!/bin/sh
# pml/bfo against real faults, not injected ones: two ranks on two namespace hosts joined by two
# tcp rails stream random traffic both ways for 8 seconds (mpi_bfo_trials: every byte checked;
# a time, not a number of rounds, so that a slow or loaded host neither runs past the job's
# timeout nor ends the traffic before the fault is found), and one second after the first
# round, rail1 fails: its link is set down (a blackhole: btl/tcp finds out through
# btl_tcp_user_timeout, lowered here to 2 s), or its connections are reset (ss -K). The job goes
# on over rail2 with every message intact; the time from the fault to the rail being mapped out
# on both sides is measured and printed (docs: mca/pml/bfo/README.md).
. "${WEFT_TEST_SRCDIR:?}/test/lib.sh"
MPIRUN="$WEFT_TEST_BUILDDIR/mpirun"
export WEFT_MCA_mca_base_component_path="${WEFT_TEST_COMPONENT_PATH:?}"
netns_rails q
PROG="$WEFT_TEST_BUILDDIR/test/integration/mpi_bfo_trials"
now() { date +%s.%N; }
# reset_rail1 FILE: reset the connections over rail1 on both hosts (ss -K), once one is
# established (waited for up to 5 s); what was killed goes in FILE, and "cannot destroy sockets"
# when the kernel lacks socket destruction (CONFIG_INET_DIAG_DESTROY: ss -K then kills nothing
# and says nothing), "no connection" when there was none to reset.
reset_rail1() {
    for _ in $(seq 50); do
        before=$(ip netns exec "$ha" ss -tnH state established dst 172.17.0.3 2>&1)
        [ -n "$before" ] && break
        sleep 0.1
    done
    {
        ip netns exec "$ha" ss -KtnH dst 172.17.0.3 2>&1
        ip netns exec "$hb" ss -KtnH dst 172.17.0.2 2>&1
    } >"$1"
    if [ -z "$before" ]; then
        echo "no connection over rail1 to reset in 5 s" >>"$1"
    elif ! grep -q . "$1"; then
        left=$(ip netns exec "$ha" ss -tnH state established dst 172.17.0.3 2>&1)
        [ -n "$left" ] && echo "this kernel cannot destroy sockets: ss -K left $left" >"$1"
    fi
}
# rail1_up: rail1 up again on both hosts (a fault before may have left it down) and running
# before a job starts: a job that starts before it runs has no rail1 at all (btl/tcp takes
# running interfaces only), and its fault would find nothing to break.
rail1_up() {
    ip -n "$ha" link set rail1 up
    ip -n "$hb" link set rail1 up
    rails_running 1 ||
        fail "rail1 not running 5 s after it was set up: $(ip -n "$ha" -br link show rail1);" \
            "$(ip -n "$hb" -br link show rail1)"
}
# fault KIND SECONDS [MPIRUN OPTIONS]: the job's output, each line stamped with the time it
# came; the fault's time in $TEST_TMP/at (and for a flap, the link's return in $TEST_TMP/up).
# rail1_up first.
fault() {
    rm -f "$TEST_TMP/flowing"
    (
        # One second after the first round is done (not after the launch: a slow start must
        # not put the fault before the connections it is meant to break).
        for _ in $(seq 600); do
            [ -e "$TEST_TMP/flowing" ] && break
            sleep 0.1
        done
        sleep 1
        now >"$TEST_TMP/at"
        case $1 in
        down) ip -n "$ha" link set rail1 down ;;
        flap)
            ip -n "$ha" link set rail1 down
            sleep 3
            now >"$TEST_TMP/up"
            ip -n "$ha" link set rail1 up
            ;;
        reset)
            reset_rail1 "$TEST_TMP/ss"
            ;;
        esac
    ) &
    kind=$1 secs=$2
    shift 2
    run ip netns exec "$hub" "$MPIRUN" --host "$ha:1,$hb:1" -np 2 \
        --launch-agent 'ip netns exec {host}' --bootstrap-addr "$net.1" --timeout 100 \
        -x WEFT_MCA_mca_base_component_path --mca btl self,tcp \
        --mca btl_tcp_if_include rail1,rail2 --mca btl_tcp_user_timeout 2000 --mca pml bfo \
        --mca pml_bfo_verbose "${WEFT_BFO_VERBOSE:-10}" "$@" "$PROG" 5 1000000 "$secs" 2>&1 |
        while IFS= read -r line; do
            case $line in *"mpi_bfo_trials: traffic flowing"*) : >"$TEST_TMP/flowing" ;; esac
            echo "$(now) $line"
        done
    wait
}
# The time from the fault to the last side's map-out, in seconds.
recovery() {
    at=$(cat "$TEST_TMP/at")
    printf '%s\n' "$1" | awk -v at="$at" '/mapped out for rank/ { t = $1 } END { if (t) printf "%.2f", t - at; else print "none" }'
}
# The time from the fault to the end of the round it stalled (traffic flowing again).
flowing() {
    at=$(cat "$TEST_TMP/at")
    printf '%s\n' "$1" | awk -v at="$at" '/stalled .* s, until/ { u = $NF + 0; if (u > at && (!t || u < t)) t = u } END { if (t) printf "traffic flowing again %.2f s after it", t - at; else print "no round stalled over 0.3 s" }'
}
results=""
for kind in down reset; do
    rail1_up
    out=$(fault "$kind" 8)
    # A kernel without socket destruction (CONFIG_INET_DIAG_DESTROY) cannot reset them.
    if [ "$kind" = reset ] && grep -qi "cannot destroy\|not supported\|unknown option" "$TEST_TMP/ss"; then
        expect_in "messages intact" "$out" "rail1 $kind: the job"
        results="$results rail1 reset: not tried ($(head -1 "$TEST_TMP/ss"));"
        continue
    fi
    expect_in "messages intact" "$out" "rail1 $kind: the job"
    [ "$kind" = reset ] && out="$out
(ss -K: $(cat "$TEST_TMP/ss"))"
    expect_in "btl/tcp:0 mapped out for rank 1" "$out" "rail1 $kind: rank 0 maps it out"
    expect_in "btl/tcp:0 mapped out for rank 0" "$out" "rail1 $kind: rank 1 maps it out"
    intact=$(printf '%s\n' "$out" | sed -n 's/.*mpi_bfo_trials: seed 5: \(.*\) intact.*/\1/p')
    results="$results rail1 $kind: mapped out on both sides $(recovery "$out") s after the fault, $(flowing "$out"), $intact intact;"
done
# A link that comes back (down 3 s, then up), with pml_bfo_readmit_interval 1000: mapped out on
# both sides, then tried again each second until it answers; the rail is taken back on both
# sides and carries traffic again (a new connection over rail1), every message intact.
rail1_up
out=$(fault flap 12 --mca pml_bfo_readmit_interval 1000 --mca btl_tcp_verbose 1)
expect_in "messages intact" "$out" "rail1 flap: the job"
expect_in "btl/tcp:0 mapped out for rank 1" "$out" "rail1 flap: rank 0 maps it out"
expect_in "btl/tcp:0 mapped out for rank 0" "$out" "rail1 flap: rank 1 maps it out"
expect_in "btl/tcp:0 readmitted for rank 1" "$out" "rail1 flap: rank 0 takes it back"
expect_in "btl/tcp:0 readmitted for rank 0" "$out" "rail1 flap: rank 1 takes it back"
# Connected over rail1 at the start and again after the link's return.
up=$(cat "$TEST_TMP/up")
again=$(printf '%s\n' "$out" | awk -v up="$up" '/connected to rank .* over rail1/ && $1 > up { print $1; exit }')
[ -n "$again" ] || fail "rail1 flap: no new connection over rail1 after the link came back: $out"
back=$(printf '%s\n' "$out" | awk -v up="$up" '/readmitted for rank [0-9]+$/ && $1 > up { print $1; exit }')
results="$results rail1 down for 3 s then up (pml_bfo_readmit_interval 1000): mapped out $(recovery "$out") s after the fault, taken back $(awk -v a="$back" -v u="$up" 'BEGIN { printf "%.2f", a - u }') s after the link returned, connected again over rail1, $(printf '%s\n' "$out" | sed -n 's/.*mpi_bfo_trials: seed 5: \(.*\) intact.*/\1/p') intact;"

# Reset while the receiver is not reading: rank 0's eager messages have been acknowledged by
# rank 1's kernel (so btl/tcp at rank 0 completed them, and nothing is left to send again), and
# rank 1's first act after the reset is a write on the broken connection. Every message must
# still arrive: btl/tcp reads what the broken socket holds before it reports the failure.
if ! grep -qi "cannot destroy\|not supported\|unknown option" "$TEST_TMP/ss"; then
    rail1_up
    rm -f "$TEST_TMP/go"
    ip netns exec "$hub" timeout 120 "$MPIRUN" --host "$ha:1,$hb:1" -np 2 \
        --launch-agent 'ip netns exec {host}' --bootstrap-addr "$net.1" --timeout 60 \
        -x WEFT_MCA_mca_base_component_path --mca btl self,tcp \
        --mca btl_tcp_if_include rail1,rail2 --mca pml bfo --mca pml_bfo_verbose 10 \
        --mca btl_tcp_verbose 1 "$WEFT_TEST_BUILDDIR/test/integration/mpi_bfo_unread" \
        "$TEST_TMP/go" 40 1000 >"$TEST_TMP/unread.out" 2>&1 &
    job=$!
    for _ in $(seq 600); do
        grep -q "mpi_bfo_unread: sent" "$TEST_TMP/unread.out" && break
        sleep 0.1
    done
    reset_rail1 "$TEST_TMP/ss2"
    touch "$TEST_TMP/go"
    wait "$job"
    out="$(cat "$TEST_TMP/unread.out")
(ss -K: $(cat "$TEST_TMP/ss2"))"
    printf '%s\n' "$out"
    expect_in "mpi_bfo_unread: 40 messages intact" "$out" "reset before the receiver read"
    expect_in "btl/tcp:0 mapped out for rank 0" "$out" "reset before the receiver read: rank 1"
    results="$results rail1 reset before the receiver read 40 acknowledged messages: all arrived;"
else
    results="$results reset before the receiver read: not tried (this kernel cannot destroy sockets);"
fi
echo "pml/bfo against real faults (two tcp rails, both ways, random traffic for 8-12 s each, every message checked):$results"
