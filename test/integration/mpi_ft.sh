#!/bin/sh
# Fault tolerance (ULFM) through mpirun --with-ft ulfm, over sm and over tcp: a rank killed with
# SIGKILL, or one that exits without MPI_Finalize, does not end the job. Every other rank learns
# of it (while it computes, without an MPI call; while it waits in MPI_Recv), its receives from
# and sends to the failed rank return MPIX_ERR_PROC_FAILED, a receive from MPI_ANY_SOURCE
# reports MPIX_ERR_PROC_FAILED_PENDING and stays pending until the failure is acknowledged
# (MPIX_Comm_failure_ack; the failed and acked groups), MPI_Finalize does not wait for it,
# and mpirun exits 0 when the survivors do. MPI_Abort still ends the job; without --with-ft a
# failure still ends it. Every job has a time limit (mpirun --timeout and timeout).
. "${WEFT_TEST_SRCDIR:?}/test/lib.sh"
export WEFT_MCA_mca_base_component_path="${WEFT_TEST_COMPONENT_PATH:?}"
MPIRUN="$WEFT_TEST_BUILDDIR/mpirun"
PROG="$WEFT_TEST_BUILDDIR/test/integration/mpi_ft"
jobs=0

# every PATTERN...: every survivor printed "rank R: PATTERN" (a basic regular expression), for
# each pattern.
every() {
    for line in "$@"; do
        n=$(echo "$out" | grep -c "^rank [0-9]*: $line")
        [ "$n" -eq $survivors ] || fail "$name: $n ranks printed '$line', not $survivors: $out"
    done
}

