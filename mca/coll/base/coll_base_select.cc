#include "coll_base_select.h"

#include <weft/module.h>

namespace weft::coll::base {

void resolve(std::span<const Offer> offers, Table &table)
{
    table = Table{};
    table.functions.struct_size = sizeof(weft_coll_module_t);
    int best[size_t(Op::count)];
    for (int &b : best)
        b = 0;
#define WEFT_COLL_PICK(name)                                                                       \
    for (const Offer &o : offers) {                                                                \
        const size_t k = size_t(Op::name);                                                         \
        if (WEFT_MODULE_HAS_OP(o.module, weft_coll_module_t, name) &&                              \
            (!table.owner[k] || o.priority > best[k])) {                                           \
            table.functions.name = o.module->name;                                                 \
            table.owner[k] = o.module;                                                             \
            best[k] = o.priority;                                                                  \
        }                                                                                          \
    }
    WEFT_COLL_OPS(WEFT_COLL_PICK)
#undef WEFT_COLL_PICK
}

} // namespace weft::coll::base
