#!/bin/sh
# Bad input to the MPI layer: an invalid rank under MPI_ERRORS_ARE_FATAL ends
# the job with a clear message; MPI after MPI_Finalize is refused clearly; a
# peer that sends malformed fragments is reported, and the job goes on.
# (Error classes under MPI_ERRORS_RETURN are checked inside mpi_p2p.)
. "${WEFT_TEST_SRCDIR:?}/test/lib.sh"
export WEFT_MCA_mca_base_component_path="${WEFT_TEST_COMPONENT_PATH:?}"
MPIRUN="$WEFT_TEST_BUILDDIR/mpirun"
B="$WEFT_TEST_BUILDDIR"

out=$(run "$MPIRUN" -np 2 --timeout 60 "$B/test/integration/mpi_fatal" 2>&1) && fail "an invalid rank did not end the job: $out"
expect_in "MPI_Send: invalid rank (MPI_ERR_RANK) on communicator MPI_COMM_WORLD" "$out" "fatal handler"
expect_not_in "returned under MPI_ERRORS_ARE_FATAL" "$out" "fatal handler"

out=$(run "$MPIRUN" -np 2 --timeout 60 "$B/test/integration/mpi_after_finalize" 2>&1) || fail "after finalize: $out"
expect_in "MPI_Send called after MPI_Finalize; MPI cannot be used any more" "$out" "after finalize"
expect_in "after finalize: MPI_Send and MPI_Init refused" "$out" "after finalize"

for btl in self,sm self,tcp; do
    out=$(run "$MPIRUN" -np 2 --timeout 120 --mca btl $btl sh -c \
        'if [ "$MPIRUN_RANK" = 1 ]; then export WEFT_MCA_pml_ob1_fault_malformed_to=0; fi; exec "$0"' \
        "$B/test/integration/mpi_p2p" 2>&1) || fail "malformed fragments over $btl broke the job: $out"
    expect_in "mpi_p2p: 2 ranks," "$out" "malformed over $btl"
    n=$(echo "$out" | grep -c "pml/ob1: a malformed fragment arrived")
    [ "$n" -eq 11 ] || fail "malformed over $btl: $n reports, expected 11: $out"
    expect_in "unknown header type 99" "$out" "malformed kinds"
    expect_in "ACK for an unknown send" "$out" "malformed kinds"
    expect_in "FRAG for an unknown receive" "$out" "malformed kinds"
    expect_in "PUT for an unknown send" "$out" "malformed kinds"
    expect_in "FIN for an unknown request" "$out" "malformed kinds"
    expect_in "cancel request of 24 bytes" "$out" "malformed kinds"
    expect_in "cancel request for a message of another process" "$out" "malformed kinds"
    expect_in "cancel reply for no cancel asked" "$out" "malformed kinds"
done
# One rank selects another PML (a test fixture): MPI_Init stops the job with a
# clear error, never a hang.
start=$(date +%s)
out=$(WEFT_MCA_mca_base_component_path="$WEFT_TEST_COMPONENT_PATH:$B/test/integration/fixture/.libs" \
    run "$MPIRUN" -np 3 --oversubscribe --timeout 60 sh -c \
    'if [ "$MPIRUN_RANK" = 1 ]; then export WEFT_MCA_pml=fixture; fi; exec "$0"' \
    "$B/examples/hello" 2>&1) && fail "ranks with different PMLs ran: $out"
expect_in "selected pml fixture" "$out" "different PMLs"
expect_in "every rank must use the same PML (set --mca pml NAME for all)" "$out" "different PMLs"
[ $(( $(date +%s) - start )) -lt 30 ] || fail "the different-PML job took too long to end"
# Bad rendezvous parameters: named, with what they may be.
out=$(run "$MPIRUN" -np 2 --timeout 60 --mca pml_ob1_send_pipeline_depth 0 "$B/examples/hello" 2>&1) &&
    fail "a job with pml_ob1_send_pipeline_depth 0 ran: $out"
expect_in "parameter pml_ob1_send_pipeline_depth: value '0' from the command line (mpirun --mca) is outside its range 1..1024" "$out" "bad pipeline depth"
out=$(run "$MPIRUN" -np 2 --timeout 60 --mca btl self,sm --mca btl_sm_flags send,teleport "$B/examples/hello" 2>&1) &&
    fail "a job with btl_sm_flags send,teleport ran over sm: $out"
expect_in 'btl_sm_flags names "teleport" (expected some of send, put, get, inplace)' "$out" "bad btl flags"
out=$(run "$MPIRUN" -np 2 --timeout 60 --mca btl_sm_single_copy_mechanism bogus "$B/examples/hello" 2>&1) &&
    fail "a job with btl_sm_single_copy_mechanism bogus ran: $out"
expect_in "expected one of: none cma auto" "$out" "bad single copy mechanism"
# An unknown coll component named on the command line: a clear error at MPI_Init.
out=$(run "$MPIRUN" -np 2 --timeout 60 --mca coll basic,nosuch "$B/examples/hello" 2>&1) &&
    fail "a job with --mca coll basic,nosuch ran: $out"
expect_in "there is no coll component 'nosuch'" "$out" "unknown coll component"
expect_in "MPI_Init: the runtime could not start" "$out" "unknown coll component"
# A bad value of a coll parameter: named, with what it may be.
out=$(run "$MPIRUN" -np 2 --timeout 60 --mca coll_basic_barrier_algorithm 7 "$B/examples/hello" 2>&1) &&
    fail "a job with coll_basic_barrier_algorithm 7 ran: $out"
expect_in "expected one of: dissemination recursive_doubling binomial" "$out" "bad coll parameter"
# BTL settings that would let more than 2^15 fragments wait for one peer (the PML's sequence
# window) are refused, with the allowed range.
for bad in "btl_tcp_free_list_max 0|btl_tcp_free_list_max is 0; it must be between 1 and 16383" \
    "btl_sm_ring_size 1M|parameter btl_sm_ring_size: value '1M' from the command line (mpirun --mca) is outside its range 512..512k" \
    "btl_sm_free_list_max 9000|parameter btl_sm_free_list_max: value '9000' from the command line (mpirun --mca) is outside its range 1..8191"; do
    param=${bad%%|*} msg=${bad#*|}
    # shellcheck disable=SC2086
    out=$(run "$MPIRUN" -np 2 --timeout 60 --mca btl self,sm,tcp --mca $param "$B/examples/hello" 2>&1) &&
        fail "a job with $param ran: $out"
    expect_in "$msg" "$out" "$param"
done
echo "MPI bad input: fatal invalid rank, use after finalize, 11 malformed fragments (every header type) over sm and tcp reported without a crash, different PMLs refused at MPI_Init, bad rendezvous parameters (pipeline depth, BTL flags, single-copy mechanism; BTL queues past the sequence window) refused, an unknown coll component and a bad coll parameter refused at MPI_Init"
