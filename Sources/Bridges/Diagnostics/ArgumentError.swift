/// Stops the program for an argument no call may pass (a negative capacity or replay count):
/// a programming error, like an index out of range. The message names the argument, its value
/// and the caller's file and line (`fileID`/`line` taken by the public function), in release
/// builds too: `precondition` drops its message under `-O`, `fatalError` keeps it.
@usableFromInline
func _argumentError(_ message: String, fileID: String, line: UInt) -> Never {
    fatalError(_argumentErrorMessage(message, fileID: fileID, line: line))
}

/// The text `_argumentError` stops with.
@usableFromInline
func _argumentErrorMessage(_ message: String, fileID: String, line: UInt) -> String {
    "\(message) (called at \(fileID):\(line))"
}
