#!/bin/sh
# weft_info as a user runs it: build info, component lines, --param with
# values and sources, --parsable, --config round trip, errors and exit codes.
. "${WEFT_TEST_SRCDIR:?}/test/lib.sh"
export WEFT_MCA_mca_base_component_path="${WEFT_TEST_FIXTURE_DIR:?}"

out=$(run "$WEFT_INFO" 2>/dev/null) || fail "weft_info failed"
expect_in "Package: Weft" "$out" "build info"
expect_in "Frameworks: boot, pml, bml, btl, mtl, coll" "$out" "frameworks"
expect_in "   MCA btl: alpha (MCA v3.1, API v1.0, Component v1.2.3)" "$out" "component line"
expect_in "   MCA pml: dup (MCA v3.1, API v1.0, Component v1.2.3)" "$out" "component line"
expect_not_in "MCA btl: oldabi" "$out" "rejected component listed"
err=$(run "$WEFT_INFO" 2>&1 >/dev/null)
expect_in "btl/oldabi: built for MCA ABI 2.0, this is 3.1;" "$err" "rejection warning"

out=$(run "$WEFT_INFO" --parsable 2>/dev/null) || fail "--parsable failed"
expect_in "mca:btl:alpha:version:component:1.2.3" "$out" "parsable component"
expect_in "mca:btl:oldabi:rejected:built for MCA ABI 2.0, this is 3.1" "$out" "parsable rejection"
expect_in "framework:btl:api:1.5" "$out" "parsable framework"
expect_in "btl_openib_failover:" "$out" "parsable failover flag"
expect_in "ft_mpi_support:partial" "$out" "parsable FT support"

# --param: value, source, type, level, help; levels hide what is above.
out=$(run "$WEFT_INFO" --param btl alpha 2>/dev/null) || fail "--param failed"
expect_in "more parameters above level 1; use --level 9" "$out" "level hint"
expect_not_in "btl_alpha_eager_limit" "$out" "level 1 listing"
out=$(run "$WEFT_INFO" --param btl alpha --level 9 2>/dev/null)
expect_in 'parameter "btl_alpha_eager_limit" (current value: "4k", source: default)' "$out" "--param value"
expect_in 'type size, level 4, scope all ranks equal, default "4k"' "$out" "--param details"
expect_in "Deprecated synonym: fixture_alpha_old_eager_limit" "$out" "--param synonym"
expect_in "Valid values: fast, safe" "$out" "--param enum"

# Sources and precedence, seen through weft_info.
key=mca:btl:alpha:param:btl_alpha_eager_limit
out=$(WEFT_MCA_btl_alpha_eager_limit=8k run "$WEFT_INFO" --parsable --param btl alpha --level 9)
expect_in "$key:value:8192" "$out" "env value"
expect_in "$key:source:environment" "$out" "env source"
out=$(WEFT_MCA_btl_alpha_eager_limit=8k run "$WEFT_INFO" --parsable --param btl alpha --level 9 --mca btl_alpha_eager_limit 1M)
expect_in "$key:value:1048576" "$out" "cmdline value"
expect_in "$key:source:command line" "$out" "cmdline source"

# --config prints a param file that reads back cleanly.
run "$WEFT_INFO" --config >"$TEST_TMP/params.conf" 2>"$TEST_TMP/err" || fail "--config failed"
# (the fixture directory holds broken components on purpose; they warn)
grep -v "oldabi\|newapi\|misnamed\|unresolved" "$TEST_TMP/err" | grep . && fail "--config warned"
grep -q '^btl_alpha_eager_limit = 4k$' "$TEST_TMP/params.conf" || fail "--config lacks btl_alpha_eager_limit"
sed -i 's/^btl_alpha_eager_limit = 4k$/btl_alpha_eager_limit = 16k/' "$TEST_TMP/params.conf"
out=$(WEFT_MCA_PARAM_FILES="$TEST_TMP/params.conf" run "$WEFT_INFO" --parsable --param all all --level 9 2>"$TEST_TMP/err") || fail "reading the --config file failed: $(cat "$TEST_TMP/err")"
expect_in "$key:value:16384" "$out" "edited config value"
expect_in "$key:source:file" "$out" "config source"
expect_not_in ":source:default" "$out" "every parameter from the file"
grep -v "oldabi\|newapi\|misnamed\|unresolved" "$TEST_TMP/err" | grep . && fail "reading the --config file warned"

# Bad values and unknown names: clear messages, exit status 1 / a warning.
out=$(WEFT_MCA_btl_alpha_eager_limit=lots run "$WEFT_INFO" --param btl alpha 2>&1) && fail "bad value accepted"
expect_in "parameter btl_alpha_eager_limit: value 'lots' from environment variable WEFT_MCA_btl_alpha_eager_limit is not valid: expected a size" "$out" "bad value"
out=$(run "$WEFT_INFO" --mca btl_alpha_eagr_limit 4 --components 2>&1) || fail "unknown name failed the run"
expect_in "unknown parameter btl_alpha_eagr_limit (from the command line); did you mean btl_alpha_eager_limit?" "$out" "suggestion"

