#!/bin/sh
# Point-to-point benchmark: bench/p2p_bench.c built unchanged against Weft,
# Debian's Open MPI and MPICH, run interleaved round by round (this machine's
# cross-core latency jumps between levels over time, so only interleaved
# ratios count). Prints every figure and the ratio Weft / Open MPI.
#   contrib/bench-p2p.sh BUILDDIR [ROUNDS]
# WEFT_BENCH_CASES="sm:lat:8 sm:rate:8 ..." runs only those cases. Transports: sm, tcp, mem
# (memcpy), and smcma / smnone: shared memory with the single-copy mechanism forced to CMA or
# off (btl_sm_single_copy_mechanism; Open MPI's btl_vader_single_copy_mechanism; no MPICH).
# Weft runs from BUILDDIR uninstalled (its components from the build tree).
#   contrib/bench-p2p.sh --against REV BUILDDIR [ROUNDS]
# also builds git revision REV of this tree (in a scratch directory) and runs it as a fourth
# implementation, "before", interleaved with the others: the table gains Weft/before, the
# ratio that says whether a change made Weft slower. --against-build DIR takes an existing
# build of the earlier revision instead.
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
against="" against_build=""
case ${1:-} in
--against) against=${2:?REV}; shift 2 ;;
--against-build) against_build=$(cd "${2:?DIR}" && pwd); shift 2 ;;
esac
build=$(cd "${1:?BUILDDIR}" && pwd)
rounds=${2:-5}
. "$src/contrib/bench-lib.sh"
tmp=$(mktemp -d /tmp/weft-p2p.XXXXXX)
trap 'git -C "$src" worktree remove --force "$tmp/before-src" 2>/dev/null || true; rm -rf "$tmp"' EXIT
weft="$build/bench/p2p_bench"
[ -x "$weft" ] || { echo "build Weft first (make in $build)" >&2; exit 1; }
impls="weft ompi mpich"
if [ -n "$against" ]; then
    echo "building $against for comparison (in $tmp) ..." >&2
    git -C "$src" worktree add --detach "$tmp/before-src" "$against" >/dev/null 2>&1
    (cd "$tmp/before-src" && ./autogen.sh && mkdir -p "$tmp/before" && cd "$tmp/before" &&
        "$tmp/before-src/configure" && make -j"$(nproc)") >"$tmp/before-build.log" 2>&1 ||
        { tail -n 30 "$tmp/before-build.log" >&2; exit 1; }
    against_build="$tmp/before"
fi
if [ -n "$against_build" ]; then
    impls="weft before ompi mpich"
fi
mpicc.openmpi -O2 -w -o "$tmp/ompi" "$src/bench/p2p_bench.c"
mpicc.mpich -O2 -w -o "$tmp/mpich" "$src/bench/p2p_bench.c"

# run_weft BUILD transport args...: Weft from one build tree (its mpirun, program and components).
run_weft() {
    b=$1 tr=$2
    shift 2
    case $tr in
    sm) set -- --mca btl self,sm "$@" ;;
    tcp) set -- --mca btl self,tcp "$@" ;;
    smcma | smnone) set -- --mca btl self,sm --mca btl_sm_single_copy_mechanism "${tr#sm}" "$@" ;;
    *) return 0 ;;
    esac
    WEFT_MCA_mca_base_component_path=$(ls -d "$b"/mca/*/*/.libs | tr '\n' ':') \
        timeout 300 "$b/mpirun" -np 2 "$@"
}

run() { # impl transport args...
    impl=$1 tr=$2
    shift 2
    case $impl:$tr in
    # memcpy bandwidth in the same round, the reference for shared-memory bandwidth (the same
    # figure in every column).
    *:mem) timeout 60 "$build/bench/memcpy_bench" "$2" ;;
    weft:*) run_weft "$build" "$tr" "$weft" "$@" ;;
    before:*) run_weft "$against_build" "$tr" "$against_build/bench/p2p_bench" "$@" ;;
    ompi:smcma | ompi:smnone)
        timeout 300 mpirun.openmpi --allow-run-as-root -np 2 --mca pml ob1 --mca btl self,vader \
            --mca btl_vader_single_copy_mechanism "${tr#sm}" "$tmp/ompi" "$@" ;;
    ompi:sm) timeout 300 mpirun.openmpi --allow-run-as-root -np 2 --mca pml ob1 --mca btl self,vader "$tmp/ompi" "$@" ;;
    ompi:tcp) timeout 300 mpirun.openmpi --allow-run-as-root -np 2 --mca pml ob1 --mca btl self,tcp "$tmp/ompi" "$@" ;;
    mpich:sm) timeout 300 mpiexec.mpich -n 2 "$tmp/mpich" "$@" ;;
    mpich:tcp) timeout 300 env MPIR_CVAR_NOLOCAL=1 UCX_TLS=tcp,self mpiexec.mpich -n 2 "$tmp/mpich" "$@" ;;
    esac 2>/dev/null | tail -n 1
}

cases=${WEFT_BENCH_CASES:-"sm:lat:0 sm:lat:8 sm:lat:1024 sm:lat:65536 sm:lat:1048576 sm:lat:4194304 sm:bw:65536 sm:bw:1048576 sm:bw:4194304 sm:rate:8 tcp:lat:0 tcp:lat:8 tcp:lat:65536 tcp:bw:1048576 tcp:bw:4194304 mem:copy:1048576 mem:copy:4194304"}
bench_collect "$rounds" "$impls" "$cases"
echo "Point-to-point, 2 ranks, median of $rounds interleaved rounds ($(date -u +%Y-%m-%d), $(nproc) cores)"
echo "lat: half round trip in us (lower is better); bw: MB/s and rate: messages/s (higher is better)"
bench_level
echo
bench_table "transport | test | size" "$cases"
