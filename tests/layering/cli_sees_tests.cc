// cli/ must not see tests/.
#include "tests/store/support.h"
