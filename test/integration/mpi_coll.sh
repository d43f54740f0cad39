#!/bin/sh
# Every collective against a serial reference (test/integration/mpi_coll.c), over
# --mca btl self,sm and over self,tcp, for communicator sizes 1 to 17 on this 2-core machine
# (oversubscribed from 3): the full list at a few sizes, the quick list (small counts) at
# every size.
. "${WEFT_TEST_SRCDIR:?}/test/lib.sh"
export WEFT_MCA_mca_base_component_path="${WEFT_TEST_COMPONENT_PATH:?}"
MPIRUN="$WEFT_TEST_BUILDDIR/mpirun"
B="$WEFT_TEST_BUILDDIR"
jobs=0
for btl in self,sm self,tcp; do
    for n in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17; do
        what=quick
        case $n in 1 | 2 | 4 | 7 | 16) what=full ;; esac
        arg=
        [ $what = quick ] && arg=quick
        start=$(date +%s)
        # shellcheck disable=SC2086
        out=$(run "$MPIRUN" -np $n --oversubscribe --timeout 240 --mca btl $btl \
            "$B/test/integration/mpi_coll" $arg 2>&1) ||
            fail "mpi_coll ($what) over $btl with $n ranks: $out"
        expect_in "mpi_coll: $n ranks," "$out" "mpi_coll $btl $n"
        [ $(($(date +%s) - start)) -lt 200 ] || fail "mpi_coll over $btl with $n ranks took too long"
        jobs=$((jobs + 1))
    done
done
# Every algorithm of coll/basic forced (coll_basic_*_algorithm), with thresholds that make the
# size-dependent ones run at small counts too, at 5, 8 and 9 ranks (9: above direct_max_ranks)
# with coll/sm (which serves the barrier of one-host communicators) turned off; the choices are
# seen in coll_basic_verbose's lines.
set_a="--mca coll_basic_direct_max_ranks 2 --mca coll_basic_bcast_pipeline_min 1k --mca coll_basic_bcast_segment 256 --mca coll_basic_reduce_algorithm direct --mca coll_basic_allreduce_algorithm rabenseifner --mca coll_basic_allreduce_rsag_min 16 --mca coll_basic_allgather_algorithm bruck --mca coll_basic_allgather_bruck_max 64k --mca coll_basic_alltoall_algorithm pairwise --mca coll_basic_barrier_algorithm dissemination"
set_b="--mca coll_basic_bcast_algorithm binomial --mca coll_basic_reduce_algorithm binomial --mca coll_basic_allreduce_algorithm direct --mca coll_basic_allgather_algorithm ring --mca coll_basic_alltoall_algorithm direct --mca coll_basic_barrier_algorithm binomial"
set_c="--mca coll_basic_allreduce_algorithm recursive_doubling --mca coll_basic_allgather_algorithm direct --mca coll_basic_direct_max_ranks 16 --mca coll_basic_direct_max_bytes 16"
# Set c also covers both ways of the automatic direct choice above direct_max_bytes: direct
# where the ranks share cores (5, 8 and 9 on 2 cores), pairwise where each has one (2 ranks).
cores=$(nproc)
for n in 5 8 9 2; do
    for set in a b c; do
        [ "$n" -gt 2 ] || [ $set = c ] || continue
        if [ "$n" -gt "$cores" ]; then
            large="alltoall of .* on $n ranks: direct (within direct_max_ranks, ranks sharing cores"
        else
            large="alltoall of .* on $n ranks: pairwise (beyond"
        fi
        case $set in a) opts=$set_a ;; b) opts=$set_b ;; *) opts=$set_c ;; esac
        # shellcheck disable=SC2086
        out=$(run "$MPIRUN" -np $n --oversubscribe --timeout 120 --mca btl self,sm $opts \
            --mca coll_sm_priority 0 --mca coll_basic_verbose 10 \
            "$B/test/integration/mpi_coll" 2>&1) ||
            fail "mpi_coll with forced algorithms (set $set) at $n ranks: $out"
        expect_in "mpi_coll: $n ranks," "$out" "mpi_coll forced algorithms $set, $n ranks"
        case $set in
        a) for c in "reduce of .* on $n ranks: direct" "allreduce of .* on $n ranks: rabenseifner" \
            "allgather of .* on $n ranks: bruck" "alltoall of .* on $n ranks: pairwise"; do
            echo "$out" | grep -q "coll/basic: $c (forced" || fail "set a, $n ranks: no '$c' line"
        done
            # A chain hop per segment: only from bcast_pipeline_min bytes (1k here), so that
            # the test's many small bcasts, whose hops cost context switches on this machine,
            # keep it short.
            expect_in "on $n ranks: pipeline (bcast_pipeline_min bytes or more, more than direct_max_ranks ranks)" \
                "$out" "set a, $n ranks: pipelined bcast" ;;
        b) for c in "bcast of .* on $n ranks: binomial" "reduce of .* on $n ranks: binomial" \
            "allreduce of .* on $n ranks: direct" "allgather of .* on $n ranks: ring" \
            "alltoall of .* on $n ranks: direct"; do
            echo "$out" | grep -q "coll/basic: $c (forced" || fail "set b, $n ranks: no '$c' line"
        done ;;
        c) for c in "allreduce of .* on $n ranks: recursive_doubling (forced" \
            "allgather of .* on $n ranks: direct (forced" \
            "alltoall of .* on $n ranks: direct (within direct_max_ranks and" "$large"; do
            echo "$out" | grep -q "coll/basic: $c" || fail "set c, $n ranks: no '$c' line"
        done ;;
        esac
        jobs=$((jobs + 1))
    done
