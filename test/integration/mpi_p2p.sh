#!/bin/sh
# The MPI point-to-point test list, run twice: over --mca btl self,sm and
# over --mca btl self,tcp, at 2, 3, 4 and 16 ranks (16 on 2 cores); the BTL
# exchange driver over each; and the examples with mpirun -np 4.
. "${WEFT_TEST_SRCDIR:?}/test/lib.sh"
export WEFT_MCA_mca_base_component_path="${WEFT_TEST_COMPONENT_PATH:?}"
MPIRUN="$WEFT_TEST_BUILDDIR/mpirun"
B="$WEFT_TEST_BUILDDIR"
jobs=0
for btl in self,sm self,tcp; do
    out=$(run "$MPIRUN" -np 4 --oversubscribe --timeout 60 --mca btl $btl "$B/test/integration/btl_exchange" 2>&1) ||
        fail "btl_exchange over $btl: $out"
    expect_in "every byte and the order right" "$out" "btl_exchange $btl"
    expect_in "locality from rank 0: 1=node" "$out" "btl_exchange $btl locality"
    for n in 2 3 4 16; do
        start=$(date +%s)
        out=$(run "$MPIRUN" -np $n --oversubscribe --timeout 120 --mca btl $btl "$B/test/integration/mpi_p2p" 2>&1) ||
            fail "mpi_p2p over $btl with $n ranks: $out"
        expect_in "mpi_p2p: $n ranks," "$out" "mpi_p2p $btl $n"
        expect_not_in "error" "$out" "mpi_p2p $btl $n"
        [ $(( $(date +%s) - start )) -lt 60 ] || fail "mpi_p2p over $btl with $n ranks took too long (livelock?)"
        jobs=$((jobs + 1))
    done
done
# sm with the sender writing its ring's lines without asking for them ahead (btl_sm_claim_ahead
# false; the default asks, the runs above).
out=$(run "$MPIRUN" -np 4 --oversubscribe --timeout 120 --mca btl self,sm --mca btl_sm_claim_ahead false \
    --mca btl_base_verbose 10 "$B/test/integration/mpi_p2p" 2>&1) ||
    fail "mpi_p2p over self,sm without claims ahead: $out"
expect_in "mpi_p2p: 4 ranks," "$out" "mpi_p2p self,sm claim_ahead false"
expect_in "ring lines not claimed ahead (btl_sm_claim_ahead false)" "$out" "btl/sm says claim_ahead false"
jobs=$((jobs + 1))
# tcp with the system's socket buffers and their auto-tuning (btl_tcp_sndbuf and rcvbuf 0; the
# default sets them to twice btl_tcp_max_send_size), and the system's congestion control on
# connections inside this host too (btl_tcp_local_congestion empty; the default sets reno).
out=$(run "$MPIRUN" -np 4 --oversubscribe --timeout 120 --mca btl self,tcp --mca btl_tcp_sndbuf 0 \
    --mca btl_tcp_rcvbuf 0 --mca btl_tcp_local_congestion "" --mca btl_tcp_verbose 2 \
    "$B/test/integration/mpi_p2p" 2>&1) ||
    fail "mpi_p2p over self,tcp with the system's socket buffers: $out"
expect_in "mpi_p2p: 4 ranks," "$out" "mpi_p2p self,tcp system buffers"
expect_not_in "congestion control" "$out" "btl_tcp_local_congestion empty"
jobs=$((jobs + 1))
# The default's congestion control on loopback connections, said at btl_tcp_verbose 2; a name
# the kernel does not have is warned about and the job runs on with the system's.
out=$(run "$MPIRUN" -np 2 --timeout 60 --mca btl self,tcp --mca btl_tcp_verbose 2 \
    "$B/test/integration/mpi_p2p" 2>&1) || fail "mpi_p2p over self,tcp, verbose: $out"
expect_in "mpi_p2p: 2 ranks," "$out" "mpi_p2p self,tcp verbose"
expect_in "127.0.0.1 - 127.0.0.1 stays inside this host: congestion control reno" "$out" \
    "btl/tcp's local congestion control"
out=$(run "$MPIRUN" -np 2 --timeout 60 --mca btl self,tcp --mca btl_tcp_local_congestion nosuchcc \
    "$B/test/integration/mpi_p2p" 2>&1) || fail "mpi_p2p over self,tcp, unknown algorithm: $out"
