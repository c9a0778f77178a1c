// refs/ must not see cli/.
#include "cli/common.h"
