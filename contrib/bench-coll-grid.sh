#!/bin/sh
# One collective, several settings, paired: bench/coll_bench's OPERATION SIZE at NP ranks over
# self,sm, run once per setting in each of ROUNDS interleaved rounds. A setting is "-" (Weft's
# defaults), "ompi" (Debian's Open MPI, its defaults, as contrib/bench-coll.sh runs it) or
# comma-separated MCA settings for Weft, "name=value,name=value" (a value may hold ':', as a
# component path does, but no ','). Prints every round, then each setting's median time per
# operation (us) and the median of its paired ratios to the first setting: the measure of a
# change on a host whose level drifts, where only paired ratios compare. To compare two
# builds of a component, give each a directory holding its .so and the others' build
# directories, as mca_base_component_path.
#   contrib/bench-coll-grid.sh BUILDDIR NP OPERATION SIZE ROUNDS SETTING...
# e.g. contrib/bench-coll-grid.sh /tmp/wb 2 bcast 1048576 5 coll_sm_large_way=slots \
#          coll_sm_large_way=below - ompi
set -eu
build=$(cd "${1:?BUILDDIR}" && pwd)
np=${2:?NP}
op=${3:?OPERATION}
size=${4:?SIZE}
rounds=${5:?ROUNDS}
shift 5
[ $# -ge 1 ] || { echo "give at least one setting" >&2; exit 2; }
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d /tmp/weft-coll-grid.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# shellcheck disable=SC2012 # build-tree paths, as in bench-coll.sh
WEFT_MCA_mca_base_component_path=$(ls -d "$build"/mca/*/*/.libs | tr '\n' ':')
export WEFT_MCA_mca_base_component_path
for s in "$@"; do
    if [ "$s" = ompi ]; then
        mpicc.openmpi -O2 -w -o "$tmp/ompi" "$src/bench/coll_bench.c"
        break
    fi
done
run() { # setting
    setting=$1
    if [ "$setting" = ompi ]; then
        timeout 300 mpirun.openmpi --allow-run-as-root --oversubscribe -np "$np" --mca pml ob1 \
            --mca btl self,vader "$tmp/ompi" "$op" "$size"
    else
        set --
        if [ "$setting" != - ]; then
            old_ifs=$IFS
            IFS=,
            for kv in $setting; do set -- "$@" --mca "${kv%%=*}" "${kv#*=}"; done
            IFS=$old_ifs
        fi
        timeout 300 "$build/mpirun" -np "$np" --oversubscribe --mca btl self,sm "$@" \
            "$build/bench/coll_bench" "$op" "$size"
    fi 2>/dev/null | tail -n 1
}
i=0
while [ "$i" -lt "$rounds" ]; do
    line=""
    for s in "$@"; do
        v=$(run "$s")
        line="$line ${v:-nan}"
    done
    echo "round $i:$line" | tee -a "$tmp/rounds"
    i=$((i + 1))
done
echo "$np ranks, $op $size, $rounds rounds: medians, and of the paired ratios to setting 1"
k=0
for s in "$@"; do
    k=$((k + 1))
    awk -v k="$((k + 2))" '{print $k, $k / $3}' "$tmp/rounds" >"$tmp/col"
    t=$(awk '{print $1}' "$tmp/col" | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}')
    r=$(awk '{print $2}' "$tmp/col" | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}')
    printf '  %d: %s us, paired %.3f  (%s)\n' "$k" "$t" "$r" "$s"
done
