import NotifyProtocol

/// What can go wrong talking to notifyd, worded for the person at the terminal.
public enum ClientError: Error, CustomStringConvertible, Sendable {
    /// No daemon answers at the socket path.
    case notRunning(path: String, detail: String)
    /// The daemon answered with an error.
    case daemon(WireError)
    /// The daemon's answer could not be understood (a much older or newer daemon?).
    case protocolViolation(String)
    /// The connection failed mid-way, or an answer took too long.
    case connection(String)
    /// Something accepted the connection and then closed or reset it before any answer:
    /// a notifyd that cannot start (a configuration error under socket activation).
    case closedBeforeAnswer(path: String, detail: String)

    public var description: String {
        switch self {
        case .notRunning(let path, let detail):
            return "cannot reach notifyd at \(path): \(detail)"
        case .daemon(let error):
            // Whoever answered on the socket wrote it: shown on one line, escapes disarmed.
            return PrintableText.line(error.message)
        case .protocolViolation(let message):
            return "unexpected answer from notifyd: \(message)"
        case .connection(let message):
            return "connection to notifyd failed: \(message)"
        case .closedBeforeAnswer(let path, let detail):
            return "notifyd is not running properly: it closed the connection at \(path) before answering (\(detail))"
        }
    }
}
