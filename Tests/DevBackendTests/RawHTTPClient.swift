import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A bare TCP client for what URLSession cannot be made to send: exact bytes,
/// `Expect: 100-continue`, chunked bodies, malformed requests, pipelining.
///
/// Receives time out after a few seconds so a broken server fails the test
/// instead of hanging it.
final class RawHTTPClient {
    struct Response {
        var status: Int
        var headers: [(String, String)]
        var body: [UInt8]

        func header(_ name: String) -> String? {
            headers.first { $0.0.lowercased() == name.lowercased() }?.1
        }

        var text: String { String(decoding: body, as: UTF8.self) }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let fd: Int32
    private var buffer: [UInt8] = []

    init(port: Int) throws {
        fd = try Self.connected(port: port)
    }

    /// A socket connected to `port`, closed here if the connection fails. Kept out of
    /// `init` on purpose: once `fd` is set, `deinit` runs even when `init` throws, and a
    /// second close would hit whatever descriptor another thread opened meanwhile.
    private static func connected(port: Int) throws -> Int32 {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw Failure(description: "socket failed") }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            let reason = errno
            close(fd)
            throw Failure(description: "connect failed: errno \(reason)")
        }
        return fd
    }

    deinit {
        close(fd)
    }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { raw in
                Foundation.send(fd, raw.baseAddress! + offset, raw.count - offset, 0)
            }
            guard sent > 0 else { throw Failure(description: "send failed: errno \(errno)") }
            offset += sent
        }
    }

    /// Reads one response (an interim 1xx has no body), framed by Content-Length.
    func readResponse() throws -> Response {
        var response = try readHead()
        if response.status >= 200, let length = response.header("Content-Length").flatMap({ Int($0) }) {
            while buffer.count < length {
                guard try receive() else { throw Failure(description: "closed inside the body") }
            }
            response.body = Array(buffer[0..<length])
            buffer.removeFirst(length)
        }
        return response
    }

    /// Reads a status line and headers only, as for the answer to HEAD.
    func readHead() throws -> Response {
        let headEnd = try readUntilBlankLine()
        let head = String(decoding: buffer[0..<headEnd], as: UTF8.self)
        buffer.removeFirst(headEnd + 4)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/1."), let status = Int(statusLine[1]) else {
            throw Failure(description: "bad status line in \(head)")
        }
        let headers = lines.map { line -> (String, String) in
            let parts = line.split(separator: ":", maxSplits: 1)
            return (String(parts[0]), parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : "")
        }
        return Response(status: status, headers: headers, body: [])
    }

    /// True when the server has closed the connection (and sent nothing more).
    func isClosedByServer() throws -> Bool {
        guard buffer.isEmpty else { return false }
        return try !receive()
    }

    private func readUntilBlankLine() throws -> Int {
        while true {
            if buffer.count >= 4 {
                for index in 0...(buffer.count - 4)
                where buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13 && buffer[index + 3] == 10 {
                    return index
                }
            }
            guard try receive() else { throw Failure(description: "closed before a response head") }
        }
    }

    /// False on orderly close or reset; throws on timeout.
    private func receive() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count > 0 {
            buffer.append(contentsOf: chunk[0..<count])
            return true
        }
        if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
            throw Failure(description: "timed out waiting for the server")
        }
        return false
    }
}
