#!/bin/sh
# pml/bfo over two tcp rails between two network-namespace hosts, with faults injected by
# btl/base (docs/fault-injection.md): every message arrives once and intact when a MATCH, RNDV
# or FRAG from the sender or an ACK from the receiver is lost or delivered-but-reported-failed,
# and when a rail goes down under any fragment type at either side; a fault under ob1, or on
# the only rail, ends the job at once with a message that says why (never a hang or a silent
# loss); a seeded run replays the same faults; bad fault parameters are refused.
. "${WEFT_TEST_SRCDIR:?}/test/lib.sh"
MPIRUN="$WEFT_TEST_BUILDDIR/mpirun"
export WEFT_MCA_mca_base_component_path="${WEFT_TEST_COMPONENT_PATH:?}"
netns_rails f
PROG="$WEFT_TEST_BUILDDIR/test/integration/mpi_rndv"
# 1000 and 65519 bytes go eagerly (MATCH), 65520 and 3000017 by rendezvous (RNDV, ACK, FRAGs);
# four messages each (tags 0-3), and a stream of four (tags 20-23).
SIZES="1000 65519 65520 3000017 -s 300007"
job() { # extra options... (mpirun's exit status is the job's)
    run ip netns exec "$hub" "$MPIRUN" --host "$ha:1,$hb:1" -np 2 --launch-agent 'ip netns exec {host}' \
        --bootstrap-addr "$net.1" --timeout 90 -x WEFT_MCA_mca_base_component_path \
        --mca btl self,tcp --mca btl_tcp_if_include rail1,rail2 "$@" "$PROG" $SIZES 2>&1
}
INTACT="mpi_rndv: 2 ranks, 20 messages intact"
cases=0

out=$(job --mca pml bfo --mca pml_bfo_verbose 20) || fail "bfo, no fault: $out"
expect_in "$INTACT" "$out" "bfo, no fault"
expect_in "3000017 bytes: chose send/receive pipeline, ran send/receive pipeline over tcp:0+tcp:1" "$out" "bfo stripes over both rails"
cases=$((cases + 1))

# A MATCH or a RNDV from rank 0, lost or delivered although reported failed, on the eager rail
# that carries them (tcp:0): the rail is mapped out for rank 1, the fragment sent again on the
# other, a copy that arrived as well dropped by its sequence number.
for type in match rndv; do
    for mode in lost delivered; do
        for rail in tcp:0; do
            name="bfo: $type $mode on $rail"
            out=$(job --mca pml bfo --mca pml_bfo_verbose 20 --mca btl_base_fault_rail "$rail" \
                --mca btl_base_fault_type "$type" --mca btl_base_fault_mode "$mode" \
                --mca btl_base_fault_after 2 --mca btl_base_fault_rank 0) || fail "$name: $out"
            expect_in "$INTACT" "$out" "$name"
            expect_in "fault injection on btl/$rail (rank 0, seed 1): $(echo $type | tr a-z A-Z) #2" "$out" "$name: the fault"
            expect_in "pml/bfo: btl/$rail mapped out for rank 1" "$out" "$name: mapped out"
            # Rank 1 saw nothing wrong: told over the other rail, it maps the same rail out.
            expect_in "pml/bfo: btl/$rail mapped out for rank 0 (rank 0 mapped it out" "$out" "$name: the peer told"
            expect_in "that btl/$rail could not deliver is sent again over the rails left" "$out" "$name: sent again"
            [ "$mode" = delivered ] && expect_in "(delivered already) was dropped" "$out" "$name: the copy dropped"
            cases=$((cases + 1))
        done
    done
done

# A rail down under the first fragment of each type, at rank 0 (MATCH, RNDV on the eager rail
# tcp:0, FRAG on tcp:1, which the pipeline stripes over too) and at rank 1 (ACK, on tcp:0): the
# module fails for every peer, the fragment it refused goes on the other rail.
for c in "match 0 tcp:0" "rndv 0 tcp:0" "frag 0 tcp:1" "ack 1 tcp:0"; do
    set -- $c
    type=$1 rank=$2 rail=$3
    name="bfo: rail down at a $type from rank $rank on $rail"
    out=$(job --mca pml bfo --mca pml_bfo_verbose 10 --mca btl_base_fault_rail "$rail" \
        --mca btl_base_fault_type "$type" --mca btl_base_fault_mode rail_down \
        --mca btl_base_fault_after 1 --mca btl_base_fault_rank "$rank") || fail "$name: $out"
    expect_in "$INTACT" "$out" "$name"
    expect_in "takes the rail down" "$out" "$name: the fault"
    expect_in "pml/bfo: btl/$rail mapped out for every peer" "$out" "$name: mapped out"
    cases=$((cases + 1))
done

