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
# The other algorithms, forced by their thresholds: pipelined bcast in small pieces,
# Rabenseifner's allreduce and Bruck's allgather from tiny sizes, coll/basic's other two
# barriers (coll/sm, which serves the barrier of one-host communicators, turned off).
for n in 5 8; do
    for barrier in dissemination binomial; do
        out=$(run "$MPIRUN" -np $n --oversubscribe --timeout 120 --mca btl self,sm \
            --mca coll_basic_bcast_pipeline_min 1k --mca coll_basic_bcast_segment 256 \
            --mca coll_basic_allreduce_rsag_min 16 --mca coll_basic_allgather_bruck_max 64k \
            --mca coll_basic_barrier_algorithm $barrier --mca coll_sm_priority 0 \
            "$B/test/integration/mpi_coll" 2>&1) ||
            fail "mpi_coll with forced algorithms (barrier $barrier) at $n ranks: $out"
        expect_in "mpi_coll: $n ranks," "$out" "mpi_coll forced algorithms $n"
        jobs=$((jobs + 1))
    done
done
# coll/sm serves barrier and allreduce of one-host communicators (allreduces above its slot
# size go on to coll/basic: the full run checks both sizes).
out=$(run "$MPIRUN" -np 3 --oversubscribe --timeout 120 --mca coll_base_verbose 10 \
    "$B/test/integration/mpi_coll" 2>&1) || fail "mpi_coll with coll/sm: $out"
expect_in "mpi_coll: 3 ranks," "$out" "mpi_coll with coll/sm"
expect_in "MPI_COMM_WORLD (3 ranks): barrier=sm bcast=basic reduce=basic allreduce=sm gather=basic" \
    "$out" "coll/sm's barrier and allreduce chosen"
jobs=$((jobs + 1))
# A component with a higher priority for one operation replaces only that one: the test
# fixture coll/fixture offers allreduce alone, at priority 50 (basic has 10); coll/sm (30)
# offers the barrier alone.
fixture_path="$WEFT_MCA_mca_base_component_path:$B/test/integration/fixture/.libs"
out=$(run env WEFT_MCA_mca_base_component_path="$fixture_path" "$MPIRUN" -np 4 --oversubscribe \
    --timeout 120 --mca coll_base_verbose 10 --mca btl self,sm \
    "$B/test/integration/mpi_coll" quick 2>&1) || fail "mpi_coll with coll/fixture: $out"
expect_in "mpi_coll: 4 ranks," "$out" "mpi_coll with coll/fixture"
expect_in "MPI_COMM_WORLD (4 ranks): barrier=sm bcast=basic reduce=basic allreduce=fixture gather=basic" \
    "$out" "coll/fixture's allreduce chosen, basic's other operations kept"
expect_in "iallreduce=basic" "$out" "coll/fixture offers no iallreduce"
expect_in "agree=base iagree=base" "$out" "coll/base's agreement"
echo "MPI collectives: $jobs mpi_coll jobs over self,sm and self,tcp (1..17 ranks), every check against its serial reference, each algorithm forced once; coll/sm's barrier and small allreduce, coll/fixture's allreduce replaced only those"
