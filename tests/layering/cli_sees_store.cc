// cli/ sees store/ (and the layers below).
#include "store/verify/verify.h"
