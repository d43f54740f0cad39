#!/bin/sh
# Clean-up that cannot miss: a rank killed with SIGKILL at a random point (in MPI_Init, in
# traffic that makes and frees communicators, in MPI_Finalize) leaves no file of its job in
# /dev/shm (btl/sm and coll/sm segments) nor in a segment directory given with --mca
# btl_sm_segment_dir, once mpirun has ended.
. "${WEFT_TEST_SRCDIR:?}/test/lib.sh"
export WEFT_MCA_mca_base_component_path="${WEFT_TEST_COMPONENT_PATH:?}"
MPIRUN="$WEFT_TEST_BUILDDIR/mpirun"
PROG="$WEFT_TEST_BUILDDIR/test/integration/mpi_kill_points"
SEGDIR="$TEST_TMP/segments"
mkdir -p "$SEGDIR"

# job WHAT ENV... : run 3 ranks over sm with the given environment; it must leave nothing
# behind, and fail unless the kill came too late to land (only in MPI_Finalize).
runs=0 killed=0
job() {
    what=$1
    shift
    # shellcheck disable=SC2086
    if out=$(env "$@" timeout 60 "$MPIRUN" -np 3 --oversubscribe --timeout 30 --mca btl self,sm \
        $segdir_opt "$PROG" 2>&1); then
        case "$what" in
        *finalize*) expect_in "no kill" "$out" "$what" ;;
        *) fail "$what: the job with a killed rank succeeded: $out" ;;
        esac
    else
        killed=$((killed + 1))
    fi
    id=$(echo "$out" | sed -n 's/^job \([0-9][0-9]*\)$/\1/p' | head -n 1)
    [ -n "$id" ] || fail "$what: the job did not say its id: $out"
    left=$(ls /dev/shm 2>/dev/null | grep "^weft-pmgr-$id-")
    [ -z "$left" ] || fail "$what: left in /dev/shm: $left"
    left=$(ls -A "$SEGDIR")
    [ -z "$left" ] || fail "$what: left in $SEGDIR: $left"
    runs=$((runs + 1))
}

# Deterministic: a rank dies inside MPI_Init the moment its btl/sm segment file appears, so the
# file is there and only the rank itself would have removed it.
for segdir_opt in "" "--mca btl_sm_segment_dir $SEGDIR"; do
    for rank in 0 2; do
        job "rank $rank killed in MPI_Init as its segment appeared (${segdir_opt:-/dev/shm})" \
            WEFT_TEST_KILL_AT=segment WEFT_TEST_KILL_RANK=$rank
    done
done
# Random points: phase, rank and delay.
i=0
while [ $i -lt 9 ]; do
    r=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
    phase=$(echo "init traffic finalize" | cut -d' ' -f$((i % 3 + 1)))
    rank=$((r % 3))
    case $phase in
    init) us=$((r / 3 % 60000)) ;;
    traffic) us=$((r / 3 % 200000)) ;;
    finalize) us=$((r / 3 % 3000)) ;;
    esac
    if [ $((i % 2)) -eq 0 ]; then segdir_opt="--mca btl_sm_segment_dir $SEGDIR"; else segdir_opt=""; fi
    job "rank $rank killed ${us}us into $phase (${segdir_opt:-/dev/shm})" \
        WEFT_TEST_KILL_AT=$phase WEFT_TEST_KILL_RANK=$rank WEFT_TEST_KILL_US=$us
    i=$((i + 1))
done
echo "job files clean-up: $runs jobs with a rank sent SIGKILL (4 as its segment appeared, the rest at random points in MPI_Init, traffic and MPI_Finalize; $killed ended by it) left no file in /dev/shm or in btl_sm_segment_dir"
