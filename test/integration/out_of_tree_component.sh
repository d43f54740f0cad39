#!/bin/sh
# The component developer kit: build examples/component out of tree with only
# pkg-config and its short Makefile, put it on the component path, select it
# through --mca, and see it in weft_info with its parameters. Then the same for
# examples/coll_component, a coll component whose allreduce a job uses.
. "${WEFT_TEST_SRCDIR:?}/test/lib.sh"

cp -r "$WEFT_TEST_SRCDIR/examples/component" "$TEST_TMP/src"
chmod -R u+w "$TEST_TMP/src"
# weft-mca-uninstalled.pc describes this build tree.
export PKG_CONFIG_PATH="$WEFT_TEST_BUILDDIR"
out=$(run make -C "$TEST_TMP/src" CFLAGS="-O2 -Wall -Wextra -Werror" 2>&1) || fail "build failed: $out"
out=$(run make -C "$TEST_TMP/src" install COMPONENTDIR="$TEST_TMP/components" 2>&1) || fail "install failed: $out"
[ -f "$TEST_TMP/components/mca_btl_example.so" ] || fail "make install did not install the .so"

export WEFT_MCA_mca_base_component_path="$TEST_TMP/components"
out=$(run "$WEFT_INFO" 2>&1) || fail "weft_info failed: $out"
# The BTL API version of the installed header the example was built against.
api=$(sed -n 's/^#define WEFT_BTL_ABI_MAJOR \([0-9]*\).*/\1/p; s/^#define WEFT_BTL_ABI_MINOR \([0-9]*\).*/\1/p' "$WEFT_TEST_SRCDIR/mca/btl/btl.h" | paste -sd.)
expect_in "MCA btl: example (MCA v3.1, API v$api, Component v0.1.0)" "$out" "component line"
expect_not_in "warning" "$out" "weft_info output"

out=$(run "$WEFT_INFO" --param btl example --level 9 2>&1) || fail "--param failed: $out"
expect_in 'parameter "btl_example_priority" (current value: "1", source: default)' "$out" "--param"
expect_in 'parameter "btl_example_greeting"' "$out" "--param"

# Selected through --mca, with its greeting when verbose.
out=$(run "$WEFT_INFO" --select btl --mca btl example --mca btl_base_verbose 1 2>&1) || fail "--select failed: $out"
expect_in "btl: selected example" "$out" "--select"
expect_in "hello from btl/example" "$out" "--select verbose"

# Its parameter through the environment; a negative priority makes it refuse,
# and naming it is then an error that says why.
out=$(WEFT_MCA_btl_example_priority=-1 run "$WEFT_INFO" --select btl --mca btl example 2>&1) && fail "a refusing component was selected: $out"
expect_in "btl/example: btl_example_priority is negative (-1)" "$out" "refusal"

# The default component path includes ~/.weft/components.
unset WEFT_MCA_mca_base_component_path
mkdir -p "$HOME/.weft/components"
cp "$TEST_TMP/components/mca_btl_example.so" "$HOME/.weft/components/"
out=$(run "$WEFT_INFO" --components 2>&1) || fail "weft_info failed: $out"
expect_in "MCA btl: example" "$out" "home component directory"

# coll/example, built the same way, serves the allreduces of every intracommunicator (priority
# 50, above coll/sm's 30 and coll/basic's 10) and leaves every other operation where it was;
# it declines allreduces above coll_example_max_bytes, which coll/sm or coll/basic then serve. mpi_coll
# checks every result against its serial reference.
cp -r "$WEFT_TEST_SRCDIR/examples/coll_component" "$TEST_TMP/coll_src"
chmod -R u+w "$TEST_TMP/coll_src"
out=$(run make -C "$TEST_TMP/coll_src" CFLAGS="-O2 -Wall -Wextra -Werror" 2>&1) || fail "coll build failed: $out"
out=$(run make -C "$TEST_TMP/coll_src" install COMPONENTDIR="$TEST_TMP/coll_components" 2>&1) ||
    fail "coll install failed: $out"
