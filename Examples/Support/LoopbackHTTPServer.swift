#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A minimal HTTP/1.1 server on 127.0.0.1 and an ephemeral port, so examples and tests make
/// real `URLSession` calls offline. Each path answers with its route's body, or never answers
/// (`.hang`) until ``stop()``, so a caller can cancel a request that is really in flight.
public final class LoopbackHTTPServer: @unchecked Sendable {  // mutable state is guarded by `lock`
    public enum Route: Sendable {
        case body(String, contentType: String = "application/json")
        /// Reads the request and never answers; `onHang` is called with the path.
        case hang
    }

    public let port: UInt16
    private let routes: [String: Route]
    private let onHang: @Sendable (String) -> Void
    private let listener: Int32
    private let lock = NSLock()
    private var connections: [Int32] = []
    private var stopped = false

    /// Starts serving `routes` (keyed by path, query included) on 127.0.0.1.
    public init(routes: [String: Route], onHang: @escaping @Sendable (String) -> Void = { _ in }) throws {
        self.routes = routes
        self.onHang = onHang
        #if canImport(Glibc)
        let streamSocket = Int32(SOCK_STREAM.rawValue)  // an enum in Glibc
        #else
        let streamSocket = SOCK_STREAM  // an Int32 in Darwin
        #endif
        let listener = socket(AF_INET, streamSocket, 0)
        guard listener >= 0 else { throw POSIXError(.EIO) }
        var yes: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, 16) == 0 else { close(listener); throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        self.listener = listener
        port = UInt16(bigEndian: address.sin_port)
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    public func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    public func stop() {
        let toClose: [Int32] = lock.withLock {
            stopped = true
            defer { connections = [] }
            return connections
        }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for connection in toClose { shutdown(connection, Int32(SHUT_RDWR)); close(connection) }
    }

    private func acceptLoop() {
        while true {
            let connection = accept(listener, nil, nil)
            if connection < 0 { return }  // listener closed by stop()
            let keep: Bool = lock.withLock {
                if stopped { return false }
                connections.append(connection)
                return true
            }
            guard keep else { close(connection); return }
            Thread { [self] in serve(connection) }.start()
        }
    }

    private func serve(_ connection: Int32) {
        var request = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !request.containsHeaderEnd {
            let count = read(connection, &buffer, buffer.count)
            if count <= 0 { return }
            request += buffer[0..<count]
        }
        let line = String(decoding: request.prefix { $0 != 13 }, as: UTF8.self)
        let parts = line.split(separator: " ")
        let path = parts.count >= 2 ? String(parts[1]) : ""
        let response: String
        switch routes[path] {
        case .hang?:
            onHang(path)
            return  // never answered; closed by stop() or by the client cancelling
        case .body(let body, let contentType)?:
            response = "HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\nContent-Type: \(contentType)\r\nConnection: close\r\n\r\n\(body)"
        case nil:
            response = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        }
        _ = response.withCString { write(connection, $0, strlen($0)) }
    }
}

private extension [UInt8] {
    var containsHeaderEnd: Bool {
        count >= 4 && indices.dropLast(3).contains { self[$0] == 13 && self[$0 + 1] == 10 && self[$0 + 2] == 13 && self[$0 + 3] == 10 }
    }
}