# ft NP BTL HOW VICTIM WHAT [PML]: a job with fault tolerance on that must succeed; its output in
# $out.
ft() {
    np=$1 btl=$2 how=$3 victim=$4 what=$5 pml=${6:-ob1} extra=${7:-}
    name="pml $pml, np $np, btl $btl $extra, victim $victim ($how), the others $what"
    # shellcheck disable=SC2086
    out=$(run "$MPIRUN" -np "$np" --oversubscribe --timeout 60 --with-ft ulfm --mca btl "$btl" \
        --mca pml "$pml" --mca mpi_ft_verbose 1 $extra "$PROG" "$how" "$victim" "$what" 2>&1) ||
        fail "$name: $out"
    survivors=$((np - 1))
    [ "$how" = none ] && survivors=$np
    [ "$(echo "$out" | grep -c "^rank [0-9]*: finalized$")" -eq $survivors ] ||
        fail "$name: not every survivor finalized: $out"
    [ "$(echo "$out" | grep -c "MPIX_FT set 1")" -eq "$np" ] || fail "$name: MPIX_FT: $out"
    if [ "$how" != none ]; then
        [ "$(echo "$out" | grep -c ": rank $victim failed (")" -eq $survivors ] ||
            fail "$name: not every survivor learnt of the failure: $out"
        expect_in "rank $victim (pid" "$out" "$name: mpirun's notice"
        expect_in "the job goes on without it (fault tolerance is on)" "$out" "$name"
        ! echo "$out" | grep -q "^rank $victim: finalized$" || fail "$name: the victim finalized: $out"
    fi
    case $what in
    recv | send)
        n=$(echo "$out" | grep -c "returned MPIX_ERR_PROC_FAILED$")
        want=$survivors
        [ "$what" = send ] && want=$((2 * survivors))
        [ "$n" -eq $want ] || fail "$name: $n calls returned MPIX_ERR_PROC_FAILED, not $want: $out"
        ;;
    late)
        expect_in "late recv returned MPIX_ERR_PROC_FAILED" "$out" "$name"
        ;;
    rndv)
        # The receive from it fails, or, when the survivor read the data itself (a single-copy
        # get, which completes once started even if the victim dies meanwhile), has it all. The
        # pipeline needs the victim to the end: there it fails.
        if [ "$extra" = "--mca btl_sm_single_copy_mechanism none" ] || [ "$btl" = self,tcp ]; then
            expect_in "rndv recv returned MPIX_ERR_PROC_FAILED" "$out" "$name"
        else
            echo "$out" | grep -Eq "rndv recv returned (MPI_SUCCESS, data intact|MPIX_ERR_PROC_FAILED)$" ||
                fail "$name: the receive's result: $out"
        fi
        # The send to it may end either way: in error, or done when its data was all written
        # before the victim died (a single-copy put completes at the sender, with the victim's
        # receive still under way in its eyes). It must end, with one of those two.
        expect_in "its receive " "$out" "$name: the victim's transfers"
        echo "$out" | grep -Eq "rndv send returned (MPI_SUCCESS|MPIX_ERR_PROC_FAILED)$" ||
            fail "$name: the send's result: $out"
        ;;
    coll)
        for op in barrier bcast reduce allreduce "large allreduce" allgather alltoall comm_dup; do
            n=$(echo "$out" | grep -c "^rank [0-9]*: $op returned ")
            [ "$n" -eq $survivors ] || fail "$name: $n survivors returned from $op, not $survivors: $out"
        done
        # Those that need the failed process's part cannot succeed anywhere.
        for op in barrier allreduce "large allreduce" allgather alltoall comm_dup; do
            ! echo "$out" | grep -q "^rank [0-9]*: $op returned MPI_SUCCESS" ||
                fail "$name: $op succeeded without the failed process: $out"
        done
        ;;
    agree)
        first="MPIX_ERR_PROC_FAILED flag 5"
        [ "$how" = none ] && first="MPI_SUCCESS flag 5"
        every "agree 1 returned $first$" "agree 2 returned MPI_SUCCESS flag 255$" \
            "iagree returned MPI_SUCCESS flag 1$"
        ;;
    interagree)
        first=MPIX_ERR_PROC_FAILED
        [ "$how" = none ] && first=MPI_SUCCESS
        every "interagree 1 returned $first flag ok$" "interagree 2 returned MPI_SUCCESS flag ok$" \
            "interiagree returned MPI_SUCCESS flag ok$"
        ;;
    shrinkrace) every "shrinkrace ok$" ;;
    twoshrinks) every "twoshrinks: sizes $survivors $survivors, sums ok, MPI_SUCCESS$" ;;
    intershrink)
        every "intershrink: local [0-9]*, remote [0-9]*, rank ok, sum ok, agree MPI_SUCCESS, barrier MPI_SUCCESS$"
        ;;
    longjmp) every "longjmp: handler ran 1, revoked 1, shrink size $survivors, sum ok$" ;;
    shrink) every "shrink: size $survivors, rank ok, sum ok, barrier MPI_SUCCESS$" ;;
    any)
        every "wait returned MPIX_ERR_PROC_FAILED_PENDING.*, request pending" \
            "blocking any-source recv returned MPIX_ERR_PROC_FAILED$" \
            "the other MPIX_ERR_PROC_FAILED_PENDING.*, then cancel: cancelled$" \
            "failed group 1 (rank $victim), acked group MPI_GROUP_EMPTY" \
            "after ack: acked group the failed one, 1 acked" \
            "pending receive completed: MPI_SUCCESS, data right"
        ;;
    esac
    jobs=$((jobs + 1))
}

for btl in self,sm self,tcp; do
    ft 4 $btl kill 2 compute
    # The line the victim printed just before it killed itself came through (line-buffered).
    expect_in "rank 2: dying" "$out" "the victim's last line over $btl"
    expect_in "killed by signal 9" "$out" "how the victim died over $btl"
    ft 4 $btl exit 1 compute
    expect_in "rank 1: leaving" "$out" "the victim's last line over $btl"
    expect_in "exited with status 0 without finalizing" "$out" "how the victim ended over $btl"
    ft 4 $btl kill 3 recv
    ft 4 $btl kill 1 send
    ft 8 $btl kill 0 recv
    ft 4 $btl kill 2 any
    ft 6 $btl exit 0 any
    ft 4 $btl kill 2 coll
    ft 8 $btl kill 0 coll
done
ft 5 self,tcp kill 3 coll bfo
# A rank killed in the middle of two 256 MiB rendezvous transfers (one to it, one from it): over
# sm with the copy the host chooses, and with the pipeline forced; over tcp.
for btl in self,sm self,tcp; do
    for pml in ob1 bfo; do
        ft 4 $btl kill 2 rndv $pml
    done
