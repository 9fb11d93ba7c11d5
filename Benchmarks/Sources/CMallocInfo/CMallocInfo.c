#include "CMallocInfo.h"
#include <stdio.h>
#if defined(__linux__)
#include <malloc.h>   /* also brings <features.h>, which defines __GLIBC__ */
#endif

size_t bench_allocated_bytes(void) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    return mallinfo2().uordblks;
#else
    return 0;
#endif
}

void bench_line_buffered_stdout(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
}
