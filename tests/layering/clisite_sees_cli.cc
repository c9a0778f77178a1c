// cli/site/ must not see the commands of cli/.
#include "cli/common.h"
