# shellcheck shell=sh disable=SC2154 # $tmp and $build come from the sourcing script
# Shared by contrib/bench-p2p.sh, contrib/bench-coll.sh and contrib/bench-sm-copy.sh
# (sourced): interleaved rounds, medians and the results table. The sourcing script sets $tmp
# (a scratch directory) and $build (Weft's build tree), and defines `run IMPL ARGS...`, which
# prints one measurement (or nothing).

# bench_group "IMPLS" ARGS...: one measurement of each implementation (run IMPL ARGS...), in
# $group as "impl=value ..." ("-" where there is none). The group is bracketed by the host's
# cross-core latency (bench/core_pingpong, when built): a group during which it changed level
# (a VM whose vCPUs the hypervisor moves: 2-5x on the machines this was written on) compared
# the implementations at different speeds, and is measured again, at most 5 times. The levels
# go in $tmp/level, the groups measured again in $tmp/reruns (bench_level reports them).
bench_probe() { "$build/bench/core_pingpong" 2>/dev/null || echo 0; }
bench_same_level() {
    awk -v a="$1" -v b="$2" 'BEGIN { lo = a < b ? a : b; hi = a < b ? b : a
        exit !(lo > 0 && hi <= 1.5 * lo) }'
}
bench_group() {
    bg_impls=$1 bg_tries=0
    shift
    while :; do
        bg_p0=$(bench_probe) group=""
        for bg_i in $bg_impls; do
            bg_v=$(run "$bg_i" "$@" || true)
            case $bg_v in '' | *[!0-9.]*) bg_v=- ;; esac
            group="$group $bg_i=$bg_v"
        done
        bg_p1=$(bench_probe) bg_tries=$((bg_tries + 1))
        # No probe (an older build): nothing to compare.
        [ "$bg_p0" = 0 ] && [ "$bg_p1" = 0 ] && return 0
        printf '%s\n%s\n' "$bg_p0" "$bg_p1" >>"$tmp/level"
        if bench_same_level "$bg_p0" "$bg_p1" || [ "$bg_tries" -ge 5 ]; then return 0; fi
        echo >>"$tmp/reruns"
    done
}

# bench_level: the levels seen, one line (nothing without the probe).
bench_level() {
    [ -s "$tmp/level" ] || return 0
    n=0
    [ -f "$tmp/reruns" ] && n=$(wc -l <"$tmp/reruns")
    sort -n "$tmp/level" | awk -v n="$n" '{a[NR]=$1} END {printf "cross-core latency (bench/core_pingpong, one way): median %s ns, %s to %s; %d groups measured again (the level changed during them)\n", a[int((NR+1)/2)], a[1], a[NR], n}'
}

# bench_collect ROUNDS "IMPLS" "CASES": every case of every implementation, round after round,
# each case's implementations one group (bench_group).
bench_collect() {
    for c in $3; do for impl in weft before ompi mpich; do : >"$tmp/$impl.$c"; done; done
    r=1
    while [ "$r" -le "$1" ]; do
        for c in $3; do
            a=${c%%:*} rest=${c#*:}
            bench_group "$2" "$a" "${rest%%:*}" "${rest#*:}"
            echo "$c$group" >>"$tmp/groups"
            for kv in $group; do
                [ "${kv#*=}" = - ] || echo "${kv#*=}" >>"$tmp/${kv%%=*}.$c"
            done
        done
        r=$((r + 1))
    done
}

median() { [ -s "$1" ] && sort -n "$1" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}' || echo "-"; }

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (a=="-" || b=="-" || b+0==0) print "-"; else printf "%.2f", a/b}'; }

# paired CASE A B: the median over the rounds of A's figure over B's in the same group (the two
# ran within seconds of each other, at one level of the host), from $tmp/groups.
paired() {
    [ -s "$tmp/groups" ] || { echo "-"; return 0; }
    awk -v c="$1" -v a="$2" -v b="$3" '$1 == c {
        delete v; for (k = 2; k <= NF; ++k) { split($k, kv, "="); v[kv[1]] = kv[2] }
        if (v[a] != "-" && v[a] != "" && v[b] != "-" && v[b] + 0 > 0) r[++n] = v[a] / v[b] }
        END { if (n == 0) { print "-"; exit }
            for (i = 1; i <= n; ++i) for (j = i + 1; j <= n; ++j) if (r[j] < r[i]) { x = r[i]; r[i] = r[j]; r[j] = x }
            printf "%.2f\n", r[int((n + 1) / 2)] }' "$tmp/groups"
}

# bench_table "HEADING A | HEADING B | HEADING C" "CASES": the medians, with Weft's ratios; with
# an earlier build measured too ("before"), its figures and Weft/before.
bench_table() {
    if [ -s "$tmp/before.${2%% *}" ]; then
        echo "| $1 | Weft | before | Open MPI | MPICH | Weft/before | Weft/OMPI | Weft/MPICH | paired Weft/before | paired Weft/OMPI | paired Weft/MPICH |"
        echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    else
        echo "| $1 | Weft | Open MPI | MPICH | Weft/OMPI | Weft/MPICH | paired Weft/OMPI | paired Weft/MPICH |"
        echo "|---|---|---|---|---|---|---|---|---|---|"
    fi
    for c in $2; do
        a=${c%%:*} rest=${c#*:}
        w=$(median "$tmp/weft.$c") o=$(median "$tmp/ompi.$c") m=$(median "$tmp/mpich.$c")
        if [ -s "$tmp/before.${2%% *}" ]; then
            b=$(median "$tmp/before.$c")
            echo "| $a | ${rest%%:*} | ${rest#*:} | $w | $b | $o | $m | $(ratio "$w" "$b") | $(ratio "$w" "$o") | $(ratio "$w" "$m") | $(paired "$c" weft before) | $(paired "$c" weft ompi) | $(paired "$c" weft mpich) |"
        else
            echo "| $a | ${rest%%:*} | ${rest#*:} | $w | $o | $m | $(ratio "$w" "$o") | $(ratio "$w" "$m") | $(paired "$c" weft ompi) | $(paired "$c" weft mpich) |"
        fi
    done
}
