import DevBackend
import Foundation
import NotifyTestSupport
import Testing

/// The built notifyd moved from one dev backend to another by a reload: the registration
/// at the old backend is deleted there, also when that backend is down during the switch
/// and notifyd restarts meanwhile; a switch back before that keeps it. The backends are at
/// two origins (ports), so the login made at one is not taken to the other: each switch is
/// followed by a login there, as a user must.
@Suite struct BackendSwitchTests {
    /// Two backends, a config naming the first, and alice registered there.
    struct Setup {
        let old: DevBackendServer
        let new: DevBackendServer
        let scratch: ScratchDirectory
        let daemon: DaemonUnderTest
        let id: String
        /// More of the config, kept at each switch.
        let settings: String

        var config: String { scratch.file("config") }
        var stateDirectory: String { scratch.file("state") }

        init(settings: String = "") async throws {
            old = DevBackendServer(options: .init(quiet: true))
            new = DevBackendServer(options: .init(quiet: true))
            try old.start()
            try new.start()
            scratch = try ScratchDirectory()
            self.settings = settings
            try Data("backend = \(old.baseURL.absoluteString)\n\(settings)".utf8).write(to: URL(fileURLWithPath: scratch.file("config")))
            daemon = try await Self.daemon(config: scratch.file("config"), state: scratch.file("state"))
            try await daemon.logIn("alice")
            let token = try await daemon.notifyctl(["set-token", "3f2a1b"])
            #expect(token.status == 0, "\(token.output)\(token.error)")
            id = try #require(old.registrations().first?.id)
        }

        static func daemon(config: String, state: String) async throws -> DaemonUnderTest {
            try await DaemonUnderTest(backend: nil, extraArguments: ["--config", config], stateDirectory: state)
        }

        /// The reload, then alice's login at the new backend.
        func switchTo(_ backend: DevBackendServer, with daemon: DaemonUnderTest? = nil) async throws {
            let daemon = daemon ?? self.daemon
            try Data("backend = \(backend.baseURL.absoluteString)\n\(settings)".utf8).write(to: URL(fileURLWithPath: config))
            let reload = try await daemon.notifyctl(["reload"])
            #expect(reload.status == 0, "\(reload.output)\(reload.error)")
            let login = try await daemon.notifyctl(["login", "--no-wait", "--password-stdin", "alice"], stdin: Data("alice\n".utf8))
            #expect(login.status == 0 || login.status == 4, "\(login.output)\(login.error)")
        }

        func deletions(at backend: DevBackendServer) -> Int {
            backend.requests().filter { $0.method == "DELETE" && $0.path == "/api/register/" + id }.count
        }

        func end(_ daemons: DaemonUnderTest...) async {
            for daemon in [self.daemon] + daemons { await daemon.cleanUp() }
            old.stop()
            new.stop()
            scratch.remove()
        }
    }

