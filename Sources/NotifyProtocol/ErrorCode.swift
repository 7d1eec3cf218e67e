/// A stable, machine-readable error code carried in `error.code`; an open set.
public struct ErrorCode: OpenEnumeration {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    // The request itself.
    public static let malformedRequest = ErrorCode("malformed_request")
    public static let unknownCommand = ErrorCode("unknown_command")
    public static let invalidArgument = ErrorCode("invalid_argument")
    public static let lineTooLong = ErrorCode("line_too_long")
    /// notifyd serves as many connections as it allows; this one is closed after the error.
    public static let tooManyConnections = ErrorCode("too_many_connections")
    /// The message cannot fit the platform's payload limit once the backend wraps it.
    public static let messageTooLarge = ErrorCode("message_too_large")
    /// `outbox_max` messages are queued already: this one was not accepted (none was dropped).
    public static let outboxFull = ErrorCode("outbox_full")

    // What the daemon needs before it can act.
    public static let notLoggedIn = ErrorCode("not_logged_in")
    public static let noBackend = ErrorCode("no_backend")
    public static let noToken = ErrorCode("no_token")
    /// A later login replaced this one before the backend answered: the later one is the
    /// one checked and kept.
    public static let loginSuperseded = ErrorCode("login_superseded")
    /// The login's check had not finished when the wait ended: it is not in force yet, and
    /// takes effect by itself if the backend accepts it.
    public static let loginPending = ErrorCode("login_pending")

    // What the backend said.
    public static let unauthorized = ErrorCode("unauthorized")
    public static let backendUnavailable = ErrorCode("backend_unavailable")
    public static let backendRejected = ErrorCode("backend_rejected")
    /// A send failed under a platform name the backend does not know: it refused a
    /// registration under that name. Not retried; the message says what to set.
    public static let unsupportedPlatform = ErrorCode("unsupported_platform")

    // Waiting and the daemon itself.
    public static let timeout = ErrorCode("timeout")
    public static let shuttingDown = ErrorCode("shutting_down")
    /// notifyd was started for this connection (socket activation) but cannot run with its
    /// configuration; the message names what to fix. It exits after answering.
    public static let configError = ErrorCode("config_error")
    public static let internalError = ErrorCode("internal_error")

    /// Never sent by notifyd: what a client reports, under `--json`, when it cannot reach
    /// notifyd or notifyd ended the connection before answering.
    public static let notRunning = ErrorCode("not_running")
    /// Never sent by notifyd: the client's own command line was wrong.
    public static let usage = ErrorCode("usage")
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
