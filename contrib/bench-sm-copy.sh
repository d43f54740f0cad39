#!/bin/sh
# Shared-memory copy choice: bench/p2p_bench.c (ping-pong latency, windowed bandwidth) over
# btl/sm with each way forced (btl_sm_single_copy_mechanism cma, none, split) and with the
# default (auto), beside Debian's Open MPI (vader, its default: CMA) and MPICH (its default),
# every size from 8 B to 16 MiB, 2 ranks, run interleaved round by round; medians.
#   contrib/bench-sm-copy.sh BUILDDIR [ROUNDS]
# WEFT_BENCH_SIZES="4096 1048576" runs only those sizes; WEFT_BENCH_TESTS="lat" one test.
# Prints the host (CPU, caches, memcpy bandwidth measured in the same run) and one table:
# auto/best is auto against the best forced way (lat: <= 1.05 is within 5%; bw: >= 0.95),
# auto/OMPI against Open MPI's default (lat: <= 1.0 is no worse; bw: >= 1.0).
# Both of the medians, and paired: the median over the rounds of each round's own ratio (auto
# against the best forced way of the same round, against Open MPI of the same round), which a
# change of the host's speed between rounds or groups does not move.
# auto reads the calibration this boot of this host already has, or makes it in its first run
# (btl_sm_calibration_file); the choice it made is printed at the end.
# Each group of measurements (one test and size, every implementation) is bracketed by the
# host's cross-core latency (bench/core_pingpong); a group during which it changed level is
# measured again, so that its ratios compare the implementations at one speed.
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:?BUILDDIR}" && pwd)
rounds=${2:-5}
tmp=$(mktemp -d /tmp/weft-smcopy.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
. "$src/contrib/bench-lib.sh"
weft="$build/bench/p2p_bench"
[ -x "$weft" ] && [ -x "$build/bench/core_pingpong" ] ||
    { echo "build Weft first (make in $build)" >&2; exit 1; }
mpicc.openmpi -O2 -w -o "$tmp/ompi" "$src/bench/p2p_bench.c"
mpicc.mpich -O2 -w -o "$tmp/mpich" "$src/bench/p2p_bench.c"
# shellcheck disable=SC2012 # build-tree paths
WEFT_MCA_mca_base_component_path=$(ls -d "$build"/mca/*/*/.libs | tr '\n' ':')
export WEFT_MCA_mca_base_component_path

sizes=${WEFT_BENCH_SIZES:-}
if [ -z "$sizes" ]; then
    s=8
    while [ "$s" -le 16777216 ]; do sizes="$sizes $s" s=$((s * 2)); done
fi
tests=${WEFT_BENCH_TESTS:-"lat bw"}
impls="auto cma none split ompi mpich"

run() { # impl test size
    case $1 in
    auto | cma | none | split)
        timeout 300 "$build/mpirun" -np 2 --mca btl self,sm --mca btl_sm_single_copy_mechanism "$1" \
            "$weft" "$2" "$3" ;;
    ompi) timeout 300 mpirun.openmpi --allow-run-as-root -np 2 --mca pml ob1 --mca btl self,vader "$tmp/ompi" "$2" "$3" ;;
    mpich) timeout 300 mpiexec.mpich -n 2 "$tmp/mpich" "$2" "$3" ;;
    esac 2>/dev/null | tail -n 1
}

r=1
while [ "$r" -le "$rounds" ]; do
    for t in $tests; do for s in $sizes; do
        bench_group "$impls" "$t" "$s"
        # shellcheck disable=SC2154 # $group is bench_group's (bench-lib.sh)
        echo "$t $s$group" >>"$tmp/groups"
        for kv in $group; do
            [ "${kv#*=}" = - ] || echo "${kv#*=}" >>"$tmp/${kv%%=*}.$t.$s"
        done
    done; done
    for s in 65536 1048576 4194304 16777216; do
        v=$(timeout 60 "$build/bench/memcpy_bench" "$s" 2>/dev/null | tail -n 1 || true)
        case $v in '' | *[!0-9.]*) ;; *) echo "$v" >>"$tmp/memcpy.$s" ;; esac
    done
    r=$((r + 1))
done

echo "Shared-memory copy choice, 2 ranks, median of $rounds interleaved rounds ($(date -u +%Y-%m-%d))"
lscpu | awk -F: '/^Model name|^L1d|^L2|^L3|^CPU\(s\)|^Hypervisor/ {gsub(/^ +/, "", $2); printf "%s: %s; ", $1, $2} END {print ""}'
printf "memcpy (MB/s, this run):"
for s in 65536 1048576 4194304 16777216; do printf " %s B %s;" "$s" "$(median "$tmp/memcpy.$s")"; done
echo
bench_level
echo "lat: half round trip in us (lower is better); bw: MB/s (higher is better)"
echo
echo "auto/best and auto/OMPI: of the medians; paired: the median of each round's own ratio (the"
echo "implementations of one round ran within seconds of each other, at one level of the host)"
echo
echo "| test | size | auto | cma | none | split | Open MPI | MPICH | auto/best | auto/OMPI | paired auto/best | paired auto/OMPI |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
for t in $tests; do for s in $sizes; do
    set --
    for i in $impls; do set -- "$@" "$(median "$tmp/$i.$t.$s")"; done
    paired=$(awk -v t="$t" -v s="$s" '$1 == t && $2 == s {
        delete v; for (k = 3; k <= NF; ++k) { split($k, kv, "="); v[kv[1]] = kv[2] }
        best = "-";
        split("cma none split", w, " ");
        for (j = 1; j <= 3; ++j) { x = v[w[j]]; if (x != "-" && x != "" && (best == "-" || (t == "lat" ? x + 0 < best + 0 : x + 0 > best + 0))) best = x }
        if (v["auto"] != "-" && v["auto"] != "" && best != "-" && best + 0 > 0) b[++nb] = v["auto"] / best;
        if (v["auto"] != "-" && v["auto"] != "" && v["ompi"] != "-" && v["ompi"] + 0 > 0) o[++no] = v["auto"] / v["ompi"] }
        function med(a, n,   i, j, x) { if (n == 0) return "-";
            for (i = 1; i <= n; ++i) for (j = i + 1; j <= n; ++j) if (a[j] < a[i]) { x = a[i]; a[i] = a[j]; a[j] = x }
            return sprintf("%.2f", a[int((n + 1) / 2)]) }
        END { print med(b, nb), med(o, no) }' "$tmp/groups")
    echo "$t $s $* $paired" | awk '{
        best = "-";
        for (k = 4; k <= 6; ++k) if ($k != "-" && (best == "-" || ($1 == "lat" ? $k < best : $k > best))) best = $k;
        rb = ($3 == "-" || best == "-" || best == 0) ? "-" : sprintf("%.2f", $3 / best);
        ro = ($3 == "-" || $7 == "-" || $7 == 0) ? "-" : sprintf("%.2f", $3 / $7);
        printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7, $8, rb, ro, $9, $10 }'
done; done
echo
"$build/mpirun" -np 2 --mca btl self,sm --mca btl_base_verbose 10 "$build/examples/hello" 2>&1 |
    grep -m 1 "btl/sm: auto" | sed 's/ \[rates.*//' || true
