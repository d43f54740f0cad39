// The mtl framework as the core sees it: name, ABI and how it picks.
#include "mca_framework.h"

#include <mtl/mtl.h>

WEFT_MCA_FRAMEWORK(mtl, MTL, "matching transport layers for the cm PML", one)
