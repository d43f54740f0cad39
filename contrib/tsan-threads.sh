#!/bin/sh
# The MPI_THREAD_MULTIPLE test program (test/programs/threads.c) under ThreadSanitizer: run it
# through mpirun at 2 and 4 ranks over self,sm and self,tcp from a build configured with
# --enable-sanitizers=thread (make -j2 && make -j2 test/programs/threads first). Every
# process's report lands in REPORTS (TSAN_OPTIONS log_path); any report, a wrong result or a
# hang (120 s) fails.
#   contrib/tsan-threads.sh BUILDDIR REPORTS
set -eu
build=$(cd "${1:?BUILDDIR}" && pwd)
reports=${2:?REPORTS}
mkdir -p "$reports"
reports=$(cd "$reports" && pwd)
prog="$build/test/programs/threads"
[ -x "$prog" ] || { echo "tsan-threads: $prog was not built" >&2; exit 1; }
grep -q -- '-fsanitize=thread' "$build/Makefile" ||
    { echo "tsan-threads: $build is not configured with --enable-sanitizers=thread" >&2; exit 1; }
WEFT_MCA_mca_base_component_path=$(ls -d "$build"/mca/*/*/.libs | tr '\n' ':')
export WEFT_MCA_mca_base_component_path
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:log_path=$reports/tsan"
status=0
for btl in self,sm self,tcp; do
    for n in 2 4; do
        if out=$("$build/mpirun" -np "$n" --oversubscribe --timeout 120 --mca btl "$btl" "$prog" 2>&1) &&
            echo "$out" | grep -q "^threads: $n ranks"; then
            echo "tsan-threads: $n ranks over $btl: $(echo "$out" | grep "^threads: $n ranks")"
        else
            echo "tsan-threads: $n ranks over $btl failed:" >&2
            echo "$out" >&2
            status=1
        fi
    done
done
if [ -n "$(ls -A "$reports")" ]; then
    for f in "$reports"/*; do
        echo "tsan-threads: report $f:" >&2
        cat "$f" >&2
    done
    status=1
fi
[ "$status" = 0 ] && echo "tsan-threads: no ThreadSanitizer report, every result right"
exit "$status"
