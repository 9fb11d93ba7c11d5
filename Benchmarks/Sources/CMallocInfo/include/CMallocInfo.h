#ifndef CMALLOCINFO_H
#define CMALLOCINFO_H
#include <stddef.h>

/// Bytes in chunks the allocator has handed out (glibc `mallinfo2().uordblks`, main arena),
/// or 0 where that is not available.
size_t bench_allocated_bytes(void);

/// Makes stdout line-buffered, so progress shows up at once when it goes to a file or a pipe (CI).
void bench_line_buffered_stdout(void);

#endif