done
# The automatic choices, by size and ranks: direct on small communicators from the
# thresholds, the logarithmic algorithms above direct_max_ranks.
out=$(run "$MPIRUN" -np 4 --oversubscribe --timeout 120 --mca btl self,sm --mca coll_basic_verbose 10 \
    --mca coll_sm_priority 0 --mca coll_basic_allreduce_rsag_min 1k \
    "$B/test/integration/mpi_coll" 2>&1) || fail "mpi_coll, automatic choices at 4 ranks: $out"
for c in "allreduce of 8 bytes on 4 ranks: recursive_doubling (below allreduce_rsag_min" \
    "allreduce of .* on 4 ranks: rabenseifner (allreduce_rsag_min bytes or more" \
    "alltoall of .* on 4 ranks: direct (within direct_max_ranks" \
    "reduce of .* on 4 ranks: binomial (automatic"; do
    echo "$out" | grep -q "coll/basic: $c" || fail "automatic choices at 4 ranks: no '$c' line"
done
jobs=$((jobs + 1))
# coll/sm serves barrier, bcast, reduce, allreduce, allgather and alltoall of one-host
# communicators (messages above its slot size go on to coll/basic: the full run checks both
# sizes); coll_sm_operations narrows that.
out=$(run "$MPIRUN" -np 3 --oversubscribe --timeout 120 --mca coll_base_verbose 10 \
    "$B/test/integration/mpi_coll" 2>&1) || fail "mpi_coll with coll/sm: $out"
expect_in "mpi_coll: 3 ranks," "$out" "mpi_coll with coll/sm"
expect_in "MPI_COMM_WORLD (3 ranks): barrier=sm bcast=sm reduce=sm allreduce=sm gather=basic" \
    "$out" "coll/sm's operations chosen"
expect_in "allgather=sm allgatherv=basic alltoall=sm alltoallv=basic" "$out" \
    "coll/sm's allgather and alltoall chosen"
jobs=$((jobs + 1))
out=$(run "$MPIRUN" -np 4 --oversubscribe --timeout 120 --mca coll_base_verbose 10 \
    --mca coll_sm_operations barrier,alltoall "$B/test/integration/mpi_coll" quick 2>&1) ||
    fail "mpi_coll with coll_sm_operations barrier,alltoall: $out"
expect_in "mpi_coll: 4 ranks," "$out" "mpi_coll with two coll/sm operations"
expect_in "MPI_COMM_WORLD (4 ranks): barrier=sm bcast=basic reduce=basic allreduce=basic" \
    "$out" "coll_sm_operations: only barrier and alltoall from coll/sm"
expect_in "allgather=basic allgatherv=basic alltoall=sm" "$out" "coll_sm_operations: alltoall=sm"
jobs=$((jobs + 1))
# How far coll/sm's rooted operations may run ahead (coll_sm_sets, by default from the size of
# the communicator): the least and the most, against a stream of them from moving roots.
for sets in 1 1024; do
    out=$(run "$MPIRUN" -np 4 --oversubscribe --timeout 120 --mca coll_sm_sets $sets \
        --mca coll_sm_verbose 10 "$B/test/programs/coll_stream" 2>&1) ||
        fail "coll_stream with coll_sm_sets $sets: $out"
    expect_in "coll_stream: 4 ranks:" "$out" "coll_stream with coll_sm_sets $sets"
    expect_in "coll/sm: a communicator of 4 ranks: $sets sets of small slots (coll_sm_sets)" \
        "$out" "coll_sm_sets $sets said at verbose level"
    jobs=$((jobs + 1))