done
ft 4 self,sm kill 2 rndv ob1 "--mca btl_sm_single_copy_mechanism none"
ft 4 self,sm kill 2 rndv bfo "--mca btl_sm_single_copy_mechanism none"
# The victim killed while a survivor's tcp BTL is reading one of its FRAGs straight into the
# receive buffer (btl_register_place): the placement ends in error (PLACE_FAILED) and the
# receive with MPIX_ERR_PROC_FAILED; without that callback it would wait for ever. The victim
# streams for 20 ms first; about every other run it dies inside a placed frame, so runs repeat
# (at most 16) until one has.
cut=0 try=0
while [ $cut = 0 ] && [ $try -lt 16 ]; do
    try=$((try + 1)) jobs=$((jobs + 1))
    name="tcp placement cut by a failure, try $try"
    out=$(run "$MPIRUN" -np 3 --oversubscribe --timeout 60 --with-ft ulfm --mca btl self,tcp \
        --mca btl_tcp_verbose 1 "$PROG" kill 1 rndv 0.02 2>&1) || fail "$name: $out"
    expect_in "rank 2: rndv recv returned MPIX_ERR_PROC_FAILED" "$out" "$name"
    [ "$(echo "$out" | grep -c "^rank [02]: finalized$")" -eq 2 ] ||
        fail "$name: not every survivor finalized: $out"
    echo "$out" | grep -Eq "ended [0-9]+ bytes into a frame of [0-9]+ being placed" && cut=1
done
[ $cut = 1 ] || fail "tcp placement cut by a failure: in $try runs the victim never died inside a placed frame: $out"
ft 6 self,sm exit 0 rndv
# A rendezvous from the failed rank still unmatched when its failure is learnt, received later.
for btl in self,sm self,tcp; do
    ft 4 $btl kill 2 late
    ft 4 $btl kill 2 late bfo
done
# The fault-tolerant agreement (coll/ftagree): a member dies while the others agree (the
# coordinator, rank 0, or another), and with no failure.
for btl in self,sm self,tcp; do
    ft 4 $btl kill 0 agree
    ft 6 $btl kill 3 agree
    ft 4 $btl none 0 agree
done
ft 12 self,sm kill 0 agree
# On an intercommunicator (even ranks against odd ones), whichever group the victim is in:
# agreement (each group gets the AND of the other's flags, the error the same in both groups),
# and revoke and shrink (both groups' survivors in their old order; an allreduce, an agreement
# and a barrier across them).
for what in interagree intershrink; do
    for btl in self,sm self,tcp; do
        ft 6 $btl kill 0 $what
        ft 7 $btl kill 3 $what
    done
    ft 4 self,sm none 0 $what
done
# Two MPIX_Comm_ishrinks under way at once, waited for in opposite orders by even and odd ranks.
for btl in self,sm self,tcp; do
    ft 6 $btl kill 1 twoshrinks
done
ft 5 self,sm none 0 twoshrinks
# Shrinks of two communicators with different lowest members, started in opposite orders: two
# may choose the same context id, and try again.
ft 6 self,sm none 0 shrinkrace
ft 5 self,tcp none 0 shrinkrace
ft 5 self,tcp kill 4 intershrink bfo
ft 5 self,sm kill 2 interagree bfo
# Without fault tolerance: coll/base's blocking agreement (an intercommunicator allreduce); its
# non-blocking one is not offered on intercommunicators, and says so.
name="intercommunicator agreement without fault tolerance" survivors=5
out=$(run "$MPIRUN" -np 5 --oversubscribe --timeout 60 "$PROG" none 0 interagree 2>&1) ||
    fail "$name: $out"
every "interagree 1 returned MPI_SUCCESS flag ok" "interagree 2 returned MPI_SUCCESS flag ok" \
    "interiagree unsupported "
# Many agreements in a row (test/integration/mpi_agree.c) while 1 to 5 drawn ranks die before or
# inside drawn ones, on trees of radix 2, 3 and 4 and with the coordinator: every survivor
# gets the same flag and error from each, the AND of its contributors; then MPIX_Comm_ishrink.
# Without fault tolerance, coll/base's agreement and the same ishrink.
AGREE="$WEFT_TEST_BUILDDIR/test/integration/mpi_agree"
agreements=0
for seed in $(seq 1 ${WEFT_AGREE_SEEDS:-12}); do
    np=$((8 + 8 * (seed % 2))) radix=$((2 + seed % 3)) kills=$((1 + seed % 5)) btl=self,sm
    [ $((seed % 3)) -eq 0 ] && btl=self,tcp
    name="mpi_agree np $np btl $btl radix $radix seed $seed kills $kills"
    out=$(run "$MPIRUN" -np $np --oversubscribe --timeout 60 --with-ft ulfm --mca btl $btl \
        --mca coll_ftagree_tree_radix $radix "$AGREE" 200 $seed $kills 2>&1) || fail "$name: $out"
    expect_in "agree: 200 agreements, $kills failures, " "$out" "$name"
    expect_in ", uniform" "$out" "$name"
    # A failure is reported by some agreement before it can be acknowledged.
    expect_not_in ", 0 in error," "$out" "$name: no agreement reported a failure"
    agreements=$((agreements + 200)) jobs=$((jobs + 1))
