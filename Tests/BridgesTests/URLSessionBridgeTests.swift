import Bridges
import ExampleSupport
import Foundation
import TestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `withCallback` over a real legacy API: `URLSession.dataTask(with:completionHandler:)`
/// against a server on 127.0.0.1 that this test starts.
@Suite("withCallback + URLSession (real Foundation API)", .serialized, .timeLimit(.minutes(3)))
struct URLSessionBridgeTests {
    @Test func dataTask_deliversTheBody() async throws {
        let server = try LoopbackHTTPServer(routes: ["/hello": .body("hello", contentType: "text/plain")])
        defer { server.stop() }
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }

        let data: Data = try await withCallback { done in
            let task = session.dataTask(with: server.url("/hello")) { data, _, error in done(data, error) }
            task.resume()
            return Cancellation { task.cancel() }
        }
        #expect(String(decoding: data, as: UTF8.self) == "hello")
    }

    @Test func cancellingTheAwaitingTask_cancelsTheURLSessionTask() async throws {
        let hangingRequestArrived = Signal()
        let server = try LoopbackHTTPServer(routes: ["/hang": .hang], onHang: { _ in hangingRequestArrived.open() })
        defer { server.stop() }
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }

        let dataTask = LockedValue<URLSessionDataTask?>(nil)
        let lateResult = Signal()
        let lateError = LockedValue<NSError?>(nil)
        let awaiting = Task {
            try await withCallback(onLateResult: { (result: Result<Data, any Error>) in
                if case .failure(let error) = result { lateError.value = error as NSError }
                lateResult.open()
            }) { done in
                let task = session.dataTask(with: server.url("/hang")) { data, _, error in done(data, error) }
                dataTask.value = task
                task.resume()
                return Cancellation { task.cancel() }
            }
        }
        await hangingRequestArrived.wait()  // the request is really in flight
        awaiting.cancel()
        await #expect(throws: CancellationError.self) { try await awaiting.value }

        // The cancellation reached URLSession: its handler reports NSURLErrorCancelled, and the
        // bridge hands that late result to `onLateResult` instead of dropping it.
        await lateResult.wait()
        #expect(lateError.value?.domain == NSURLErrorDomain)
        #expect(lateError.value?.code == NSURLErrorCancelled)
        let state = dataTask.value?.state
        #expect(state == .canceling || state == .completed)
    }
}
