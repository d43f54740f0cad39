// btl/base: selection (btl.h: weft_btl_select, weft_btl_modules, weft_btl_close). Every BTL
// component that accepts runs; its init makes one module per usable link.
#include "btl_base_fault.h"
#include "mca_select.h"

#include <btl/btl.h>

#include <cstdlib>
#include <vector>

namespace {

std::vector<weft_btl_module_t *> g_modules;

} // namespace

extern "C" {

weft_status_t weft_btl_select(void)
{
    g_modules.clear();
    weft::mca::FrameworkBase *base = weft::mca::framework_base("btl");
    if (weft_status_t rc = base->open(); rc != WEFT_SUCCESS)
        return rc;
    std::vector<weft::mca::Candidate> chosen;
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
    weft::btl::base::fault_wrap(g_modules);
    return WEFT_SUCCESS;
}

void weft_btl_close(void)
{
    weft::btl::base::fault_close();
    for (weft_btl_module_t *m : g_modules)
        if (m->btl_finalize)
            m->btl_finalize(m);
    g_modules.clear();
    weft::mca::framework_base("btl")->close();
}

weft_btl_module_t *const *weft_btl_modules(size_t *count)
{
    const auto &m = g_modules;
    if (count)
        *count = m.size();
    return m.empty() ? nullptr : m.data();
}
} // extern "C"
