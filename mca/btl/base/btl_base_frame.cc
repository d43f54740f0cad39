// The btl framework as the core sees it: name, ABI and how it picks.
#include "mca_framework.h"

#include <btl/btl.h>

WEFT_MCA_FRAMEWORK(btl, BTL, "byte transfer layers, many at once, chosen per peer", all)