# A FRAG from rank 0 (on either rail: the pipeline stripes over both) or an ACK from rank 1,
# lost or delivered although reported failed: the request is marked in error, and once none of
# its fragments is in flight the restart dance runs (RNDVRESTARTNOTIFY, or RECVERRNOTIFY from
# the receiver first; RNDVRESTARTACK, and the whole message again as attempt 1, whose FRAGs and
# ACKs the other side tells from those of attempt 0; or RNDVRESTARTNACK when it had it all).
for c in "frag lost 0 tcp:0" "frag delivered 0 tcp:0" "frag lost 0 tcp:1" "frag delivered 0 tcp:1" \
    "ack lost 1 tcp:0" "ack delivered 1 tcp:0"; do
    set -- $c
    type=$1 mode=$2 rank=$3 rail=$4
    name="bfo: $type $mode from rank $rank on $rail"
    out=$(job --mca pml bfo --mca pml_bfo_verbose 30 --mca btl_base_fault_rail "$rail" \
        --mca btl_base_fault_type "$type" --mca btl_base_fault_mode "$mode" \
        --mca btl_base_fault_after 3 --mca btl_base_fault_rank "$rank") || fail "$name: $out"
    expect_in "$INTACT" "$out" "$name"
    expect_in "$(echo $type | tr a-z A-Z) #3" "$out" "$name: the fault"
    expect_in "mapped out for rank" "$out" "$name: mapped out"
    [ "$type" = ack ] && expect_in "restart: RECVERRNOTIFY to rank 0 (attempt 0)" "$out" "$name: the receiver tells"
    case $out in
    # A delivered ACK: every FRAG may have arrived, and the send completed, before the
    # receiver's RECVERRNOTIFY came; the sender drops it, and there is nothing to restart.
    *"RECVERRNOTIFY of an earlier attempt arrived late"*) [ "$mode" = delivered ] ||
        fail "$name: a RECVERRNOTIFY came too late although the ACK was lost: $out" ;;
    *)
        expect_in "restart: RNDVRESTARTNOTIFY to rank 1 (attempt 1)" "$out" "$name: the sender asks"
        case $out in
        *"RNDVRESTARTNACK to rank 0"*) ;; # the receiver had it all
        *) expect_in "restart: send of " "$out" "$name: restarted" ;;
        esac
        ;;
    esac
    cases=$((cases + 1))
done
# A put aimed where the peer registered nothing (pml_*_fault_stray_put, with put and get over
# tcp): btl/tcp at the target refuses it and drops the connection, naming the address. Under
# bfo the rail is mapped out and the piece moves as FRAGs: every message intact; under ob1 the
# job ends.
RDMA="--mca btl_tcp_rdma 1 --mca btl_tcp_flags send,put"
name="bfo: a stray put"
# shellcheck disable=SC2086
out=$(job --mca pml bfo --mca pml_bfo_verbose 10 $RDMA --mca pml_bfo_fault_stray_put 2) ||
    fail "$name: $out"
expect_in "$INTACT" "$out" "$name"
expect_in "which no registration for remote writes covers; connection closed" "$out" "$name: refused"
expect_in "mapped out for rank" "$out" "$name: mapped out"
cases=$((cases + 1))
name="bfo: a stray get"
# shellcheck disable=SC2086
out=$(job --mca pml bfo --mca pml_bfo_verbose 10 --mca btl_tcp_rdma 1 --mca btl_tcp_flags send,get \
    --mca pml_bfo_fault_stray_get 2) || fail "$name: $out"
expect_in "$INTACT" "$out" "$name"
expect_in "which no registration for remote reads covers; connection closed" "$out" "$name: refused"
expect_in "mapped out for rank" "$out" "$name: mapped out"
cases=$((cases + 1))
name="ob1: a stray put"
# shellcheck disable=SC2086
if out=$(job $RDMA --mca pml_ob1_fault_stray_put 2); then
    fail "$name: the job did not end: $out"
fi
expect_in "cannot fail over" "$out" "$name"
cases=$((cases + 1))

# A standby BTL (bml_r2_standby): two ranks on one host use sm only (tcp, of lower
# exclusivity, waits); once sm is mapped out (a lost MATCH), tcp takes over. Without it the
# job ends: sm was the last rail.
local_job() {
    run "$MPIRUN" -np 2 --timeout 90 --mca btl self,sm,tcp --mca pml bfo \
        --mca btl_base_fault_rail sm --mca btl_base_fault_type match --mca btl_base_fault_after 3 \
        --mca btl_base_fault_rank 0 "$@" "$PROG" $SIZES 2>&1
}
name="bfo: from sm to the standby tcp"
out=$(local_job --mca bml_r2_standby 1 --mca pml_bfo_verbose 20) || fail "$name: $out"
expect_in "$INTACT" "$out" "$name"
expect_in "btl/sm:0 mapped out for rank 1" "$out" "$name: mapped out"
expect_in "btl/sm:0 mapped out for rank 0 (rank 0 mapped it out" "$out" "$name: the peer told"
expect_in "ran send/receive pipeline over tcp:" "$out" "$name: tcp carries on"
cases=$((cases + 1))
name="bfo: sm fails, no standby"
if out=$(local_job); then
    fail "$name: the job did not end: $out"
