// pml/example: a PML built outside the Weft tree from the installed headers alone. It is the
// point-to-point engine of the ob1-style PMLs (<pml/engine/pml_engine.h>) with a policy of its
// own: ob1's (no failover), plus the completion seam turned on for rendezvous headers (RNDV and
// RGET), whose completions it counts and, with pml_example_verbose 1 or more, reports at
// finalize. Everything else (matching, every protocol, the parameters pml_example_*) is the
// engine's.
#include <pml/engine/pml_engine.h>

#include <cstdint>

namespace {

namespace engine = weft::pml::engine;

struct Counts {
    uint64_t completed = 0;
    uint64_t failed = 0;
};
Counts counts;

struct Policy : engine::NoFailover {
    static constexpr const char *name = "example";

    // Seam: completion of fragment types. Only RNDV and RGET headers go out with a callback.
    static constexpr bool wants_completions = true;
    static constexpr bool completion(engine::Frag kind)
    {
        return kind == engine::Frag::rndv || kind == engine::Frag::rget;
    }
    template <class E>
    static void fragment_done(engine::Frag, typename E::Req *, int, weft_status_t status)
    {
        ++(status == WEFT_SUCCESS ? counts.completed : counts.failed);
    }
};

using Engine = engine::Engine<Policy>;

weft_status_t query(int *priority, char *, size_t)
{
    *priority = 1; // below ob1: used when asked for (--mca pml example)
    return WEFT_SUCCESS;
}

weft_status_t finalize()
{
    if (Engine::P && Engine::P->verbose >= 1)
        weft_output(WEFT_OUTPUT_INFO,
                    "pml/example: %llu rendezvous headers completed, %llu in error",
                    static_cast<unsigned long long>(counts.completed),
                    static_cast<unsigned long long>(counts.failed));
    return Engine::finalize();
}

} // namespace

extern "C" {
__attribute__((visibility("default"))) extern const weft_pml_component_t mca_pml_example_component;
const weft_pml_component_t mca_pml_example_component = {
    .mca = {WEFT_MCA_COMPONENT_HEADER(weft_pml_component_t, "pml", WEFT_PML_ABI_MAJOR,
                                      WEFT_PML_ABI_MINOR, "example", 0, 1, 0),
            .register_params = Engine::register_params, .open = nullptr, .query = query,
            .close = nullptr},
    .init = Engine::init,
    .finalize = finalize,
};
}
