#if Macros
import BridgesMacros
import BridgesTesting
import Dispatch
import Foundation

// More of the years-old SDK (Swift 5, non-Sendable classes), in the shapes real SDKs have beyond
// withCallback's five: what Apple's importer turns into async methods, several closures, a
// success/failure pair, a returned request id. Each method forwards to a `FakeCompletionAPI` and,
// like real SDKs, calls its closures back on a queue of its own (`SDKQueue`), never the caller's.

/// The queue the fixtures call back on.
public enum SDKQueue {
    static let queue = DispatchQueue(label: "LegacyFixtures.callbacks")

    static func deliver(_ work: @escaping @Sendable () -> Void) { queue.async(execute: work) }

    /// Returns once every callback enqueued before it has run: a test waits here for a second
    /// call that it made the SDK enqueue.
    public static func drained() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async { continuation.resume() }
        }
    }
}

/// A status an SDK reports beside an error, non-optional (`(Status, Error?)`).
public enum LegacyStatus: Int, Sendable {
    case unknown, active, suspended
}

/// A response an SDK passes beside the data (`(Data?, URLResponse?, Error?)`).
public final class LegacyResponse {
    public let code: Int
    public init(code: Int) { self.code = code }
}

/// What the page fake completes with: the two values the handler passes, either of which may
/// be missing.
public struct LegacyPage {
    public var body: String?
    public var response: LegacyResponse?
    public init(body: String?, response: LegacyResponse?) {
        self.body = body
        self.response = response
    }
}

/// The shapes Apple's importer bridges, each with `@Bridged`.
public final class LegacyShapes {
    public let permissions = FakeCompletionAPI<String, Bool>()
    public let statuses = FakeCompletionAPI<Int, LegacyStatus>()
    public let pages = FakeCompletionAPI<Int, LegacyPage>()
    public let records = FakeCompletionAPI<Int, String>()
    public let uploads = FakeCompletionAPI<String, Void>()
    public init() {}

    /// `(Bool, Error?)`: the permission-request shape.
    @Bridged
    public func requestAccess(to entity: String, completionHandler: @escaping (Bool, Error?) -> Void) {
        _ = permissions.call(entity) { result in
            SDKQueue.deliver {
                switch result {
                case .success(let granted): completionHandler(granted, nil)
                case .failure(let error): completionHandler(false, error)
                }
            }
        }
    }

    /// `(Status, Error?)` with a non-optional status.
    @Bridged
    public func status(of id: Int, completion: @escaping (LegacyStatus, Error?) -> Void) {
        _ = statuses.call(id) { result in
            SDKQueue.deliver {
                switch result {
                case .success(let status): completion(status, nil)
                case .failure(let error): completion(.unknown, error)
                }
            }
        }
    }

    /// Two values and an error, returning a handle.
    @Bridged
    public func page(_ number: Int, completion: @escaping (String?, LegacyResponse?, Error?) -> Void) -> LegacyRequest {
        LegacyRequest(
            pages.call(number) { result in
                SDKQueue.deliver {
                    switch result {
                    case .success(let page): completion(page.body, page.response, nil)
                    case .failure(let error): completion(nil, nil, error)
                    }
                }
            })
    }

    /// `(T?, NSError?)`.
    @Bridged
    public func record(_ id: Int, completion: @escaping (String?, NSError?) -> Void) {
        _ = records.call(id) { result in
            SDKQueue.deliver {
                switch result {
                case .success(let record): completion(record, nil)
                case .failure(let error): completion(nil, error as NSError)
                }
            }
        }
    }

    /// The handler before the last parameter.
    @Bridged
    public func upload(_ name: String, completion: @escaping (Error?) -> Void, priority: Int) -> LegacyRequest {
        LegacyRequest(
            uploads.call(name) { result in
                SDKQueue.deliver {
                    if case .failure(let error) = result { completion(error) } else { completion(nil) }
                }
            })
    }
}

/// Several closures: a completion beside a progress closure, and a success/failure pair.
public final class LegacyDownloader {
    public let downloads = FakeCompletionAPI<String, String>()
    public let signIns = FakeCompletionAPI<String, String>()
    public let thumbnails = FakeCompletionAPI<Int, String>()
    public init() {}

    /// Calls `progress` with 0.5 at once and 1.0 before the completion, on the SDK's queue.
    @Bridged(completion: "completion")
    public func download(
        _ url: String, completion: @escaping (String?, Error?) -> Void, progress: @escaping (Double) -> Void
    ) -> LegacyRequest {
        SDKQueue.deliver { progress(0.5) }
        return LegacyRequest(
            downloads.call(url) { result in
                SDKQueue.deliver {
                    switch result {
                    case .success(let file):
                        progress(1.0)
                        completion(file, nil)
                    case .failure(let error): completion(nil, error)
                    }
                }
            })
    }

    /// A success/failure pair, found by its labels.
    @Bridged
    public func signIn(
        user: String, success: @escaping (String) -> Void, failure: @escaping (Error) -> Void
    ) -> LegacyRequest {
        LegacyRequest(
            signIns.call(user) { result in
                SDKQueue.deliver {
                    switch result {
                    case .success(let session): success(session)
                    case .failure(let error): failure(error)
                    }
                }
            })
    }

    /// Returns a request id, not a handle: the async form leaves it.
    @Bridged(returnValue: .ignore)
    public func requestThumbnail(_ id: Int, completion: @escaping (String?, Error?) -> Void) -> Int32 {
        _ = thumbnails.call(id) { result in
            SDKQueue.deliver {
                switch result {
                case .success(let thumbnail): completion(thumbnail, nil)
                case .failure(let error): completion(nil, error)
                }
            }
        }
        return Int32(thumbnails.invocationCount)
    }
}
#endif
