#!/bin/sh
# contrib/check-ob1-revision and contrib/check-ob1-pml-diffs on a scratch git repository made
# from this tree's PMLs: the reviewed revision is checked, recorded, and changes to ob1 or the
# engine (not to bfo) are found and shown; the diffs show only bfo's policy file and seams.
. "${WEFT_TEST_SRCDIR:?}/test/lib.sh"
command -v git >/dev/null 2>&1 || { echo "SKIP: needs git"; exit 77; }
repo=$TEST_TMP/repo
mkdir -p "$repo/mca/pml" "$repo/contrib"
cp -R "$WEFT_TEST_SRCDIR/mca/pml/engine" "$WEFT_TEST_SRCDIR/mca/pml/ob1" "$WEFT_TEST_SRCDIR/mca/pml/bfo" "$repo/mca/pml/"
cp "$WEFT_TEST_SRCDIR/contrib/check-ob1-revision" "$WEFT_TEST_SRCDIR/contrib/check-ob1-pml-diffs" "$repo/contrib/"
cd "$repo" || fail "no scratch repository"
git init -q . && git config user.email t@example.org && git config user.name test &&
    git add -A && git commit -qm initial || fail "cannot make the scratch repository"
REV="sh contrib/check-ob1-revision"
checks=0
# The recorded revision is this tree's, which the scratch repository does not have.
out=$($REV 2>&1) && fail "a foreign revision accepted: $out"
[ $? -eq 2 ] || fail "a foreign revision: exit status not 2"
expect_in "which is not a commit of this repository" "$out" "foreign revision"
checks=$((checks + 1))
out=$($REV --record) || fail "--record: $out"
expect_in "Recorded $(git rev-parse HEAD) in mca/pml/bfo/ob1-revision" "$out" "--record"
git commit -qam "bfo reviewed" || fail "cannot commit the record"
out=$($REV) || fail "no change reported as a change: $out"
expect_in "No new changes detected in ob1 or the engine" "$out" "no change"
checks=$((checks + 2))
# A change to bfo alone is not ob1's.
echo "// reviewed" >>mca/pml/bfo/pml_bfo_component.cc
git commit -qam "bfo only" && out=$($REV) || fail "a bfo change reported: $out"
checks=$((checks + 1))
# A change to ob1, then to the engine: found, listed and shown; exit status 1.
echo "// a change to ob1" >>mca/pml/ob1/pml_ob1_component.cc
git commit -qam "ob1: a change" || fail "commit"
out=$($REV) && fail "an ob1 change not reported: $out"
expect_in "ob1: a change" "$out" "the commit listed"
expect_in "mca/pml/ob1/pml_ob1_component.cc" "$out" "the file listed"
expect_in "+// a change to ob1" "$out" "the diff shown"
echo "// a change to the engine" >>mca/pml/engine/pml_engine_send.h
git commit -qam "engine: a change" || fail "commit"
out=$($REV) && fail "an engine change not reported: $out"
expect_in "mca/pml/engine/pml_engine_send.h" "$out" "the engine file listed"
$REV --record >/dev/null && git commit -qam "reviewed again" && out=$($REV) ||
    fail "after recording again: $out"
checks=$((checks + 3))
out=$($REV -x 2>&1) && fail "an unknown option accepted"
expect_in "unknown option -x" "$out" "unknown option"
expect_in "Usage: contrib/check-ob1-revision" "$($REV -h)" "help"
checks=$((checks + 2))
# The diffs: bfo's policy file and the seams it overrides, and nothing else of note.
DIFFS="sh contrib/check-ob1-pml-diffs"
out=$($DIFFS) || fail "check-ob1-pml-diffs failed: $out"
expect_in "Files Compared: pml_ob1_component.cc and pml_bfo_component.cc" "$out" "compared"
expect_in "Only in bfo: pml_bfo_failover.h" "$out" "the policy's file"
for s in fragment_done link_error handle_extra RequestExtra may_complete; do
    expect_in "  $s" "$out" "seam $s"
done
expect_not_in "  before_match" "$out" "a seam bfo does not override"
checks=$((checks + 3))
# On the tree itself: short, as the point of a shared engine is.
out=$(sh "$WEFT_TEST_SRCDIR/contrib/check-ob1-pml-diffs") || fail "on the tree: $out"
lines=$(printf '%s\n' "$out" | wc -l)
[ "$lines" -lt 100 ] || fail "on the tree: $lines lines"
expect_in "Usage: contrib/check-ob1-pml-diffs" "$($DIFFS -h)" "help"
checks=$((checks + 2))
echo "contrib scripts: $checks checks: check-ob1-revision (foreign revision refused, record, no change, a bfo-only change ignored, ob1 and engine changes found with commits, files and diffs, options); check-ob1-pml-diffs ($lines lines on the tree: bfo's policy file and the seams it overrides)"