    @Test func aReloadToAnotherBackendDeletesTheRegistrationAtTheOldOne() async throws {
        let setup = try await Setup()
        try await setup.switchTo(setup.new)
        #expect(await eventually { setup.new.registrations().count == 1 && setup.old.registrations().isEmpty },
                "old: \(setup.old.registrations()), new: \(setup.new.registrations())")
        #expect(setup.deletions(at: setup.old) == 1)
        #expect(setup.old.requests().last { $0.method == "DELETE" }?.user == "alice", "with the login that made it")
        let status = try await setup.daemon.notifyctl(["status"])
        #expect(!status.output.contains("old backend"), "\(status.output)")
        #expect(!FileManager.default.fileExists(atPath: setup.stateDirectory + "/retired-registrations.json"))
        await setup.end()
    }

    @Test func anOldBackendDownDuringTheSwitchHasItsRegistrationDeletedOnceBackAcrossARestart() async throws {
        let setup = try await Setup()
        let port = setup.old.port
        try await offThePool { setup.old.stop() }
        let held = try await HeldPort.hold(port)
        let queued = try await setup.daemon.notifyctl(["send", "--to", "bob", "queued for the old backend"])
        #expect(queued.status == 4, "\(queued.output)\(queued.error)")
        try await setup.switchTo(setup.new)
        #expect(await eventually { setup.new.registrations().count == 1 })
        var outbox = ""
        #expect(await eventually {
            outbox = (try? await setup.daemon.notifyctl(["outbox"]).output) ?? ""
            return outbox.contains("queued by alice for \(setup.old.baseURL.absoluteString), which notifyd no longer uses")
        }, "\(outbox)")

        let down = try await setup.daemon.notifyctl(["status"])
        #expect(down.output.contains("old backend:  \(setup.old.baseURL.absoluteString): deleting registration \(setup.id)"), "\(down.output)")
        let json = try await setup.daemon.notifyctl(["status", "--json"])
        #expect(json.output.contains("\"retired_registrations\""), "\(json.output)")
        // The old backend's outage is the old backend's: the one in use answers.
        #expect(json.output.contains("\"unreachable_since\""), "shown with its deletion: \(json.output)")
        #expect(!json.output.contains("backend_unreachable_since"), "not the backend in use's: \(json.output)")
        #expect(!down.output.contains("backend:      \(setup.new.baseURL.absoluteString) (unreachable"), "\(down.output)")
        let file = setup.stateDirectory + "/retired-registrations.json"
        var info = stat()
        #expect(stat(file, &info) == 0 && info.st_mode & 0o777 == 0o600, "it holds the old login's password: 0600 like credentials.json")

        // Restarted while the old backend is still down: the deletion is remembered.
        #expect(await setup.daemon.stop() == 0)
        let restarted = try await Setup.daemon(config: setup.config, state: setup.stateDirectory)
        let again = try await restarted.notifyctl(["status"])
        #expect(again.output.contains("deleting registration \(setup.id)"), "\(again.output)")

        let back = DevBackendServer(options: .init(port: port, quiet: true))
        held.release()
        _ = try back.start()
        defer { back.stop() }
        #expect(await eventually(60) { setup.deletions(at: back) == 1 }, "deleted once the old backend is back")
        #expect(await eventually { !FileManager.default.fileExists(atPath: file) })
        let done = try await restarted.notifyctl(["status"])
        #expect(!done.output.contains("old backend"), "\(done.output)")
        #expect(setup.new.registrations().count == 1, "the new registration stays")
        await setup.end(restarted)
    }

    /// The deletion's backoff is an hour here: only the probe that sees the old backend
    /// back can end its wait, and does.
    @Test func theOldBackendsReturnSeenByTheProbeWakesItsDeletion() async throws {
        let setup = try await Setup(settings: "retry_min = 1h\nretry_max = 1h\n")
        let port = setup.old.port
        try await offThePool { setup.old.stop() }
        let held = try await HeldPort.hold(port)
        try await setup.switchTo(setup.new)
        #expect(await eventually {
            (try? await setup.daemon.notifyctl(["status", "--json"]).output.contains("\"unreachable_since\"")) == true
        }, "the deletion failed, and waits on the old backend's return")
        let back = DevBackendServer(options: .init(port: port, quiet: true))
        held.release()
        _ = try back.start()
        defer { back.stop() }
        #expect(await eventually(60) { setup.deletions(at: back) == 1 }, "deleted once the probe saw it back, not an hour later")
        await setup.end()
    }

    /// While a backend is down, `status` follows its probes as they move apart: each
    /// interval the watch reaches is shown, not the first one for as long as nothing else
    /// changed.
    @Test func statusFollowsTheProbesOfABackendThatIsDown() async throws {
        let setup = try await Setup()
        let port = setup.old.port
        try await offThePool { setup.old.stop() }
        let held = try await HeldPort.hold(port)
        defer { held.release() }
        let queued = try await setup.daemon.notifyctl(["send", "--to", "bob", "waits for the backend"])
        #expect(queued.status == 4, "\(queued.output)\(queued.error)")
        // Each value status shows, in order: however long a poll takes, a status that stayed
        // at the first interval would never reach 8 s, and one that went back would be seen.
        var intervals: [Int] = []
        var seen = ""
        let grew = await eventually(60) {
            seen = (try? await setup.daemon.notifyctl(["status", "--json"]).output) ?? ""
            if let range = seen.range(of: "\"checking_every\":"),
               let interval = Int(seen[range.upperBound...].prefix { $0.isNumber }), intervals.last != interval {
                intervals.append(interval)
            }
            return (intervals.last ?? 0) >= 8
        }
        #expect(grew, "checking every \(intervals) s: \(seen)")
        #expect(intervals == intervals.sorted(), "\(intervals)")
        await setup.end()
    }

    /// A login as someone else at another backend: alice's registration at the first one
    /// is deleted there as alice, once bob's login is accepted.
    @Test func aLoginAtAnotherBackendDeletesTheOldRegistrationWithTheOldLogin() async throws {
        let setup = try await Setup()
        let login = try await setup.daemon.notifyctl(["login", "--backend", setup.new.baseURL.absoluteString, "--password-stdin", "bob"],
                                                     stdin: Data("bob\n".utf8))
        #expect(login.status == 0, "\(login.output)\(login.error)")
        #expect(await eventually { setup.old.registrations().isEmpty && setup.new.registrations().count == 1 })
        #expect(setup.old.requests().last { $0.method == "DELETE" }?.user == "alice")
        #expect(setup.new.registrations().first?.tags.contains("username:bob") == true)
        await setup.end()
    }

    /// Killed while the DELETE waits for the old backend: the deletion is still on disk,
    /// and the restarted notifyd makes it.
    @Test func aKillDuringTheDeletionLosesNothing() async throws {
        let setup = try await Setup()
        try setup.old.addFault(.init(route: .delete, delay: 5, count: 1))
        try await setup.switchTo(setup.new)
        #expect(await eventually { setup.new.registrations().count == 1 })
        #expect(await eventually { setup.old.faults().isEmpty }, "the DELETE reached the old backend and waits there")
        setup.daemon.child.signal(SIGKILL)
        _ = await setup.daemon.child.wait(seconds: 10)
        let restarted = try await Setup.daemon(config: setup.config, state: setup.stateDirectory)
        #expect(await eventually(60) { setup.deletions(at: setup.old) == 2 }, "asked again after the restart")
        #expect(setup.old.registrations().isEmpty)
        #expect(await eventually { !FileManager.default.fileExists(atPath: setup.stateDirectory + "/retired-registrations.json") })
        #expect(setup.new.registrations().count == 1)
        await setup.end(restarted)
    }

    @Test func switchingBackBeforeTheDeletionKeepsTheRegistration() async throws {
        let setup = try await Setup()
        // A wait the backend asked for: no retry of the deletion can come before the switch
        // back, however slowly the machine runs it.
        try setup.old.addFault(.init(route: .delete, status: 503, retryAfter: 600, count: 1000))
        try await setup.switchTo(setup.new)
        #expect(await eventually { setup.new.registrations().count == 1 && setup.deletions(at: setup.old) >= 1 })
        let pending = try await setup.daemon.notifyctl(["status"])
        #expect(pending.output.contains("deleting registration \(setup.id)"), "\(pending.output)")

        setup.old.clearFaults()
        let creates = setup.old.requestCount(route: .create)
        try await setup.switchTo(setup.old)
        #expect(await eventually { setup.new.registrations().isEmpty }, "the new backend's registration is the one retired now")
        var status = ""
        #expect(await eventually { status = (try? await setup.daemon.notifyctl(["status"]).output) ?? ""; return status.contains("registration: registered") }, "\(status)")
        #expect(!status.contains("deleting registration \(setup.id)"), "\(status)")
        #expect(setup.old.registrations().map(\.id) == [setup.id], "the old registration is this device's again")
        #expect(setup.deletions(at: setup.old) == 1, "only the attempt made before the switch back")
        #expect(setup.old.requestCount(route: .create) == creates, "taken back without asking the backend for an id")
        await setup.end()
    }
}
