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

    /// CPU time (user and system, in clock ticks) of the thread of `pid` named `name`.
    static func cpuTicks(of pid: pid_t, thread name: String) -> Int? {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        for task in tasks {
            let comm = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8)) ?? ""
            guard comm.trimmingCharacters(in: .whitespacesAndNewlines) == name,
                  let stat = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/stat", encoding: .utf8),
                  let end = stat.lastIndex(of: ")") else { continue }
            // After the name: state is field 3, utime and stime fields 14 and 15.
            let fields = stat[stat.index(after: end)...].split(separator: " ")
            guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
            return user + system
        }
        return nil
    }

    /// The clock ticks the HTTP thread of `pid` takes over the next second: none for a
    /// thread that sleeps, however loaded the machine; many for one that spins.
    static func httpThreadTicksOverASecond(of pid: pid_t) async throws -> Int {
        let before = try #require(cpuTicks(of: pid, thread: "notifyd-http"))
        try await Task.sleep(for: .seconds(1))
        let after = try #require(cpuTicks(of: pid, thread: "notifyd-http"))
        return after - before
    }

    /// Between requests, with its connections kept, the HTTP thread waits on them and on
    /// libcurl's timer, and takes no CPU: a timer that stayed due would have it poll
    /// without waiting until keep_alive lets the pool go.
    @Test func theHTTPThreadHoldingItsConnectionsTakesNoCPU() async throws {
        let backend = DevBackendServer(options: .init(quiet: true))
        try backend.start()
        defer { backend.stop() }
        let daemon = try await DaemonUnderTest(backend: backend.baseURL.absoluteString, environment: ["NOTIFYD_KEEP_ALIVE": "1h"])
        try await daemon.logIn("alice")
        #expect(try await daemon.notifyctl(["set-token", "3f2a1b"]).status == 0)
        #expect(await eventually { backend.registrations().count == 1 })
        let send = try await daemon.notifyctl(["send", "--to", "bob", "hello"])
        #expect(send.status == 0, "\(send.output)\(send.error)")
        let pid = daemon.child.pid
        #expect(IdleLibcurlTests.mapsLibcurl(pid), "the pool was let go: nothing to measure")
        let resting = try await Self.httpThreadTicksOverASecond(of: pid)
        #expect(resting <= 2, "the HTTP thread took \(resting) ticks in a second of rest")
        await daemon.cleanUp()
    }

    /// Nor while requests wait on a slow backend, nor once libcurl has closed connections
    /// the backend dropped (a socket left watched after its close would be ready for ever).
    @Test func theHTTPThreadWaitsWithoutCPUForASlowBackendAndAfterDroppedConnections() async throws {
        let backend = DevBackendServer(options: .init(quiet: true))
        try backend.start()
        defer { backend.stop() }
        let daemon = try await DaemonUnderTest(backend: backend.baseURL.absoluteString, environment: ["NOTIFYD_KEEP_ALIVE": "1h"])
        try await daemon.logIn("alice")
        let pid = daemon.child.pid

        // Four sends held 2 s by the backend, on four connections.
        try backend.addFault(.init(route: .send, delay: 2, count: 4))
        let lines = (0..<4).map { #"{"id":\#($0),"cmd":"send","to":"user\#($0)","message":"m\#($0)"}"# }
        let sends = Task { try await daemon.exchange(lines) }
        try await Task.sleep(for: .milliseconds(500))
        let waiting = try await Self.httpThreadTicksOverASecond(of: pid)
        #expect(waiting <= 2, "the HTTP thread took \(waiting) ticks in a second of waiting for the backend")
        let replies = try await sends.value
        #expect(replies.count == 4 && replies.allSatisfy { $0.contains(#""state":"delivered""#) }, "\(replies)")

        // The backend drops three kept connections at their next request; libcurl closes
        // each and goes on with the fourth.
        try backend.addFault(.init(route: .send, drop: true, count: 3))
        let send = try await daemon.notifyctl(["send", "--to", "bob", "after the drops"])
        #expect(send.status == 0, "\(send.output)\(send.error)")
        let resting = try await Self.httpThreadTicksOverASecond(of: pid)
        #expect(resting <= 2, "the HTTP thread took \(resting) ticks in a second of rest")
        await daemon.cleanUp()
    }
}
#endif
