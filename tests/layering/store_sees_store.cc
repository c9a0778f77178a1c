// store/ sees its own headers.
#include "store/core/store.h"
