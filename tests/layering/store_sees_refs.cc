// store/ sees refs/ (and objects/ through it).
#include "refs/index.h"
