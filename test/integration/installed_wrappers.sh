#!/bin/sh
# MPI programs built the ways users build them, against an installed Weft: the
# tree is installed (make install DESTDIR=...) and used from there, moved by
# WEFT_PREFIX. mpicc and mpicxx (-show, compile, link; mpic++ and mpiCC too, with the
# program's own -std), pkg-config weft-mpi (and mpi, mpi-c, mpi-cxx), the man pages, and
# CMake's FindMPI; each program then runs with the installed mpirun -np 4.
# A coll and a PML component (examples/coll_component, examples/pml_component) built with
# pkg-config weft-mca against the installed headers alone serve a job's allreduces and its
# point-to-point traffic.
. "${WEFT_TEST_SRCDIR:?}/test/lib.sh"
stage="$TEST_TMP/stage"
out=$(env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL timeout 300 make -C "$WEFT_TEST_BUILDDIR" install DESTDIR="$stage" 2>&1) ||
    fail "make install DESTDIR=$stage failed: $out"
mpicc=$(find "$stage" -path '*/bin/mpicc' | head -n 1)
[ -n "$mpicc" ] || fail "no bin/mpicc under $stage"
P=$(cd "$(dirname "$mpicc")/.." && pwd)
export WEFT_PREFIX="$P"
libmpi=$(find "$P" -name 'libmpi.so' | head -n 1)
[ -n "$libmpi" ] || fail "no libmpi.so under $P"
LD_LIBRARY_PATH="$(dirname "$libmpi")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LD_LIBRARY_PATH
MPIRUN="$P/bin/mpirun"
np4() { run "$MPIRUN" -np 4 --oversubscribe --timeout 60 "$@"; }
cd "$TEST_TMP" || fail "no $TEST_TMP"

# -show names the moved include and library directories.
out=$(run "$P/bin/mpicc" -show -o x x.c) || fail "mpicc -show: $out"
expect_in "-I$P/include" "$out" "mpicc -show"
expect_in "-L$(dirname "$libmpi")" "$out" "mpicc -show"
out=$(run "$P/bin/mpicc" --showme:link) || fail "mpicc --showme:link: $out"
expect_in "-lmpi" "$out" "mpicc --showme:link"

# mpicc: compile and link in one step, and in two.
out=$(run "$P/bin/mpicc" -O2 -Wall -Werror -o ring "$WEFT_TEST_SRCDIR/examples/ring.c" 2>&1) || fail "mpicc ring.c: $out"
out=$(np4 ./ring 2>&1) || fail "ring: $out"
expect_in "ring: 4 ranks, 10 laps, token 40 (expected 40)" "$out" "ring built by mpicc"
out=$(run "$P/bin/mpicc" -c -o hello.o "$WEFT_TEST_SRCDIR/examples/hello.c" 2>&1) || fail "mpicc -c: $out"
out=$(run "$P/bin/mpicc" -o hello hello.o 2>&1) || fail "mpicc link: $out"
out=$(np4 ./hello 2>&1) || fail "hello: $out"
[ "$(echo "$out" | grep -c '^hello from rank')" -eq 4 ] || fail "hello built in two steps: $out"

# mpicxx: a C++ program.
out=$(run "$P/bin/mpicxx" -O2 -Wall -Werror -o hello_cxx "$WEFT_TEST_SRCDIR/test/integration/cmake_findmpi/hello.cc" 2>&1) ||
    fail "mpicxx hello.cc: $out"
out=$(np4 ./hello_cxx 2>&1) || fail "hello_cxx: $out"
expect_in "hello_cxx: 4 ranks, sum 6 (expected 6)" "$out" "hello_cxx built by mpicxx"

# mpic++ and mpiCC are mpicxx; none of them forces -std=c++20 on the program: its own -std
# (C++17 here) applies.
for w in mpic++ mpiCC; do
    out=$(run "$P/bin/$w" -show -c x.cc) || fail "$w -show: $out"
    expect_in "-I$P/include" "$out" "$w -show"
