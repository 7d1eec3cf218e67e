/// A complete response; the server always frames it with `Content-Length`.
struct HTTPResponse: Sendable {
    var status: Int
    var headers: [(name: String, value: String)]
    var body: [UInt8]
    /// Send the headers (Content-Length included) without the body, as HEAD requires.
    var omitsBody = false

    init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    static func text(_ status: Int, _ text: String) -> HTTPResponse {
        HTTPResponse(
            status: status,
            headers: [("Content-Type", "text/plain; charset=utf-8")],
            body: Array(text.utf8)
        )
    }

    static func json(_ status: Int, _ body: [UInt8]) -> HTTPResponse {
        HTTPResponse(
            status: status,
            headers: [("Content-Type", "application/json; charset=utf-8")],
            body: body
        )
    }

    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// The bytes on the wire. `closing` adds `Connection: close` so the client
    /// does not try to reuse a connection the server is about to drop.
    func serialized(closing: Bool, keepAliveForHTTP10: Bool = false) -> [UInt8] {
        var head = "HTTP/1.1 \(status) \(HTTPResponse.reasonPhrase(for: status))\r\n"
        for (name, value) in headers where !HTTPResponse.framingHeaders.contains(name.lowercased()) {
            head += "\(name): \(value)\r\n"
        }
        head += "Content-Length: \(body.count)\r\n"
        if closing {
            head += "Connection: close\r\n"
        } else if keepAliveForHTTP10 {
            head += "Connection: keep-alive\r\n"
        }
        head += "\r\n"
        return Array(head.utf8) + (omitsBody ? [] : body)
    }

    /// Headers the server owns: a handler cannot set them by accident.
    private static let framingHeaders: Set<String> = ["content-length", "connection", "transfer-encoding"]

    static func reasonPhrase(for status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 410: "Gone"
        case 413: "Payload Too Large"
        case 415: "Unsupported Media Type"
        case 417: "Expectation Failed"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        case 505: "HTTP Version Not Supported"
        default: "Status \(status)"
        }
    }
}
