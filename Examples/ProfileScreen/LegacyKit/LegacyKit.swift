// A legacy SDK as apps still ship it: Swift 5 language mode, plain classes, completion handlers
// called on a queue of its own, request handles that must be cancelled on the main thread.
// Nothing here is Sendable; nothing here is changed for Swift 6. (Built in Swift 5 mode, as
// such a module is; the app that uses it, ProfileScreen, is Swift 6.)
import Dispatch
import Foundation

public final class User {
    public let id: Int
    public var name: String
    public init(id: Int, name: String) { self.id = id; self.name = name }
}

public struct LegacyError: Error, Equatable {
    public let code: Int
    public init(code: Int) { self.code = code }
}

/// A request in flight. Main thread only, like many UI-era SDK objects.
public final class RequestHandle {
    public private(set) var isCancelled = false
    public private(set) var cancelledOnMainThread = false
    var completion: ((Data?, Error?) -> Void)?
    public func cancel() {
        isCancelled = true
        cancelledOnMainThread = Thread.isMainThread || DispatchQueue.getSpecific(key: mainKey) == 1
        completion = nil  // a cancelled request never calls back
    }
}

let mainKey: DispatchSpecificKey<UInt8> = {
    let key = DispatchSpecificKey<UInt8>()
    DispatchQueue.main.setSpecific(key: key, value: 1)
    return key
}()

public final class LegacyClient {
    private let queue = DispatchQueue(label: "LegacyClient.callbacks")
    public private(set) var lastUser: User?
    public private(set) var requests: [RequestHandle] = []

    public init() {}

    /// Calls back later, on the client's queue, with a fresh `User`.
    public func fetchUser(_ id: Int, completion: @escaping (User?, Error?) -> Void) {
        let user = User(id: id, name: id == 42 ? "Ada" : "User \(id)")
        lastUser = user
        queue.async { completion(user, nil) }
    }

    /// Never answers (a server that hangs); returns the handle that stops it.
    public func fetchAvatar(for user: User, completion: @escaping (Data?, Error?) -> Void) -> RequestHandle {
        let request = RequestHandle()
        request.completion = completion
        requests.append(request)
        return request
    }
}

/// A push feed: a closure property, called on the feed's own queue.
public final class LegacyFeed {
    private let queue = DispatchQueue(label: "LegacyFeed")
    public var onItem: ((String) -> Void)?
    public var onEnd: (() -> Void)?
    public init() {}

    /// Sends `items` one by one on the feed's queue, then ends.
    public func play(_ items: [String]) {
        queue.async { [self] in
            for item in items { onItem?(item) }
            onEnd?()
        }
    }
}
