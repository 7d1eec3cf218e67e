import Foundation
import NotifyTestSupport
import Testing

/// The built notifyd with a state directory it must not use as it is: it refuses to start,
/// with the configuration error status (78) and a message saying what to do.
@Suite struct StateDirectoryStartTests {
    static func start(stateDirectory: String, in directory: ScratchDirectory) async throws -> (status: Int32, output: String, error: String) {
        try await run(BuiltProducts.path("notifyd"), ["--socket", directory.file("s.sock"), "--state-dir", stateDirectory], seconds: 10)
    }

    @Test func aStateFileFromANewerNotifydStopsTheStartWithStatus78() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let state = directory.file("state")
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let newer = Data(#"{"version": 99}"#.utf8)
        #expect(FileManager.default.createFile(atPath: state + "/state.json", contents: newer, attributes: [.posixPermissions: 0o600]))
        let result = try await Self.start(stateDirectory: state, in: directory)
        #expect(result.status == 78)
        #expect(result.error.contains("\(state)/state.json was written by a newer notifyd (format 99; this one reads formats up to 1); refusing to overwrite it"), "\(result.error)")
        #expect(FileManager.default.contents(atPath: state + "/state.json") == newer)
        #expect(try FileManager.default.contentsOfDirectory(atPath: state) == ["state.json"])
    }

    /// A 200 MB state file (sparse: it costs no disk) is refused from its size, moved aside
    /// with a warning, and notifyd starts afresh.
    @Test func aHugeStateFileIsMovedAsideAndNotifydStarts() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let state = directory.file("state")
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        #expect(FileManager.default.createFile(atPath: state + "/state.json", contents: Data("{".utf8), attributes: [.posixPermissions: 0o600]))
        #expect(truncate(state + "/state.json", 200 << 20) == 0)
        let daemon = try await DaemonUnderTest(backend: nil, stateDirectory: state)
        #expect(try await daemon.notifyctl(["ping"]).status == 0)
        #expect(await daemon.stop() == 0)
        #expect(daemon.child.standardError.contains("state file \(state)/state.json could not be read (it is larger than 1 MiB, more than notifyd reads); moved it to \(state)/state.json.corrupt-"),
                "\(daemon.child.standardError)")
        let aside = try FileManager.default.contentsOfDirectory(atPath: state).filter { $0.hasPrefix("state.json.corrupt-") }
        #expect(aside.count == 1)
        // What replaced it is a fresh state, saved at the stop.
        #expect((FileManager.default.contents(atPath: state + "/state.json")?.count ?? 0) < 1000)
        await daemon.cleanUp()
    }
}
