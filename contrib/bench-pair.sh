#!/bin/sh
# Two builds of Weft, paired: bench/p2p_bench's 8-byte ping-pong (10^6 round trips a run, 2 ranks
# over self,sm) from build A and from build B, one after the other, the order swapped every
# pair, PAIRS times. Prints each pair and the medians of A, of B and of the paired ratios A/B:
# the measure of a change to the small-message path, on a host whose latency level drifts
# (only paired ratios compare). Give the same build twice for the method's own spread.
#   contrib/bench-pair.sh BUILD_A BUILD_B [PAIRS] [mpirun options...]
set -eu
a=$(cd "${1:?BUILD_A}" && pwd)
b=$(cd "${2:?BUILD_B}" && pwd)
pairs=${3:-21}
[ $# -ge 3 ] && shift 3 || shift $#
run() {
    d=$1
    shift
    WEFT_MCA_mca_base_component_path=$(ls -d "$d"/mca/*/*/.libs | tr '\n' ':') \
        timeout 120 "$d/mpirun" -np 2 --mca btl self,sm "$@" "$d/bench/p2p_bench" lat 8 1000000 \
        2>/dev/null | tail -n 1 | awk '{print $NF}'
}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
i=0
while [ "$i" -lt "$pairs" ]; do
    if [ $((i % 2)) = 0 ]; then
        x=$(run "$a" "$@")
        y=$(run "$b" "$@")
    else
        y=$(run "$b" "$@")
        x=$(run "$a" "$@")
    fi
    echo "$x $y" | awk '{printf "pair: A %s us, B %s us, A/B %.4f\n", $1, $2, $1 / $2}' | tee -a "$out"
    i=$((i + 1))
done
median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
echo "A: $a"
echo "B: $b"
echo "$pairs pairs: median A $(awk '{print $3}' "$out" | median) us, median B $(awk '{print $6}' "$out" | median) us, median of A/B $(awk '{print $9}' "$out" | median)"
