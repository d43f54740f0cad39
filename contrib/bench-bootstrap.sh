#!/bin/sh
# Bootstrap benchmark: time from launcher start to every rank past the
# bootstrap and a 64-byte allgather, for N = 2..64 on this machine, Weft
# (trees on and off) interleaved with Debian's Open MPI and MPICH in the same
# run. Prints a markdown table of medians and ratios.
#   contrib/bench-bootstrap.sh [BUILDDIR] [REPEATS]
set -eu
build=${1:-.}
reps=${2:-5}
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d /tmp/weft-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
weft_prog="$build/bench/bootstrap_pmgr"
[ -x "$weft_prog" ] || { echo "build Weft first (make), then run from its build directory" >&2; exit 1; }
have_ompi=no have_mpich=no
if command -v mpicc.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null; then
    mpicc.openmpi -O2 -o "$tmp/boot_ompi" "$src/bench/bootstrap_mpi.c" && have_ompi=yes
fi
if command -v mpicc.mpich >/dev/null && command -v mpiexec.mpich >/dev/null; then
    mpicc.mpich -O2 -o "$tmp/boot_mpich" "$src/bench/bootstrap_mpi.c" && have_mpich=yes
fi

run_one() { # kind N -> ms (slowest rank), or "fail"
    t0=$(date +%s%N)
    export BENCH_T0_NS=$t0
    case $1 in
    weft-trees) out=$(MPIRUN_USE_TREES=1 timeout 120 "$build/mpirun" --oversubscribe -np "$2" "$weft_prog" 2>/dev/null) ;;
    weft-flat) out=$(MPIRUN_USE_TREES=0 timeout 120 "$build/mpirun" --oversubscribe -np "$2" "$weft_prog" 2>/dev/null) ;;
    ompi) out=$(timeout 120 mpirun.openmpi --allow-run-as-root --oversubscribe -np "$2" -x BENCH_T0_NS "$tmp/boot_ompi" 2>/dev/null) ;;
    mpich) out=$(timeout 120 mpiexec.mpich -n "$2" "$tmp/boot_mpich" 2>/dev/null) ;;
    esac
    echo "${out:-fail}" | tail -n 1
}

median() { sort -n | awk '{a[NR]=$1} END {if (NR==0) print "fail"; else print a[int((NR+1)/2)]}'; }

kinds="weft-trees weft-flat"
[ $have_ompi = yes ] && kinds="$kinds ompi"
[ $have_mpich = yes ] && kinds="$kinds mpich"
echo "Bootstrap to 64-byte allgather, slowest rank, median of $reps interleaved runs, ms"
echo "(machine: $(nproc) cores; $(uname -r); $(date -u +%Y-%m-%d))"
echo
printf '| N | Weft trees | Weft flat |'
[ $have_ompi = yes ] && printf ' Open MPI | Weft/OMPI |'
[ $have_mpich = yes ] && printf ' MPICH | Weft/MPICH |'
echo
printf '|---|---|---|'
[ $have_ompi = yes ] && printf -- '---|---|'
[ $have_mpich = yes ] && printf -- '---|---|'
echo
for n in 2 4 8 16 32 64; do
    for k in $kinds; do : >"$tmp/$k"; done
    i=0
    while [ $i -lt "$reps" ]; do
        for k in $kinds; do run_one "$k" "$n" | grep -v fail >>"$tmp/$k" || true; done
        i=$((i + 1))
    done
    wt=$(median <"$tmp/weft-trees")
    wf=$(median <"$tmp/weft-flat")
    best=$(printf '%s\n%s\n' "$wt" "$wf" | grep -v fail | sort -n | head -n 1)
    line="| $n | $wt | $wf |"
    if [ $have_ompi = yes ]; then
        o=$(median <"$tmp/ompi")
        line="$line $o | $(awk -v a="$best" -v b="$o" 'BEGIN {if (b+0>0) printf "%.2f", a/b; else print "-"}') |"
    fi
    if [ $have_mpich = yes ]; then
        m=$(median <"$tmp/mpich")
        line="$line $m | $(awk -v a="$best" -v b="$m" 'BEGIN {if (b+0>0) printf "%.2f", a/b; else print "-"}') |"
    fi
    echo "$line"
done
echo
echo "Ratios use Weft's better mode at that N (lower is better; < 1 means Weft is faster)."
