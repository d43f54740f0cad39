#!/bin/sh
# mpirun as a user drives it: non-MPI programs, exit codes and signals passed
# through, output never lost, --tag-output, --timestamp-output, -x, --mca, hosts and slots,
# -N, --map-by, --output-filename, the source of --mca values, warnings once per job, a rank
# without MPI_Finalize, several programs (MPMD), --wdir, --report-bindings, each rank's place in its environment (Weft's and Open
# MPI's names), --allow-run-as-root, binding, --timeout and MPIEXEC_TIMEOUT, signals to
# mpirun, and clear errors for bad input: out-of-range
# numbers, a boot selection that bypasses mpirun, host files that are not small regular
# files; and the bootstrap listener on loopback for a local job.
. "${WEFT_TEST_SRCDIR:?}/test/lib.sh"
MPIRUN="$WEFT_TEST_BUILDDIR/mpirun"
checks=0
ok() { checks=$((checks + 1)); }

# A program that is not MPI at all runs, once per rank.
out=$(run "$MPIRUN" --host localhost:3 -np 3 echo hello 2>&1) || fail "echo job failed: $out"
[ "$(echo "$out" | grep -c '^hello$')" -eq 3 ] || fail "expected 3 hellos: $out"; ok

# The first failing rank's status is mpirun's; the others are ended at once.
start=$(date +%s)
out=$(run "$MPIRUN" --host localhost:2 -np 2 sh -c 'if [ "$MPIRUN_RANK" = 1 ]; then exit 7; fi; sleep 30' 2>&1)
rc=$?
[ $rc -eq 7 ] || fail "exit status: expected 7, got $rc: $out"
expect_in "rank 1 (pid" "$out" "failing rank message"
expect_in "on host localhost exited with status 7; ending the job" "$out" "failing rank message"
[ $(( $(date +%s) - start )) -lt 15 ] || fail "the other rank was not ended promptly"; ok

# A rank killed by a signal: 128 + signal.
out=$(run "$MPIRUN" --host localhost:2 -np 2 sh -c 'if [ "$MPIRUN_RANK" = 0 ]; then kill -9 $$; fi; sleep 30' 2>&1)
rc=$?
[ $rc -eq 137 ] || fail "signal status: expected 137, got $rc: $out"
expect_in "was killed by signal 9" "$out" "signal message"; ok

# Output written just before dying is not lost, and arrives whole, by line.
out=$(run "$MPIRUN" --host localhost:2 -np 2 sh -c 'if [ "$MPIRUN_RANK" = 0 ]; then sleep 30; fi; i=0; while [ $i -lt 3000 ]; do echo "line $i"; i=$((i+1)); done; printf "no newline"; exit 3' 2>/dev/null)
[ "$(echo "$out" | grep -c '^line ')" -eq 3000 ] || fail "the dying rank's output lost lines"
[ "$(echo "$out" | tail -n 1)" = "no newline" ] || fail "a last partial line was lost: $(echo "$out" | tail -n 2)"; ok

# --tag-output
out=$(run "$MPIRUN" --host localhost:2 -np 2 --tag-output sh -c 'echo out$MPIRUN_RANK; echo err$MPIRUN_RANK >&2' 2>&1)
expect_in "[1,0]<stdout>:out0" "$out" "--tag-output"
expect_in "[1,1]<stderr>:err1" "$out" "--tag-output"
# --timestamp-output: the time first, then the tag (if asked for), then the line.
out=$(run "$MPIRUN" -np 1 --timestamp-output --tag-output echo stamped)
echo "$out" | grep -Eq '^\[[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}\]\[1,0\]<stdout>:stamped$' ||
    fail "--timestamp-output --tag-output: got '$out'"
out=$(run "$MPIRUN" -np 1 --timestamp-output echo stamped)
echo "$out" | grep -Eq '^\[[0-9-]{10}T[0-9:.]{15}\] stamped$' || fail "--timestamp-output: got '$out'"; ok

# -x and --mca reach the ranks.
out=$(WEFT_TEST_PASS=from-mpirun run "$MPIRUN" -np 1 -x FOO=bar -x WEFT_TEST_PASS --mca btl_tcp_eager_limit 8k sh -c 'echo "$FOO $WEFT_TEST_PASS $WEFT_MCA_btl_tcp_eager_limit"')
[ "$out" = "bar from-mpirun 8k" ] || fail "-x/--mca: got '$out'"; ok

