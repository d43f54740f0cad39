#!/bin/sh
# What fault tolerance (ULFM) costs, beside Open MPI 5 with ULFM: bench/ft_bench at 4 ranks on
# this machine (oversubscribed on 2 cores), shared memory: MPIX_Comm_agree with no failure, a
# barrier right after a rank is SIGKILLed (detection and notification), the first
# MPIX_Comm_shrink after it, and MPIX_Comm_agree on the shrunk communicator. Open MPI 5.0 runs
# the same source, built with its own mpicc, in the chroot of ../shared/recipes/ompi5-ulfm
# (set OMPI5_CHROOT to its ompi5-chroot.sh; skipped when absent). The two run interleaved
# round by round; medians. Then the failure-free cost of fault tolerance in Weft:
# bench/p2p_bench's 8 B ping-pong latency with --with-ft ulfm and without, interleaved, the
# median of each round's FT-on/FT-off ratio.
#   sh contrib/bench-ft.sh BUILDDIR [ROUNDS]
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:?BUILDDIR}" && pwd)
rounds=${2:-7}
chroot_sh=${OMPI5_CHROOT:-$src/../shared/recipes/ompi5-ulfm/ompi5-chroot.sh}
WEFT_MCA_mca_base_component_path=$(ls -d "$build"/mca/*/*/.libs 2>/dev/null | tr '\n' ':')
[ -n "$WEFT_MCA_mca_base_component_path" ] && [ -x "$build/bench/ft_bench" ] ||
    { echo "build Weft first (make in $build)" >&2; exit 1; }
export WEFT_MCA_mca_base_component_path
tmp=$(mktemp -d /tmp/weft-ftbench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
ompi=""
if [ -f "$chroot_sh" ] && [ -x "${ROOT:-/opt/ompi5-ulfm/trixie}/usr/bin/mpirun" ]; then
    cp "$src/bench/ft_bench.c" "$tmp/"
    (cd "$tmp" && bash "$chroot_sh" exec mpicc -O2 -o ft_bench_ompi5 ft_bench.c) && ompi=yes
fi
weft1() {
    timeout 120 "$build/mpirun" --oversubscribe --with-ft ulfm --timeout 100 -np 4 \
        "$build/bench/ft_bench" 2000 2>/dev/null | grep '^agree ' || true
}
ompi1() {
    (cd "$tmp" && timeout 120 bash "$chroot_sh" exec mpirun --with-ft ulfm --oversubscribe \
        -np 4 ./ft_bench_ompi5 2000 2>/dev/null | grep '^agree ') || true
}
lat() { timeout 120 "$build/mpirun" -np 2 "$@" "$build/bench/p2p_bench" lat 8 1000000 2>/dev/null | tail -n 1; }
: >"$tmp/weft" && : >"$tmp/ompi" && : >"$tmp/lat"
r=1
while [ "$r" -le "$rounds" ]; do
    weft1 >>"$tmp/weft"
    [ -z "$ompi" ] || ompi1 >>"$tmp/ompi"
    if [ $((r % 2)) -eq 1 ]; then # each first in every other round
        off=$(lat) on=$(lat --with-ft ulfm)
    else
        on=$(lat --with-ft ulfm) off=$(lat)
    fi
    echo "${off:--} ${on:--}" >>"$tmp/lat"
    r=$((r + 1))
done
median() { sort -g | awk '{v[NR]=$1} END {if (NR==0) print "-"; else print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
col() { awk -v k="$2" '{for (i = 1; i < NF; ++i) if ($i == k) print $(i+1)}' "$1" | median; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (a=="-" || b=="-" || b+0==0) print "-"; else printf "%.2f", a/b}'; }
# Rounds that gave no figure (a failed run) are left out, and counted here.
awk '$1 + 0 > 0 && $2 + 0 > 0' "$tmp/lat" >"$tmp/lat.ok"
echo "ULFM costs at 4 ranks on $(nproc) cores, shared memory, median of $rounds interleaved rounds ($(date +%F))"
echo "(rounds with figures: Weft $(wc -l <"$tmp/weft"), Open MPI $(wc -l <"$tmp/ompi"), latency pairs $(wc -l <"$tmp/lat.ok"))"
echo
echo "| measure | Weft | Open MPI 5 | Weft/Open MPI |"
echo "|---|---|---|---|"
for k in "agree:agree, no failure (us)" "detect:barrier after a SIGKILL (ms)" \
    "shrink:first shrink after it (us)" "agree2:agree on the shrunk communicator (us)"; do
    key=${k%%:*}
    w=$(col "$tmp/weft" "$key") o=$(col "$tmp/ompi" "$key")
    echo "| ${k#*:} | $w | $o | $(ratio "$w" "$o") |"
done
echo
off=$(awk '{print $1}' "$tmp/lat.ok" | median) on=$(awk '{print $2}' "$tmp/lat.ok" | median)
paired=$(awk '{print $2 / $1}' "$tmp/lat.ok" | median)
echo "Failure-free cost: 8 B ping-pong latency, FT off $off us, FT on $on us; paired FT-on/FT-off $paired"
