# Shared helpers for Weft's shell tests. Each test sources this file.
set -u
: "${WEFT_TEST_BUILDDIR:?run through make check}"
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
# Run a command with a time limit so that nothing can hang the suite.
run() {
    timeout 120 "$@"
}
expect_in() { # expect_in NEEDLE TEXT WHAT
    case "$2" in
    *"$1"*) ;;
    *) fail "$3: expected to find '$1' in:
$2" ;;
    esac
}
expect_not_in() {
    case "$2" in
    *"$1"*) fail "$3: did not expect '$1' in:
$2" ;;
    esac
}
WEFT_INFO="$WEFT_TEST_BUILDDIR/weft_info"
# Tests never read the user's files or installed components.
TEST_TMP=$(mktemp -d /tmp/weft-shtest.XXXXXX)
trap 'rm -rf "$TEST_TMP"' EXIT
export HOME="$TEST_TMP/home"
mkdir -p "$HOME"
for v in $(env | sed -n 's/^\(WEFT_MCA_[^=]*\)=.*/\1/p'); do unset "$v"; done
export WEFT_MCA_PARAM_FILES=

# Two "hosts" for multi-host tests: network namespaces NS_A and NS_B, each with an eth0 on a
# bridge in a third namespace HUB (the bootstrap network NET.0/24: the bridge is NET.1, the
# hosts NET.2 and NET.3). Run mpirun inside HUB (ip netns exec HUB ...): nothing is added to
# the machine's own namespace, where other tests' tcp jobs would take the bridge for a rail
# and lose it when this test ends. The caller deletes the three namespaces in its EXIT trap.
netns_hosts() { # NS_A NS_B HUB NET
    ip netns add "$3" || fail "cannot make namespace $3"
    ip -n "$3" link set lo up
    ip -n "$3" link add br0 type bridge || fail "cannot make a bridge"
    ip -n "$3" addr add "$4.1/24" dev br0
    ip -n "$3" link set br0 up
    nh_i=2
    for nh_ns in "$1" "$2"; do
        ip netns add "$nh_ns" || fail "cannot make namespace $nh_ns"
        ip -n "$3" link add "v$nh_i" type veth peer name eth0 netns "$nh_ns"
        ip -n "$3" link set "v$nh_i" master br0 up
        ip -n "$nh_ns" addr add "$4.$nh_i/24" dev eth0
        ip -n "$nh_ns" link set eth0 up
        ip -n "$nh_ns" link set lo up
        nh_i=$((nh_i + 1))
    done
}
