#include "mca_framework.h"

#include <string_view>

namespace weft {
namespace boot::base {
extern const mca::Framework framework;
}
namespace pml::base {
extern const mca::Framework framework;
}
namespace bml::base {
extern const mca::Framework framework;
}
namespace btl::base {
extern const mca::Framework framework;
}
namespace mtl::base {
extern const mca::Framework framework;
}
namespace coll::base {
extern const mca::Framework framework;
}
} // namespace weft

namespace weft::mca {

std::span<const Framework *const> frameworks()
{
    static const Framework *const all[] = {&boot::base::framework, &pml::base::framework,
                                           &bml::base::framework,  &btl::base::framework,
                                           &mtl::base::framework,  &coll::base::framework};
    return all;
}

const Framework *find_framework(std::string_view name)
{
    for (const Framework *f : frameworks())
        if (name == f->name)
            return f;
    return nullptr;
}

} // namespace weft::mca
