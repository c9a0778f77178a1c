// objects/ must not see store/.
#include "store/core/store.h"
