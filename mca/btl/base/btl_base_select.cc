// btl/base: selection. Every BTL component that accepts runs (btl/btl.h); its init makes one
// module per usable link.
#include "btl_base.h"

#include "mca_select.h"

#include <cstdlib>

namespace weft::btl::base {

namespace {
std::vector<weft_btl_module_t *> g_modules;
} // namespace

weft_status_t open_select()
{
    g_modules.clear();
    mca::FrameworkBase *base = mca::framework_base("btl");
    if (weft_status_t rc = base->open(); rc != WEFT_SUCCESS)
        return rc;
    std::vector<mca::Candidate> chosen;
    if (weft_status_t rc = base->select_all(chosen); rc != WEFT_SUCCESS)
        return rc;
    for (const auto &c : chosen) {
        auto *comp = reinterpret_cast<const weft_btl_component_t *>(c.component->desc);
        int n = 0;
        weft_btl_module_t **mods = comp->init ? comp->init(&n, 0, 0) : nullptr;
        for (int i = 0; i < n; ++i)
            g_modules.push_back(mods[i]);
        std::free(mods);
    }
    return WEFT_SUCCESS;
}

const std::vector<weft_btl_module_t *> &modules() { return g_modules; }

void close()
{
    for (weft_btl_module_t *m : g_modules)
        if (m->btl_finalize)
            m->btl_finalize(m);
    g_modules.clear();
    mca::framework_base("btl")->close();
}

} // namespace weft::btl::base

extern "C" weft_btl_module_t *const *weft_btl_modules(size_t *count)
{
    const auto &m = weft::btl::base::modules();
    if (count)
        *count = m.size();
    return m.empty() ? nullptr : m.data();
}