expect_in "mpi_p2p: 2 ranks," "$out" "mpi_p2p self,tcp unknown algorithm"
expect_in "btl_tcp_local_congestion nosuchcc cannot be set" "$out" "unknown algorithm warned about"
jobs=$((jobs + 2))
# Derived datatypes: extents, pack/unpack, envelopes, Get_elements, sending a contiguous
# derived type, refusing one with holes (until the PML packs through the datatype engine).
for btl in self,sm self,tcp; do
    out=$(run "$MPIRUN" -np 2 --timeout 60 --mca btl $btl "$B/test/integration/mpi_datatype" 2>&1) ||
        fail "mpi_datatype over $btl: $out"
    expect_in "mpi_datatype: 2 ranks," "$out" "mpi_datatype $btl"
done
# Each protocol of ob1, forced and seen in the protocol trace, data checked.
for btl in self,sm self,tcp; do
    extra=
    [ $btl = self,sm ] && extra="--mca btl_sm_ring_size 32k"
    # shellcheck disable=SC2086
    out=$(run "$MPIRUN" -np 2 --timeout 60 --mca btl $btl --mca pml_ob1_verbose 20 $extra \
        "$B/test/integration/mpi_protocols" 2>&1) || fail "mpi_protocols over $btl: $out"
    expect_in "mpi_protocols: 2 ranks, every message intact" "$out" "mpi_protocols $btl"
    for p in "ran eager immediate (btl_sendi)" "chose eager prepared (btl_prepare_src), ran eager prepared" \
        "chose send/receive pipeline, ran send/receive pipeline"; do
        expect_in "$p" "$out" "protocol trace over $btl"
    done
    if [ $btl = self,sm ]; then
        expect_in "chose eager immediate (btl_sendi), ran eager allocated (btl_alloc)" "$out" "ring full over sm"
    fi
done

# A sender that outruns its receiver by 200 MB of eager messages (4000 bytes over sm, 60000
# over tcp): blocking sends wait for room rather than keep copies, so the sender's memory
# stays bounded (by the ring over sm; over tcp by btl/tcp's own 64 MiB of send buffers), and
# every message arrives.
for c in "self,sm 50000 4000 32" "self,tcp 4000 60000 100"; do
    # shellcheck disable=SC2086
    set -- $c
    out=$(run "$MPIRUN" -np 2 --timeout 90 --mca btl "$1" "$B/test/integration/mpi_flow" "$2" "$3" "$4" 2>&1) ||
        fail "mpi_flow over $1: $out"
    expect_in "mpi_flow: $2 messages of $3 bytes intact" "$out" "mpi_flow $1"
done

# Locality (hwloc): two ranks bound to different cores share no core; unbound
# ranks share every level of the node.
out=$(run "$MPIRUN" -np 2 --bind-to core --timeout 60 --mca btl self,sm "$B/test/integration/btl_exchange" 2>&1) ||
    fail "btl_exchange bound: $out"
loc=$(echo "$out" | sed -n 's/^locality from rank 0: 1=//p')
case ",$loc," in *,node,*) ;; *) fail "bound ranks: rank 1 is not on rank 0's node: '$loc'" ;; esac
case ",$loc," in *,core,*) fail "ranks bound to different cores share a core: '$loc'" ;; esac
out=$(run "$MPIRUN" -np 2 --bind-to none --timeout 60 --mca btl self,sm "$B/test/integration/btl_exchange" 2>&1) ||
    fail "btl_exchange unbound: $out"
loc=$(echo "$out" | sed -n 's/^locality from rank 0: 1=//p')
case ",$loc," in *,core,*) ;; *) fail "unbound ranks do not share their cores: '$loc'" ;; esac
out=$(run "$MPIRUN" -np 4 --oversubscribe --timeout 60 "$B/examples/hello" 2>&1) || fail "hello: $out"
[ "$(echo "$out" | grep -c '^hello from rank')" -eq 4 ] || fail "hello: $out"
out=$(run "$MPIRUN" -np 4 --oversubscribe --timeout 60 "$B/examples/ring" 2>&1) || fail "ring: $out"
expect_in "ring: 4 ranks, 10 laps, token 40 (expected 40)" "$out" "ring"
out=$(run "$MPIRUN" -np 4 --oversubscribe --timeout 60 "$B/examples/msgrate" 2>&1) || fail "msgrate: $out"
expect_in "msgrate: 8-byte messages, 2 pairs" "$out" "msgrate"
echo "MPI point-to-point: $jobs mpi_p2p jobs over self,sm and self,tcp (2..16 ranks), BTL exchange, derived datatypes, each protocol in the trace, a sender 200 MB ahead of its receiver in bounded memory, hwloc locality bound and unbound, examples: all right"
