// Where a process runs: the node it shares memory with, and (from hwloc) which package, NUMA
// node, L3 cache and core its CPU binding covers. Each process publishes its own description
// in the modex; weft_proc_locality compares two of them.
#ifndef WEFT_RUNTIME_LOCALITY_H
#define WEFT_RUNTIME_LOCALITY_H

#include <cstdint>
#include <string>

namespace weft::rt::locality {

// The node this process runs on: $WEFT_HOSTNAME when set (tests place ranks on pretend
// hosts), else the host name and the kernel's boot id, so that two machines that answer to
// one host name (containers named "localhost") are never taken for one.
std::string node_id();

// This process's binding as hwloc sees it: for each level (package, numa, l3, core) the
// objects whose CPUs intersect the binding, e.g. "package=0;numa=0;l3=0;core=1". Empty if
// hwloc is not built in or cannot read the topology.
std::string describe();

// WEFT_LOCALITY_* flags of two processes (describe() strings) on the same node: a level is
// shared when both bindings touch one object of it (an unbound process touches them all).
uint32_t relative(const std::string &a, const std::string &b);

} // namespace weft::rt::locality

#endif