done
out=$(run "$P/bin/mpicxx" -show -c x.cc) || fail "mpicxx -show: $out"
expect_not_in "-std=c++20" "$out" "mpicxx -show"
out=$(run "$P/bin/mpic++" -std=c++17 -O2 -Wall -Werror -o hello_cxx17 \
    "$WEFT_TEST_SRCDIR/test/integration/cmake_findmpi/hello.cc" 2>&1) || fail "mpic++ -std=c++17: $out"
out=$(np4 ./hello_cxx17 2>&1) || fail "hello_cxx17: $out"
expect_in "sum 6 (expected 6)" "$out" "hello_cxx built by mpic++ -std=c++17"

# Man pages: mpirun (mpiexec a link page to it), mpicc (mpicxx a link page to it).
for m in weft_info mpirun mpiexec mpicc mpicxx; do
    [ -f "$P/share/man/man1/$m.1" ] || fail "man page $m.1 not installed"
done
grep -q '^\.so man1/mpirun\.1' "$P/share/man/man1/mpiexec.1" || fail "mpiexec.1 is not a link to mpirun.1"
grep -q '^\.so man1/mpicc\.1' "$P/share/man/man1/mpicxx.1" || fail "mpicxx.1 is not a link to mpicc.1"
if command -v man >/dev/null 2>&1; then
    out=$(MANWIDTH=80 run man -l "$P/share/man/man1/mpirun.1" 2>&1) || fail "man mpirun: $out"
    expect_in "--output-filename" "$out" "man mpirun"
fi

# pkg-config mpi, mpi-c and mpi-cxx (the names other MPIs install) give weft-mpi's flags.
for name in mpi mpi-c mpi-cxx; do
    flags=$(PKG_CONFIG_PATH="$P/lib/pkgconfig" run pkg-config --define-prefix --cflags --libs "$name" 2>&1) ||
        fail "pkg-config $name: $flags"
    expect_in "-I$P/include" "$flags" "pkg-config $name"
    expect_in "-lmpi" "$flags" "pkg-config $name"
done

# pkg-config weft-mpi, with the plain C compiler.
pc=$(find "$P" -name weft-mpi.pc | head -n 1)
[ -n "$pc" ] || fail "weft-mpi.pc not installed"
flags=$(PKG_CONFIG_PATH=$(dirname "$pc") run pkg-config --define-prefix --cflags --libs weft-mpi 2>&1) ||
    fail "pkg-config weft-mpi: $flags"
expect_in "-I$P/include" "$flags" "pkg-config --cflags"
# shellcheck disable=SC2086
out=$(run cc -O2 -o ring_pc "$WEFT_TEST_SRCDIR/examples/ring.c" $flags 2>&1) || fail "cc with pkg-config flags: $out"
out=$(np4 ./ring_pc 2>&1) || fail "ring_pc: $out"
expect_in "token 40 (expected 40)" "$out" "ring built with pkg-config"

# pkg-config weft-mca: coll/example built against the installed headers alone, installed into
# a directory of its own, serves the allreduces of a program built by mpicc (one too large for
# it goes to coll/basic).
pcm=$(find "$P" -name weft-mca.pc | head -n 1)
[ -n "$pcm" ] || fail "weft-mca.pc not installed"
components=$(dirname "$(find "$P" -name mca_coll_basic.so | head -n 1)")
cp -r "$WEFT_TEST_SRCDIR/examples/coll_component" coll_src
chmod -R u+w coll_src
out=$(PKG_CONFIG_PATH=$(dirname "$pcm") run make -C coll_src PKG_CONFIG="pkg-config --define-prefix" \
    CFLAGS="-O2 -Wall -Wextra -Werror" MPICC="$P/bin/mpicc" all allreduce_check install \
    COMPONENTDIR="$TEST_TMP/coll_components" 2>&1) || fail "coll/example against the installed headers: $out"
expect_in "-I$P/include" "$out" "coll/example's compile line"
expect_not_in "$WEFT_TEST_SRCDIR" "$out" "coll/example's compile line"
out=$(WEFT_MCA_mca_base_component_path="$components:$TEST_TMP/coll_components" \
    np4 --mca coll_base_verbose 10 coll_src/allreduce_check 2>&1) || fail "allreduce_check: $out"
