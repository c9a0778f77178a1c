// objects/ must not see refs/ (objects <- refs <- store <- cli).
#include "refs/layout.h"
