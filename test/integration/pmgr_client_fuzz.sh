#!/bin/sh
# The client side of the bootstrap against a hostile server (pmgr_hostile_server): replies cut
# short, huge lengths, 8 extra bytes, a PML name without its NUL, random blocks, connections
# closed before or in the middle of a collective (all of them, or one rank's), a server that
# stalls, and replies trickled one byte at a time. Every rank must end within its bound, with
# status 0 where the input was only slow and a clear error and a non-zero status where it was
# wrong: never a signal (a bad_alloc abort, a crash), a sanitizer report or a rank left running.
. "${WEFT_TEST_SRCDIR:?}/test/lib.sh"
export WEFT_MCA_mca_base_component_path="${WEFT_TEST_COMPONENT_PATH:?}"
SERVER="$WEFT_TEST_BUILDDIR/test/integration/pmgr_hostile_server"
RANK_PROG="$WEFT_TEST_BUILDDIR/test/integration/mpi_linger"
# A stalled server is given up on after MPIRUN_CLIENT_TIMEOUT (2 s in the cases that wait
# for it, 10 s elsewhere so that a slow start on a loaded machine is no failure); anything else
# must end within the 2 s that docs/hardening-client.md promises.
export HOSTILE_DEADLINE=20
NP=3

# serve FAULT ROUND: the server's report of the job, in $out.
serve() {
    export MPIRUN_CLIENT_TIMEOUT="${CT:-10}"
    out=$(run "$SERVER" "$1" "$2" $NP "$RANK_PROG" "$TEST_TMP" finalize 2>&1)
    [ $? -le 1 ] || fail "$1 at round $2: the server failed: $out"
    expect_not_in "still running" "$out" "$1 at round $2"
    expect_not_in ": signal " "$out" "$1 at round $2 (a rank died of a signal)"
    for bad in AddressSanitizer LeakSanitizer "runtime error" bad_alloc "terminate called"; do
        expect_not_in "$bad" "$out" "$1 at round $2"
    done
}
# refused FAULT ROUND BOUND-MS MESSAGE: every rank fails, with MESSAGE, within BOUND-MS.
refused() {
    serve "$1" "$2"
    expect_not_in ": exit 0" "$out" "$1 at round $2 (a rank went on as if nothing was wrong)"
    expect_in "$4" "$out" "$1 at round $2"
    ms=$(echo "$out" | sed -n 's/^ended: \([0-9]*\) ms after the fault$/\1/p')
    [ -n "$ms" ] && [ "$ms" -le "$3" ] ||
        fail "$1 at round $2: the ranks took ${ms:-?} ms to end (bound $3 ms): $out"
}

# The honest run, which also says which round carries what.
serve none 999
[ "$(echo "$out" | grep -c ': exit 0$')" -eq $NP ] || fail "the honest server's job failed: $out"
gathers=$(echo "$out" | sed -n 's/^round \([0-9]*\): op 7 size .*$/\1/p')
lens=$(echo "$out" | sed -n 's/^round \([0-9]*\): op 7 size 8$/\1/p' | head -n 1)
pml=$(echo "$out" | sed -n 's/^round \([0-9]*\): op 7 size 32$/\1/p' | head -n 1)
last=$(echo "$out" | sed -n 's/^round \([0-9]*\): op 3 size 0$/\1/p' | tail -n 1)
[ -n "$lens" ] && [ -n "$pml" ] && [ -n "$last" ] ||
    fail "no modex-length, PML-name or last barrier round in: $out"

serve trickle "$lens"
[ "$(echo "$out" | grep -c ': exit 0$')" -eq $NP ] || fail "replies in 1-byte pieces: $out"

refused huge "$lens" 2000 "a modex length of 1152921504606846976 bytes for rank"
refused nonul "$pml" 2000 "without a terminating NUL within its 32 bytes"
# A rank that sent its next request before the extra bytes came is answered by no one here
# (mpirun would end the job on the others' abort): it gives up after MPIRUN_CLIENT_TIMEOUT.
CT=2
refused extra 1 4000 "mpirun sent data nobody asked for; the bootstrap stream is corrupt"
refused extra "$lens" 4000 "mpirun sent data nobody asked for; the bootstrap stream is corrupt"
CT=
refused short "$lens" 2000 "lost the connection to mpirun"
refused close 0 2000 "lost the connection to mpirun"
refused close "$pml" 2000 "lost the connection to mpirun"
# The barrier in MPI_Finalize: a rank that cannot finish the job's last step must not exit 0.
refused close "$last" 2000 "lost the connection to mpirun"
CT=2
refused closeone "$lens" 4000 "no progress within 2 s (MPIRUN_CLIENT_TIMEOUT); giving up"
refused stall "$pml" 4000 "no progress within 2 s (MPIRUN_CLIENT_TIMEOUT); giving up"
CT=

# Random blocks from the other ranks in every ALLGATHER: a clear error or a working job,
# nothing else, and never a hang.
n=0
for seed in 1 2; do
    for r in $gathers; do
        export FUZZ_SEED=$seed
        serve random "$r"
        n=$((n + 1))
    done
done
echo "pmgr_client_fuzz: 13 faults and $n random replies met with a clear error or a working job"
