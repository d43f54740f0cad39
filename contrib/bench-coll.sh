#!/bin/sh
# Collective benchmark: bench/coll_bench.c built unchanged against Weft,
# Debian's Open MPI and MPICH, run interleaved round by round (this machine's
# cross-core latency jumps between levels over time, so only interleaved
# ratios count), all over shared memory. Prints the median time per barrier,
# bcast (bytes from rank 0), reduce and allreduce (doubles, sum), allgather and
# alltoall (bytes per rank), and the ratios Weft / Open MPI and Weft / MPICH.
# Open MPI uses its default collective selection (tuned).
#   contrib/bench-coll.sh BUILDDIR [ROUNDS]
# By default every operation at 2, 4 and 8 ranks at 8 B, 1 KiB, 64 KiB and 1 MiB;
# WEFT_BENCH_CASES="4:barrier:0 2:allreduce:8 ..." (ranks:operation:bytes) runs only those
# cases, WEFT_BENCH_RANKS="2 4" only those sizes of job.
# Weft runs from BUILDDIR uninstalled (its components from the build tree).
# Without BUILDDIR/bench/coll_bench, or when a Weft run fails, Weft's column
# shows "-" and the other columns are still measured.
# np=4 oversubscribes this 2-core machine: every launcher is told so, and an
# implementation whose ranks spin without yielding there (MPICH) takes
# milliseconds per operation; coll_bench then runs fewer iterations (about 2 s
# of them), so 5 rounds take a few minutes, not hours.
set -eu
build=${1:?BUILDDIR}
[ -d "$build" ] && build=$(cd "$build" && pwd)
rounds=${2:-5}
src=$(cd "$(dirname "$0")/.." && pwd)
. "$src/contrib/bench-lib.sh"
tmp=$(mktemp -d /tmp/weft-coll.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# shellcheck disable=SC2012 # build-tree paths, as in bench-p2p.sh
WEFT_MCA_mca_base_component_path=$(ls -d "$build"/mca/*/*/.libs 2>/dev/null | tr '\n' ':')
export WEFT_MCA_mca_base_component_path
weft="$build/bench/coll_bench"
have_weft=yes
[ -x "$weft" ] || { echo "no $weft (build Weft first: make in $build); Weft's column shows -" >&2; have_weft=no; }
mpicc.openmpi -O2 -w -o "$tmp/ompi" "$src/bench/coll_bench.c"
mpicc.mpich -O2 -w -o "$tmp/mpich" "$src/bench/coll_bench.c"

run() { # impl ranks args...
    impl=$1 np=$2
    shift 2
    case $impl in
    weft) timeout 300 "$build/mpirun" -np "$np" --oversubscribe --mca btl self,sm "$weft" "$@" ;;
    ompi) timeout 300 mpirun.openmpi --allow-run-as-root --oversubscribe -np "$np" --mca pml ob1 --mca btl self,vader "$tmp/ompi" "$@" ;;
    mpich) timeout 300 mpiexec.mpich -n "$np" "$tmp/mpich" "$@" ;;
    esac 2>/dev/null | tail -n 1
}

cases=${WEFT_BENCH_CASES:-}
if [ -z "$cases" ]; then
    for np in ${WEFT_BENCH_RANKS:-2 4 8}; do
        cases="$cases $np:barrier:0"
        for op in bcast reduce allreduce allgather alltoall; do
            for size in 8 1024 65536 1048576; do cases="$cases $np:$op:$size"; done
        done
    done
fi
impls="ompi mpich"
[ $have_weft = yes ] && impls="weft $impls"
bench_collect "$rounds" "$impls" "$cases"
echo "Collectives over shared memory, median of $rounds interleaved rounds ($(date -u +%Y-%m-%d), $(nproc) cores)"
echo "Time per operation in us, the slowest rank's average (lower is better); np=4 and 8 are oversubscribed"
bench_level
echo
bench_table "ranks | operation | size" "$cases"