done
out=$(run "$MPIRUN" -np 4 --oversubscribe --timeout 60 "$AGREE" 100 1 0 2>&1) ||
    fail "mpi_agree without fault tolerance: $out"
expect_in "agree: 100 agreements, 0 failures, 0 in error, uniform" "$out" "mpi_agree without FT"
# MPIX_Comm_revoke then MPIX_Comm_shrink while a member dies (rank 0, the agreement's first
# coordinator, or another), and with no failure: the survivors in the old order, a working
# communicator.
for btl in self,sm self,tcp; do
    ft 5 $btl kill 0 shrink
    ft 6 $btl kill 4 shrink
    ft 4 $btl none 1 shrink
done
ft 16 self,sm kill 7 shrink
ft 5 self,tcp kill 2 shrink bfo
# An error handler that revokes and longjmps out of the failed call, then shrink.
ft 4 self,sm kill 2 longjmp
ft 5 self,tcp kill 0 longjmp
ft 16 self,sm kill 5 recv
# bfo: the same engine; over tcp a peer that no rail reaches any more is a failed process.
for btl in self,sm self,tcp; do
    ft 4 $btl kill 1 send bfo
    ft 4 $btl kill 2 recv bfo
done

# MPIX_Comm_revoke (mpi_revoke.c): pending receives end REVOKED at every rank, later operations
# and MPI_Comm_dup are refused, an unreceived rendezvous is refused to its sender, a matched
# transfer arrives whole, an intercommunicator's both groups, every rank revoking at once,
# collectives under way (coll/sm's among them) end REVOKED; with
# fault tolerance on and off, ob1 and bfo, sm (pipeline and CMA) and tcp.
REVOKE="$WEFT_TEST_BUILDDIR/test/integration/mpi_revoke"
revokes=0
for opts in "--with-ft ulfm --mca btl self,sm" "--with-ft none --mca btl self,sm" \
    "--with-ft ulfm --mca btl self,tcp" "--with-ft ulfm --mca pml bfo" \
    "--with-ft ulfm --mca btl_sm_single_copy_mechanism cma"; do
    for np in 3 5 8; do
        # shellcheck disable=SC2086
        out=$(run "$MPIRUN" -np $np --oversubscribe --timeout 60 $opts "$REVOKE" 2>&1) ||
            fail "mpi_revoke $opts at $np ranks: $out"
        [ "$(echo "$out" | grep -c ": ok$")" -eq $((8 * np)) ] ||
            fail "mpi_revoke $opts at $np ranks: not every case passed at every rank: $out"
        revokes=$((revokes + 1))
    done
done
# MPI_COMM_WORLD revoked before MPI_Finalize: the job still finishes, with fault tolerance on
# and off.
for ft in ulfm none; do
    out=$(run "$MPIRUN" -np 4 --oversubscribe --timeout 60 --with-ft $ft "$REVOKE" world 2>&1) ||
        fail "mpi_revoke with MPI_COMM_WORLD revoked before MPI_Finalize (--with-ft $ft): $out"
    [ "$(echo "$out" | grep -c "done$")" -eq 4 ] && [ "$(echo "$out" | grep -c ": ok$")" -eq 32 ] ||
        fail "MPI_COMM_WORLD revoked: $out"
    revokes=$((revokes + 1))
done

# A broken tcp connection to the failed rank is quiet, unless btl_base_warn_peer_error asks.
out=$(run "$MPIRUN" -np 4 --oversubscribe --timeout 60 --with-ft ulfm --mca btl self,tcp \
    "$PROG" kill 1 send 2>&1) || fail "quiet peer errors: $out"
expect_not_in "is taken as failed" "$out" "a peer error under fault tolerance, by default"
out=$(run "$MPIRUN" -np 4 --oversubscribe --timeout 60 --with-ft ulfm --mca btl self,tcp \
    --mca btl_base_warn_peer_error 1 "$PROG" kill 1 send 2>&1) || fail "warned peer errors: $out"