done
# The automatic number: the slots near 1 MiB (a slot is 2 KiB and a 64-byte line), a power of
# two from 2 to 128: 128 at 2 ranks, 64 at 4, 32 at 8, 16 at 16 (what a root may run ahead).
sets_said=""
for np in 2 4 8 16; do
    out=$(run "$MPIRUN" -np $np --oversubscribe --timeout 120 --mca coll_sm_verbose 10 \
        "$B/examples/hello" 2>&1) || fail "hello at $np ranks: $out"
    n=$(printf '%s\n' "$out" | sed -n "s/.*coll\/sm: a communicator of $np ranks: \([0-9]*\) sets of small slots (automatic.*/\1/p" | head -1)
    sets_said="$sets_said $n"
    jobs=$((jobs + 1))
done
[ "$sets_said" = " 128 64 32 16" ] || fail "coll/sm's automatic sets at 2, 4, 8, 16 ranks:$sets_said, not 128 64 32 16"
# coll/sm's operations above its small slots go through its large slots, in chunks of
# coll_sm_large bytes: one chunk by default (1m) up to the full run's largest, and many with
# 64-byte and 4 KiB chunks, whose slices at 5 ranks are a few elements or none; every op,
# user ops (one non-commutative) and MPI_IN_PLACE among them. Above the small slots, coll/sm
# takes its large slots, hands the call to the modules below (coll/basic's point-to-point
# algorithms) or, for bcast, allgather and alltoall, reads the others' buffers by cross-memory
# attach (the single copy): coll_sm_large_way forces each, every check of the full run each way.
for opt in "coll_sm_large 64" "coll_sm_large 4k" "coll_sm_large_way slots" \
    "coll_sm_large_way below" "coll_sm_large_way single"; do
    for n in 2 5; do
        # shellcheck disable=SC2086 # opt is a parameter and its value
        out=$(run "$MPIRUN" -np $n --oversubscribe --timeout 240 --mca $opt \
            "$B/test/integration/mpi_coll" 2>&1) || fail "mpi_coll with $opt: $out"
        expect_in "mpi_coll: $n ranks," "$out" "mpi_coll with $opt, $n ranks"
        jobs=$((jobs + 1))
    done
done
# The large slots in a stream: bcast, allgather, alltoall and allreduce of 4 KiB blocks among the
# small rooted operations, which run ahead; a writer of a large slot waits for the last readers.
for large in 1m 4k; do
    out=$(run "$MPIRUN" -np 5 --oversubscribe --timeout 120 --mca coll_sm_large $large \
        "$B/test/programs/coll_stream" 1024 2>&1) || fail "coll_stream 1024, coll_sm_large $large: $out"
    expect_in "coll_stream: 5 ranks:" "$out" "coll_stream 1024 with coll_sm_large $large"
    jobs=$((jobs + 1))
done
# coll_sm_large_way in a stream: forced, coll/basic says it took the large calls, and only when
# handed them; auto, the default, compares the ways in rounds of calls (each rank takes the
# same way at each call, or the stream would hang or go wrong) and says its choice at verbose
# level, and whether the single copy works (it does wherever a job's processes run as one
# user, as here).
for way in slots below single; do
    out=$(run "$MPIRUN" -np 5 --oversubscribe --timeout 120 --mca coll_sm_large_way $way \
        --mca coll_basic_verbose 10 "$B/test/programs/coll_stream" 1024 2>&1) ||
        fail "coll_stream 1024 with coll_sm_large_way $way: $out"
    expect_in "coll_stream: 5 ranks:" "$out" "coll_stream 1024 with coll_sm_large_way $way"
    for op in bcast allreduce allgather alltoall; do
        if [ "$way" = below ]; then
            expect_in "coll/basic: $op of 4096 bytes on 5 ranks:" "$out" \
                "coll_sm_large_way below: coll/basic takes the $op of 4 KiB blocks"
        elif printf '%s\n' "$out" | grep -q "coll/basic: $op of 4096 bytes"; then
            fail "coll_sm_large_way $way: coll/basic took a $op of 4 KiB blocks: $out"
        fi
    done
    jobs=$((jobs + 1))
