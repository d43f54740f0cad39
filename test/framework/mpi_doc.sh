#!/bin/sh
# docs/mpi-3.1.md stays true: every function its "Missing functions" lists name is not declared
# in mpi.h or mpi-ext.h (one implemented must leave the list), and the library's count of
# functions is printed for the page's reader.
. "${WEFT_TEST_SRCDIR:?}/test/lib.sh"
src=$WEFT_TEST_SRCDIR
page=$src/docs/mpi-3.1.md
headers="$src/framework/include/mpi.h $src/framework/include/mpi-ext.h"
missing=$(sed -n '/^## Missing functions/,$p' "$page" | grep -oE '`MPI_[A-Za-z0-9_]+`' | tr -d '`' | sort -u)
[ -n "$missing" ] || fail "no missing functions found in $page (was the section renamed?)"
# shellcheck disable=SC2086
declared=$(grep -hE '^[A-Za-z_][A-Za-z0-9_ *]*[ *]MPIX?_[A-Za-z0-9_]+ *\(' $headers | grep -v '^typedef' |
    sed -E 's/^[A-Za-z0-9_ *]*[ *](MPIX?_[A-Za-z0-9_]+) *\(.*/\1/' | sort -u)
both=""
for n in $missing; do
    printf '%s\n' "$declared" | grep -qx "$n" && both="$both $n"
done
[ -z "$both" ] || fail "docs/mpi-3.1.md lists as missing what mpi.h declares (move them out of the list):$both"
echo "docs/mpi-3.1.md: $(printf '%s\n' "$missing" | wc -l) functions listed as missing, none of them declared; mpi.h and mpi-ext.h declare $(printf '%s\n' "$declared" | wc -l)"
