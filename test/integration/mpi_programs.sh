#!/bin/sh
# The test list of small MPI programs (test/programs/*.c): each checks its own results against
# values computed by hand or by a serial reference, prints "NAME: N ranks..." at rank 0 when
# right and exits non-zero when not. Each runs under mpirun at 1 to 8 ranks over self,sm and at
# 2, 5 and 8 ranks over self,tcp, with the arguments its source names on a "test-args:" line (if
# any). Every program in the directory is run: one that was not built fails the test.
. "${WEFT_TEST_SRCDIR:?}/test/lib.sh"
export WEFT_MCA_mca_base_component_path="${WEFT_TEST_COMPONENT_PATH:?}"
MPIRUN="$WEFT_TEST_BUILDDIR/mpirun"
jobs=0
names=""
for src in "$WEFT_TEST_SRCDIR"/test/programs/*.c; do
    name=$(basename "$src" .c)
    prog="$WEFT_TEST_BUILDDIR/test/programs/$name"
    [ -x "$prog" ] || fail "$name: $prog was not built (is it in test/Makefile.inc?)"
    args=$(sed -n 's/^.*test-args: *//p' "$src" | head -n 1)
    for c in "self,sm 1 2 3 4 5 6 7 8" "self,tcp 2 5 8"; do
        # shellcheck disable=SC2086
        set -- $c
        btl=$1
        shift
        for n in "$@"; do
            # shellcheck disable=SC2086
            out=$(run "$MPIRUN" -np "$n" --oversubscribe --timeout 60 --mca btl "$btl" "$prog" $args 2>&1) ||
                fail "$name at $n ranks over $btl failed: $out"
            expect_in "$name: $n ranks" "$out" "$name at $n ranks over $btl"
            jobs=$((jobs + 1))
        done
    done
    names="$names $name"
done
echo "MPI test programs: $jobs jobs (1..8 ranks over self,sm, 2, 5 and 8 over self,tcp), every result right:$names"
