#ifndef CMALLOCINFO_H
#define CMALLOCINFO_H
#include <stddef.h>

/// Bytes in chunks the allocator has handed out (glibc `mallinfo2().uordblks`, main arena),
/// or 0 where that is not available.
size_t bench_allocated_bytes(void);

/// Makes stdout line-buffered, so progress shows up at once when it goes to a file or a pipe (CI).
void bench_line_buffered_stdout(void);

/// Callgrind: zero the counters of every thread / write them out now (valgrind/callgrind.h's
/// client requests; no-ops when valgrind's headers were missing at build time or outside valgrind).
/// Benchmarks/callgrind brackets one measured run with them.
void bench_callgrind_zero(void);
void bench_callgrind_dump(void);

#endif
