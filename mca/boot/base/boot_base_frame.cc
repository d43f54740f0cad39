// The boot framework as the core sees it: name, ABI and how it picks.
#include "mca_framework.h"

#include <boot/boot.h>

WEFT_MCA_FRAMEWORK(boot, BOOT, "bootstrap: rank, size and address exchange with the launcher", one)
