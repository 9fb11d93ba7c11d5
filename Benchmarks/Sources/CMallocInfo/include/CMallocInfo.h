#ifndef CMALLOCINFO_H
#define CMALLOCINFO_H
#include <stddef.h>

/// Bytes in chunks the allocator has handed out (glibc `mallinfo2().uordblks`, main arena),
/// or 0 where that is not available.
size_t bench_allocated_bytes(void);

#endif
