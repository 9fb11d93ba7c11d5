// The Swift concurrency runtime's own "is the current task cancelled?", without the retain and
// release of the current task that `Task.isCancelled` pays on every call (≈ 98 instructions
// against ≈ 30 here). `CallbackStream`'s `next()` asks it for every element.
//
// `swift_task_getCurrent` and `swift_task_isCancelled` are exported entry points of the
// concurrency runtime (libswift_Concurrency), part of its stable ABI on Apple platforms, and what
// `Task.isCancelled` itself calls. They use the Swift calling convention. The current task cannot
// be destroyed while it runs, so its pointer is used here without a retain.
#ifndef C_BRIDGES_RUNTIME_H
#define C_BRIDGES_RUNTIME_H

#include <stdbool.h>

// Declared on the platforms Bridges' Swift code uses it on (`RuntimeCancellation.swift`).
#if defined(__APPLE__) || defined(__linux__)

extern void *_Nullable swift_task_getCurrent(void) __attribute__((swiftcall));
extern bool swift_task_isCancelled(void *_Nonnull task) __attribute__((swiftcall));

/// Whether the calling code runs in a task that is cancelled; false outside any task.
static inline __attribute__((always_inline)) bool _bridges_currentTaskIsCancelled(void) {
    void *_Nullable task = swift_task_getCurrent();
    return task != (void *)0 && swift_task_isCancelled(task);
}
#endif

#endif
