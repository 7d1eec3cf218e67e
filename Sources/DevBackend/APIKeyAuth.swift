/// The backend service's API key check: the `apikey` header, or when there is none the
/// `apikey` query value (the sample reads both). White space alone is no key.
enum APIKeyAuth {
    static let name = "apikey"

    static func accepts(_ request: HTTPRequest, key expected: String?) -> Bool {
        guard let expected, !expected.isEmpty else { return false }
        let given = request.header(name) ?? QueryString.value(name, in: request.query)
        guard let given, !given.allSatisfy(\.isWhitespace) else { return false }
        return given == expected
    }
}
