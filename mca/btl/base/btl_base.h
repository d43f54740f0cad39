// btl/base as the core sees it: the one header of mca/btl/base/ that framework/runtime
// includes. The runtime opens the BTLs before the modex (their init publishes their addresses)
// and closes them at finalize; everything else about them is the BML's and the PML's business.
#ifndef WEFT_BTL_BASE_H
#define WEFT_BTL_BASE_H

#include <btl/btl.h>

#include <vector>

namespace weft::btl::base {

// Open the framework, keep every component that accepts (by priority) and make their modules
// (init), kept in that order until close(). Errors (a bad --mca btl list, a named component
// that refuses) are printed. Thread: init.
weft_status_t open_select();

// The modules open_select made (weft_btl_modules() in C).
const std::vector<weft_btl_module_t *> &modules();

// btl_finalize every module, forget them and close the framework. Never waits for a dead peer.
// Thread: init.
void close();

} // namespace weft::btl::base

#endif
