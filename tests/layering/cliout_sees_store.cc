// cli/output/ sees store/ (and the layers below).
#include "store/query/query.h"
