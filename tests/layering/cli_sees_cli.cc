// cli/ sees its own headers.
#include "cli/common.h"
