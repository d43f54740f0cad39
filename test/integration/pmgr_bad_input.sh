#!/bin/sh
# Bad input to the bootstrap, each ending the job with a clear message and
# no hang: a wrong protocol version, a rank out of range, a duplicate rank,
# a mismatched opcode / root / size in a round, a truncated packet, a task
# that dies mid-collective, an abort request, and an unreachable mpirun.
. "${WEFT_TEST_SRCDIR:?}/test/lib.sh"
MPIRUN="$WEFT_TEST_BUILDDIR/mpirun"
RAWC="$WEFT_TEST_BUILDDIR/test/integration/pmgr_raw_client"
PC="$WEFT_TEST_BUILDDIR/test/integration/pmgr_collectives"
export PMGR_TEST_TIMEOUT=30

fault() { # fault MODE EXPECTED-RC EXPECTED-MESSAGE
    start=$(date +%s)
    out=$(run "$MPIRUN" --oversubscribe --timeout 60 -np 3 "$RAWC" "$1" 2>&1)
    rc=$?
    [ $rc -eq "$2" ] || fail "$1: mpirun exited $rc, expected $2: $out"
    expect_in "$3" "$out" "$1"
    [ $(( $(date +%s) - start )) -lt 20 ] || fail "$1: took too long to end the job"
}
fault --bad-version 1 "a task connected speaking protocol version 7; this mpirun speaks PMGR_COLLECTIVE version 8; ending the job"
fault --bad-rank 1 "a task connected as rank 3, outside this job's ranks 0..2; ending the job"
fault --dup-rank 1 "two tasks connected as rank 0; ending the job"
fault --mismatch-op 1 "mismatched collective: rank 1 sent PMGR_ALLGATHER (size 4) while rank 0 sent PMGR_BARRIER"
fault --mismatch-root 1 "mismatched collective: rank 1 sent PMGR_BCAST (root 1, size 13) while rank 0 sent PMGR_BCAST (root 0, size 13)"
fault --mismatch-size 1 "mismatched collective: rank 1 sent PMGR_ALLGATHER (size 10) while rank 0 sent PMGR_ALLGATHER (size 9)"
fault --truncate 1 "rank 1 closed its connection in the middle of a packet"
fault --die-mid 137 "rank 1 (pid"
fault --abort 42 "rank 1 on host localhost called abort with code 42: raw abort test"

# A Weft task that dies in the middle of a tree collective: the others are
# not left waiting.
for trees in 1 0; do
    start=$(date +%s)
    out=$(MPIRUN_USE_TREES=$trees PMGR_TEST_DIE_RANK=2 run "$MPIRUN" --oversubscribe --timeout 60 -np 4 -x PMGR_TEST_DIE_RANK "$PC" 2>&1)
    rc=$?
    [ $rc -eq 137 ] || fail "a rank killed mid-collective (trees $trees): mpirun exited $rc: $out"
    expect_in "rank 2 (pid" "$out" "dead rank named"
    expect_in "was killed by signal 9" "$out" "dead rank cause"
    [ $(( $(date +%s) - start )) -lt 20 ] || fail "a dead rank left the job hanging"
done

# An unreachable mpirun: retries with backoff, then a clear error.
port=$(( 40000 + $$ % 20000 ))
start=$(date +%s)
out=$(MPIRUN_RANK=1 MPIRUN_NPROCS=2 MPIRUN_ID=7 MPIRUN_HOST=127.0.0.1 MPIRUN_PORT=$port \
    MPIRUN_CONNECT_TRIES=2 MPIRUN_CONNECT_TIMEOUT=1 MPIRUN_CONNECT_BACKOFF=1 run "$PC" 2>&1) && fail "connected to nothing"
expect_in "Connecting mpirun socket to 127.0.0.1 at 127.0.0.1:$port failed after 3 attempts" "$out" "unreachable mpirun"
[ $(( $(date +%s) - start )) -lt 10 ] || fail "unreachable mpirun: retries took too long"

# Bad MPIRUN_* values are named.
out=$(MPIRUN_RANK=5 MPIRUN_NPROCS=2 MPIRUN_ID=7 MPIRUN_HOST=127.0.0.1 MPIRUN_PORT=1 run "$PC" 2>&1) && fail "rank 5 of 2 accepted"
expect_in "Invalid RANK 5: must be in [0, 1]" "$out" "bad rank"
out=$(MPIRUN_RANK=0 MPIRUN_NPROCS=2 MPIRUN_ID=7 MPIRUN_PORT=1 run "$PC" 2>&1) && fail "missing host accepted"
expect_in "Missing required environment variable: MPIRUN_HOST" "$out" "missing host"
out=$(MPIRUN_RANK=0 MPIRUN_NPROCS=x MPIRUN_ID=7 MPIRUN_HOST=h MPIRUN_PORT=1 run "$PC" 2>&1) && fail "bad nprocs accepted"
expect_in "Invalid MPIRUN_NPROCS: 'x' is not an integer" "$out" "bad nprocs"
echo "bootstrap bad input: 9 protocol faults, a task dead mid-collective (trees on and off), an unreachable mpirun and 3 bad variables, each a clear error"
