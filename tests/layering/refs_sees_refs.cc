// refs/ sees its own headers.
#include "refs/layout.h"
