// pml/ob1: point-to-point messaging over the BML's rails, with every protocol of
// ob1-protocols.rst: the engine of mca/pml/engine with the policy that does no failover. A
// rail that fails ends the job with a message naming the peer, the BTL and the error (bfo is
// the PML that fails over). Wire format and parameters: README.md.
#include <pml/engine/pml_engine.h>

namespace weft::pml::ob1 {

struct Policy : engine::NoFailover {
    static constexpr const char *name = "ob1";
};

using Engine = engine::Engine<Policy>;

weft_status_t query(int *priority, char *, size_t)
{
    *priority = 20;
    return WEFT_SUCCESS;
}

} // namespace weft::pml::ob1

extern "C" {
// The one symbol the component exports (it is built with -fvisibility=hidden, so that its
// own functions bind locally and inline across the hot paths).
__attribute__((visibility("default"))) extern const weft_pml_component_t mca_pml_ob1_component;
const weft_pml_component_t mca_pml_ob1_component = {
    .mca = {WEFT_MCA_COMPONENT_HEADER(weft_pml_component_t, "pml", WEFT_PML_ABI_MAJOR,
                                      WEFT_PML_ABI_MINOR, "ob1", 0, 1, 0),
            .register_params = weft::pml::ob1::Engine::register_params, .open = nullptr,
            .query = weft::pml::ob1::query, .close = nullptr},
    .init = weft::pml::ob1::Engine::init,
    .finalize = weft::pml::ob1::Engine::finalize,
};
}