[ -f "$TEST_TMP/coll_components/mca_coll_example.so" ] || fail "make install did not install mca_coll_example.so"
out=$(WEFT_MCA_mca_base_component_path="${WEFT_TEST_COMPONENT_PATH:?}:$TEST_TMP/coll_components" run \
    "$WEFT_TEST_BUILDDIR/mpirun" -np 3 --oversubscribe --timeout 100 --mca coll_base_verbose 10 \
    "$WEFT_TEST_BUILDDIR/test/integration/mpi_coll" 2>&1) || fail "mpi_coll with coll/example: $out"
expect_in "mpi_coll: 3 ranks," "$out" "mpi_coll with coll/example"
expect_in "MPI_COMM_WORLD (3 ranks): barrier=sm bcast=sm reduce=sm allreduce=example gather=basic" \
    "$out" "coll/example's allreduce chosen, the other operations kept"
expect_in "iallreduce=basic" "$out" "coll/example offers no iallreduce"
served=$(echo "$out" | sed -n 's/.*coll\/example: served \([0-9]*\) allreduce calls, declined \([0-9]*\).*/\1 \2/p' | head -n 1)
[ -n "$served" ] || fail "coll/example did not report its calls: $out"
[ "${served% *}" -gt 0 ] || fail "coll/example served no allreduce: $served"
[ "${served#* }" -gt 0 ] || fail "coll/example declined no large allreduce: $served"
expect_not_in "error" "$out" "mpi_coll with coll/example"
# pml/example: the engine of the ob1-style PMLs from the installed headers with a policy of its
# own, built the same way (C++20), selected with --mca pml example; mpi_rndv checks every byte
# of eager and rendezvous messages, and the example counts its rendezvous headers' completions
# (its policy's completion seam). Its parameters are the engine's, under its name.
cp -r "$WEFT_TEST_SRCDIR/examples/pml_component" "$TEST_TMP/pml_src"
chmod -R u+w "$TEST_TMP/pml_src"
out=$(run make -C "$TEST_TMP/pml_src" CXXFLAGS="-O2 -Wall -Wextra -Werror" 2>&1) || fail "pml build failed: $out"
out=$(run make -C "$TEST_TMP/pml_src" install COMPONENTDIR="$TEST_TMP/pml_components" 2>&1) ||
    fail "pml install failed: $out"
[ -f "$TEST_TMP/pml_components/mca_pml_example.so" ] || fail "make install did not install mca_pml_example.so"
nm -D --defined-only "$TEST_TMP/pml_components/mca_pml_example.so" | grep -q ' mca_pml_example_component$' ||
    fail "pml/example does not export its descriptor"
paths="${WEFT_TEST_COMPONENT_PATH:?}:$TEST_TMP/pml_components"
out=$(WEFT_MCA_mca_base_component_path="$paths" run "$WEFT_INFO" --param pml example --level 9 2>&1) ||
    fail "weft_info --param pml example: $out"
expect_in 'parameter "pml_example_send_pipeline_depth"' "$out" "pml/example parameters"
out=$(WEFT_MCA_mca_base_component_path="$paths" run "$WEFT_TEST_BUILDDIR/mpirun" -np 2 --timeout 60 \
    --mca pml example --mca pml_example_verbose 1 --mca pml_base_verbose 10 \
    "$WEFT_TEST_BUILDDIR/test/integration/mpi_rndv" 1000 100000 2>&1) || fail "mpi_rndv with pml/example: $out"
expect_in "mpi_rndv: 2 ranks, 8 messages intact" "$out" "pml/example"
expect_in "pml/example: 4 rendezvous headers completed, 0 in error" "$out" "pml/example completions"
expect_in "selected example" "$out" "pml/example selected"
out=$(WEFT_MCA_mca_base_component_path="$paths" run "$WEFT_TEST_BUILDDIR/mpirun" -np 4 --oversubscribe \
    --timeout 60 --mca pml example "$WEFT_TEST_BUILDDIR/examples/ring" 2>&1) || fail "ring with pml/example: $out"
expect_in "ring: 4 ranks, 10 laps, token 40 (expected 40)" "$out" "ring with pml/example"
echo "out-of-tree components: btl/example built, installed, listed, selected; coll/example built and served ${served% *} allreduces of mpi_coll (declined ${served#* }), every result right; pml/example built from the installed engine, selected, every byte of mpi_rndv and ring right"