fi
expect_in "its last rail, btl/sm:0, failed" "$out" "$name"
cases=$((cases + 1))

# Re-admission against a rail that stays dead (an injected rail down refuses everything after
# it): taken back every 100 ms, mapped out again each time, and 2 s of random traffic both ways
# arrives intact through the churn.
name="bfo: re-admitting a rail that stays down"
TRIALS="$WEFT_TEST_BUILDDIR/test/integration/mpi_bfo_trials"
out=$(run ip netns exec "$hub" "$MPIRUN" --host "$ha:1,$hb:1" -np 2 \
    --launch-agent 'ip netns exec {host}' --bootstrap-addr "$net.1" --timeout 90 \
    -x WEFT_MCA_mca_base_component_path --mca btl self,tcp --mca btl_tcp_if_include rail1,rail2 \
    --mca pml bfo --mca pml_bfo_verbose 10 --mca pml_bfo_readmit_interval 100 \
    --mca btl_base_fault_rail tcp:0 --mca btl_base_fault_type rndv --mca btl_base_fault_mode rail_down \
    --mca btl_base_fault_after 1 --mca btl_base_fault_rank 1 "$TRIALS" 1 1000000 2 2>&1) ||
    fail "$name: $out"
expect_in "mpi_bfo_trials: seed 1:" "$out" "$name"
expect_in "btl/tcp:0 readmitted for rank" "$out" "$name: taken back"
[ "$(printf '%s\n' "$out" | grep -c 'btl/tcp:0 mapped out for')" -ge 3 ] ||
    fail "$name: not mapped out again after being taken back: $out"
cases=$((cases + 1))

# ob1 does not fail over: a lost MATCH ends the job, naming the rail.
name="ob1: a MATCH lost"
if out=$(job --mca btl_base_fault_rail tcp:0 --mca btl_base_fault_type match \
    --mca btl_base_fault_after 2 --mca btl_base_fault_rank 0); then
    fail "$name: the job did not end: $out"
fi
expect_in "pml/ob1: a peer cannot be reached: the link over btl/tcp:0 failed and pml/ob1 cannot fail over" "$out" "$name"
cases=$((cases + 1))
# bfo over one rail: nothing to fail over to.
name="bfo: the only rail"
if out=$(job --mca pml bfo --mca btl_tcp_if_include rail1 --mca btl_base_fault_rail tcp:0 \
    --mca btl_base_fault_type match --mca btl_base_fault_after 2 --mca btl_base_fault_rank 0); then
    fail "$name: the job did not end: $out"
fi
expect_in "no other rail to it is left to fail over to" "$out" "$name"
cases=$((cases + 1))

# Seeded faults replay: the same seed, the same faults (by number), twice.
faults() {
    job --mca pml bfo --mca btl_base_fault_rail tcp:0 --mca btl_base_fault_type match \
        --mca btl_base_fault_probability 0.2 --mca btl_base_fault_count 3 \
        --mca btl_base_fault_seed "$1" --mca btl_base_fault_rank 0 | grep "fault injection on" | sort
}
one=$(faults 7) && two=$(faults 7) || fail "seeded runs failed: $one $two"
[ -n "$one" ] && [ "$one" = "$two" ] || fail "seed 7 did not replay: [$one] [$two]"
cases=$((cases + 1))

# Bad fault parameters: refused at MPI_Init, naming the parameter.
for bad in "btl_base_fault_type nosuch" "btl_base_fault_probability 2" "btl_base_fault_mode gone" "btl_base_fault_after -1"; do
    # shellcheck disable=SC2086
    if out=$(run timeout 60 "$MPIRUN" -np 1 --mca btl self --mca $bad "$PROG" 8 2>&1); then
        fail "$bad accepted: $out"
    fi
    expect_in "${bad% *}" "$out" "$bad refused"
    cases=$((cases + 1))
done
echo "pml/bfo over two tcp rails: $cases cases: MATCH and RNDV lost or delivered-and-failed (mapped out on both sides, the peer told; sent again, copies dropped); FRAG and ACK lost or delivered-and-failed on either rail (the restart dance: notify, reset, the message again as attempt 1, late fragments dropped); a rail down under MATCH, RNDV, FRAG and ACK; all messages intact; a put or get outside the peer's registrations refused (bfo carries on, ob1 ends); sm to a standby tcp (bml_r2_standby), and without it the job ends; re-admission of a rail that stays down (taken back, mapped out again, traffic intact); ob1 and a single rail end the job saying why; seeded faults replay; 4 bad fault values refused"
