/// The error a test throws when only "some error" matters: compare it, or check its type.
package struct Boom: Error, Hashable {
    package init() {}
}

/// An error that carries a code, for tests that check which of several failures arrived.
package struct TestError: Error, Hashable {
    package let code: Int
    package init(code: Int) { self.code = code }
}