# Each rank's place in the job and on its host, under Open MPI's names and Weft's; two "hosts"
# (the second started through a launch agent that runs the command here).
printf '#!/bin/sh\nshift\nexec "$@"\n' >"$TEST_TMP/agent.sh"
chmod +x "$TEST_TMP/agent.sh"
out=$(run "$MPIRUN" --host localhost:2,127.0.0.2:3 -np 5 --launch-agent "$TEST_TMP/agent.sh" \
    sh -c 'echo "$OMPI_COMM_WORLD_RANK/$OMPI_COMM_WORLD_SIZE $OMPI_COMM_WORLD_LOCAL_RANK/$OMPI_COMM_WORLD_LOCAL_SIZE $WEFT_LOCAL_RANK/$WEFT_LOCAL_SIZE $OMPI_COMM_WORLD_NODE_RANK"' |
    sort | tr '\n' ' ')
[ "$out" = "0/5 0/2 0/2 0 1/5 1/2 1/2 1 2/5 0/3 0/3 0 3/5 1/3 1/3 1 4/5 2/3 2/3 2 " ] ||
    fail "rank environment: got '$out'"
# -N: that many ranks on every host, host after host; more than a host's slots, or an -np that
# disagrees, is refused with the reason.
out=$(run "$MPIRUN" -N 2 --host localhost:2,127.0.0.2:4 --launch-agent "$TEST_TMP/agent.sh" \
    sh -c 'echo "$MPIRUN_RANK $OMPI_COMM_WORLD_LOCAL_RANK/$OMPI_COMM_WORLD_LOCAL_SIZE"' | sort | tr '\n' ' ')
[ "$out" = "0 0/2 1 1/2 2 0/2 3 1/2 " ] || fail "-N 2 on two hosts: got '$out'"
out=$(run "$MPIRUN" -N 3 --host localhost:2 true 2>&1) && fail "-N 3 on 2 slots accepted"
expect_in "-N 3 ranks per host were asked for but localhost has 2 slots" "$out" "-N over slots"
run "$MPIRUN" -N 3 --host localhost:2 --oversubscribe true || fail "-N 3 --oversubscribe refused"
out=$(run "$MPIRUN" -N 2 -np 3 --host localhost:2 true 2>&1) && fail "-N 2 -np 3 accepted"
expect_in "-np 3 and -N 2 on 1 host (2 ranks) disagree" "$out" "-N and -np"; ok

# --map-by: which rank runs on which host, and its place there. slot (the default) and core fill
# each host's slots in turn; node goes one rank per host in turn, passing over full hosts;
# ppr:N:node is -N N; ppr:N:core and ppr:N:socket count this machine's cores and sockets
# (hwloc), refuse a count over the slots without --oversubscribe, and cannot count another
# host's. Open MPI's :oversubscribe modifier is taken, :PE=n refused with the reason.
where='echo "$MPIRUN_RANK@$WEFT_HOSTNAME:$OMPI_COMM_WORLD_LOCAL_RANK/$WEFT_LOCAL_SIZE"'
for m in slot core; do
    out=$(run "$MPIRUN" --map-by $m -np 4 --host localhost:2,127.0.0.2:2 --launch-agent "$TEST_TMP/agent.sh" \
        sh -c "$where" | sort | tr '\n' ' ')
    [ "$out" = "0@localhost:0/2 1@localhost:1/2 2@127.0.0.2:0/2 3@127.0.0.2:1/2 " ] || fail "--map-by $m: got '$out'"
done
out=$(run "$MPIRUN" --map-by node -np 4 --host localhost:2,127.0.0.2:2 --launch-agent "$TEST_TMP/agent.sh" \
    sh -c "$where" | sort | tr '\n' ' ')
[ "$out" = "0@localhost:0/2 1@127.0.0.2:0/2 2@localhost:1/2 3@127.0.0.2:1/2 " ] || fail "--map-by node: got '$out'"
out=$(run "$MPIRUN" --map-by node -np 4 --host localhost:1,127.0.0.2:3 --launch-agent "$TEST_TMP/agent.sh" \
    sh -c "$where" | sort | tr '\n' ' ')
