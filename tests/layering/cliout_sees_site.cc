// cli/output/ must not see cli/site/.
#include "cli/site/site.h"
