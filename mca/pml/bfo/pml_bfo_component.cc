// pml/bfo: point-to-point messaging over the BML's rails, with every protocol of
// ob1-protocols.rst: the engine of mca/pml/engine with the failover policy of
// pml_bfo_failover.h. A rail that fails is mapped out and the job goes on over the others
// (README.md). Chosen only by name: --mca pml bfo.
#include "pml_bfo_failover.h"

namespace weft::pml::bfo {

struct Policy : Failover {
    static constexpr const char *name = "bfo";
};

using Engine = engine::Engine<Policy>;

weft_status_t query(int *priority, char *, size_t)
{
    *priority = 5; // below ob1, and only when asked for by name (the descriptor's flag)
    return WEFT_SUCCESS;
}

} // namespace weft::pml::bfo

extern "C" {
// The one symbol the component exports (it is built with -fvisibility=hidden, so that its
// own functions bind locally and inline across the hot paths).
__attribute__((visibility("default"))) extern const weft_pml_component_t mca_pml_bfo_component;
const weft_pml_component_t mca_pml_bfo_component = {
    .mca = {WEFT_MCA_COMPONENT_HEADER_FLAGS(weft_pml_component_t, "pml", WEFT_PML_ABI_MAJOR,
                                            WEFT_PML_ABI_MINOR, "bfo", 0, 1, 0,
                                            WEFT_MCA_FLAG_EXPLICIT_ONLY),
            .register_params = weft::pml::bfo::Failover::register_params<weft::pml::bfo::Engine>,
            .open = nullptr, .query = weft::pml::bfo::query, .close = nullptr},
    .init = weft::pml::bfo::Engine::init,
    .finalize = weft::pml::bfo::Engine::finalize,
};
}