done
# Short allgathers and alltoalls (rank 0 sends half a block), each followed by a right one: the
# slots and the single copy refuse them at every rank (strict), every way keeps the next call
# right and none hangs (a rank that refused must not run into the next call while another still
# checks the refused one).
# A reduce within half a large slot after allreduces that fill the whole slot with values that,
# in some rounds, equal the reduce's generation: the root folds only what its stamp says is
# there (a stamp inside the slot's data once let stale bytes pass: wrong sums).
for n in 2 3; do
    out=$(run "$MPIRUN" -np $n --oversubscribe --timeout 120 --mca coll_sm_large_way slots \
        "$B/test/programs/coll_stale" 2>&1) || fail "coll_stale at $n ranks: $out"
    expect_in "coll_stale: $n ranks:" "$out" "coll_stale, $n ranks"
    jobs=$((jobs + 1))
done
for way in slots single auto; do
    strict=strict
    [ $way = auto ] && strict=
    for n in 2 5; do
        # shellcheck disable=SC2086 # strict is empty or one word
        out=$(run "$MPIRUN" -np $n --oversubscribe --timeout 120 --mca coll_sm_large_way $way \
            "$B/test/programs/coll_mismatch" $strict 2>&1) ||
            fail "coll_mismatch with coll_sm_large_way $way at $n ranks: $out"
        expect_in "coll_mismatch: $n ranks:" "$out" "coll_mismatch, coll_sm_large_way $way, $n ranks"
        jobs=$((jobs + 1))
    done
done
out=$(run "$MPIRUN" -np 5 --oversubscribe --timeout 120 --mca coll_sm_verbose 10 \
    "$B/test/programs/coll_stream" 1024 2>&1) || fail "coll_stream 1024, coll_sm_large_way auto: $out"
expect_in "coll_stream: 5 ranks:" "$out" "coll_stream 1024 with coll_sm_large_way auto"
for op in bcast allreduce allgather alltoall; do
    expect_in "coll/sm: $op of 4096 to 8191 bytes on 5 ranks: the " "$out" \
        "coll_sm_large_way auto: the $op of 4 KiB blocks said at verbose level"
done
for op in bcast allgather alltoall; do
    printf '%s\n' "$out" | grep "coll/sm: $op of 4096 to 8191 bytes on 5 ranks:" |
        grep -q "by the single copy" || fail "coll_sm_large_way auto: no single copy time for $op: $out"
done
expect_in "coll/sm: a communicator of 5 ranks: the single copy (cross-memory attach) works" "$out" \
    "the single copy's check said at verbose level"
jobs=$((jobs + 1))
out=$(run "$MPIRUN" -np 2 --timeout 60 --mca coll_sm_operations barrier,scan \
    "$B/test/integration/mpi_coll" quick 2>&1) && fail "coll_sm_operations scan accepted: $out"
expect_in "'scan' is not one of barrier, bcast, reduce, allreduce, allgather, alltoall" "$out" \
    "coll_sm_operations with an operation coll/sm does not have"
# A component with a higher priority for one operation replaces only that one: the test
# fixture coll/fixture offers allreduce alone, at priority 50 (basic has 10, coll/sm 30).
fixture_path="$WEFT_MCA_mca_base_component_path:$B/test/integration/fixture/.libs"
out=$(run env WEFT_MCA_mca_base_component_path="$fixture_path" "$MPIRUN" -np 4 --oversubscribe \
    --timeout 120 --mca coll_base_verbose 10 --mca btl self,sm \
    "$B/test/integration/mpi_coll" quick 2>&1) || fail "mpi_coll with coll/fixture: $out"
expect_in "mpi_coll: 4 ranks," "$out" "mpi_coll with coll/fixture"
expect_in "MPI_COMM_WORLD (4 ranks): barrier=sm bcast=sm reduce=sm allreduce=fixture gather=basic" \
    "$out" "coll/fixture's allreduce chosen, the other operations kept"
expect_in "iallreduce=basic" "$out" "coll/fixture offers no iallreduce"
expect_in "agree=base iagree=base" "$out" "coll/base's agreement"
echo "MPI collectives: $jobs mpi_coll jobs over self,sm and self,tcp (1..17 ranks), every check against its serial reference, each algorithm forced once; coll/sm's small barrier, bcast, reduce, allreduce, allgather and alltoall (coll_sm_operations narrows them; the automatic sets 128, 64, 32 and 16 at 2, 4, 8 and 16 ranks, said at verbose level) and larger ones of each but the barrier in chunks, handed below or read by the single copy (coll_sm_large_way slots, below, single and auto, its choice said), coll/fixture's allreduce replaced only those"
