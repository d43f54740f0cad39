#!/bin/sh
# The include rules that keep the component ABI honest (docs/component-guide.md, "A component
# inside the Weft tree"): a component reads nothing but the public headers and its own
# directory, which is checked on what the compiler really read (the build's dependency
# files); and the core includes nothing of a framework's base/: it reaches each framework
# through its public header.
. "${WEFT_TEST_SRCDIR:?}/test/lib.sh"
src=$WEFT_TEST_SRCDIR
b=$WEFT_TEST_BUILDDIR

# The core: framework/ and tools/ sources.
bad=$(grep -rn -e '#include <[a-z]*/base/' -e '#include "[a-z]*_base[a-z_]*\.h"' \
    "$src/framework" "$src/tools")
[ -z "$bad" ] || fail "the core includes a framework's base/ internals:
$bad"

# The components (base/ is libweft's). The boot components read the client libraries they
# wrap: their component.am says so.
checked=0
for dep in "$b"/mca/*/*/.deps/*.Plo; do
    [ -f "$dep" ] || continue
    # Only objects that are built now (a source renamed since leaves its old file behind).
    target=$(sed -n '1s/:.*//p' "$dep")
    case $target in *.lo) [ -f "$b/$target" ] || continue ;; *) continue ;; esac
    comp=$(dirname "$(dirname "$dep")")
    comp=${comp#"$b"/}
    case $comp in mca/*/base | mca/boot/pmgr | mca/boot/pmi) continue ;; esac
    # Every file the compiler read, except the component's own (named from the source tree, or
    # relative to it when the build is in the source tree, as the README's commands build).
    bad=$(tr ' \\' '\n\n' <"$dep" | sed 's/:$//' | grep -v '\.lo$' |
        grep -e "^$src/" -e '^framework/' -e '^mca/' -e '^\./' |
        grep -v -e "^$src/$comp/" -e "^$comp/" -e "^\./$comp/" | sort -u)
    [ -z "$bad" ] || fail "$comp read headers that are not public ($(basename "$dep")):
$bad"
    checked=$((checked + 1))
done
if [ "$checked" -eq 0 ]; then
    echo "SKIP: no dependency files of components (configured with --disable-dependency-tracking?)"
    exit 77
fi
echo "include rules: the core includes no framework's base/ header; $checked component objects read only public headers and their own directory"
