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

/* Callgrind client requests (no-ops outside valgrind, a few instructions each). */
#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define BENCH_HAVE_CALLGRIND 1
#endif
#endif

void bench_callgrind_zero(void) {
#ifdef BENCH_HAVE_CALLGRIND
    CALLGRIND_ZERO_STATS;
#endif
}

void bench_callgrind_dump(void) {
#ifdef BENCH_HAVE_CALLGRIND
    CALLGRIND_DUMP_STATS_AT("measured");
#endif
}
