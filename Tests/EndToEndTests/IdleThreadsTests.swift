#if os(Linux) && compiler(>=6.3) && compiler(<6.4)
import DevBackend
import Foundation
import NotifyTestSupport
import Testing

/// An idle notifyd sleeps until something happens, as ssh-agent does: no thread of it
/// wakes on a timer while nothing is pending.
@Suite struct IdleThreadsTests {
    /// The threads of libdispatch's pool (named after its global queues,
    /// `com.apple.root.default-qos` and the like, of which Linux keeps the last 15 bytes).
    /// Once one has run, libdispatch's pool monitor wakes the process every second for the
    /// rest of its life; a pool thread lingers 5 s after its last job, so one that ran any
    /// of the work below is still there to be seen.
    static func libdispatchPoolThreads(of pid: pid_t) -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.compactMap { try? String(contentsOfFile: "/proc/\(pid)/task/\($0)/comm", encoding: .utf8) }
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            .filter { $0.hasSuffix("-qos") }
    }

    @Test func loginRegistrationAndReloadRunOnNotifydsOwnThreadsNotLibdispatchsPool() async throws {
        let backend = DevBackendServer(options: .init(quiet: true))
        try backend.start()
        defer { backend.stop() }
        let daemon = try await DaemonUnderTest(backend: backend.baseURL.absoluteString)
        try await daemon.logIn("alice")
        let token = try await daemon.notifyctl(["set-token", "3f2a1b"])
        #expect(token.status == 0, "\(token.output)\(token.error)")
        #expect(try await daemon.notifyctl(["send", "--to", "bob", "hello"]).status == 0)
        #expect(Self.libdispatchPoolThreads(of: daemon.child.pid) == [], "commands ran on libdispatch's pool")

        // A signal's handler, and the reload it starts.
        daemon.child.signal(SIGHUP)
        #expect(await eventually { daemon.child.standardError.contains("received SIGHUP") })
        #expect(await eventually { daemon.child.standardError.contains("reloaded ") },
                "\(daemon.child.standardError)")
        #expect(Self.libdispatchPoolThreads(of: daemon.child.pid) == [], "the SIGHUP handler ran on libdispatch's pool")
        await daemon.cleanUp()
    }
}
#endif
