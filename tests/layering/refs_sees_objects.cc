// refs/ sees objects/.
#include "objects/digest.h"
