// What the core knows about each framework: its name, the ABI its component
// structs follow, and how it picks components. Each framework's base/
// directory defines one of these (weft_<fw>_base_framework).
#ifndef WEFT_MCA_FRAMEWORK_H
#define WEFT_MCA_FRAMEWORK_H

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include <weft/status.h>

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
    // The base's own parameters beyond <fw> and <fw>_base_verbose (registered with them), or
    // NULL.
    weft_status_t (*register_base_params)() = nullptr;
};

// Defines weft::<fw>::base::framework, the descriptor of framework `fw` (btl) whose header
// defines WEFT_<FW>_ABI_MAJOR/MINOR (FW: BTL) and weft_<fw>_component_t: each framework's
// base/<fw>_base_frame.cc is this one line (and whatever else its base keeps there).
// min_component_size is sizeof the component struct today: once a field is appended to it,
// that must not raise the least size a 1.0 component may have, so the framework then writes
// out its descriptor with the 1.0 struct's size frozen instead.
#define WEFT_MCA_FRAMEWORK(fw, FW, text, how)                                                      \
    WEFT_MCA_FRAMEWORK_WITH_PARAMS(fw, FW, text, how, nullptr)

// The same, with a function that registers the base's own parameters.
#define WEFT_MCA_FRAMEWORK_WITH_PARAMS(fw, FW, text, how, params)                                  \
    namespace weft::fw::base {                                                                     \
    extern const mca::Framework framework;                                                         \
    const mca::Framework framework = {                                                             \
        .name = #fw,                                                                               \
        .description = text,                                                                       \
        .abi_major = WEFT_##FW##_ABI_MAJOR,                                                        \
        .abi_minor = WEFT_##FW##_ABI_MINOR,                                                        \
        .min_component_size = sizeof(weft_##fw##_component_t),                                     \
        .pick = mca::Pick::how,                                                                    \
        .register_base_params = params,                                                            \
    };                                                                                             \
    }

// Every framework built into this library, in layering order.
std::span<const Framework *const> frameworks();
const Framework *find_framework(std::string_view name);

} // namespace weft::mca

#endif
