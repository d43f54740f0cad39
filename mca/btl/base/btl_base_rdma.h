// btl/base: the protocol limits every RDMA-capable BTL shares (ob1-protocols.rst), registered
// per component as btl_<name>_rdma_pipeline_send_length, _rdma_pipeline_frag_size,
// _min_rdma_pipeline_size and _flags, and applied to a module by one validating function, so
// that sm and openib read them the same way.
#ifndef WEFT_BTL_BASE_RDMA_H
#define WEFT_BTL_BASE_RDMA_H

#include <btl/btl.h>
#include <weft/mca.h>

#include <string>

namespace weft::btl::base {

// The component's defaults, as parameter text ("256k").
struct RdmaDefaults {
    const char *pipeline_send_length;
    const char *pipeline_frag_size;
    const char *min_rdma_pipeline_size;
};

struct RdmaParams {
    weft_mca_param_t *send_length = nullptr;
    weft_mca_param_t *frag_size = nullptr;
    weft_mca_param_t *min_pipeline = nullptr;
    weft_mca_param_t *flags = nullptr;
};

// Register the four parameters for btl component `component`.
weft_status_t register_rdma_params(const char *component, const RdmaDefaults &defaults,
                                   RdmaParams &out);

// Set the module's pipeline limits from the parameters and narrow its btl_flags to those named
// in btl_<name>_flags (empty: all it has). false with `why` set when a value cannot work (a
// flag the module does not have, a fragment size of 0).
bool apply_rdma_params(const char *component, const RdmaParams &params, weft_btl_module_t &module,
                       std::string &why);

// The flags as text ("send,put,get,inplace"), for messages.
std::string flags_text(uint32_t flags);

} // namespace weft::btl::base

#endif