[ "$out" = "0@localhost:0/1 1@127.0.0.2:0/3 2@127.0.0.2:1/3 3@127.0.0.2:2/3 " ] ||
    fail "--map-by node past a full host: got '$out'"
out=$(run "$MPIRUN" --map-by ppr:2:node --host localhost:2,127.0.0.2:2 --launch-agent "$TEST_TMP/agent.sh" \
    sh -c "$where" | sort | tr '\n' ' ')
[ "$out" = "0@localhost:0/2 1@localhost:1/2 2@127.0.0.2:0/2 3@127.0.0.2:1/2 " ] || fail "--map-by ppr:2:node: got '$out'"
cores=$(run "$MPIRUN" --map-by ppr:1:core sh -c 'echo "$MPIRUN_NPROCS"' | sort -u)
sockets=$(run "$MPIRUN" --map-by ppr:1:socket sh -c 'echo "$MPIRUN_NPROCS"' | sort -u)
if command -v lscpu >/dev/null 2>&1; then
    [ "$cores" = "$(lscpu -p=core,socket | grep -v '^#' | sort -u | wc -l)" ] ||
        fail "--map-by ppr:1:core: $cores ranks, not one per core"
    [ "$sockets" = "$(lscpu -p=socket | grep -v '^#' | sort -u | wc -l)" ] ||
        fail "--map-by ppr:1:socket: $sockets ranks, not one per socket"
fi
out=$(run "$MPIRUN" --map-by ppr:2:core --host "localhost:$cores" true 2>&1) && fail "ppr:2:core over the slots accepted"
expect_in "--map-by ppr:2:core puts $((2 * cores)) ranks on localhost (2 per core, $cores core" "$out" "ppr:2:core over the slots"
expect_in "Use --oversubscribe" "$out" "ppr:2:core over the slots"
out=$(run "$MPIRUN" --map-by ppr:2:core:oversubscribe --host "localhost:$cores" sh -c 'echo "$MPIRUN_NPROCS"' | sort -u)
[ "$out" = $((2 * cores)) ] || fail "ppr:2:core:oversubscribe: got '$out' ranks"
out=$(run "$MPIRUN" --map-by ppr:1:core --host localhost,127.0.0.2 --launch-agent "$TEST_TMP/agent.sh" true 2>&1) &&
    fail "ppr:1:core on another host accepted"
expect_in "mpirun cannot tell how many cores host 127.0.0.2 has" "$out" "ppr:1:core on another host"
out=$(run "$MPIRUN" --map-by slot:PE=2 true 2>&1) && fail "--map-by slot:PE=2 accepted"
expect_in "':PE=2' (several cores per rank) is not supported" "$out" "PE=2"
out=$(run "$MPIRUN" --map-by hwthread true 2>&1) && fail "--map-by hwthread accepted"
expect_in "--map-by 'hwthread': expected slot, core, node or ppr:N:node|socket|core" "$out" "hwthread"
out=$(run "$MPIRUN" --map-by node -N 2 true 2>&1) && fail "--map-by and -N together accepted"
expect_in "both say where ranks go" "$out" "--map-by with -N"; ok

# --output-filename DIR: each rank's stdout and stderr in DIR/1/rank.N/, as Open MPI 4 lays
# them out, and on the terminal too (:nocopy: only in the files); mpirun's own messages stay
# on the terminal; a directory that cannot be made is an error before any rank starts.
out=$(cd "$TEST_TMP" && run "$MPIRUN" -np 2 --output-filename outdir sh -c \
    'echo "out $MPIRUN_RANK"; echo "err $MPIRUN_RANK" >&2; printf "last $MPIRUN_RANK"' 2>&1)
