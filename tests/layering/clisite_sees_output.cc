// cli/site/ sees cli/output/.
#include "cli/output/html.h"
