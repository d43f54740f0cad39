#!/bin/sh
# btl/tcp's listeners against a process outside the job (docs/security.md). While a two-rank
# tcp job runs (mpi_rndv: rank 1 sleeps with rendezvous messages on their way), btl_tcp_intruder
# connects to both ranks' listeners and sends: text, frame headers of every type where the
# handshake belongs, a truncated hello, a version-1 hello as the peer rank with the job field
# anyone could compute and another btl_tcp_max_send_size (what took an endpoint down before),
# a version-2 hello as the peer rank without the job's secret, and, as an insider that read the
# secret from the rank's environment, a hello that disagrees with the established endpoint
# (another btl_tcp_max_send_size) and a correct hello replayed on another connection. The job
# must complete with every byte right, each intruder must be dropped (or refused), with a log
# line, and the secret must appear on no command line.
. "${WEFT_TEST_SRCDIR:?}/test/lib.sh"
export WEFT_MCA_mca_base_component_path="${WEFT_TEST_COMPONENT_PATH:?}"
MPIRUN="$WEFT_TEST_BUILDDIR/mpirun"
B="$WEFT_TEST_BUILDDIR"
INTRUDER="$B/test/integration/btl_tcp_intruder"
command -v ss >/dev/null 2>&1 || {
    echo "SKIP: needs ss (iproute2) to find the ranks' processes"
    exit 77
}
LOG="$TEST_TMP/job.log"
start=$(date +%s)
run "$MPIRUN" -np 2 --timeout 100 --mca btl self,tcp --mca btl_tcp_if_include lo \
    --mca btl_tcp_verbose 1 "$B/test/integration/mpi_rndv" -w 6 65519 3000017 >"$LOG" 2>&1 &
job=$!
for i in $(seq 300); do
    grep -q "mpi_rndv: waiting" "$LOG" && break
    sleep 0.1
done
grep -q "mpi_rndv: waiting" "$LOG" || fail "the job did not reach its wait: $(cat "$LOG")"
# "lo (127.0.0.1:A): connected to rank 0 (host) at 127.0.0.1:B over lo": A is rank 1's
# listener, B rank 0's.
ports=$(sed -n 's/.*lo (127\.0\.0\.1:\([0-9]*\)): connected to rank 0 .* at 127\.0\.0\.1:\([0-9]*\) over lo.*/\1 \2/p' "$LOG" | head -n 1)
port1=${ports% *} port0=${ports#* }
[ -n "$ports" ] && [ "$port0" != "$port1" ] || fail "no connection between the ranks in the log: $(cat "$LOG")"
pid0=$(ss -Hltnp "sport = :$port0" | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -n 1)
[ -n "$pid0" ] || fail "no process listens on rank 0's port $port0"
envof() { tr '\0' '\n' <"/proc/$pid0/environ" | sed -n "s/^$1=//p"; }
jobid="pmgr-$(envof MPIRUN_ID)"
secret=$(envof WEFT_JOB_SECRET)
ps -eo args >"$TEST_TMP/ps"
if [ -n "$secret" ] && grep -qF "$secret" "$TEST_TMP/ps"; then
    fail "the job's secret is on a command line: $(grep -F "$secret" "$TEST_TMP/ps")"
fi

# port, the rank it claims, the rank it addresses
i=0
for target in "$port0 1 0" "$port1 0 1"; do
    set -- $target
    for mode in garbage frame-data frame-ack frame-bye frame-unknown frame-huge short; do
        "$INTRUDER" "$1" $mode >"$TEST_TMP/i$i.$mode" 2>&1 &
    done
    "$INTRUDER" "$1" v1 "$jobid" "$2" "$3" 12345 >"$TEST_TMP/i$i.v1" 2>&1 &
    "$INTRUDER" "$1" spoof "$jobid" "$2" "$3" 12345 >"$TEST_TMP/i$i.spoof" 2>&1 &
    if [ -n "$secret" ]; then
        "$INTRUDER" "$1" spoof "$jobid" "$2" "$3" 12345 "$secret" >"$TEST_TMP/i$i.insider" 2>&1 &
        "$INTRUDER" "$1" replay "$jobid" "$2" "$3" 12345 "$secret" >"$TEST_TMP/i$i.replay" 2>&1 &
    fi
    i=$((i + 1))
done
wait_intruders() {
    for p in $(jobs -p); do
        [ "$p" = "$job" ] || wait "$p"
    done
}
wait_intruders
wait "$job"
rc=$?
out=$(cat "$LOG")
[ $rc -eq 0 ] || fail "the job failed (exit $rc) with intruders at its listeners: $out"
expect_in "mpi_rndv: 2 ranks, 8 messages intact" "$out" "the job's data"
[ $(($(date +%s) - start)) -lt 60 ] || fail "the job took $(($(date +%s) - start)) s with intruders"
[ -n "$secret" ] || fail "no WEFT_JOB_SECRET in rank 0's environment"
for i in 0 1; do
    for mode in garbage frame-data frame-ack frame-bye frame-unknown frame-huge v1 spoof replay; do
        expect_in "closed" "$(cat "$TEST_TMP/i$i.$mode")" "intruder $mode at rank $i"
    done
    expect_in "reply kind 4" "$(cat "$TEST_TMP/i$i.insider")" "insider at rank $i refused"
done
for r in 0 1; do
    other=$((1 - r))
    printf '%s\n' "$out" | grep -q "dropped a connection from 127.0.0.1:[0-9]*: not a Weft btl/tcp peer" ||
        fail "no log line for a stranger: $out"
    printf '%s\n' "$out" | grep -q "this process is connected to rank $other already .*; that connection goes on" ||
        fail "no log line for the hello that disagrees with the endpoint to rank $other: $out"
done
expect_in "it speaks btl/tcp wire version 1, this process speaks 2" "$out" "version-1 hello"
n=$(printf '%s\n' "$out" | grep -c "does not prove that it belongs to this job")
[ "$n" -eq 4 ] || fail "$n log lines for unauthenticated hellos, expected 4 (2 spoofed, 2 replayed): $out"
n=$(printf '%s\n' "$out" | grep -c "not a Weft btl/tcp peer")
[ "$n" -eq 12 ] || fail "$n log lines for strangers, expected 12 (text and 5 frame headers at 2 ranks): $out"
expect_not_in "btl_tcp_max_send_size is" "$out" "no endpoint torn down"
expect_not_in "lost the connection" "$out" "no endpoint torn down"
expect_not_in "$secret" "$out" "the secret in the output"
echo "btl/tcp hostile: 2 ranks x 11 intruders (text, 5 frame headers, truncated, version 1, unauthenticated, replayed, insider with other limits) dropped and logged; the job's 8 messages intact"
