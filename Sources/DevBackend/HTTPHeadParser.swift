/// Parses the request line and header fields (RFC 9112), strictly enough that a
/// malformed request gets a clear 400 instead of a guess.
enum HTTPHeadParser {
    struct Head {
        var method: String
        var target: String
        var minorVersion: Int
        var headers: [(name: String, value: String)]
    }

    /// `bytes` is everything before the blank line that ends the head.
    static func parse(_ bytes: ArraySlice<UInt8>) -> Result<Head, HTTPRejection> {
        let lines = splitLines(bytes)
        guard let requestLine = lines.first else {
            return .failure(HTTPRejection(400, "empty request"))
        }
        let head: Head
        switch parseRequestLine(requestLine) {
        case .success(let parsed): head = parsed
        case .failure(let rejection): return .failure(rejection)
        }
        var result = head
        for line in lines.dropFirst() {
            switch parseField(line) {
            case .success(let field): result.headers.append(field)
            case .failure(let rejection): return .failure(rejection)
            }
        }
        if result.minorVersion >= 1 && !result.headers.contains(where: { $0.name.lowercased() == "host" }) {
            return .failure(HTTPRejection(400, "an HTTP/1.1 request needs a Host header"))
        }
        return .success(result)
    }

    private static func splitLines(_ bytes: ArraySlice<UInt8>) -> [ArraySlice<UInt8>] {
        var lines: [ArraySlice<UInt8>] = []
        var start = bytes.startIndex
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if bytes[index] == 13, index + 1 < bytes.endIndex, bytes[index + 1] == 10 {
                lines.append(bytes[start..<index])
                index += 2
                start = index
            } else {
                index += 1
            }
        }
        lines.append(bytes[start..<bytes.endIndex])
        return lines
    }

    private static func parseRequestLine(_ line: ArraySlice<UInt8>) -> Result<Head, HTTPRejection> {
        guard !line.contains(where: isForbiddenControl) else {
            return .failure(HTTPRejection(400, "control character in the request line"))
        }
        let parts = line.split(separator: 32, omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            return .failure(HTTPRejection(400, "the request line must be METHOD TARGET HTTP/1.x"))
        }
        let method = String(decoding: parts[0], as: UTF8.self)
        guard !method.isEmpty, method.utf8.allSatisfy(isTokenByte) else {
            return .failure(HTTPRejection(400, "invalid method"))
        }
        var target = String(decoding: parts[1], as: UTF8.self)
        guard !target.isEmpty else {
            return .failure(HTTPRejection(400, "empty request target"))
        }
        if !target.hasPrefix("/") {
            guard let path = originForm(ofAbsolute: target) else {
                return .failure(HTTPRejection(400, "the request target must be a path"))
            }
            target = path
        }
        let version = String(decoding: parts[2], as: UTF8.self)
        let minor: Int
        switch version {
        case "HTTP/1.1": minor = 1
        case "HTTP/1.0": minor = 0
        default:
            if version.hasPrefix("HTTP/") {
                return .failure(HTTPRejection(505, "only HTTP/1.0 and HTTP/1.1 are supported"))
            }
            return .failure(HTTPRejection(400, "invalid HTTP version"))
        }
        return .success(Head(method: method, target: target, minorVersion: minor, headers: []))
    }

    /// A proxy-style `http://host:port/path?query` target, reduced to its path.
    private static func originForm(ofAbsolute target: String) -> String? {
        let lower = target.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://") else { return nil }
        let afterScheme = target[target.range(of: "://")!.upperBound...]
        guard let slash = afterScheme.firstIndex(where: { $0 == "/" || $0 == "?" }) else { return "/" }
        let rest = String(afterScheme[slash...])
        return rest.hasPrefix("/") ? rest : "/" + rest
    }

    private static func parseField(_ line: ArraySlice<UInt8>) -> Result<(name: String, value: String), HTTPRejection> {
        if let first = line.first, first == 32 || first == 9 {
            return .failure(HTTPRejection(400, "folded header lines are not accepted"))
        }
        guard let colon = line.firstIndex(of: 58) else {
            return .failure(HTTPRejection(400, "header line without ':'"))
        }
        let nameBytes = line[line.startIndex..<colon]
        guard !nameBytes.isEmpty, nameBytes.allSatisfy(isTokenByte) else {
            return .failure(HTTPRejection(400, "invalid header name"))
        }
        let valueBytes = line[(colon + 1)...]
        guard !valueBytes.contains(where: isForbiddenControl) else {
            return .failure(HTTPRejection(400, "control character in a header value"))
        }
        let name = String(decoding: nameBytes, as: UTF8.self)
        let value = String(decoding: valueBytes, as: UTF8.self).trimmingSpaces()
        return .success((name, value))
    }

    /// tchar of RFC 9110: letters, digits and ``!#$%&'*+-.^_`|~``.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }

    /// Control characters other than horizontal tab, which values may contain.
    private static func isForbiddenControl(_ byte: UInt8) -> Bool {
        (byte < 32 && byte != 9) || byte == 127
    }
}

/// A request the server refuses before any handler sees it; the connection closes after.
struct HTTPRejection: Error {
    var status: Int
    var message: String

    init(_ status: Int, _ message: String) {
        self.status = status
        self.message = message
    }

    var response: HTTPResponse { .text(status, message + "\n") }
}
