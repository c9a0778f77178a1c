// refs/ must not see store/.
#include "store/store.h"
