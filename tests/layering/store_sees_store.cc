// store/ sees its own headers.
#include "store/store.h"
