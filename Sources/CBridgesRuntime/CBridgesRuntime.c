// Everything is in include/CBridgesRuntime.h (a static inline function, so that Swift code
// inlines it); a C target needs one source file.
#include "CBridgesRuntime.h"
