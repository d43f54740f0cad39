// The coll framework as the core sees it: name, ABI and how it picks.
#include "mca_framework.h"

#include <coll/coll.h>

WEFT_MCA_FRAMEWORK(coll, COLL, "collective operations, chosen per communicator and function",
                   per_function)
