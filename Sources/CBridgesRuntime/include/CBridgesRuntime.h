// What Bridges needs below Swift: a process-wide flag read without a lock, and (on Linux) a
// four-byte lock. Nothing here calls into the Swift runtime.
#ifndef C_BRIDGES_RUNTIME_H
#define C_BRIDGES_RUNTIME_H

#include <stdbool.h>

// 1. Whether any diagnostics handler was ever installed in this process (`Diagnostics.withHandler`).
// Until one is, no task can have a task-local handler bound, so a bridge skips reading the
// task-local (BENCHMARKS.md has its cost). Set before the first binding and never cleared: a
// task that sees a bound handler was created after the store, which task creation orders before
// anything the task reads.
extern bool _bridges_diagnosticsHandlerInstalled __attribute__((swift_private));

static inline __attribute__((always_inline)) bool _bridges_diagnosticsHandlerEverInstalled(void) {
    return __atomic_load_n(&_bridges_diagnosticsHandlerInstalled, __ATOMIC_ACQUIRE);
}

static inline __attribute__((always_inline)) void _bridges_noteDiagnosticsHandlerInstalled(void) {
    __atomic_store_n(&_bridges_diagnosticsHandlerInstalled, true, __ATOMIC_RELEASE);
}

// 2. A four-byte lock for Linux (Apple platforms use `os_unfair_lock`, also four bytes; glibc's
// `pthread_mutex_t` is 40 bytes and slower), in CBridgesRuntime.c so that a ThreadSanitizer build
// compiles its mutex annotations: TSan models it as a mutex and ignores the word's own atomics.
#if defined(__linux__)
#include <stdint.h>

/// Takes the lock (`*lock` starts at 0), sleeping in the kernel when another thread holds it.
void _bridges_lock(uint32_t *_Nonnull lock);
/// Takes the lock if nobody holds it; never waits.
bool _bridges_trylock(uint32_t *_Nonnull lock);
/// The lock word, read atomically: 0 free, 1 held, 2 held with a thread asleep on it (or about
/// to sleep). For tests, and to check that no lock is destroyed while held.
uint32_t _bridges_lock_word(uint32_t *_Nonnull lock);
/// Releases a lock the calling thread holds, waking one sleeping thread if there is one.
void _bridges_unlock(uint32_t *_Nonnull lock);
/// Ends a lock's life (nothing to free; tells ThreadSanitizer, in its builds).
void _bridges_lock_destroy(uint32_t *_Nonnull lock);
/// `_bridges_lock` and `_bridges_unlock` of a lock shared by several objects (a stripe), for the
/// object at `sharer`: ThreadSanitizer sees a mutex of that object's own, so objects that share
/// a stripe get no happens-before edge from it. Outside TSan builds, the same as the others.
void _bridges_lock_shared(uint32_t *_Nonnull lock, const void *_Nonnull sharer);
void _bridges_unlock_shared(uint32_t *_Nonnull lock, const void *_Nonnull sharer);
#endif

#if defined(__APPLE__)
#include <os/lock.h>
/// `os_unfair_lock_lock`/`unlock` of a lock shared by several objects, for the object at
/// `sharer`: as on Linux, ThreadSanitizer sees a mutex of that object's own.
void _bridges_lock_shared(os_unfair_lock *_Nonnull lock, const void *_Nonnull sharer);
void _bridges_unlock_shared(os_unfair_lock *_Nonnull lock, const void *_Nonnull sharer);
#endif

// 3. Debug builds' checks of the lock on Linux (`os_unfair_lock` makes them itself, in every
// build): each thread keeps the locks it holds, so that locking one it holds (a self-deadlock)
// and unlocking one it does not hold stop with a message. Thread-local: the checks add no
// synchronisation between threads that ThreadSanitizer would see.
#if defined(__linux__)
/// Notes that the calling thread is about to take `lock`; false if it already holds it.
bool _bridges_lock_debug_acquire(const void *_Nonnull lock);
/// Notes that the calling thread releases `lock`; false if it does not hold it.
bool _bridges_lock_debug_release(const void *_Nonnull lock);
#endif

#endif
