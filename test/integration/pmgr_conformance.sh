#!/bin/sh
# Wire conformance both ways, against code that shares nothing with Weft's:
# a protocol-8 client written from the spec runs every opcode against Weft's
# mpirun, and Weft's client runs every call against a minimal protocol-8
# server written from the spec (trees on and off).
. "${WEFT_TEST_SRCDIR:?}/test/lib.sh"
MPIRUN="$WEFT_TEST_BUILDDIR/mpirun"
RAWC="$WEFT_TEST_BUILDDIR/test/integration/pmgr_raw_client"
RAWS="$WEFT_TEST_BUILDDIR/test/integration/pmgr_raw_server"
PC="$WEFT_TEST_BUILDDIR/test/integration/pmgr_collectives"
export PMGR_TEST_TIMEOUT=60
for n in 1 2 3 4 5 8 13; do
    out=$(run "$MPIRUN" --oversubscribe --timeout 60 -np $n "$RAWC" 2>&1) || fail "raw client, N=$n, Weft's mpirun: $out"
    expect_in "raw client rank 0 of $n: every opcode passed" "$out" "raw client N=$n"
    for trees in on off; do
        flag=; [ $trees = off ] && flag=-t
        out=$(run "$RAWS" -n $n $flag -- "$PC" 2>&1) || fail "Weft's client, N=$n, trees $trees, raw server: $out"
        expect_in "pmgr collectives: $n ranks, every call right (trees $trees)" "$out" "raw server N=$n"
        expect_in "pmgr_raw_server: $n tasks" "$out" "raw server N=$n"
    done
done
echo "protocol 8 both ways: raw client x Weft mpirun and Weft client x raw server, N=1..13, trees on and off"