# Selection through weft_info.
out=$(run "$WEFT_INFO" --select btl 2>/dev/null) || fail "--select btl failed"
expect_in "btl: selected alpha,beta" "$out" "select all"
out=$(run "$WEFT_INFO" --select btl --mca btl 'alpha,^beta' 2>&1) && fail "bad ^ accepted"
expect_in "'^' may only start the list" "$out" "bad caret"
out=$(run "$WEFT_INFO" --select pml --mca pml nosuch 2>&1) && fail "unknown component accepted"
expect_in "there is no pml component 'nosuch' (available: dup)" "$out" "unknown component"

# Usage errors exit 2.
run "$WEFT_INFO" --level 12 >/dev/null 2>&1; [ $? -eq 2 ] || fail "--level 12 did not exit 2"
run "$WEFT_INFO" --bogus >/dev/null 2>&1; [ $? -eq 2 ] || fail "--bogus did not exit 2"
run "$WEFT_INFO" --param nosuch all >/dev/null 2>&1; [ $? -eq 2 ] || fail "--param nosuch did not exit 2"
out=$(run "$WEFT_INFO" --param mpi all --level 9 2>/dev/null) || fail "--param mpi all failed"
expect_in 'parameter "mpi_leave_pinned"' "$out" "the MPI layer's parameters"
# A declared range is shown, in both forms.
out=$(WEFT_MCA_mca_base_component_path="$WEFT_TEST_COMPONENT_PATH" run "$WEFT_INFO" --param btl sm --level 9 2>/dev/null) ||
    fail "--param btl sm failed"
expect_in "Range: 64..1M" "$out" "--param range"
out=$(WEFT_MCA_mca_base_component_path="$WEFT_TEST_COMPONENT_PATH" run "$WEFT_INFO" --parsable --param btl sm --level 9 2>/dev/null) ||
    fail "--parsable --param btl sm failed"
expect_in "mca:btl:sm:param:btl_sm_free_list_max:range:1..8191" "$out" "--parsable range"
# btl/sm says how large messages move on this host: what auto measured (remembered in a file
# of this test's), or the mechanism forced; it is information, which no source may set.
cal="$TEST_TMP/sm-calibration"
out=$(WEFT_MCA_mca_base_component_path="$WEFT_TEST_COMPONENT_PATH" WEFT_MCA_btl_sm_calibration_file="$cal" \
    run "$WEFT_INFO" --param btl sm --level 9 2>&1) || fail "--param btl sm with a calibration file: $out"
expect_in 'parameter "btl_sm_single_copy_choice" (current value: "auto: alone: ' "$out" "sm's choice shown"
expect_in "rates measured now, remembered in $cal" "$out" "sm's choice measured"
expect_in "information (read only)" "$out" "sm's choice is information"
out=$(WEFT_MCA_mca_base_component_path="$WEFT_TEST_COMPONENT_PATH" WEFT_MCA_btl_sm_calibration_file="$cal" \
    run "$WEFT_INFO" --param btl sm --level 9 2>&1) || fail "--param btl sm again: $out"
expect_in "rates remembered in $cal" "$out" "sm's choice remembered"
out=$(WEFT_MCA_mca_base_component_path="$WEFT_TEST_COMPONENT_PATH" \
    run "$WEFT_INFO" --parsable --param btl sm --level 9 --mca btl_sm_single_copy_mechanism none --mca btl_sm_pool_stores cached 2>&1) ||
    fail "--param btl sm, none: $out"
expect_in "mca:btl:sm:param:btl_sm_single_copy_choice:value:none (forced by btl_sm_single_copy_mechanism); the pipeline writes with cached stores (forced by btl_sm_pool_stores)" "$out" "sm's forced choice"
expect_in "mca:btl:sm:param:btl_sm_single_copy_choice:scope:information" "$out" "parsable information scope"
# A forced mechanism with the stores left to auto: those are measured (the file already is).
out=$(WEFT_MCA_mca_base_component_path="$WEFT_TEST_COMPONENT_PATH" WEFT_MCA_btl_sm_calibration_file="$cal" \
    run "$WEFT_INFO" --param btl sm --level 9 --mca btl_sm_single_copy_mechanism cma 2>&1) ||
    fail "--param btl sm, cma: $out"
expect_in "cma (forced by btl_sm_single_copy_mechanism); the pipeline writes with " "$out" "sm's forced choice, stores measured"
expect_in "(btl_sm_pool_stores auto: auto: alone: " "$out" "sm's forced choice, stores measured"
# A selection without sm measures nothing.
for sel in self,tcp ^sm; do
    out=$(WEFT_MCA_mca_base_component_path="$WEFT_TEST_COMPONENT_PATH" WEFT_MCA_btl_sm_calibration_file="$TEST_TMP/unused" \
        run "$WEFT_INFO" --parsable --param btl sm --level 9 --mca btl "$sel" 2>&1) ||
        fail "--param btl sm with btl $sel: $out"
    expect_in "btl_sm_single_copy_choice:value:not measured: btl/sm is not selected (btl = $sel)" "$out" "btl $sel"
    [ ! -e "$TEST_TMP/unused" ] || fail "btl $sel: measured all the same"
done
out=$(WEFT_MCA_mca_base_component_path="$WEFT_TEST_COMPONENT_PATH" \
    run "$WEFT_INFO" --param btl sm --mca btl_sm_single_copy_choice cma 2>&1)
expect_in "btl_sm_single_copy_choice is information (what btl/sm found out), not a setting" "$out" "setting information refused"
run "$WEFT_INFO" --version | grep -q "weft_info (Weft)" || fail "--version"
echo "weft_info: all checks passed"
