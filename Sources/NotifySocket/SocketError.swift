/// A socket or socket-path failure, worded for the person who has to fix it.
public struct SocketError: Error, CustomStringConvertible, Sendable {
    public enum Kind: Sendable {
        /// Nobody listens at the path (no file, or a stale file).
        case notRunning
        case pathTooLong
        case unsafeDirectory
        case io
    }

    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
