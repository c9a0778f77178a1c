// store/ must not see tests/ (nor anything else at the project root).
#include "tests/store/support.h"
