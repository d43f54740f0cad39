#!/bin/sh
# The engine's error paths, by fault injection (pml_ob1_fault_*), over sm and over tcp:
# - an eager immediate send that a failed link hands back (never sent): sent again, and the
#   receiver gets every message, in order (it used to wait forever);
# - one handed back although it arrived: sent again, and the receiver drops the copy (its
#   sequence number is behind the window) instead of delivering it twice;
# - bad values of the fault parameters refused at MPI_Init with the parameter named.
. "${WEFT_TEST_SRCDIR:?}/test/lib.sh"
export WEFT_MCA_mca_base_component_path="${WEFT_TEST_COMPONENT_PATH:?}"
MPIRUN="$WEFT_TEST_BUILDDIR/mpirun"
B="$WEFT_TEST_BUILDDIR"
jobs=0
for btl in self,sm self,tcp; do
    for n in 1 7 40; do
        out=$(run "$MPIRUN" -np 2 --timeout 60 --mca btl $btl --mca pml_ob1_fault_fail_sendi $n \
            "$B/test/integration/mpi_p2p" 2>&1) || fail "lost sendi $n over $btl: $out"
        expect_in "mpi_p2p: 2 ranks," "$out" "lost sendi $n over $btl"
        expect_in "was not sent, and is handed back as failed" "$out" "lost sendi $n over $btl"
        jobs=$((jobs + 1))
        out=$(run "$MPIRUN" -np 2 --timeout 60 --mca btl $btl --mca pml_ob1_fault_duplicate_sendi $n \
            --mca pml_ob1_verbose 20 "$B/test/integration/mpi_p2p" 2>&1) ||
            fail "duplicated sendi $n over $btl: $out"
        expect_in "mpi_p2p: 2 ranks," "$out" "duplicated sendi $n over $btl"
        expect_in "was sent, and is handed back as failed" "$out" "duplicated sendi $n over $btl"
        expect_in "(delivered already) was dropped" "$out" "duplicated sendi $n over $btl"
        jobs=$((jobs + 1))
    done
    out=$(run "$MPIRUN" -np 4 --oversubscribe --timeout 60 --mca btl $btl \
        --mca pml_ob1_fault_fail_sendi 3 "$B/examples/ring" 2>&1) || fail "ring, lost sendi, $btl: $out"
    expect_in "token 40 (expected 40)" "$out" "ring, lost sendi, $btl"
    jobs=$((jobs + 1))
    # The last PML send of MPI_Finalize (before each process blocks in a bootstrap barrier,
    # where it makes no progress; MPI_Init makes none, coll/sm sets up at the first
    # collective): lost, yet the job ends.
    out=$(run "$MPIRUN" -np 2 --timeout 30 --mca btl $btl --mca pml_ob1_fault_fail_sendi 1 \
        "$B/examples/hello" 2>&1) || fail "hello, lost sendi 1, $btl: $out"
    expect_in "was not sent" "$out" "hello, lost sendi 1, $btl"
    jobs=$((jobs + 1))
done
for bad in "fault_fail_sendi -1|parameter pml_ob1_fault_fail_sendi: value '-1' from the command line (mpirun --mca) is outside its range 0.. (at least 0)" \
    "fault_duplicate_sendi -3|parameter pml_ob1_fault_duplicate_sendi: value '-3' from the command line (mpirun --mca) is outside its range 0.. (at least 0)" \
    "fault_remove_rails tcp|pml_ob1_fault_remove_rails item 'tcp' is not <messages>:<btl>[:<index>]" \
    "fault_remove_rails 5:|pml_ob1_fault_remove_rails item '5:' is not <messages>:<btl>[:<index>]"; do
    param=${bad%%|*} msg=${bad#*|}
    # shellcheck disable=SC2086
    out=$(run "$MPIRUN" -np 2 --timeout 60 --mca pml_ob1_${param% *} "${param#* }" "$B/examples/ring" 2>&1) &&
        fail "pml_ob1_$param was accepted: $out"
    expect_in "$msg" "$out" "pml_ob1_$param"
    expect_not_in "ring:" "$out" "pml_ob1_$param"
done
echo "engine faults: $jobs jobs over self,sm and self,tcp: eager sends a failed link handed back (lost, or arrived as well) sent again, every message right, copies dropped; 4 bad fault values refused"
