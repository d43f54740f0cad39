# Shared by contrib/bench-p2p.sh and contrib/bench-coll.sh (sourced): interleaved rounds,
# medians and the results table. The sourcing script sets $tmp (a scratch directory) and
# defines `run IMPL A B C`, which prints one measurement for case A:B:C (or nothing).

# bench_collect ROUNDS "IMPLS" "CASES": every case of every implementation, round after round.
bench_collect() {
    for c in $3; do for impl in weft before ompi mpich; do : >"$tmp/$impl.$c"; done; done
    r=1
    while [ "$r" -le "$1" ]; do
        for c in $3; do
            a=${c%%:*} rest=${c#*:}
            for impl in $2; do
                v=$(run "$impl" "$a" "${rest%%:*}" "${rest#*:}" || true)
                case $v in '' | *[!0-9.]*) ;; *) echo "$v" >>"$tmp/$impl.$c" ;; esac
            done
        done
        r=$((r + 1))
    done
}

median() { sort -n "$1" | awk '{a[NR]=$1} END {if (NR==0) print "-"; else print a[int((NR+1)/2)]}'; }

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (a=="-" || b=="-" || b+0==0) print "-"; else printf "%.2f", a/b}'; }

# bench_table "HEADING A | HEADING B | HEADING C" "CASES": the medians, with Weft's ratios; with
# an earlier build measured too ("before"), its figures and Weft/before.
bench_table() {
    if [ -s "$tmp/before.${2%% *}" ]; then
        echo "| $1 | Weft | before | Open MPI | MPICH | Weft/before | Weft/OMPI | Weft/MPICH |"
        echo "|---|---|---|---|---|---|---|---|---|---|"
    else
        echo "| $1 | Weft | Open MPI | MPICH | Weft/OMPI | Weft/MPICH |"
        echo "|---|---|---|---|---|---|---|---|"
    fi
    for c in $2; do
        a=${c%%:*} rest=${c#*:}
        w=$(median "$tmp/weft.$c") o=$(median "$tmp/ompi.$c") m=$(median "$tmp/mpich.$c")
        if [ -s "$tmp/before.${2%% *}" ]; then
            b=$(median "$tmp/before.$c")
            echo "| $a | ${rest%%:*} | ${rest#*:} | $w | $b | $o | $m | $(ratio "$w" "$b") | $(ratio "$w" "$o") | $(ratio "$w" "$m") |"
        else
            echo "| $a | ${rest%%:*} | ${rest#*:} | $w | $o | $m | $(ratio "$w" "$o") | $(ratio "$w" "$m") |"
        fi
    done
}