expect_in "rank 1 (host localhost) is taken as failed: btl/tcp" "$out" "btl_base_warn_peer_error 1"

# examples/ulfm_recover: a rank dies in round 3 of 10 allreduces; the others revoke, shrink and
# redo the round; the job succeeds.
for btl in self,sm self,tcp; do
    out=$(run "$MPIRUN" -np 4 --oversubscribe --timeout 60 --with-ft ulfm --mca btl $btl \
        "$WEFT_TEST_BUILDDIR/examples/ulfm_recover" 2>&1) || fail "ulfm_recover over $btl: $out"
    expect_in "round 3: a process failed; going on with 3" "$out" "ulfm_recover over $btl"
    expect_in "round 9: sum of the ranks left 3" "$out" "ulfm_recover over $btl"
done

# MPI_Abort ends the job with fault tolerance on too.
out=$(run "$MPIRUN" -np 4 --oversubscribe --timeout 60 --with-ft ulfm "$PROG" abort 3 2>&1)
rc=$?
[ $rc -eq 7 ] || fail "MPI_Abort(7) under --with-ft: exit status $rc: $out"
expect_in "called abort with code 7" "$out" "MPI_Abort under --with-ft"
# Without fault tolerance a failure ends the job, naming the rank and how it died.
out=$(run "$MPIRUN" -np 4 --oversubscribe --timeout 60 "$PROG" kill 2 2>&1)
rc=$?
[ $rc -eq 137 ] || fail "a killed rank without --with-ft: exit status $rc: $out"
expect_in "rank 2 (pid" "$out" "without --with-ft"
expect_in "killed by signal 9 (Killed); ending the job" "$out" "without --with-ft"
expect_in "rank 0: MPIX_FT set 0" "$out" "MPIX_FT without --with-ft"
# --mca mpi_ft_enable is the same switch; mpirun refuses what it cannot take.
out=$(run "$MPIRUN" -np 3 --oversubscribe --timeout 60 --mca mpi_ft_enable yes "$PROG" kill 1 2>&1) ||
    fail "--mca mpi_ft_enable yes: $out"
expect_in "the job goes on without it" "$out" "--mca mpi_ft_enable yes"
out=$(run "$MPIRUN" -np 2 --with-ft sometimes "$PROG" none 0 2>&1) && fail "--with-ft sometimes ran: $out"
expect_in "--with-ft 'sometimes': expected ulfm" "$out" "--with-ft sometimes"
out=$(run "$MPIRUN" -np 2 --with-ft ulfm --mca mpi_ft_enable 0 "$PROG" none 0 2>&1) &&
    fail "--with-ft ulfm with mpi_ft_enable 0 ran: $out"
expect_in "disagree" "$out" "--with-ft ulfm with --mca mpi_ft_enable 0"
out=$(WEFT_MCA_mpi_ft_enable=maybe run "$MPIRUN" -np 2 "$PROG" none 0 2>&1) &&
    fail "WEFT_MCA_mpi_ft_enable=maybe ran: $out"
expect_in "WEFT_MCA_mpi_ft_enable 'maybe': expected a boolean" "$out" "mpi_ft_enable=maybe"

# The failure detector (mpi_ft_detector_period): a stopped rank, which nothing else would
# find, is declared failed and killed; the others' receives from it fail. Ranks that compute
# for 2 s without an MPI call (20 periods) are not declared failed. Its parameters are checked.
for btl in self,sm self,tcp; do
    name="failure detector, btl $btl, rank 1 stopped"
    out=$(run "$MPIRUN" -np 4 --oversubscribe --timeout 60 --with-ft ulfm --mca btl "$btl" \
        --mca mpi_ft_detector_period 0.1 --mca mpi_ft_detector_timeout 0.5 \
        "$PROG" stop 1 recv 2>&1) || fail "$name: $out"
    expect_in "sent no heartbeat for" "$out" "$name"
    [ "$(echo "$out" | grep -c "recv returned MPIX_ERR_PROC_FAILED$")" -eq 3 ] || fail "$name: $out"
    [ "$(echo "$out" | grep -c "finalized$")" -eq 3 ] || fail "$name: $out"
    jobs=$((jobs + 1))
