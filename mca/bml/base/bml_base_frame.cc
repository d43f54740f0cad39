// The bml framework as the core sees it: name, ABI and how it picks.
#include "mca_framework.h"

#include <bml/bml.h>

WEFT_MCA_FRAMEWORK(bml, BML, "per-peer BTL multiplexing", one)
