#!/bin/sh
# The component developer kit: build examples/component out of tree with only
# pkg-config and its short Makefile, put it on the component path, select it
# through --mca, and see it in weft_info with its parameters.
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
expect_in "MCA btl: example (MCA v3.0, API v1.1, Component v0.1.0)" "$out" "component line"
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
echo "out-of-tree component: built, installed, listed, selected"
