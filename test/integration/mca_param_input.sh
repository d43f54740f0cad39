#!/bin/sh
# Every MCA value is checked against its range: an out-of-range btl_sm_* value (the BTL list not
# named) ends the job with an error naming the parameter, the value and the range, and never
# lets the job run over tcp instead; so do values that cannot work together, an unknown
# btl_sm_flags entry, and an unknown component of a framework nothing opens (mtl). Param files
# that are not regular files of at most 1 MiB are refused at once with a warning.
. "${WEFT_TEST_SRCDIR:?}/test/lib.sh"
export WEFT_MCA_mca_base_component_path="${WEFT_TEST_COMPONENT_PATH:?}"
MPIRUN="$WEFT_TEST_BUILDDIR/mpirun"
HELLO="$WEFT_TEST_BUILDDIR/examples/hello"

# refused "NAME VALUE" MESSAGE: a 2-rank job with --mca NAME VALUE fails with MESSAGE and
# never says hello.
refused() {
    # shellcheck disable=SC2086
    out=$(run "$MPIRUN" -np 2 --timeout 60 --mca $1 "$HELLO" 2>&1) && fail "a job with --mca $1 ran: $out"
    expect_in "$2" "$out" "--mca $1"
    expect_not_in "hello from" "$out" "--mca $1"
}
n=0
R="from the command line (mpirun --mca)"
while IFS='|' read -r pv range; do
    [ -n "$pv" ] || continue
    name=${pv%% *} value=${pv#* }
    refused "$pv" "parameter $name: value '$value' $R is outside its range $range"
    n=$((n + 1))
done <<'EOT'
btl_sm_eager_limit 16T|64..1M
btl_sm_eager_limit 63|64..1M
btl_sm_eager_limit 2M|64..1M
btl_sm_max_send_size 32|64..64M
btl_sm_max_send_size 1G|64..64M
btl_sm_exclusivity -1|0..4294967295
btl_sm_exclusivity 4294967296|0..4294967295
btl_sm_latency -1|0..4294967295
btl_sm_latency 5000000000|0..4294967295
btl_sm_bandwidth -1|0..4294967295
btl_sm_bandwidth 4294967296|0..4294967295
btl_sm_ring_size 256|512..512k
btl_sm_ring_size 1M|512..512k
btl_sm_free_list_max 0|1..8191
btl_sm_free_list_max 9000|1..8191
btl_sm_rndv_eager_limit 32|64..1M
btl_sm_rndv_eager_limit 2M|64..1M
btl_sm_rdma_pipeline_frag_size 0|1.. (at least 1)
btl_self_exclusivity 4294967296|0..4294967295
btl_self_eager_limit 0|64.. (at least 64)
pml_ob1_send_pipeline_depth 0|1..1024
pml_ob1_max_rdma_per_request 9|1..8
EOT
# In range alone, but not together: the component says why, and the job ends.
BAD="btl components cannot run with the parameter values they were given"
refused "btl_sm_max_send_size 100" "btl/sm: btl_sm_max_send_size is 100, outside btl_sm_eager_limit (4096)..64M"
refused "btl_sm_ring_size 4k" "btl/sm: btl_sm_ring_size is 4096, outside 4 * (btl_sm_eager_limit + 64)"
refused "btl_sm_rndv_eager_limit 8k" "btl/sm: btl_sm_rndv_eager_limit is 8192, outside 64..btl_sm_eager_limit"
refused "btl_sm_flags send,teleport" 'btl/sm: btl_sm_flags names "teleport" (expected some of send, put, get, inplace)'
refused "btl_sm_flags put" "btl/sm: btl_sm_flags lacks send"
refused "btl_tcp_free_list_max 0" "btl_tcp_free_list_max"
refused "btl_sm_flags send,get --mca btl_sm_single_copy_mechanism none" "btl/sm: btl_sm_flags asks for get, which this BTL cannot do here (it can: send)"
refused "btl_sm_segment_dir $TEST_TMP/nonexistent" "btl/sm: btl_sm_segment_dir '$TEST_TMP/nonexistent' is not a writable directory"
out=$(run "$MPIRUN" -np 2 --timeout 60 --mca btl_sm_max_send_size 100 "$HELLO" 2>&1)
expect_in "$BAD" "$out" "a combination"
n=$((n + 8))
# Unknown components, also of a framework that this job never opens.
refused "mtl nosuch" "mtl = 'nosuch': there is no mtl component 'nosuch'"
refused "btl nosuch" "btl = 'nosuch': there is no btl component 'nosuch'"
refused "pml nosuch" "pml = 'nosuch': there is no pml component 'nosuch'"
n=$((n + 3))
# In-range values still run, over sm.
out=$(run "$MPIRUN" -np 2 --timeout 60 --mca btl self,sm --mca btl_sm_eager_limit 64k --mca btl_sm_max_send_size 64M \
    --mca btl_sm_ring_size 512k --mca btl_sm_rndv_eager_limit 64 "$HELLO" 2>&1) || fail "in-range values: $out"
expect_in "hello from rank 1 of 2" "$out" "in-range values"

# Param files: a device, a FIFO, a directory, a file over 1 MiB.
mkfifo "$TEST_TMP/fifo"
mkdir "$TEST_TMP/dir"
{
    echo "btl_sm_eager_limit = 8k"
    head -c 1100000 /dev/zero | tr '\0' '#'
    echo
} >"$TEST_TMP/big"
for f in /dev/zero:"a character device" "$TEST_TMP/fifo":"a FIFO" "$TEST_TMP/dir":"a directory" \
    "$TEST_TMP/big":"a param file may have at most 1 MiB"; do
    path=${f%%:*} what=${f#*:}
    start=$(date +%s)
    out=$(WEFT_MCA_PARAM_FILES="$path" timeout 20 "$HELLO" 2>&1) || fail "param file $path: $out"
    [ $(($(date +%s) - start)) -lt 10 ] || fail "param file $path: MPI_Init took too long"
    expect_in "weft: warning: param file $path (from WEFT_MCA_PARAM_FILES) cannot be read: " "$out" "param file $path"
    expect_in "$what" "$out" "param file $path"
    expect_in "hello from rank 0 of 1" "$out" "param file $path"
done
echo "MCA parameter input: $n bad values refused at MPI_Init with the parameter, the value and its range (never a silent switch to tcp), unknown mtl/btl/pml components refused, param files that are a device, a FIFO, a directory or over 1 MiB refused at once"
