/// Stands in for a delegate proxy: an object that only the stream keeps alive, so that a test
/// can check that it is released.
final class Proxy: Sendable {}
