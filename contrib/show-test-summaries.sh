#!/bin/sh
# Print each test program's summary line from the .log files make check left
# (Check's "NN%: Checks: ..." line, or a shell test's last line), then the
# automake result. Usage: contrib/show-test-summaries.sh [BUILDDIR]
dir=${1:-.}
find "$dir" -name '*.log' ! -name 'test-suite.log' ! -name 'config.log' -path '*test*' | sort |
while read -r log; do
    name=${log#"$dir"/}
    name=${name%.log}
    summary=$(grep -E '^[0-9]+%: Checks:' "$log" | tail -n 1)
    [ -n "$summary" ] || summary=$(grep -v '^\(PASS\|FAIL\|SKIP\|ERROR\|XFAIL\|XPASS\) ' "$log" | grep . | tail -n 1)
    result=$(grep -E '^(PASS|FAIL|SKIP|ERROR|XFAIL|XPASS) ' "$log" | tail -n 1 | cut -d' ' -f1)
    printf '%-5s %-50s %s\n' "${result:-?}" "$name" "$summary"
done
