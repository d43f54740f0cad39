#!/bin/sh
# Weft programs bootstrapping through PMI under real launchers: Slurm's
# srun --mpi=pmi2 (PMI-2) and MPICH's hydra (PMI-1 over PMI_FD and PMI_PORT,
# and PMI-2), exchanging data through the KVS; and the classic PMGR client
# with MPIRUN_USE_PMI=1. A launcher that is not here is skipped, unless
# WEFT_TEST_REQUIRE_SLURM=1 (set by .ci/run, which starts a Slurm).
. "${WEFT_TEST_SRCDIR:?}/test/lib.sh"
export WEFT_MCA_mca_base_component_path="${WEFT_TEST_COMPONENT_PATH:?}"
EX="$WEFT_TEST_BUILDDIR/test/integration/boot_exchange"
PC="$WEFT_TEST_BUILDDIR/test/integration/pmgr_collectives"
ran=""

if command -v mpiexec.hydra >/dev/null 2>&1; then
    out=$(run mpiexec.hydra -n 4 "$EX" 3000 2>&1) || fail "hydra PMI-1 (fd): $out"
    expect_in "boot/pmi, 4 ranks" "$out" "hydra PMI-1"
    out=$(run mpiexec.hydra -pmi-port -n 3 "$EX" 100 2>&1) || fail "hydra PMI-1 (port): $out"
    expect_in "boot/pmi, 3 ranks" "$out" "hydra PMI_PORT"
    out=$(run mpiexec.hydra -n 2 -genv WEFT_MCA_boot_pmi_version 2 "$EX" 600 2>&1) || fail "hydra PMI-2: $out"
    expect_in "boot/pmi, 2 ranks" "$out" "hydra PMI-2"
    out=$(run mpiexec.hydra -n 5 -genv MPIRUN_USE_PMI 1 "$PC" 2>&1) || fail "PMGR over hydra's PMI: $out"
    expect_in "pmgr collectives: 5 ranks, every call right" "$out" "MPIRUN_USE_PMI under hydra"
    ran="$ran hydra"
fi

slurm_up=no
if command -v srun >/dev/null 2>&1 && [ -n "${SLURM_CONF:-}" ] && sinfo -h -o %T 2>/dev/null | grep -q idle; then
    slurm_up=yes
fi
if [ "$slurm_up" = yes ]; then
    out=$(run srun -O --mpi=pmi2 -n 4 "$EX" 3000 2>&1) || fail "srun --mpi=pmi2: $out"
    expect_in "boot/pmi, 4 ranks" "$out" "srun pmi2"
    out=$(run srun -O --mpi=pmi2 -n 4 env MPIRUN_USE_PMI=1 "$PC" 2>&1) || fail "PMGR over Slurm's PMI: $out"
    expect_in "pmgr collectives: 4 ranks, every call right" "$out" "MPIRUN_USE_PMI under srun"
    ran="$ran slurm"
elif [ "${WEFT_TEST_REQUIRE_SLURM:-0}" = 1 ]; then
    fail "WEFT_TEST_REQUIRE_SLURM=1 but no usable Slurm (SLURM_CONF=${SLURM_CONF:-unset})"
fi
if [ -z "$ran" ]; then
    echo "SKIP: neither Slurm nor mpiexec.hydra is here"
    exit 77
fi
echo "PMI bootstrap with data checks under:$ran"
