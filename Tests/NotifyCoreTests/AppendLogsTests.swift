import Foundation
import Testing
@testable import NotifyCore
import NotifyTestSupport

/// The outbox's removal logs, kept open between lines a few at a time.
struct AppendLogsTests {
    private func lines(_ path: String) throws -> [String] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
    }

    @Test func moreLogsThanKeptOpenStillGetEveryLine() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let logs = AppendLogs(limit: 3)
        let paths = (0..<5).map { scratch.file("log\($0)") }
        for round in 0..<3 {
            for path in paths { #expect(logs.append("line \(round)", to: path) == nil) }
            #expect(logs.openCount == 3)
        }
        for path in paths { #expect(try lines(path) == ["line 0", "line 1", "line 2"]) }
        logs.closeLog(paths[4])
        #expect(logs.openCount == 2)
        logs.closeLog(paths[0])
        #expect(logs.openCount == 2, "not open: nothing to close")
    }

    /// A line cut short (a full disk, a crash of the machine) does not run into the next:
    /// the id after it is still read whole.
    @Test func aLineCutShortDoesNotSpoilTheNext() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let path = scratch.file("batch.done")
        try Data("0000000001-apns\n0000000002-ap".utf8).write(to: URL(fileURLWithPath: path))
        let logs = AppendLogs(limit: 8)
        #expect(logs.append("0000000003-apns", to: path) == nil)
        #expect(try lines(path) == ["0000000001-apns", "0000000002-ap", "0000000003-apns"])
    }

    @Test func aLogThatCannotBeOpenedSaysWhyAndKeepsNothingOpen() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let logs = AppendLogs(limit: 8)
        #expect(logs.append("x", to: scratch.file("missing/dir/log")) == ENOENT)
        #expect(logs.openCount == 0)
    }
}
