import Foundation
import NotifyCore
import NotifyTestSupport
import Testing

/// Whole files read up to a bound, and no further.
@Suite struct FileContentsTests {
    @Test func aFileUpToTheLimitIsReadWhole() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let path = directory.file("f")
        let bytes = Data((0..<1000).map { UInt8(truncatingIfNeeded: $0) })
        #expect(FileManager.default.createFile(atPath: path, contents: bytes))
        #expect(try FileContents.load(path, limit: 1000) == bytes)
        #expect(throws: FileContents.Problem.tooLarge(limit: 999)) { try FileContents.load(path, limit: 999) }
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        #expect(try FileContents.load(path, limit: 0) == Data())
    }

    /// A sparse file of 200 MB is refused from its size: nothing of it is read.
    @Test func aHugeSparseFileIsRefusedUnread() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let path = directory.file("huge")
        #expect(FileManager.default.createFile(atPath: path, contents: Data("{}".utf8)))
        #expect(truncate(path, 200 << 20) == 0)
        let problem = #expect(throws: FileContents.Problem.self) { try FileContents.load(path, limit: FileContents.mebibyte) }
        #expect(problem == .tooLarge(limit: FileContents.mebibyte))
        #expect(problem?.description == "it is larger than 1 MiB, more than notifyd reads")
    }

    /// What is not a regular file is not read: a directory, or a FIFO, whose open must not
    /// wait for a writer that never comes.
    @Test func onlyRegularFilesAreRead() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        #expect(throws: FileContents.Problem.missing) { try FileContents.load(directory.file("absent"), limit: 10) }
        #expect(throws: FileContents.Problem.notARegularFile) { try FileContents.load(directory.path, limit: 10) }
        let fifo = directory.file("fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(throws: FileContents.Problem.notARegularFile) { try FileContents.load(fifo, limit: 10) }
    }
}
