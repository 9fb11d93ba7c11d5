// The storage of CBridgesRuntime.h's diagnostics flag, its four-byte lock for Linux (a
// futex-based mutex in the classic three-state form, Drepper, "Futexes Are Tricky", mutex #3,
// with the bounded spin of Rust's std::sync::Mutex before sleeping), the shared-lock entry points
// and the debug checks. The flag's accessors are in the header (static inline).
#include "CBridgesRuntime.h"

bool _bridges_diagnosticsHandlerInstalled = false;

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define BRIDGES_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define BRIDGES_TSAN 1
#endif
#if defined(BRIDGES_TSAN)
#include <sanitizer/tsan_interface.h>
#define TSAN_ANNOTATE(call) call
#else
#define TSAN_ANNOTATE(call) ((void)0)
#endif

#if defined(__APPLE__)
// Between the pre and post annotations TSan ignores the synchronisation of the stripe itself.
void _bridges_lock_shared(os_unfair_lock *lock, const void *sharer) {
    TSAN_ANNOTATE(__tsan_mutex_pre_lock((void *)sharer, 0));
    os_unfair_lock_lock(lock);
    TSAN_ANNOTATE(__tsan_mutex_post_lock((void *)sharer, 0, 0));
}

void _bridges_unlock_shared(os_unfair_lock *lock, const void *sharer) {
    TSAN_ANNOTATE(__tsan_mutex_pre_unlock((void *)sharer, 0));
    os_unfair_lock_unlock(lock);
    TSAN_ANNOTATE(__tsan_mutex_post_unlock((void *)sharer, 0));
}
#endif

#if defined(__linux__)
#include <errno.h>
#include <linux/futex.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

// Under ThreadSanitizer, the lock tells TSan it is a mutex (as its pthread_mutex_* interceptors
// do for glibc's), so that TSan reports lock-order inversions and misuse of this lock, not only
// data races; its own atomics are ignored between each pre and post annotation. The mutex TSan
// sees is `identity`: the word itself, or, for a stripe, the object it is taken for.

// The states of the lock word.
enum {
    UNLOCKED = 0,
    LOCKED = 1,            // held, and no thread sleeps on it
    LOCKED_CONTENDED = 2,  // held, and a thread may sleep on it: the unlock must wake one
};

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
    __asm__ __volatile__("yield");
#endif
}

// Spins a little while the lock is held by a thread that is running (nobody sleeps on it): the
// sections this lock guards are a few loads and stores, so the holder is usually about to
// release it, and a spin is cheaper than two system calls. Returns the last state seen.
static uint32_t spin(uint32_t *lock) {
    for (int spins = 100;; spins--) {
        uint32_t state = __atomic_load_n(lock, __ATOMIC_RELAXED);
        if (state != LOCKED || spins == 0) return state;
        cpu_relax();
    }
}

// The futex system call; `syscall` reads its arguments as longs. errno is left as the caller
// had it (glibc's mutex and os_unfair_lock do not touch it; EAGAIN and EINTR are routine here).
// Always inlined: called out of line, it made `_bridges_unlock` set up a stack frame before its
// fast path; inlined, the frame is set up only on the contended path.
static inline __attribute__((always_inline)) void futex(uint32_t *lock, int operation, uint32_t value) {
    int saved = errno;
    syscall(SYS_futex, lock, (long)operation, (long)value, (long)0, (long)0, (long)0);
    errno = saved;
}

