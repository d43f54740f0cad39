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
