#!/bin/sh
# Install every Debian package Weft's build and tests need. Idempotent, and
# quiet when everything is already there. Run as root (or with sudo).
set -eu

# Build: the toolchain and the libraries Weft links. Tests: iproute2 (network
# namespaces), MPICH's hydra launcher and a Slurm with munge (PMI tests), CMake
# (a user project finding Weft through FindMPI).
packages="build-essential autoconf automake libtool pkg-config make
check libltdl-dev libhwloc-dev libibverbs-dev rdma-core libfabric-dev
iproute2 procps mpich slurm-wlm munge cmake"
# The benchmark scripts (contrib/bench-*.sh) also build their programs against Debian's
# Open MPI and MPICH: `install-deps.sh --bench`.
if [ "${1:-}" = "--bench" ]; then
    packages="$packages openmpi-bin libopenmpi-dev libmpich-dev"
fi

missing=""
for p in $packages; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        exec sudo "$0" "$@"
    fi
    echo "install-deps.sh: needs root to install:$missing" >&2
    exit 1
fi
echo "install-deps.sh: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
echo "install-deps.sh: done"