for r in 0 1; do
    [ "$(cat "$TEST_TMP/outdir/1/rank.$r/stdout")" = "out $r
last $r" ] || fail "--output-filename: rank $r's stdout file: $(cat "$TEST_TMP/outdir/1/rank.$r/stdout")"
    [ "$(cat "$TEST_TMP/outdir/1/rank.$r/stderr")" = "err $r" ] || fail "--output-filename: rank $r's stderr file"
    expect_in "out $r" "$out" "--output-filename copies to the terminal"
done
out=$(run "$MPIRUN" -np 2 --output-filename "$TEST_TMP/quiet:nocopy" sh -c 'echo "out $MPIRUN_RANK"; [ "$MPIRUN_RANK" = 0 ] || exit 3' 2>&1)
expect_not_in "out 1" "$out" "--output-filename :nocopy"
expect_in "mpirun: rank 1 (pid" "$out" "mpirun's messages with --output-filename"
[ "$(cat "$TEST_TMP/quiet/1/rank.1/stdout")" = "out 1" ] || fail "--output-filename :nocopy: file"
out=$(run "$MPIRUN" -np 12 --oversubscribe --output-filename "$TEST_TMP/twelve:nocopy,nojobid" true 2>&1) ||
    fail "--output-filename with 12 ranks: $out"
[ -f "$TEST_TMP/twelve/rank.00/stdout" ] && [ -f "$TEST_TMP/twelve/rank.11/stderr" ] ||
    fail "--output-filename: 12 ranks not in rank.00 to rank.11: $(ls "$TEST_TMP/twelve")"
touch "$TEST_TMP/plainfile"
out=$(run "$MPIRUN" -np 2 --output-filename "$TEST_TMP/plainfile/sub" echo started 2>&1) &&
    fail "--output-filename under a file accepted"
expect_in "--output-filename '$TEST_TMP/plainfile/sub': $TEST_TMP/plainfile is there but is not a directory" "$out" "--output-filename under a file"
out=$(run "$MPIRUN" -np 1 --output-filename /proc/weft-no/out true 2>&1) && fail "--output-filename in /proc accepted"
expect_in "--output-filename '/proc/weft-no/out': cannot make /proc/weft-no: No such file or directory" "$out" "--output-filename in /proc"
expect_not_in "started" "$out" "--output-filename error started ranks"
out=$(run "$MPIRUN" -np 1 --output-filename "$TEST_TMP/x:nocpy" true 2>&1) && fail "--output-filename :nocpy accepted"
expect_in "'nocpy' is not a list of nocopy and nojobid" "$out" "--output-filename :nocpy"; ok

# --mca values reach the ranks as coming from the command line (mpirun --mca), not the
# environment; -x WEFT_MCA_ and mpirun's environment still read as the environment.
WEFT_MCA_mca_base_component_path="${WEFT_TEST_COMPONENT_PATH:?}"
export WEFT_MCA_mca_base_component_path
out=$(run "$MPIRUN" -np 1 --mca btl_tcp_eager_limit 8k "$WEFT_INFO" --param btl tcp --level 9 2>&1)
expect_in '"btl_tcp_eager_limit" (current value: "8k", source: command line (mpirun --mca))' "$out" "--mca source"
out=$(run "$MPIRUN" -np 1 --mca btl_tcp_eager_limit 8k "$WEFT_INFO" --param btl tcp --level 9 --parsable 2>&1)
expect_in "btl_tcp_eager_limit:source:command line" "$out" "--mca source (parsable)"
expect_in "btl_tcp_eager_limit:source_detail:mpirun --mca" "$out" "--mca source detail (parsable)"
out=$(WEFT_MCA_btl_tcp_eager_limit=4k run "$MPIRUN" -np 1 "$WEFT_INFO" --param btl tcp --level 9 2>&1)
expect_in '(current value: "4k", source: environment WEFT_MCA_btl_tcp_eager_limit)' "$out" "environment source"
out=$(WEFT_MPIRUN_MCA=btl_tcp_eager_limit WEFT_MCA_btl_tcp_eager_limit=4k run "$MPIRUN" -np 1 "$WEFT_INFO" \
    --param btl tcp --level 9 2>&1)
expect_in "source: environment WEFT_MCA_btl_tcp_eager_limit" "$out" "an outer mpirun's WEFT_MPIRUN_MCA"
out=$(run "$MPIRUN" -np 1 --mca btl_tcp_eager_limit 12x "$WEFT_INFO" --param btl tcp 2>&1)
expect_in "value '12x' from the command line (mpirun --mca) is not valid" "$out" "--mca bad value"
unset WEFT_MCA_mca_base_component_path; ok

# Warnings every rank prints alike come once, from the first rank, and mpirun names the ranks
# whose copies it left out; one that differs between ranks comes from each; the files of
# --output-filename keep every copy.
ring="$WEFT_TEST_BUILDDIR/examples/ring"
out=$(WEFT_MCA_mca_base_component_path="$WEFT_TEST_COMPONENT_PATH" run "$MPIRUN" -np 4 --oversubscribe \
    --timeout 60 --mca btl_tcp_eager_limt 8k "$ring" 2>&1) || fail "ring with a misspelt --mca: $out"
n=$(echo "$out" | grep -c '^weft: warning: unknown parameter btl_tcp_eager_limt (from mpirun --mca); did you mean btl_tcp_eager_limit?$')
[ "$n" -eq 1 ] || fail "the unknown parameter warning came $n times, not once: $out"
echo "$out" | grep -Eq '^mpirun: ranks [0-3](-[0-3]|,[0-3])+ printed the same warning as rank [0-3], shown once: unknown parameter btl_tcp_eager_limt' ||
    fail "no word of the left-out copies: $out"
expect_in "token 40 (expected 40)" "$out" "ring with a misspelt --mca"
out=$(run "$MPIRUN" -np 4 --oversubscribe sh -c 'echo "weft: warning: disk $MPIRUN_RANK is slow" >&2; echo "weft: warning: same" >&2' 2>&1)
for r in 0 1 2 3; do expect_in "weft: warning: disk $r is slow" "$out" "a warning that differs"; done
[ "$(echo "$out" | grep -c '^weft: warning: same$')" -eq 1 ] || fail "'same' not once: $out"
out=$(run "$MPIRUN" -np 4 --oversubscribe --output-filename "$TEST_TMP/warn" sh -c 'echo "weft: warning: same" >&2' 2>&1)
[ "$(echo "$out" | grep -c '^weft: warning: same$')" -eq 1 ] || fail "'same' not once with --output-filename: $out"
[ "$(cat "$TEST_TMP"/warn/1/rank.*/stderr | grep -c '^weft: warning: same$')" -eq 4 ] ||
    fail "--output-filename files lost a copy of a warning"; ok

# A rank that returns from main after MPI_Init without MPI_Finalize is named, in those words;
# with fault tolerance too (and the job goes on without it).
nofin="$WEFT_TEST_BUILDDIR/test/integration/mpi_no_finalize"
out=$(WEFT_MCA_mca_base_component_path="$WEFT_TEST_COMPONENT_PATH" run "$MPIRUN" -np 4 --oversubscribe \
    --timeout 60 "$nofin" 2 2>&1) && fail "a rank without MPI_Finalize: the job succeeded: $out"
expect_in "mpirun: rank 2 (pid" "$out" "no MPI_Finalize"
expect_in "exited with status 0 without calling MPI_Finalize (it called MPI_Init, then returned from main or called exit); ending the job" "$out" "no MPI_Finalize"
out=$(WEFT_MCA_mca_base_component_path="$WEFT_TEST_COMPONENT_PATH" run "$MPIRUN" -np 4 --oversubscribe \
    --timeout 60 --with-ft ulfm "$nofin" 1 2>&1) || fail "no MPI_Finalize under --with-ft ulfm: $out"
expect_in "mpirun: rank 1 (pid" "$out" "no MPI_Finalize, ulfm"
expect_in "exited with status 0 without calling MPI_Finalize; the job goes on without it (fault tolerance is on)" "$out" "no MPI_Finalize, ulfm"; ok

# --wdir (and -wdir, -wd): the ranks run there, and a relative program is found from there; a
# directory that is not there is an error that names it.
mkdir -p "$TEST_TMP/work"
printf '#!/bin/sh\nexit 0\n' >"$TEST_TMP/work/mytrue"
chmod +x "$TEST_TMP/work/mytrue"
out=$(run "$MPIRUN" --wdir "$TEST_TMP/work" -np 2 pwd | sort -u)
[ "$out" = "$TEST_TMP/work" ] || fail "--wdir: the ranks ran in '$out'"
run "$MPIRUN" -wdir "$TEST_TMP/work" -np 1 ./mytrue || fail "-wdir: ./mytrue not found there"
out=$(run "$MPIRUN" -wd "$TEST_TMP/nowhere" -np 1 true 2>&1) && fail "--wdir to nowhere accepted"
expect_in "--wdir '$TEST_TMP/nowhere': No such file or directory" "$out" "--wdir to nowhere"; ok

# Several programs in one job (MPMD, ':'): ranks numbered in order, each running its program
# (OMPI_APPNUM says which), one MPI_COMM_WORLD; each program needs -np, and only -np goes after
# a ':'.
out=$(run "$MPIRUN" --oversubscribe -np 1 sh -c 'echo "a$MPIRUN_RANK/$MPIRUN_NPROCS app$OMPI_APPNUM"' : \
    -np 2 sh -c 'echo "b$MPIRUN_RANK/$MPIRUN_NPROCS app$OMPI_APPNUM"' | sort | tr '\n' ' ')
[ "$out" = "a0/3 app0 b1/3 app1 b2/3 app1 " ] || fail "MPMD: got '$out'"
out=$(WEFT_MCA_mca_base_component_path="${WEFT_TEST_COMPONENT_PATH:?}" run "$MPIRUN" \
    --oversubscribe -np 1 "$WEFT_TEST_BUILDDIR/examples/ring" : -np 3 \
    "$WEFT_TEST_BUILDDIR/examples/ring" 2>&1) || fail "MPMD ring: $out"
expect_in "ring: 4 ranks, 10 laps, token 40 (expected 40)" "$out" "MPMD ring"
out=$(run "$MPIRUN" -np 1 true : true 2>&1) && fail "MPMD without -np accepted"
expect_in "'true' after ':' needs -np" "$out" "MPMD without -np"
out=$(run "$MPIRUN" -np 1 true : --mca a b -np 1 true 2>&1) && fail "--mca after ':' accepted"
expect_in "'--mca' after ':' : a program there takes only -np" "$out" "--mca after ':'"
out=$(run "$MPIRUN" -np 1 true : -np 1 no-such-program 2>&1)
[ $? -eq 127 ] || fail "MPMD with a missing second program: $out"
expect_in "cannot run 'no-such-program'" "$out" "MPMD missing program"; ok

# Open MPI's --allow-run-as-root is accepted (container scripts pass it).
out=$(run "$MPIRUN" --allow-run-as-root -np 1 echo fine) || fail "--allow-run-as-root: $out"
[ "$out" = "fine" ] || fail "--allow-run-as-root: got '$out'"; ok

# stdin goes to rank 0.
out=$(echo "to rank 0" | run "$MPIRUN" -np 1 cat)
[ "$out" = "to rank 0" ] || fail "stdin: got '$out'"; ok

# Slots: more ranks than slots is an error that says how to allow it.
out=$(run "$MPIRUN" --host localhost:1 -np 2 true 2>&1) && fail "oversubscription accepted"
expect_in "2 ranks were asked for but only 1 slot are available" "$out" "slots"
expect_in "--oversubscribe" "$out" "slots hint"
run "$MPIRUN" --host localhost:1 -np 2 --oversubscribe true || fail "--oversubscribe refused"; ok

# A hostfile; a bad one.
printf 'localhost slots=3 # three\n\n' >"$TEST_TMP/hosts"
out=$(run "$MPIRUN" --hostfile "$TEST_TMP/hosts" sh -c 'echo r$MPIRUN_RANK/$MPIRUN_NPROCS' | sort | tr '\n' ' ')
[ "$out" = "r0/3 r1/3 r2/3 " ] || fail "hostfile: got '$out'"
printf 'localhost cores=3\n' >"$TEST_TMP/badhosts"
out=$(run "$MPIRUN" --hostfile "$TEST_TMP/badhosts" true 2>&1) && fail "bad hostfile accepted"
expect_in "badhosts:1: 'cores=3' is not understood (expected slots=N)" "$out" "bad hostfile"; ok

# Binding: one core each unless told otherwise.
ncpu=$(nproc)
if [ "$ncpu" -ge 2 ]; then
    out=$(run "$MPIRUN" --host localhost:2 -np 2 --bind-to core sh -c 'grep Cpus_allowed_list /proc/self/status' | awk '{print $2}' | sort -u | wc -l)
    [ "$out" -eq 2 ] || fail "--bind-to core: ranks did not get distinct cores"
    out=$(run "$MPIRUN" -np 1 --bind-to none sh -c 'grep Cpus_allowed_list /proc/self/status' | awk '{print $2}')
    [ "$out" = "$(grep Cpus_allowed_list /proc/self/status | awk '{print $2}')" ] || fail "--bind-to none still bound: $out"
    # --report-bindings says it, on stderr, and matches what the rank sees.
    out=$(run "$MPIRUN" --host localhost:2 -np 2 --report-bindings sh -c 'grep Cpus_allowed_list /proc/self/status' 2>&1)
    for r in 0 1; do
        expect_in "mpirun: rank $r on host localhost: bound to core $r (processing unit" "$out" "--report-bindings"
    done
    out=$(run "$MPIRUN" -np 1 --bind-to none --report-bindings true 2>&1)
    expect_in "mpirun: rank 0 on host localhost: not bound" "$out" "--report-bindings unbound"
fi; ok

# --timeout ends a job that runs too long.
start=$(date +%s)
out=$(run "$MPIRUN" -np 1 --timeout 1 sleep 30 2>&1)
rc=$?
[ $rc -eq 124 ] || fail "--timeout: expected 124, got $rc: $out"
expect_in "ran past --timeout 1 seconds" "$out" "--timeout"
[ $(( $(date +%s) - start )) -lt 10 ] || fail "--timeout took too long"
# MPIEXEC_TIMEOUT (Open MPI's and MPICH's) when --timeout is not given; checked the same way.
out=$(MPIEXEC_TIMEOUT=1 run "$MPIRUN" -np 1 sleep 30 2>&1)
rc=$?
[ $rc -eq 124 ] || fail "MPIEXEC_TIMEOUT: expected 124, got $rc: $out"
expect_in "ran past MPIEXEC_TIMEOUT 1 seconds" "$out" "MPIEXEC_TIMEOUT's message"
out=$(MPIEXEC_TIMEOUT=soon run "$MPIRUN" -np 1 true 2>&1) && fail "MPIEXEC_TIMEOUT=soon accepted"
expect_in "MPIEXEC_TIMEOUT 'soon': expected a number of seconds" "$out" "MPIEXEC_TIMEOUT"; ok

# SIGTERM to mpirun reaches every rank.
"$MPIRUN" --host localhost:2 -np 2 sh -c 'trap "echo got-term-$MPIRUN_RANK; exit 0" TERM; sleep 30 & wait' >"$TEST_TMP/term.out" 2>&1 &
mp=$!
sleep 1
kill -TERM $mp
wait $mp
rc=$?
[ $rc -eq 143 ] || fail "SIGTERM: mpirun exited $rc, expected 143"
grep -q got-term-0 "$TEST_TMP/term.out" && grep -q got-term-1 "$TEST_TMP/term.out" || fail "SIGTERM did not reach every rank: $(cat "$TEST_TMP/term.out")"; ok

# Bad input: an unknown option, no program, a missing executable.
out=$(run "$MPIRUN" --frobnicate -np 2 true 2>&1); rc=$?
[ $rc -eq 1 ] || fail "bad option: rc $rc"
expect_in "unknown option '--frobnicate'" "$out" "bad option"
out=$(run "$MPIRUN" -np 2 2>&1) && fail "no program accepted"
expect_in "no program to run" "$out" "no program"
out=$(run "$MPIRUN" -np 2 /nonexistent/prog 2>&1); rc=$?
[ $rc -eq 127 ] || fail "missing executable: rc $rc"
expect_in "cannot run '/nonexistent/prog': no such executable file" "$out" "missing executable"
out=$(run "$MPIRUN" -np 0 true 2>&1) && fail "-np 0 accepted"
expect_in "-np needs a positive number of ranks" "$out" "-np 0"
out=$(run "$MPIRUN" --host 'bad host' true 2>&1) && fail "bad host accepted"
expect_in "is not a host name" "$out" "bad host"; ok

# Numeric options: non-finite and out-of-range values are refused with the option, the
# value and the range (--timeout inf or 1e30 once ended the job at once, nan meant no limit).
for v in inf 1e30 nan -1 0 '' 5x 31536001; do
    out=$(run "$MPIRUN" -np 1 --timeout "$v" true 2>&1); rc=$?
    [ $rc -eq 1 ] || fail "--timeout '$v': rc $rc: $out"
    expect_in "--timeout '$v': expected a number of seconds greater than 0 and at most 31536000" "$out" "--timeout $v"
done
out=$(run "$MPIRUN" -np 1 --timeout=2.5 sh -c 'echo fine' 2>&1) || fail "--timeout 2.5 refused: $out"
expect_in "fine" "$out" "--timeout 2.5"
for v in nan inf 0 3601; do
    out=$(run "$MPIRUN" -np 1 --bootstrap-timeout "$v" true 2>&1) && fail "--bootstrap-timeout $v accepted"
    expect_in "--bootstrap-timeout '$v': expected a number of seconds greater than 0 and at most 3600" "$out" "--bootstrap-timeout $v"
done
for v in 0 2G -1 1x 99999999999999999999; do
    out=$(run "$MPIRUN" -np 1 --bootstrap-max-size "$v" true 2>&1) && fail "--bootstrap-max-size $v accepted"
    expect_in "--bootstrap-max-size '$v': expected a number of bytes from 1 to 1073741824 (K, M and G suffixes allowed)" "$out" "--bootstrap-max-size $v"
done
run "$MPIRUN" -np 1 --bootstrap-max-size 64K --bootstrap-timeout 0.5 true || fail "valid bootstrap bounds refused"; ok

# A boot selection that would not bootstrap through mpirun is refused before anything
# starts (--mca boot singleton once ran unrelated singletons and exited 0).
out=$(run "$MPIRUN" -np 2 --mca boot singleton echo started 2>&1); rc=$?
[ $rc -eq 1 ] || fail "--mca boot singleton: rc $rc: $out"
expect_in "--mca boot 'singleton' would keep the ranks from bootstrapping through mpirun (boot component pmgr)" "$out" "boot singleton"
expect_not_in "started" "$out" "boot singleton launched ranks"
out=$(run "$MPIRUN" -np 2 --mca boot ^pmgr true 2>&1) && fail "--mca boot ^pmgr accepted"
expect_in "--mca boot '^pmgr' would keep" "$out" "boot ^pmgr"
out=$(run "$MPIRUN" -np 2 -x WEFT_MCA_boot=pmi true 2>&1) && fail "-x WEFT_MCA_boot=pmi accepted"
expect_in "-x WEFT_MCA_boot 'pmi' would keep" "$out" "-x boot"
out=$(WEFT_MCA_boot=singleton run "$MPIRUN" -np 2 true 2>&1) && fail "WEFT_MCA_boot=singleton accepted"
expect_in "WEFT_MCA_boot 'singleton' would keep" "$out" "environment boot"
run "$MPIRUN" -np 2 --oversubscribe --mca boot pmgr true || fail "--mca boot pmgr refused"
WEFT_MCA_boot=singleton run "$MPIRUN" -np 1 --mca boot pmgr,singleton true || fail "--mca boot over the environment"; ok

# Host files must be regular files of a bounded size: a directory, a FIFO (which once
# blocked), a device and a file over 1 MiB are refused at once.
mkfifo "$TEST_TMP/fifo"
for f in "$TEST_TMP" "$TEST_TMP/fifo" /dev/zero; do
    out=$(run "$MPIRUN" --hostfile "$f" true 2>&1) && fail "hostfile $f accepted"
    expect_in "--hostfile $f: not a regular file" "$out" "hostfile $f"
done
head -c 1048577 /dev/zero | tr '\0' '#' >"$TEST_TMP/bighosts"
out=$(run "$MPIRUN" --hostfile "$TEST_TMP/bighosts" true 2>&1) && fail "a 1 MiB + 1 hostfile accepted"
expect_in "1048577 bytes, more than the 1048576 bytes a host file may have" "$out" "big hostfile"; ok

# With every rank on this machine, mpirun's bootstrap listener is on loopback only.
out=$(run "$MPIRUN" -np 1 sh -c 'printf "%04X" "$MPIRUN_PORT"; echo; cat /proc/net/tcp')
port=$(echo "$out" | head -n 1)
listen=$(echo "$out" | awk -v p=":$port" '$2 ~ p"$" && $4 == "0A" {print $2}')
[ "$listen" = "0100007F:$port" ] || fail "bootstrap listener: expected 127.0.0.1, got '$listen'"; ok

run "$MPIRUN" --version | grep -q "mpirun (Weft)" || fail "--version"
run "$MPIRUN" --help | grep -q -- "--launch-agent" || fail "--help"; ok
echo "mpirun: $checks groups of checks passed"
