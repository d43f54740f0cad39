#!/bin/sh
# Every PMGR collective gives the right bytes for N = 1..33 ranks (on 2
# cores, oversubscribed), trees on and off, roots 0, N/2 and N-1.
. "${WEFT_TEST_SRCDIR:?}/test/lib.sh"
MPIRUN="$WEFT_TEST_BUILDDIR/mpirun"
PC="$WEFT_TEST_BUILDDIR/test/integration/pmgr_collectives"
jobs=0
for trees in 1 0; do
    n=1
    while [ $n -le 33 ]; do
        out=$(MPIRUN_USE_TREES=$trees run "$MPIRUN" --oversubscribe --timeout 60 -np $n "$PC" 2>&1) ||
            fail "N=$n trees=$trees: $out"
        expect_in "pmgr collectives: $n ranks, every call right" "$out" "N=$n trees=$trees"
        jobs=$((jobs + 1))
        n=$((n + 1))
    done
done
echo "pmgr collectives: $jobs jobs (N=1..33, trees on and off): every call right"
