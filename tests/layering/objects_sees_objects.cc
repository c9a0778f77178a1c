// objects/ sees its own headers.
#include "objects/document.h"
