/// One parsed HTTP/1.x request with its whole body.
struct HTTPRequest: Sendable {
    var method: String
    /// The request target as sent: path plus optional `?query`.
    var target: String
    /// 0 for HTTP/1.0, 1 for HTTP/1.1.
    var minorVersion: Int
    /// In arrival order; names keep their case, lookups ignore it.
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    var path: String {
        if let mark = target.firstIndex(of: "?") { return String(target[..<mark]) }
        return target
    }

    var query: String? {
        guard let mark = target.firstIndex(of: "?") else { return nil }
        return String(target[target.index(after: mark)...])
    }

    /// The first value of a header, by case-insensitive name.
    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// Every value of a header, by case-insensitive name.
    func headerValues(_ name: String) -> [String] {
        headers.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
    }

    /// The comma-separated tokens of a list header such as `Connection`, lowercased.
    func headerTokens(_ name: String) -> [String] {
        headerValues(name).flatMap { value in
            value.split(separator: ",").map { $0.trimmingSpaces().lowercased() }
        }
    }

    /// Whether the client lets the connection stay open after this request.
    var keepsAlive: Bool {
        let tokens = headerTokens("Connection")
        if tokens.contains("close") { return false }
        return minorVersion >= 1 || tokens.contains("keep-alive")
    }
}

extension StringProtocol {
    /// Strips the optional whitespace (SP and HTAB) HTTP allows around values.
    func trimmingSpaces() -> String {
        var slice = Substring(self)
        while let first = slice.first, first == " " || first == "\t" { slice.removeFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice.removeLast() }
        return String(slice)
    }
}
