#!/bin/sh
# pml/bfo's fault matrix: every fragment type x every fault mode (lost, delivered-and-failed,
# rail down) x the rank that injects it (0 or 1: mpi_bfo_trials sends both ways, so each rank
# is the sender of some messages and the receiver of others, and sends each type) x two or
# three rails. The types: MATCH, RNDV, FRAG and ACK over plain tcp rails (eager and the
# send/receive pipeline); with btl_tcp_rdma (put and get over tcp), RGET, FIN and RDMA get
# where the rails only get (RDMA direct get), PUT, FIN and RDMA put where they only put (RDMA
# direct put). A failed PUT, RDMA get or RDMA put runs the restart dance (the seed's way, the
# default); the cells of pml_bfo_rdma_recovery resume (only the failed piece moves again) repeat
# them over two rails. Each cell is one job of random traffic (sizes from empty to 1 MiB, tags,
# ANY_SOURCE, blocking and non-blocking, three communicators; every byte checked, and no
# message left over, which a duplicate would be) in which the fault must fire. Every message
# arrives exactly once and intact and the job finishes in every cell.
. "${WEFT_TEST_SRCDIR:?}/test/lib.sh"
MPIRUN="$WEFT_TEST_BUILDDIR/mpirun"
export WEFT_MCA_mca_base_component_path="${WEFT_TEST_COMPONENT_PATH:?}"
netns_rails m 3
PROG="$WEFT_TEST_BUILDDIR/test/integration/mpi_bfo_trials"
SEED=3 ROUNDS=30
cells=0
# cell RAILS RDMA_OPTIONS TYPE MODE RANK
cell() {
    include=rail1,rail2
    [ "$1" = 3 ] && include=rail1,rail2,rail3
    # On the first rail: the eager rail (MATCH, RNDV, RGET, ACK, PUT, FIN), and the one that
    # carries the FRAGs of a pipeline of up to 1 MiB (larger ones stripe: mpi_bfo.sh has a FRAG
    # fault on the second rail) and its share of the RDMA.
    rail=tcp:0
    fault="$2 --mca btl_base_fault_rail $rail --mca btl_base_fault_type $3 --mca btl_base_fault_mode $4 --mca btl_base_fault_after 2 --mca btl_base_fault_rank $5"
    name="$1 rails${2:+ (${2#--mca })}, $3 $4 at rank $5 on $rail"
    verbose=10
    [ -z "${6:-}" ] || verbose=30
    # shellcheck disable=SC2086
    out=$(run ip netns exec "$hub" "$MPIRUN" --host "$ha:1,$hb:1" -np 2 \
        --launch-agent 'ip netns exec {host}' --bootstrap-addr "$net.1" --timeout 60 \
        -x WEFT_MCA_mca_base_component_path --mca btl self,tcp \
        --mca btl_tcp_if_include "$include" --mca pml bfo --mca pml_bfo_verbose "$verbose" \
        $fault "$PROG" "$SEED" "$ROUNDS" 2>&1) ||
        fail "$name: the job failed; replay: mpirun ... --mca btl_tcp_if_include $include --mca pml bfo $fault mpi_bfo_trials $SEED $ROUNDS
$out"
    expect_in "mpi_bfo_trials: seed $SEED: $ROUNDS rounds," "$out" "$name"
    expect_in "fault injection on btl/$rail (rank $5" "$out" "$name: the fault fired"
    expect_in "mapped out for" "$out" "$name: the rail mapped out"
    # $6: what the recovery must say it did (at verbose level 30).
    [ -z "${6:-}" ] || expect_in "$6" "$out" "$name: the recovery"
    echo "$name: fault fired, rail mapped out, every message intact, none twice"
    cells=$((cells + 1))
}
GET="--mca btl_tcp_rdma 1 --mca btl_tcp_flags send,get"
PUT="--mca btl_tcp_rdma 1 --mca btl_tcp_flags send,put"
for rails in 2 3; do
    for mode in lost delivered rail_down; do
        for rank in 0 1; do
            for type in match rndv frag ack; do
                cell "$rails" "" "$type" "$mode" "$rank"
            done
            for type in rget fin rdma_get; do
                cell "$rails" "$GET" "$type" "$mode" "$rank"
            done
            for type in put fin rdma_put; do
                cell "$rails" "$PUT" "$type" "$mode" "$rank"
            done
        done
    done
done
RESUME="--mca pml_bfo_rdma_recovery resume"
for mode in lost delivered rail_down; do
    for rank in 0 1; do
        # A failed RDMA operation (not a rail that goes down under it) is recovered by resume.
        said="failed; the piece goes as FRAGs"
        [ "$mode" = rail_down ] && said=""
        cell 2 "$GET $RESUME" rdma_get "$mode" "$rank" "$said"
        cell 2 "$PUT $RESUME" put "$mode" "$rank"
        cell 2 "$PUT $RESUME" rdma_put "$mode" "$rank" "$said"
    done
done
echo "pml/bfo fault matrix: $cells cells (MATCH, RNDV, FRAG, ACK; with put/get over tcp RGET, PUT, FIN, RDMA get, RDMA put x lost, delivered, rail down x injected at rank 0 or 1 x 2 or 3 tcp rails; PUT, RDMA get and RDMA put again with rdma_recovery resume), random traffic both ways: every message once and intact, every job finished"
