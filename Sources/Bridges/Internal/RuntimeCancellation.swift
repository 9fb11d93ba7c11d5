import CBridgesRuntime

/// `Task.isCancelled` without retaining and releasing the current task: the concurrency
/// runtime's own entry points, called directly (`CBridgesRuntime.h`, which declares them on the
/// same platforms as the condition below). About 30 instructions against 98; `CallbackStream`'s
/// `next()` pays it once per element. Elsewhere, `Task.isCancelled`.
@inlinable
var _currentTaskIsCancelled: Bool {
    @inline(__always) get {
        #if os(macOS) || os(iOS) || os(tvOS) || os(watchOS) || os(visionOS) || os(Linux) || os(Android)
        return _bridges_currentTaskIsCancelled()
        #else
        return Task.isCancelled
        #endif
    }
}
