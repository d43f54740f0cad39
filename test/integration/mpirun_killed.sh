#!/bin/sh
# mpirun killed with SIGKILL under a running job: no rank outlives it by more than the bound
# (docs/hardening-client.md: 2 s), and no file of the job's stays (mpirun's reaper). The ranks are busy in different ways: blocked in MPI_Recv,
# computing without MPI calls, waiting in MPI_Finalize, sleeping, waiting in MPI_Init for a rank
# that has not called it yet, and that late rank itself (before MPI_Init). Each rank is found by
# a marker (this test's own directory on its command line) as well as by the pid it wrote.
# Ranks that mpirun forked itself die with it by their parent-death signal; ranks under another
# parent (a launch agent, a shell) rely on the watchdog on their connection to mpirun: the
# "-agent" cases run the ranks under a shell to check that path.
. "${WEFT_TEST_SRCDIR:?}/test/lib.sh"
export WEFT_MCA_mca_base_component_path="${WEFT_TEST_COMPONENT_PATH:?}"
MPIRUN="$WEFT_TEST_BUILDDIR/mpirun"
LINGER="$WEFT_TEST_BUILDDIR/test/integration/mpi_linger"
BOUND_MS=2000
AGENT=

# Live processes (zombies waiting for a slow reaper are dead) whose command line holds $1.
marked() {
    for d in /proc/[0-9]*; do
        p=${d#/proc/}
        [ "$p" = "$$" ] && continue
        tr '\0' ' ' 2>/dev/null <"$d/cmdline" | grep -qF -- "$1" || continue
        st=$(sed 's/.*) //' "$d/stat" 2>/dev/null | cut -d' ' -f1)
        [ -n "$st" ] && [ "$st" != Z ] && echo "$p"
    done
}
alive() { # alive PID...: the live ones
    for p in "$@"; do
        st=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | cut -d' ' -f1)
        [ -n "$st" ] && [ "$st" != Z ] && echo "$p"
    done
}
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# The ranks of the "-agent" cases run as children of this shell, except rank $DIRECT_RANK (a
# rank that has not called MPI_Init yet has no connection to watch).
cat >"$TEST_TMP/agent.sh" <<'AGENT'
#!/bin/sh
[ "$MPIRUN_RANK" = "${DIRECT_RANK:--1}" ] && exec "$@"
"$@"
AGENT
chmod +x "$TEST_TMP/agent.sh"

leftovers=
cleanup() {
    for p in $leftovers $(marked "$TEST_TMP/run."); do kill -9 "$p" 2>/dev/null; done
    rm -rf "$TEST_TMP"
}
trap cleanup EXIT

# case_ NAME NP FILE-TO-WAIT-FOR "MPIRUN-OPTIONS" MODE...: start the job, wait until every
# rank wrote FILE, kill mpirun, and time how long the ranks outlive it.
case_() {
    name=$1 np=$2 what=$3 opts=$4
    shift 4
    dir="$TEST_TMP/run.$name"
    mkdir -p "$dir"
    "$MPIRUN" --oversubscribe -np "$np" $opts $AGENT "$LINGER" "$dir" "$@" >"$dir/out" 2>&1 &
    mp=$!
    leftovers="$leftovers $mp"
    i=0
    while [ "$(ls "$dir" | grep -c "^$what\.[0-9]*$")" -lt "$np" ]; do
        i=$((i + 1))
        if [ $i -gt 300 ] || ! kill -0 $mp 2>/dev/null; then
            fail "$name: the ranks did not all reach '$what': $(cat "$dir/out")"
        fi
        sleep 0.1
    done
    sleep 0.5 # into their blocking calls
    pids=$(cat "$dir"/start.*)
    leftovers="$leftovers $pids"
    [ -n "$(alive $pids)" ] || fail "$name: no rank alive before mpirun was killed"
    kill -9 $mp
    t0=$(now_ms)
    while :; do
        left=$(alive $pids)
        [ -z "$left" ] && break
        if [ $(($(now_ms) - t0)) -gt $BOUND_MS ]; then
            fail "$name: ranks (pids)" $left "still alive $BOUND_MS ms after mpirun was killed"
        fi
        sleep 0.02
    done
    took=$(($(now_ms) - t0))
    left=$(marked "$dir")
    [ -z "$left" ] || fail "$name: processes of the job (pids)" $left "outlived mpirun"
    wait $mp 2>/dev/null
    # The job's files (btl/sm segments, named after mpirun's pid) go too, removed by mpirun's
    # reaper, which then ends (within 3 s).
    job_files() { for f in /dev/shm/weft-pmgr-"$mp"-*; do [ -e "$f" ] && echo "$f"; done; }
    while [ -n "$(job_files)" ] || [ -n "$(marked "weft-pmgr-$mp-")" ]; do
        [ $(($(now_ms) - t0)) -le 3000 ] || fail "$name: 3 s after mpirun was killed:" \
            "files $(job_files | tr '\n' ' ')" "reaper $(marked "weft-pmgr-$mp-")"
        sleep 0.05
    done
    echo "$name: every rank gone $took ms after mpirun was killed, its files and reaper" \
        "$(($(now_ms) - t0)) ms"
}

case_ busy 4 ready "" recv compute finalize sleep
case_ busy-tcp 3 ready "--mca btl self,tcp" recv compute finalize
case_ in-init 3 start "" recv recv late
export MPIRUN_USE_TREES=0
case_ in-init-no-tree 3 start "" recv recv late
unset MPIRUN_USE_TREES
AGENT="$TEST_TMP/agent.sh"
case_ busy-agent 4 ready "" recv compute finalize sleep
export DIRECT_RANK=2
case_ in-init-agent 3 start "" recv recv late
export MPIRUN_USE_TREES=0
case_ in-init-no-tree-agent 3 start "" recv recv late
echo "mpirun_killed: 7 jobs, no rank outlived mpirun by more than $BOUND_MS ms, no file of theirs stayed"
