// btl/base: fault injection on any BTL (btl_base_fault.cc, docs/fault-injection.md).
#ifndef WEFT_BTL_BASE_FAULT_H
#define WEFT_BTL_BASE_FAULT_H

#include <btl/btl.h>

#include <vector>

namespace weft::btl::base {

// btl_base_fault_* (with the framework's own parameters).
weft_status_t register_fault_params();
// Wrap the modules btl_base_fault_rail names (after every component's init).
void fault_wrap(std::vector<weft_btl_module_t *> &modules);
// Forget them (before the modules are finalized).
void fault_close();

} // namespace weft::btl::base

#endif
