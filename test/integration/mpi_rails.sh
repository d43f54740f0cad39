#!/bin/sh
# Several BTLs to one peer: two "hosts" (network namespaces) joined by two veth pairs, so that
# btl/tcp makes two modules (rails) that reach the other host. The bootstrap goes over a
# bridge; the job over the two rails only (btl_tcp_if_include). mpi_rndv checks every byte;
# the protocol trace shows the pipeline striped over both rails, and over one when
# pml_ob1_max_send_per_range is 1.
. "${WEFT_TEST_SRCDIR:?}/test/lib.sh"
MPIRUN="$WEFT_TEST_BUILDDIR/mpirun"
export WEFT_MCA_mca_base_component_path="${WEFT_TEST_COMPONENT_PATH:?}"
netns_rails r
PROG="$WEFT_TEST_BUILDDIR/test/integration/mpi_rndv"
rails() { # extra options...
    run ip netns exec "$hub" "$MPIRUN" --host "$ha:1,$hb:1" -np 2 --launch-agent 'ip netns exec {host}' \
        --bootstrap-addr "$net.1" --timeout 90 -x WEFT_MCA_mca_base_component_path \
        --mca btl self,tcp --mca btl_tcp_if_include rail1,rail2 --mca btl_tcp_eager_limit 64k \
        --mca pml_ob1_verbose 20 "$@" \
        "$PROG" 65519 65520 65521 3000017 2>&1
}
out=$(rails) || fail "two rails: $out"
expect_in "mpi_rndv: 2 ranks, 16 messages intact" "$out" "two rails"
for t in 0 1 2 3; do
    expect_in "send rank 0 -> 1 tag $t cid 0 3000017 bytes: chose send/receive pipeline, ran send/receive pipeline over tcp:0+tcp:1" "$out" "striped over both rails (tag $t)"
done
out=$(rails --mca pml_ob1_max_send_per_range 1) || fail "one rail of two: $out"
expect_in "mpi_rndv: 2 ranks, 16 messages intact" "$out" "max_send_per_range 1"
expect_in "tag 0 cid 0 3000017 bytes: chose send/receive pipeline, ran send/receive pipeline over tcp:0" "$out" "max_send_per_range 1"
expect_not_in "3000017 bytes: chose send/receive pipeline, ran send/receive pipeline over tcp:0+tcp:1" "$out" "max_send_per_range 1"
# Rails removed under traffic (pml_ob1_fault_remove_rails, as a failover PML removes a failed
# one): the 65519- and 65520-byte messages go eagerly (btl_tcp_eager_limit 64k above), so the
# fifth rendezvous is the first 3000017-byte one; once it has started, tcp:1 goes on both
# sides; that message and the rest complete over tcp:0, every byte right.
out=$(rails --mca pml_ob1_fault_remove_rails 5:tcp:1) || fail "tcp:1 removed under traffic: $out"
expect_in "mpi_rndv: 2 ranks, 16 messages intact" "$out" "tcp:1 removed under traffic"
expect_in "fault injection: btl/tcp:1 removed after 5 rendezvous messages" "$out" "tcp:1 removed"
for t in 1 2 3; do
    printf '%s\n' "$out" | grep -q "tag $t cid 0 3000017 bytes: chose send/receive pipeline, ran send/receive pipeline over tcp:0\$" ||
        fail "tcp:1 removed: message $t not over tcp:0 alone: $out"
done
# The eager rail (tcp:0) removed under traffic while it still works: each side fences it (a
# FENCE down tcp:0, behind the matching fragments it may still hold, answered by the peer)
# before anything matching goes over tcp:1, and the stream completes there, every byte right.
out=$(rails --mca pml_ob1_fault_remove_rails 5:tcp:0) || fail "tcp:0 removed under traffic: $out"
expect_in "mpi_rndv: 2 ranks, 16 messages intact" "$out" "tcp:0 removed under traffic"
for w in 0 1; do
    expect_in "rank $w's eager rail btl/tcp:0 was removed: fence 1 sent down it" "$out" "tcp:0 removed: fence to rank $w"
    expect_in "fence 1 to rank $w lifted: answered" "$out" "tcp:0 removed: fence to rank $w answered"
done
for t in 1 2 3; do
    printf '%s\n' "$out" | grep -q "tag $t cid 0 3000017 bytes: chose send/receive pipeline, ran send/receive pipeline over tcp:1\$" ||
        fail "tcp:0 removed: message $t not over tcp:1 alone: $out"
done
# Both removed: the next operation with the peer fails (peer unreachable) and the job ends promptly.
start=$(date +%s)
out=$(rails --mca pml_ob1_fault_remove_rails 5:tcp) && fail "both rails removed, yet the job passed: $out"
expect_in "fault injection: btl/tcp:0 removed after 5 rendezvous messages" "$out" "both removed"
expect_in "unreachable" "$out" "both removed"
expect_not_in "16 messages intact" "$out" "both removed"
[ $(( $(date +%s) - start )) -lt 30 ] || fail "both rails removed: the job took $(( $(date +%s) - start )) s to end"
# A link error on the only rail: rail1 goes down while rank 1 sleeps (mpi_rndv -w) with a
# rendezvous on its way. btl/tcp notices within its user timeout or keepalive (both a few
# seconds here) and reports the error; ob1 cannot fail over, so the job ends, naming the peer,
# the BTL and the error.
log="$TEST_TMP/linkdown.log"
ip netns exec "$hub" timeout 60 "$MPIRUN" --host "$ha:1,$hb:1" -np 2 --launch-agent 'ip netns exec {host}' \
    --bootstrap-addr "$net.1" --timeout 60 -x WEFT_MCA_mca_base_component_path \
    --mca btl self,tcp --mca btl_tcp_if_include rail1 --mca btl_tcp_user_timeout 2000 \
    --mca btl_tcp_keepalive_time 1 --mca btl_tcp_keepalive_intvl 1 --mca btl_tcp_keepalive_probes 2 \
    "$PROG" 3000017 -w 20 3000017 >"$log" 2>&1 &
job=$!
for try in $(seq 300); do
    grep -q "mpi_rndv: waiting" "$log" && break
    sleep 0.1
done
grep -q "mpi_rndv: waiting" "$log" || fail "link error: the job never got going: $(cat "$log")"
start=$(date +%s)
ip -n "$ha" link set rail1 down
wait $job && fail "link error on the only rail, yet the job passed: $(cat "$log")"
took=$(( $(date +%s) - start ))
out=$(cat "$log")
expect_in "pml/ob1: rank " "$out" "link error"
expect_in "cannot be reached: the link over btl/tcp:0 failed and pml/ob1 cannot fail over: " "$out" "link error"
[ "$took" -lt 15 ] || fail "link error: the job took $took s to end"
ip -n "$ha" link set rail1 up
echo "two tcp rails between two namespace hosts: pipeline striped over both (over one with max_send_per_range 1), every byte right; one rail removed under traffic (the eager one: fenced, answered), the stream completes on the other; both removed, the job ends at once: peer unreachable; a link error on the only rail ends the job in ${took} s naming the peer and the BTL"
