import Foundation
import Testing
@testable import NotifyCore

/// Collects what a `Logger` hands to its sink.
final class CapturedLog: @unchecked Sendable {
    // @unchecked: every access to `entries` goes through `lock`.
    private let lock = NSLock()
    private var entries: [(LogLevel, String)] = []

    func logger(_ level: LogLevel) -> Logger {
        Logger(level: level) { [self] level, message in self.append(level, message) }
    }

    private func append(_ level: LogLevel, _ message: String) {
        lock.lock()
        defer { lock.unlock() }
        entries.append((level, message))
    }

    var lines: [String] {
        lock.lock()
        defer { lock.unlock() }
        return entries.map(\.1)
    }

    var levels: [LogLevel] {
        lock.lock()
        defer { lock.unlock() }
        return entries.map(\.0)
    }
}

struct LoggerTests {
    private func logAll(_ logger: Logger) {
        logger.error("e")
        logger.warning("w")
        logger.notice("n")
        logger.info("i")
        logger.debug("d")
    }

    @Test(arguments: [
        (LogLevel.error, ["e"]),
        (.warning, ["e", "w"]),
        (.notice, ["e", "w", "n"]),
        (.info, ["e", "w", "n", "i"]),
        (.debug, ["e", "w", "n", "i", "d"]),
    ])
    func passesOnlyLevelsUpToTheConfiguredOne(level: LogLevel, expected: [String]) {
        let captured = CapturedLog()
        logAll(captured.logger(level))
        #expect(captured.lines == expected)
    }

    @Test func sinkReceivesTheLevelOfEachLine() {
        let captured = CapturedLog()
        logAll(captured.logger(.debug))
        #expect(captured.levels == [.error, .warning, .notice, .info, .debug])
    }

    @Test func filteredMessagesAreNotEvenBuilt() {
        let captured = CapturedLog()
        let logger = captured.logger(.warning)
        let counter = Counter()
        logger.debug(counter.next())
        logger.info(counter.next())
        #expect(counter.value == 0)
        logger.warning(counter.next())
        #expect(counter.value == 1)
        #expect(captured.lines == ["message 1"])
    }

    @Test func secretsReachTheSinkRedacted() {
        let captured = CapturedLog()
        let logger = captured.logger(.debug)
        logger.debug("PUT /api/register/1 Authorization: Basic Ym9iOnNlY3JldA==")
        logger.error(#"login {"user":"bob","password":"hunter2"}"#)
        #expect(captured.lines == [
            "PUT /api/register/1 Authorization: Basic [redacted]",
            #"login {"user":"bob","password":"[redacted]"}"#,
        ])
    }

    /// Messages carry text from the backend and socket clients: whatever a caller passes,
    /// the sink gets one line with no control character left to act on a terminal.
    @Test(arguments: [
        ("a\n2026-01-01T00:00:00Z notifyd[1] notice: forged", #"a\n2026-01-01T00:00:00Z notifyd[1] notice: forged"#),
        ("back\rover", #"back\rover"#),
        ("title \u{1B}]0;owned\u{07} set", #"title \u001B]0;owned\u0007 set"#),
        ("csi \u{9B}2J del \u{7F} nel \u{85} tab \t nul \u{0}", #"csi \u009B2J del \u007F nel \u0085 tab \t nul \u0000"#),
        ("line\u{2028}para\u{2029}flip\u{202E}", #"line\u2028para\u2029flip\u202E"#),
        ("émoji 👩‍💻 and “quotes” stay", "émoji 👩‍💻 and “quotes” stay"),
    ])
    func everyMessageReachesTheSinkAsOneLineWithItsControlCharactersEscaped(message: String, expected: String) {
        let captured = CapturedLog()
        captured.logger(.debug).warning(message)
        #expect(captured.lines == [expected])
    }

    @Test func levelsOrderFromErrorToDebugWithSyslogNumbers() {
        #expect(LogLevel.error < .warning)
        #expect(LogLevel.warning < .notice)
        #expect(LogLevel.notice < .info)
        #expect(LogLevel.info < .debug)
        #expect(LogLevel.allCases.map(\.rawValue) == [3, 4, 5, 6, 7])
    }

    @Test(arguments: [("error", LogLevel.error), ("warning", .warning), ("NOTICE", .notice), ("Info", .info), ("debug", .debug)])
    func levelNamesParse(name: String, level: LogLevel) {
        #expect(LogLevel(name: name) == level)
        #expect(LogLevel(name: level.name) == level)
    }

    @Test(arguments: ["", "warn", "verbose", "trace"])
    func unknownLevelNamesAreNil(name: String) {
        #expect(LogLevel(name: name) == nil)
    }
}

/// Counts how often a log message was built.
private final class Counter: @unchecked Sendable {
    // @unchecked: used from one test task only, synchronously.
    private(set) var value = 0
    func next() -> String {
        value += 1
        return "message \(value)"
    }
}
