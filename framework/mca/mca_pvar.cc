// Performance variables (weft/mca.h): components register what they measure, MPI_T reads it.
#include "mca_output.h"
#include "mca_param.h"

#include <cstring>

namespace weft::mca {

std::vector<std::unique_ptr<Pvar>> &pvars()
{
    static std::vector<std::unique_ptr<Pvar>> all;
    return all;
}

} // namespace weft::mca

using namespace weft::mca;

extern "C" {

weft_status_t weft_mca_pvar_register(const char *framework, const char *component,
                                     const weft_mca_pvar_def_t *def, size_t def_size)
{
    weft_mca_pvar_def_t d{};
    if (def)
        std::memcpy(&d, def, std::min(def_size, sizeof d));
    if (!framework || !valid_name(framework) || (component && !valid_name(component)) || !def ||
        def_size < sizeof d || !d.name || !valid_name(d.name) || !d.help || !*d.help || !d.read ||
        d.level < 1 || d.level > 9 ||
        (d.var_class != WEFT_MCA_PVAR_LEVEL && d.var_class != WEFT_MCA_PVAR_COUNTER)) {
        weft::output::error(std::string("performance variable '") + (d.name ? d.name : "") +
                            "' of " + (framework ? framework : "?") +
                            (component ? std::string("/") + component : "") +
                            " cannot be registered: it needs a name matching [a-z0-9_]+, a "
                            "class, help text, a level from 1 to 9 and a read function");
        return WEFT_ERR_BAD_PARAM;
    }
    const std::string full =
        std::string(framework) + "_" + (component ? std::string(component) + "_" : "") + d.name;
    Pvar *v = nullptr;
    for (auto &p : pvars())
        if (p->full_name == full)
            v = p.get();
    if (!v) {
        pvars().push_back(std::make_unique<Pvar>());
        v = pvars().back().get();
        v->full_name = full;
        v->framework = framework;
        v->component = component ? component : "";
    }
    v->help = d.help;
    v->var_class = d.var_class;
    v->level = d.level;
    v->read = d.read;
    v->arg = d.arg;
    return WEFT_SUCCESS;
}

void weft_mca_pvar_unregister(const char *framework, const char *component)
{
    for (auto &p : pvars())
        if (framework && p->framework == framework &&
            p->component == (component ? component : "") && p->read) {
            p->value();
            p->read = nullptr;
        }
}

} // extern "C"
