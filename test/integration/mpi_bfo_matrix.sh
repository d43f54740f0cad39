#!/bin/sh
# pml/bfo's fault matrix: every fragment type the tcp rails carry (MATCH, RNDV, FRAG, ACK) x
# every fault mode (lost, delivered-and-failed, rail down) x the rank that injects it (0 or 1:
# mpi_bfo_trials sends both ways, so each rank is the sender of some messages and the receiver
# of others, and sends each of these types) x two or three rails. Each cell is one job of
# random traffic (sizes from empty to 1 MiB, so eager and the send/receive pipeline; tags,
# ANY_SOURCE, blocking and non-blocking, three communicators; every byte checked, and no
# message left over, which a duplicate would be) in which the fault must fire. Every message
# arrives exactly once and intact and the job finishes in every cell. (RGET, PUT, FIN and RDMA
# fragments need a rail with put/get, which btl/tcp is not: mca/pml/bfo/README.md.)
. "${WEFT_TEST_SRCDIR:?}/test/lib.sh"
MPIRUN="$WEFT_TEST_BUILDDIR/mpirun"
export WEFT_MCA_mca_base_component_path="${WEFT_TEST_COMPONENT_PATH:?}"
netns_rails m 3
PROG="$WEFT_TEST_BUILDDIR/test/integration/mpi_bfo_trials"
SEED=3 ROUNDS=30
cells=0
for rails in 2 3; do
    include=rail1,rail2
    [ "$rails" = 3 ] && include=rail1,rail2,rail3
    for type in match rndv frag ack; do
        # On the first rail: the eager rail (MATCH, RNDV, ACK), and the one that carries the
        # FRAGs of a pipeline of up to 1 MiB (larger ones stripe: mpi_bfo.sh has a FRAG fault
        # on the second rail).
        rail=tcp:0
        for mode in lost delivered rail_down; do
            for rank in 0 1; do
                fault="--mca btl_base_fault_rail $rail --mca btl_base_fault_type $type --mca btl_base_fault_mode $mode --mca btl_base_fault_after 2 --mca btl_base_fault_rank $rank"
                name="$rails rails, $type $mode at rank $rank on $rail"
                # shellcheck disable=SC2086
                out=$(run ip netns exec "$hub" "$MPIRUN" --host "$ha:1,$hb:1" -np 2 \
                    --launch-agent 'ip netns exec {host}' --bootstrap-addr "$net.1" --timeout 60 \
                    -x WEFT_MCA_mca_base_component_path --mca btl self,tcp \
                    --mca btl_tcp_if_include "$include" --mca pml bfo --mca pml_bfo_verbose 10 \
                    $fault "$PROG" "$SEED" "$ROUNDS" 2>&1) ||
                    fail "$name: the job failed; replay: mpirun ... --mca btl_tcp_if_include $include --mca pml bfo $fault mpi_bfo_trials $SEED $ROUNDS
$out"
                expect_in "mpi_bfo_trials: seed $SEED: $ROUNDS rounds," "$out" "$name"
                expect_in "fault injection on btl/$rail (rank $rank" "$out" "$name: the fault fired"
                expect_in "mapped out for" "$out" "$name: the rail mapped out"
                echo "$name: fault fired, rail mapped out, every message intact, none twice"
                cells=$((cells + 1))
            done
        done
    done
done
echo "pml/bfo fault matrix: $cells cells (MATCH, RNDV, FRAG, ACK x lost, delivered, rail down x injected at rank 0 or 1 x 2 or 3 tcp rails), random traffic both ways: every message once and intact, every job finished"