expect_in "allreduce_check: 4 ranks, 4 checks, all right" "$out" "allreduce_check"
expect_in "allreduce=example" "$out" "coll/example chosen"
expect_in "coll/example: served 4 allreduce calls, declined 1" "$out" "coll/example's calls"

# pkg-config weft-mca: pml/example, the installed engine (<pml/engine/pml_engine.h>) with a
# policy of its own, built against the installed headers alone and selected with --mca pml.
cp -r "$WEFT_TEST_SRCDIR/examples/pml_component" pml_src
chmod -R u+w pml_src
out=$(PKG_CONFIG_PATH=$(dirname "$pcm") run make -C pml_src PKG_CONFIG="pkg-config --define-prefix" \
    CXXFLAGS="-O2 -Wall -Wextra -Werror" all install COMPONENTDIR="$TEST_TMP/pml_components" 2>&1) ||
    fail "pml/example against the installed headers: $out"
expect_in "-I$P/include" "$out" "pml/example's compile line"
expect_not_in "$WEFT_TEST_SRCDIR" "$out" "pml/example's compile line"
out=$(WEFT_MCA_mca_base_component_path="$components:$TEST_TMP/pml_components" \
    np4 --mca pml example --mca pml_example_verbose 1 ./ring_pc 2>&1) || fail "ring_pc with pml/example: $out"
expect_in "token 40 (expected 40)" "$out" "ring with pml/example"
expect_in "pml/example: 0 rendezvous headers completed, 0 in error" "$out" "pml/example ran"

# CMake's FindMPI, given the wrappers. Not in a sanitizer build (configure
# --enable-sanitizers): FindMPI keeps only the -I/-L/-l parts of mpicc -show, so its test
# program lacks the sanitizers' run-time the libraries need, and FindMPI fails.
sanitized=no
case $("$P/bin/mpicc" -show) in *-fsanitize=*) sanitized=yes ;; esac
if [ $sanitized = yes ]; then
    cmake_note=" (sanitizer build: FindMPI skipped)"
elif command -v cmake >/dev/null 2>&1; then
    cp -r "$WEFT_TEST_SRCDIR/test/integration/cmake_findmpi" src
    cp "$WEFT_TEST_SRCDIR/examples/ring.c" src/
    chmod -R u+w src
    out=$(run cmake -S src -B build -DMPI_C_COMPILER="$P/bin/mpicc" -DMPI_CXX_COMPILER="$P/bin/mpicxx" 2>&1) ||
        fail "cmake with FindMPI: $out"
    expect_in "Found MPI_C" "$out" "FindMPI (C)"
    expect_in "Found MPI_CXX" "$out" "FindMPI (C++)"
    out=$(run cmake --build build 2>&1) || fail "cmake --build: $out"
    out=$(np4 build/ring_c 2>&1) || fail "ring_c: $out"
    expect_in "token 40 (expected 40)" "$out" "ring built by CMake"
    out=$(np4 build/hello_cxx 2>&1) || fail "hello_cxx (CMake): $out"
    expect_in "sum 6 (expected 6)" "$out" "hello_cxx built by CMake"
    cmake_note=", CMake FindMPI"
else
    [ "${WEFT_TEST_REQUIRE_CMAKE:-0}" = 1 ] && fail "cmake is not installed"
    cmake_note=" (CMake not installed: FindMPI skipped)"
fi
# make uninstall takes away everything make install put there, the links too.
out=$(env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL timeout 300 make -C "$WEFT_TEST_BUILDDIR" uninstall DESTDIR="$stage" 2>&1) ||
    fail "make uninstall DESTDIR=$stage failed: $out"
left=$(find "$stage" ! -type d)
[ -z "$left" ] || fail "make uninstall left: $left"
echo "installed wrappers: mpicc -show and two-step builds, mpicxx (and mpic++, mpiCC, no forced -std), man pages, pkg-config weft-mpi and mpi, mpi-c, mpi-cxx, make uninstall, a coll and a pml component from pkg-config weft-mca$cmake_note; programs ran with the installed mpirun -np 4"
