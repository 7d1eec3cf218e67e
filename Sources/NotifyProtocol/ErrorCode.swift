/// A stable, machine-readable error code carried in `error.code`.
///
/// An open set: a newer daemon may send a code this client has never heard of, and
/// that must decode fine (it is shown with its message), never fail.
public struct ErrorCode: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public var description: String { rawValue }

    // The request itself.
    public static let malformedRequest = ErrorCode("malformed_request")
    public static let unknownCommand = ErrorCode("unknown_command")
    public static let invalidArgument = ErrorCode("invalid_argument")
    public static let lineTooLong = ErrorCode("line_too_long")
    /// The message cannot fit the platform's payload limit once the backend wraps it.
    public static let messageTooLarge = ErrorCode("message_too_large")

    // What the daemon needs before it can act.
    public static let notLoggedIn = ErrorCode("not_logged_in")
    public static let noBackend = ErrorCode("no_backend")
    public static let noToken = ErrorCode("no_token")

    // What the backend said.
    public static let unauthorized = ErrorCode("unauthorized")
    public static let backendUnavailable = ErrorCode("backend_unavailable")
    public static let backendRejected = ErrorCode("backend_rejected")

    // Waiting and the daemon itself.
    public static let timeout = ErrorCode("timeout")
    public static let shuttingDown = ErrorCode("shutting_down")
    public static let internalError = ErrorCode("internal_error")
}

/// The `error` object of a failed reply.
public struct WireError: Codable, Hashable, Sendable, Error {
    public var code: ErrorCode
    public var message: String

    public init(code: ErrorCode, message: String) {
        self.code = code
        self.message = message
    }
}
