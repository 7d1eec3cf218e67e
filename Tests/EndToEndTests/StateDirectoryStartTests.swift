import Foundation
import NotifyTestSupport
import Testing

/// The built notifyd with a state directory it must not use as it is: it refuses to start,
/// with the configuration error status (78) and a message saying what to do.
@Suite struct StateDirectoryStartTests {
    static func start(stateDirectory: String, in directory: ScratchDirectory) async throws -> (status: Int32, output: String, error: String) {
        try await run(BuiltProducts.path("notifyd"), ["--socket", directory.file("s.sock"), "--state-dir", stateDirectory], seconds: 10)
    }

    /// What was reported: with the state directory inside a directory another user can
    /// write, that user swapped it for one of their own with an outbox entry in it, and
    /// notifyd sent "PLANTED BY NOBODY" to bob as alice. notifyd does not start there now,
    /// and `--check-config` says why, with the same status.
    @Test func aStateDirectoryOthersCanSwapStopsTheStartAndNothingIsSent() async throws {
        let backend = try CommandLineTests.backend()
        defer { backend.stop() }
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let shared = directory.file("shared")
        let state = shared + "/notifyd"
        try Self.plant(in: state, backend: backend.baseURL.absoluteString)
        #expect(chmod(shared, 0o777) == 0)
        let arguments = ["--socket", directory.file("s.sock"), "--state-dir", state, "--backend", backend.baseURL.absoluteString]
        let started = try await run(BuiltProducts.path("notifyd"), arguments, seconds: 10)
        let checked = try await run(BuiltProducts.path("notifyd"), arguments + ["--check-config"], seconds: 10)
        for result in [started, checked] {
            #expect(result.status == 78)
            #expect(result.error.contains("\(shared) is writable by other users (mode 777), who could replace the state directory \(state)"), "\(result.error)")
            #expect(result.error.contains("run `chmod go-w \(shared)`"))
        }
        #expect(backend.pushes().isEmpty)

        // Once the directory is safe again, the same files are used (and the message sent).
        #expect(chmod(shared, 0o755) == 0)
        let daemon = try await DaemonUnderTest(backend: backend.baseURL.absoluteString, stateDirectory: state)
        #expect(await eventually { backend.pushes().count == 1 }, "\(daemon.child.standardError)")
        await daemon.cleanUp()
    }

    @Test(.enabled(if: getuid() == 0, "only root can give a file to another user (uid 65534) to test this"))
    func anOutboxEntryOfAnotherUserStopsTheStart() async throws {
        let backend = try CommandLineTests.backend()
        defer { backend.stop() }
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let state = directory.file("notifyd")
        try Self.plant(in: state, backend: backend.baseURL.absoluteString)
        let entry = state + "/outbox/0000000001-apns.json"
        #expect(chown(entry, 65534, 65534) == 0)
        let result = try await Self.start(stateDirectory: state, in: directory)
        #expect(result.status == 78)
        #expect(result.error.contains("\(entry) belongs to uid 65534, not to you (uid 0)"), "\(result.error)")
        #expect(backend.pushes().isEmpty)
    }