done
out=$(run "$MPIRUN" -np 4 --oversubscribe --timeout 60 --with-ft ulfm \
    --mca mpi_ft_detector_period 0.1 --mca mpi_ft_detector_timeout 0.5 "$PROG" none 0 compute 2 2>&1) ||
    fail "failure detector, ranks computing: $out"
expect_not_in "heartbeat" "$out" "failure detector, ranks computing for 2 s"
[ "$(echo "$out" | grep -c "finalized$")" -eq 4 ] || fail "failure detector, ranks computing: $out"
out=$(run "$MPIRUN" -np 2 --mca mpi_ft_detector_period 1 "$PROG" none 0 2>&1) &&
    fail "the detector without fault tolerance ran: $out"
expect_in "mpi_ft_detector_period needs fault tolerance" "$out" "detector without --with-ft"
out=$(run "$MPIRUN" -np 2 --with-ft ulfm --mca mpi_ft_detector_period 1 --mca mpi_ft_detector_timeout 1.5 "$PROG" none 0 2>&1) &&
    fail "a detector timeout under two periods ran: $out"
expect_in "at least twice" "$out" "detector timeout"
out=$(run "$MPIRUN" -np 2 --with-ft ulfm --mca mpi_ft_detector_period soon "$PROG" none 0 2>&1) &&
    fail "mpi_ft_detector_period soon ran: $out"
expect_in "mpi_ft_detector_period 'soon': expected a number of seconds" "$out" "detector period soon"
out=$(run "$MPIRUN" -np 2 --with-ft ulfm --mca mpi_ft_detector_timeout 3 "$PROG" none 0 2>&1) &&
    fail "a detector timeout without a period ran: $out"
expect_in "mpi_ft_detector_timeout needs mpi_ft_detector_period" "$out" "detector timeout alone"
# 0 is the detector off; --with-ft ulfm and mpi_ft_enable 1 are one value.
out=$(run "$MPIRUN" -np 2 --timeout 60 --with-ft ulfm --mca mpi_ft_enable 1 \
    --mca mpi_ft_detector_period 0 "$PROG" none 0 2>&1) || fail "detector period 0: $out"
[ "$(echo "$out" | grep -c "finalized$")" -eq 2 ] || fail "detector period 0: $out"

# Launches in a row, each with a rank killed at once (a random one): none may hang.
loops=${WEFT_FT_LOOPS:-20}
i=0
while [ $i -lt $loops ]; do
    victim=$(($(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % 4))
    out=$(run "$MPIRUN" -np 4 --oversubscribe --timeout 30 --with-ft ulfm "$PROG" kill $victim compute 0 2>&1) ||
        fail "launch $i (victim $victim): $out"
    [ "$(echo "$out" | grep -c "finalized$")" -eq 3 ] || fail "launch $i (victim $victim): $out"
    i=$((i + 1))
done
echo "fault tolerance: $jobs jobs over sm and tcp at 4, 8 and 16 ranks, ob1 and bfo (a rank killed or exiting without MPI_Finalize, the others computing, in MPI_Recv from it, sending to it, in the middle of 256 MiB rendezvous transfers to and from it (over tcp also inside a FRAG read straight into the receive buffer: $try runs until one was), waiting on MPI_ANY_SOURCE, in collectives and MPI_Comm_dup: learnt by every survivor, collectives complete everywhere (in error where they need it), MPIX_Comm_agree and _iagree uniform with the coordinator or another member dying under them, on intra- and intercommunicators ($agreements agreements with 1 to 5 ranks dying before or inside drawn ones, on trees of radix 2 to 4), MPIX_Comm_ishrink, MPIX_Comm_shrink to a working communicator of the survivors (intercommunicators too), an error handler that revokes and longjmps out, MPIX_ERR_PROC_FAILED, MPIX_ERR_PROC_FAILED_PENDING until acknowledged, then the pending receive completes; the failed and acked groups; MPI_Finalize without it, exit 0); $revokes revoke jobs (pending receives, later operations, a refused rendezvous, a matched transfer, an intercommunicator, a revoke storm); peer errors quiet unless btl_base_warn_peer_error; examples/ulfm_recover recovers over sm and tcp; MPI_Abort and a failure without --with-ft end the job; --with-ft and mpi_ft_enable checked; the failure detector finds a stopped rank over sm and tcp and no computing one, its parameters checked; $loops launches with a kill, 0 hangs"
