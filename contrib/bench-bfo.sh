#!/bin/sh
# bfo against ob1 with every rail healthy: bench/p2p_bench between two network-namespace hosts
# joined by two tcp rails (veth pairs; the same set-up as test/integration/mpi_bfo.sh), ping-pong
# latency at 8 B and 64 KiB and streaming bandwidth at 64 KiB and 4 MiB (striped over both
# rails), the two PMLs interleaved round by round; medians, and bfo/ob1.
#   sh contrib/bench-bfo.sh BUILDDIR [ROUNDS]        (as root: it makes network namespaces)
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:?BUILDDIR}" && pwd)
rounds=${2:-5}
WEFT_TEST_BUILDDIR=$build WEFT_TEST_SRCDIR=$src
export WEFT_TEST_BUILDDIR WEFT_TEST_SRCDIR
set +u
. "$src/test/lib.sh"
set -u
WEFT_MCA_mca_base_component_path=$(ls -d "$build"/mca/*/*/.libs | tr '\n' ':')
export WEFT_MCA_mca_base_component_path
netns_rails b
run1() { # pml test size
    timeout 300 ip netns exec "$hub" "$build/mpirun" --host "$ha:1,$hb:1" -np 2 \
        --launch-agent 'ip netns exec {host}' --bootstrap-addr "$net.1" --timeout 240 \
        -x WEFT_MCA_mca_base_component_path --mca btl self,tcp \
        --mca btl_tcp_if_include rail1,rail2 --mca pml "$1" "$build/bench/p2p_bench" "$2" "$3" \
        2>/dev/null | tail -n 1
}
cases="lat:8 lat:65536 bw:65536 bw:4194304"
out=$TEST_TMP/results
: >"$out"
r=1
while [ "$r" -le "$rounds" ]; do
    for c in $cases; do
        for pml in ob1 bfo; do
            echo "$pml ${c%%:*} ${c#*:} $(run1 "$pml" "${c%%:*}" "${c#*:}")" >>"$out"
        done
    done
    r=$((r + 1))
done
median() { sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
echo "bfo against ob1, two tcp rails between two namespace hosts, median of $rounds interleaved rounds ($(date +%F))"
echo "lat: half round trip in us (lower is better); bw: MB/s (higher is better)"
echo
echo "paired: the median of each round's bfo/ob1 (the two ran one after the other, so a slow"
echo "drift of the host's speed, which moves both, cancels out of it)"
echo
echo "| test | size | ob1 | bfo | bfo/ob1 | paired |"
echo "|---|---|---|---|---|---|"
for c in $cases; do
    t=${c%%:*} s=${c#*:}
    o=$(awk -v t="$t" -v s="$s" '$1=="ob1" && $2==t && $3==s {print $4}' "$out" | median)
    b=$(awk -v t="$t" -v s="$s" '$1=="bfo" && $2==t && $3==s {print $4}' "$out" | median)
    p=$(awk -v t="$t" -v s="$s" '$2==t && $3==s { if ($1=="ob1") o[++n]=$4; else r[++m]=$4 }
        END { for (i = 1; i <= m; ++i) print r[i] / o[i] }' "$out" | median)
    echo "| $t | $s | $o | $b | $(awk -v a="$b" -v c="$o" 'BEGIN {printf "%.3f", a / c}') | $(printf '%.3f' "$p") |"
done
