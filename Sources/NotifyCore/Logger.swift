#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

public enum LogLevel: Int, Comparable, Sendable, CaseIterable {
    case error = 3, warning = 4, notice = 5, info = 6, debug = 7

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }

    public var name: String {
        switch self {
        case .error: "error"
        case .warning: "warning"
        case .notice: "notice"
        case .info: "info"
        case .debug: "debug"
        }
    }

    public init?(name: String) {
        guard let level = LogLevel.allCases.first(where: { $0.name == name.lowercased() }) else { return nil }
        self = level
    }
}

/// Line-oriented logging to stderr. Under systemd (`$JOURNAL_STREAM`) each line starts
/// with its `<N>` syslog priority so the journal files it right; elsewhere lines carry a
/// timestamp and the level. Every line passes through `Redaction` first, and is then kept
/// to one line: a message carries text from the backend and from socket clients, and a
/// newline or an escape sequence in it must not forge a line of its own or reach the
/// terminal showing the log.
public struct Logger: Sendable {
    private let threshold: Threshold
    private let sink: @Sendable (LogLevel, String) -> Void
    /// What writes the lines, when a thread does (`standardError`).
    private let writer: LogWriter?

    /// Shared by every copy of a logger, so a reload changes the level everywhere.
    private final class Threshold: Sendable {
        let level: Mutex<LogLevel>
        init(_ level: LogLevel) { self.level = Mutex(level) }
    }

    public init(level: LogLevel, sink: @escaping @Sendable (LogLevel, String) -> Void) {
        self.init(level: level, writer: nil, sink: sink)
    }

    private init(level: LogLevel, writer: LogWriter?, sink: @escaping @Sendable (LogLevel, String) -> Void) {
        self.threshold = Threshold(level)
        self.writer = writer
        self.sink = sink
    }

    /// Returns once the lines logged so far are written, or after `seconds`: before exit.
    public func flush(within seconds: Double) {
        writer?.flush(within: seconds)
    }

    public var level: LogLevel { threshold.level.withLock { $0 } }

    /// For a configuration reload: applies to this logger and all its copies.
    public func setLevel(_ level: LogLevel) {
        threshold.level.withLock { $0 = level }
    }

    /// The daemon's logger: stderr, journal-style while `journal` says systemd is reading
    /// (a reload may put a log file in its place, or take it away), written by a
    /// `LogWriter`, so that a log nobody reads never blocks the caller.
    public static func standardError(level: LogLevel, journal: @escaping @Sendable () -> Bool) -> Logger {
        let format: @Sendable (LogLevel, String) -> [UInt8] = { level, message in
            Array((journal()
                ? "<\(level.rawValue)>\(message)\n"
                : "\(Date().formatted(.iso8601)) notifyd[\(getpid())] \(level.name): \(message)\n").utf8)
        }
        let writer = LogWriter { format(.warning, $0) }
        return Logger(level: level, writer: writer) { level, message in writer.enqueue(format(level, message)) }
    }

    public static let silent = Logger(level: .error) { _, _ in }

    public func log(_ level: LogLevel, _ message: @autoclosure () -> String) {
        guard level <= self.level else { return }
        sink(level, PrintableText.line(Redaction.redact(message())))
    }

    public func error(_ message: @autoclosure () -> String) { log(.error, message()) }
    public func warning(_ message: @autoclosure () -> String) { log(.warning, message()) }
    public func notice(_ message: @autoclosure () -> String) { log(.notice, message()) }
    public func info(_ message: @autoclosure () -> String) { log(.info, message()) }
    public func debug(_ message: @autoclosure () -> String) { log(.debug, message()) }
}
