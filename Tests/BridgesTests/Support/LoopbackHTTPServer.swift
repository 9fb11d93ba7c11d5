#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A minimal HTTP/1.1 server on 127.0.0.1 and an ephemeral port, for tests of real
/// `URLSession` calls. `GET /hello` answers at once; `GET /hang` is read and never answered
/// until ``stop()``, so a test can cancel a request that is really in flight.
final class LoopbackHTTPServer: @unchecked Sendable {  // mutable state is guarded by `lock`
    let port: UInt16
    /// Opened each time a request for `/hang` has been read.
    let hangingRequestArrived = Signal()
    private let listener: Int32
    private let lock = NSLock()
    private var connections: [Int32] = []
    private var stopped = false

    init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
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

    func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    func stop() {
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
        if line.hasPrefix("GET /hang ") {
            hangingRequestArrived.open()
            return  // never answered; closed by stop() or by the client cancelling
        }
        let body = line.hasPrefix("GET /hello ") ? "hello" : "not found"
        let status = line.hasPrefix("GET /hello ") ? "200 OK" : "404 Not Found"
        let response = "HTTP/1.1 \(status)\r\nContent-Length: \(body.utf8.count)\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n\(body)"
        _ = response.withCString { write(connection, $0, strlen($0)) }
    }
}

private extension [UInt8] {
    var containsHeaderEnd: Bool {
        count >= 4 && indices.dropLast(3).contains { self[$0] == 13 && self[$0 + 1] == 10 && self[$0 + 2] == 13 && self[$0 + 3] == 10 }
    }
}
