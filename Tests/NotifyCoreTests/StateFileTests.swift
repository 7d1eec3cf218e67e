import Foundation
import NotifyTestSupport
import Testing
@testable import NotifyCore

/// How every store reads and writes its one-record file, and what a warning says of one it
/// cannot use.
struct StateFileTests {
    struct Record: Codable, Equatable {
        var version: Int
        var number: Int
    }

    static func read(_ path: String) -> StateFile.Reading<Int> {
        StateFile.read(path, limit: 4096, supported: 1, as: Record.self) { record in
            guard record.number >= 0 else { throw DiskFormat.OutOfRange(description: "it holds \(record.number)") }
            return record.number
        }
    }

    @Test func readsWhatItWroteAndTellsEachKindOfFileItCannotUse() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let path = directory.file("record")
        guard case .missing = Self.read(path) else { Issue.record("a missing file"); return }
        try StateFile.write(Record(version: 1, number: 7), to: path, using: .system, naming: "the record")
        guard case .value(7) = Self.read(path) else { Issue.record("\(Self.read(path))"); return }

        try Data(#"{"version": 2, "number": 7}"#.utf8).write(to: URL(fileURLWithPath: path))
        guard case .newer(let newer) = Self.read(path) else { Issue.record("a newer format"); return }
        #expect(newer.version == 2)
        for (text, reason) in [(#"{"version": 1, "number": -1}"#, "it holds -1"), ("{", "not valid JSON"),
                               (#"{"version": 1, "number": "seven"}"#, "unexpected content"),
                               (String(repeating: " ", count: 5000), "it is larger than 4 KiB, more than notifyd reads")] {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            guard case .damaged(let said) = Self.read(path) else { Issue.record("\(text) read"); continue }
            #expect(said.hasPrefix(reason), "\(said)")
        }
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        guard case .damaged(let said) = Self.read(path) else { Issue.record("a directory read"); return }
        #expect(said == "it cannot be read: it is not a regular file")
    }

    /// A warning says the file was moved only when it was: one that could not be moved is
    /// still in place, and a start will find it again.
    @Test func movingAsideSaysWhatHappened() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let path = directory.file("record")
        try Data("{".utf8).write(to: URL(fileURLWithPath: path))
        #expect(StateFile.moveAside(path, to: path + ".unreadable") == "moved it to \(path).unreadable")
        try Data("{".utf8).write(to: URL(fileURLWithPath: path))
        // A directory that is not empty where the file would go: the move fails.
        try FileManager.default.createDirectory(atPath: path + ".blocked/inside", withIntermediateDirectories: true)
        let said = StateFile.moveAside(path, to: path + ".blocked")
        #expect(said.hasPrefix("could not move it aside to \(path).blocked: "), "\(said)")
        #expect(FileManager.default.fileExists(atPath: path))
    }
}
