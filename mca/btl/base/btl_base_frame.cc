// The btl framework as the core sees it: name, ABI and how it picks.
#include "btl_base_fault.h"
#include "mca_framework.h"

#include <btl/btl.h>

WEFT_MCA_FRAMEWORK_WITH_PARAMS(btl, BTL, "byte transfer layers, many at once, chosen per peer", all,
                               weft::btl::base::register_fault_params)
