// What the core knows about each framework: its name, the ABI its component
// structs follow, and how it picks components. Each framework's base/
// directory defines one of these (weft_<fw>_base_framework).
#ifndef WEFT_MCA_FRAMEWORK_H
#define WEFT_MCA_FRAMEWORK_H

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace weft::mca {

enum class Pick {
    one,         // exactly one per process, the highest priority (pml, bml, mtl, boot)
    all,         // every component that accepts, by priority (btl)
    per_function // per communicator and per function (coll)
};

struct Framework {
    const char *name;
    const char *description;
    uint16_t abi_major;
    uint16_t abi_minor;
    // sizeof the component struct at ABI <abi_major>.0: the least a
    // descriptor of this major version can be.
    size_t min_component_size;
    Pick pick;
};

// Every framework built into this library, in layering order.
std::span<const Framework *const> frameworks();
const Framework *find_framework(std::string_view name);

} // namespace weft::mca

#endif
