import Foundation
import Testing
@testable import NotifyCore
import NotifyTestSupport

struct AtomicFileTests {
    @Test func writesTheBytesWithMode0600() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let path = directory.file("secret.json")
        try AtomicFile.write(Data("hello".utf8), to: path)
        #expect(FileManager.default.contents(atPath: path) == Data("hello".utf8))
        #expect(permissionBits(path) == 0o600)
    }

    @Test func replacesAnExistingFileAndItsLooserMode() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let path = directory.file("secret.json")
        #expect(FileManager.default.createFile(atPath: path, contents: Data("old and longer".utf8), attributes: [.posixPermissions: 0o644]))
        #expect(permissionBits(path) == 0o644)
        try AtomicFile.write(Data("new".utf8), to: path)
        #expect(FileManager.default.contents(atPath: path) == Data("new".utf8))
        #expect(permissionBits(path) == 0o600)
    }

    @Test func leavesNoTemporaryFiles() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        for round in 0..<3 {
            try AtomicFile.write(Data("round \(round)".utf8), to: directory.file("a"))
        }
        try AtomicFile.write(Data(), to: directory.file("b"))
        #expect(try directory.entries() == ["a", "b"])
        #expect(FileManager.default.contents(atPath: directory.file("b")) == Data())
    }

    @Test func missingDirectoryIsAStorageError() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let path = directory.file("missing/state.json")
        let error = #expect(throws: CoreError.self) { try AtomicFile.write(Data("x".utf8), to: path) }
        guard case .storage(let message)? = error else {
            Issue.record("expected a storage error, got \(String(describing: error))")
            return
        }
        #expect(message.contains("cannot write"))
        #expect(try directory.entries() == [])
    }

    @Test func ensureDirectoryCreatesParentsWithMode0700() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let nested = directory.file("state/notifyd")
        try AtomicFile.ensureDirectory(nested)
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: nested, isDirectory: &isDirectory))
        #expect(isDirectory.boolValue)
        #expect(permissionBits(nested) == 0o700)
        // Calling it again is fine.
        try AtomicFile.ensureDirectory(nested)
    }

    @Test func ensureDirectoryOverAFileIsAStorageError() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let path = directory.file("plain")
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        #expect(throws: CoreError.self) { try AtomicFile.ensureDirectory(path) }
    }

    /// What `kill -9` between open and rename leaves: a temporary copy, possibly of the password.
    @Test func staleTemporariesAreRemovedAndOtherFilesKept() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let kept = ["credentials.json", "state.json", "state.json.corrupt-1700000000", "notes.tmp-x", "a.tmp-12", ".tmp-1-2", "b.tmp-1-2-3"]
        let stale = ["credentials.json.tmp-4242-17", "state.json.tmp-1-4294967295"]
        for name in kept + stale {
            #expect(FileManager.default.createFile(atPath: directory.file(name), contents: Data("password".utf8)))
        }
        #expect(AtomicFile.removeStaleTemporaries(in: directory.path) == stale.sorted())
        #expect(try directory.entries() == kept.sorted())
    }

    @Test func staleTemporariesOfOneFileOnly() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        for name in ["credentials.json.tmp-4242-17", "state.json.tmp-4242-18"] {
            #expect(FileManager.default.createFile(atPath: directory.file(name), contents: Data()))
        }
        #expect(AtomicFile.removeStaleTemporaries(in: directory.path, of: "credentials.json") == ["credentials.json.tmp-4242-17"])
        #expect(try directory.entries() == ["state.json.tmp-4242-18"])
        #expect(AtomicFile.removeStaleTemporaries(in: directory.file("missing")) == [])
    }
}