    /// alice's credentials and a message to bob in her name, as files notifyd would send.
    static func plant(in state: String, backend: String) throws {
        try FileManager.default.createDirectory(atPath: state + "/outbox", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let credentials = #"{"version": 1, "user": "alice", "password": "alice", "revision": "r1", "saved_at": "2026-01-01T00:00:00Z"}"#
        let entry = #"{"version": 2, "id": "0000000001-apns", "sequence": 1, "to": "bob", "platform": "apns", "message": "PLANTED BY NOBODY", "#
            + #""created_at": "2026-01-01T00:00:00Z", "expires_at": "2099-01-01T00:00:00Z", "attempts": 0, "state": "queued", "#
            + #""account": {"user": "alice", "backend": "\#(backend)"}}"#
        #expect(FileManager.default.createFile(atPath: state + "/credentials.json", contents: Data(credentials.utf8), attributes: [.posixPermissions: 0o600]))
        #expect(FileManager.default.createFile(atPath: state + "/outbox/0000000001-apns.json", contents: Data(entry.utf8), attributes: [.posixPermissions: 0o600]))
    }

    /// A credentials file a restore left readable by others: made 0600 at start, with a
    /// warning that the password may have been read, and the login still works.
    @Test func aCredentialsFileOthersCanReadIsMadePrivateWithAWarning() async throws {
        let backend = try CommandLineTests.backend()
        defer { backend.stop() }
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let state = directory.file("state")
        let first = try await DaemonUnderTest(backend: backend.baseURL.absoluteString, stateDirectory: state)
        try await first.logIn("alice")
        _ = await first.stop()
        await first.cleanUp()
        let credentials = state + "/credentials.json"
        #expect(chmod(credentials, 0o644) == 0)

        let daemon = try await DaemonUnderTest(backend: backend.baseURL.absoluteString, stateDirectory: state)
        #expect(await eventually { daemon.child.standardError.contains("could be read by others (mode 0644); it is 0600 now") },
                "\(daemon.child.standardError)")
        var info = stat()
        #expect(stat(credentials, &info) == 0 && info.st_mode & 0o777 == 0o600)
        let status = try await daemon.notifyctl(["status"])
        #expect(status.output.contains("user:         alice"), "\(status.output)")
        await daemon.cleanUp()
    }

    /// What was reported: an id counter near Int64's end crashed notifyd (SIGILL) at every
    /// start or send, a crash loop under systemd; a negative one made ids start again at 1.
    /// Either is a damaged file now: moved aside with a warning, and ids go on after those
    /// on disk.
    @Test(arguments: ["9223372036854775000", "-5"])
    func aDamagedIdCounterIsMovedAsideAndSendsGoOn(mark: String) async throws {
        let backend = try CommandLineTests.backend()
        defer { backend.stop() }
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let state = directory.file("state")
        try FileManager.default.createDirectory(atPath: state + "/outbox", withIntermediateDirectories: true)
        #expect(chmod(state, 0o700) == 0)
        let counter = state + "/outbox-ids"
        try Data("{\"version\":1,\"reserved_through\":\(mark)}".utf8).write(to: URL(fileURLWithPath: counter))
        #expect(chmod(counter, 0o600) == 0)
        let daemon = try await DaemonUnderTest(backend: backend.baseURL.absoluteString, stateDirectory: state)
        try await daemon.logIn("alice")
        let send = try await daemon.notifyctl(["--json", "send", "--to", "bob", "after the damage"])
        #expect(send.status == 0, "\(send.output)\(send.error)")
        #expect(send.output.contains("\"state\":\"delivered\""), "\(send.output)")
        #expect(daemon.child.isRunning)
        #expect(daemon.child.standardError.contains("outbox id counter \(counter) could not be read (it holds \(mark), not an id number notifyd hands out"),
                "\(daemon.child.standardError)")
        #expect(FileManager.default.fileExists(atPath: counter + ".unreadable"))
        await daemon.cleanUp()
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
        #if os(Linux)
        // Refused from its size, before a byte of it is read: its 200 MB never pass through
        // notifyd's memory (whose peak, the kernel's VmHWM, stays well below that).
        let peak = Self.peakMemoryKiB(of: daemon.child.pid)
        #expect(peak.map { $0 < 100 << 10 } == true, "notifyd's peak memory: \(peak.map { "\($0) KiB" } ?? "unknown")")
        #endif
        #expect(await daemon.stop() == 0)
        #expect(daemon.child.standardError.contains("state file \(state)/state.json could not be read (it is larger than 1 MiB, more than notifyd reads); moved it to \(state)/state.json.corrupt-"),
                "\(daemon.child.standardError)")
        let aside = try FileManager.default.contentsOfDirectory(atPath: state).filter { $0.hasPrefix("state.json.corrupt-") }
        #expect(aside.count == 1)
        // What replaced it is a fresh state, saved at the stop.
        #expect((FileManager.default.contents(atPath: state + "/state.json")?.count ?? 0) < 1000)
        await daemon.cleanUp()
    }

    /// The most memory `pid` has held at once, in KiB (`VmHWM` in /proc/PID/status).
    static func peakMemoryKiB(of pid: pid_t) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return nil }
        return Int(line.dropFirst("VmHWM:".count).trimmingCharacters(in: .whitespaces).split(separator: " ").first ?? "")
    }
}