__attribute__((noinline)) static void lock_contended(uint32_t *lock) {
    uint32_t state = spin(lock);
    if (state == UNLOCKED) {
        uint32_t expected = UNLOCKED;
        if (__atomic_compare_exchange_n(lock, &expected, LOCKED, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) return;
        state = expected;
    }
    for (;;) {
        // Announce a sleeper before sleeping; taking the lock this way leaves it marked
        // contended, which costs at most one needless wake-up at the unlock.
        if (state != LOCKED_CONTENDED && __atomic_exchange_n(lock, LOCKED_CONTENDED, __ATOMIC_ACQUIRE) == UNLOCKED) return;
        // Sleeps only if the word is still "contended"; returns at once otherwise (EAGAIN), on
        // a wake-up, or spuriously (EINTR): the loop looks again in every case.
        futex(lock, FUTEX_WAIT_PRIVATE, LOCKED_CONTENDED);
        state = spin(lock);
    }
}

static inline __attribute__((always_inline)) void lock_as(uint32_t *lock, const void *identity) {
    (void)identity;
    TSAN_ANNOTATE(__tsan_mutex_pre_lock((void *)identity, 0));
    uint32_t expected = UNLOCKED;
    if (__builtin_expect(!__atomic_compare_exchange_n(lock, &expected, LOCKED, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED), 0)) {
        lock_contended(lock);
        // Not a tail call: with frame pointers, a tail call made the compiler set up the frame
        // before the fast path too; a plain call keeps it on this path.
        __asm__ __volatile__("" ::: "memory");
    }
    TSAN_ANNOTATE(__tsan_mutex_post_lock((void *)identity, 0, 0));
}

void _bridges_lock(uint32_t *lock) { lock_as(lock, lock); }
void _bridges_lock_shared(uint32_t *lock, const void *sharer) { lock_as(lock, sharer); }

bool _bridges_trylock(uint32_t *lock) {
    TSAN_ANNOTATE(__tsan_mutex_pre_lock(lock, __tsan_mutex_try_lock));
    uint32_t expected = UNLOCKED;
    bool taken = __atomic_compare_exchange_n(lock, &expected, LOCKED, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
    TSAN_ANNOTATE(__tsan_mutex_post_lock(lock, taken ? __tsan_mutex_try_lock : __tsan_mutex_try_lock | __tsan_mutex_try_lock_failed, 0));
    return taken;
}

void _bridges_lock_destroy(uint32_t *lock) {
    (void)lock;
    TSAN_ANNOTATE(__tsan_mutex_destroy(lock, 0));
}

uint32_t _bridges_lock_word(uint32_t *lock) {
    return __atomic_load_n(lock, __ATOMIC_RELAXED);
}

static inline __attribute__((always_inline)) void unlock_as(uint32_t *lock, const void *identity) {
    (void)identity;
    TSAN_ANNOTATE(__tsan_mutex_pre_unlock((void *)identity, 0));
    if (__builtin_expect(__atomic_exchange_n(lock, UNLOCKED, __ATOMIC_RELEASE) == LOCKED_CONTENDED, 0)) {
        futex(lock, FUTEX_WAKE_PRIVATE, 1);
    }
    TSAN_ANNOTATE(__tsan_mutex_post_unlock((void *)identity, 0));
}

void _bridges_unlock(uint32_t *lock) { unlock_as(lock, lock); }
void _bridges_unlock_shared(uint32_t *lock, const void *sharer) { unlock_as(lock, sharer); }

// The locks the calling thread holds, for the debug checks. Locks are never nested deeper than
// a few (nothing acts under a lock); beyond the table's room a lock is simply not tracked.
enum { DEBUG_HELD_MAX = 16 };
static _Thread_local const void *debug_held[DEBUG_HELD_MAX];
static _Thread_local int debug_held_count;

bool _bridges_lock_debug_acquire(const void *lock) {
    for (int i = 0; i < debug_held_count; i++) {
        if (debug_held[i] == lock) return false;
    }
    if (debug_held_count < DEBUG_HELD_MAX) debug_held[debug_held_count++] = lock;
    return true;
}

bool _bridges_lock_debug_release(const void *lock) {
    for (int i = 0; i < debug_held_count; i++) {
        if (debug_held[i] == lock) {
            debug_held[i] = debug_held[--debug_held_count];
            return true;
        }
    }
    return debug_held_count == DEBUG_HELD_MAX;  // a lock taken past the table's room is not known
}
#endif
