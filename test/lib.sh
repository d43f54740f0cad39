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

# netns_hosts NAME: two "hosts" for multi-host tests, network namespaces $ha and $hb, each with
# an eth0 on a bridge in a third namespace $hub (the bootstrap network $net.0/24: the bridge is
# $net.1, the hosts $net.2 and $net.3). Run mpirun inside $hub (ip netns exec "$hub" ...):
# nothing is added to the machine's own namespace, where other tests' tcp jobs would take the
# bridge for a rail and lose it when this test ends. Skips the test (exit 77) without root and
# iproute2; the namespaces go when the test exits.
netns_hosts() {
    if [ "$(id -u)" -ne 0 ] || ! command -v ip >/dev/null 2>&1; then
        echo "SKIP: needs root and iproute2 to make network namespaces"
        exit 77
    fi
    ha="weft-$1a$$" hb="weft-$1b$$" hub="weft-$1h$$"
    net="10.$(($$ % 200 + 20)).$(($$ / 200 % 250))"
    trap 'ip netns del "$ha" 2>/dev/null; ip netns del "$hb" 2>/dev/null; ip netns del "$hub" 2>/dev/null; rm -rf "$TEST_TMP"' EXIT
    ip netns add "$hub" || fail "cannot make namespace $hub"
    ip -n "$hub" link set lo up
    ip -n "$hub" link add br0 type bridge || fail "cannot make a bridge"
    ip -n "$hub" addr add "$net.1/24" dev br0
    ip -n "$hub" link set br0 up
    nh_i=2
    for nh_ns in "$ha" "$hb"; do
        ip netns add "$nh_ns" || fail "cannot make namespace $nh_ns"
        ip -n "$hub" link add "v$nh_i" type veth peer name eth0 netns "$nh_ns"
        ip -n "$hub" link set "v$nh_i" master br0 up
        ip -n "$nh_ns" addr add "$net.$nh_i/24" dev eth0
        ip -n "$nh_ns" link set eth0 up
        ip -n "$nh_ns" link set lo up
        nh_i=$((nh_i + 1))
    done
}

# netns_rails NAME [N]: netns_hosts NAME, plus N rails (default 2) between $ha and $hb: veth
# pairs rail1, rail2, ..., each its own subnet (172.17.0.0/24, 172.18.0.0/24, ..., private to
# the two namespaces), waited for until the kernel reports them running. btl/tcp then makes
# one module (rail) per pair that reaches the other host (--mca btl_tcp_if_include rail1,rail2).
netns_rails() {
    netns_hosts "$1"
    nr_rails=$(seq "${2:-2}")
    for nr_r in $nr_rails; do
        ip link add "rail$nr_r" netns "$ha" type veth peer name "rail$nr_r" netns "$hb" ||
            fail "cannot make rail $nr_r"
        ip -n "$ha" addr add "172.$((16 + nr_r)).0.2/24" dev "rail$nr_r"
        ip -n "$hb" addr add "172.$((16 + nr_r)).0.3/24" dev "rail$nr_r"
        ip -n "$ha" link set "rail$nr_r" up
        ip -n "$hb" link set "rail$nr_r" up
    done
    # shellcheck disable=SC2086
    rails_running $nr_rails || :
}
# rails_running N...: wait (up to 5 s) until rails N... (1 for rail1) run on both $ha and
# $hb, as the kernel reports them; false if one does not by then. btl/tcp takes only the
# interfaces running at MPI_Init: a rail not running yet is no rail of that job. A link set up
# again runs once the kernel's link watcher has seen it, which for these veths it does at most
# once a second for every namespace together: 0.02 s later on an idle host, up to 1 s later
# with links changing in other namespaces (the other tests of make -j2 check).
rails_running() {
    for _ in $(seq 50); do
        rr_n=0
        for rr_ns in "$ha" "$hb"; do
            for rr_r in "$@"; do
                [ "$(ip netns exec "$rr_ns" cat "/sys/class/net/rail$rr_r/operstate")" = up ] &&
                    rr_n=$((rr_n + 1))
            done
        done
        [ $rr_n -eq $((2 * $#)) ] && return 0
        sleep 0.1
    done
    return 1
}
