// os/lock.h of Apple's SDK, what the package uses: the unfair lock.
// https://developer.apple.com/documentation/os/os_unfair_lock — macOS 10.12+, iOS 10.0+,
// tvOS 10.0+, watchOS 3.0+, visionOS 1.0+ (OS_UNFAIR_LOCK_AVAILABILITY in the header).
#ifndef APPLE_REACH_OS_LOCK_H
#define APPLE_REACH_OS_LOCK_H
#include <stdint.h>
#include <stdbool.h>

#define OS_UNFAIR_LOCK_AVAILABILITY \
    __attribute__((availability(macos, introduced = 10.12))) \
    __attribute__((availability(ios, introduced = 10.0))) \
    __attribute__((availability(tvos, introduced = 10.0))) \
    __attribute__((availability(watchos, introduced = 3.0)))

/// https://developer.apple.com/documentation/os/os_unfair_lock_s
OS_UNFAIR_LOCK_AVAILABILITY
typedef struct os_unfair_lock_s {
    uint32_t _os_unfair_lock_opaque;
} os_unfair_lock, *os_unfair_lock_t;

/// https://developer.apple.com/documentation/os/1646466-os_unfair_lock_lock
OS_UNFAIR_LOCK_AVAILABILITY
void os_unfair_lock_lock(os_unfair_lock_t lock);

/// https://developer.apple.com/documentation/os/1646469-os_unfair_lock_trylock
OS_UNFAIR_LOCK_AVAILABILITY
bool os_unfair_lock_trylock(os_unfair_lock_t lock);

/// https://developer.apple.com/documentation/os/1646464-os_unfair_lock_unlock
OS_UNFAIR_LOCK_AVAILABILITY
void os_unfair_lock_unlock(os_unfair_lock_t lock);

#endif
