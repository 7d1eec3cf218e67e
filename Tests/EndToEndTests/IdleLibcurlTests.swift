#if os(Linux)
import DevBackend
import Foundation
import NotifyTestSupport
import Testing

/// An idle notifyd does not keep libcurl: once `keep_alive` has passed with no request, it
/// is unloaded with the libraries it brought (about 430 KiB of dirty pages with Debian's),
/// and the next request loads it again. Nor is it loaded before the first request.
@Suite struct IdleLibcurlTests {
    static func mappedLibraries(of pid: pid_t) -> Set<String> {
        // Read to its end: Foundation reads a file of size 0, as /proc's are, one page only.
        let maps = String(decoding: FileHandle(forReadingAtPath: "/proc/\(pid)/maps")?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
        return Set(maps.split(separator: "\n").compactMap { line in
            line.split(separator: " ", omittingEmptySubsequences: true).last.map(String.init).flatMap { $0.contains(".so") ? $0 : nil }
        })
    }

    static func mapsLibcurl(_ pid: pid_t) -> Bool { mappedLibraries(of: pid).contains { $0.contains("/libcurl") } }

    @Test func libcurlIsUnloadedWhileIdleAndLoadedAgainForASend() async throws {
        let backend = DevBackendServer(options: .init(quiet: true))
        try backend.start()
        defer { backend.stop() }
        let daemon = try await DaemonUnderTest(backend: backend.baseURL.absoluteString, environment: ["NOTIFYD_KEEP_ALIVE": "1s"])
        #expect(!Self.mapsLibcurl(daemon.child.pid), "loaded before any request")
        try await daemon.logIn("alice")
        let token = try await daemon.notifyctl(["set-token", "3f2a1b"])
        #expect(token.status == 0, "\(token.output)\(token.error)")
        let pid = daemon.child.pid
        #expect(await eventually { !Self.mapsLibcurl(pid) }, "libcurl still mapped when idle: \(Self.mappedLibraries(of: pid).sorted())")

        let send = try await daemon.notifyctl(["send", "--to", "bob", "after idle"])
        #expect(send.status == 0, "\(send.output)\(send.error)")
        #expect(backend.pushes().map(\.displayedText) == ["From alice: after idle"])
        #expect(await eventually { !Self.mapsLibcurl(pid) }, "not unloaded again after the send")
        await daemon.cleanUp()
    }

    /// A reload that shortens `keep_alive` reaches the HTTP thread waiting out the old one.
    @Test func aReloadedKeepAliveIsTheOneWaitedFor() async throws {
        let backend = DevBackendServer(options: .init(quiet: true))
        try backend.start()
        defer { backend.stop() }
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let config = directory.file("config")
        try Data("keep_alive = 1h\n".utf8).write(to: URL(fileURLWithPath: config))
        let daemon = try await DaemonUnderTest(backend: backend.baseURL.absoluteString, extraArguments: ["--config", config])
        try await daemon.logIn("alice")
        let pid = daemon.child.pid
        #expect(Self.mapsLibcurl(pid), "not loaded for the login")

        try Data("keep_alive = 1s\n".utf8).write(to: URL(fileURLWithPath: config))
        let reload = try await daemon.notifyctl(["reload"])
        #expect(reload.status == 0, "\(reload.output)\(reload.error)")
        #expect(await eventually { !Self.mapsLibcurl(pid) }, "libcurl kept for the old keep_alive")
        await daemon.cleanUp()
    }

    /// Each pool let go after keep_alive gives back every descriptor it opened.
    @Test func poolsLetGoLeaveNoDescriptorBehind() async throws {
        let backend = DevBackendServer(options: .init(quiet: true))
        try backend.start()
        defer { backend.stop() }
        let daemon = try await DaemonUnderTest(backend: backend.baseURL.absoluteString, environment: ["NOTIFYD_KEEP_ALIVE": "1s"])
        try await daemon.logIn("alice")
        let pid = daemon.child.pid
        var counts: [Int] = []
        for round in 0..<4 {
            #expect(try await daemon.notifyctl(["send", "--to", "bob", "m\(round)"]).status == 0)
            #expect(await eventually { !IdleLibcurlTests.mapsLibcurl(pid) })
            counts.append(ConnectionLoadTests.count("/proc/\(pid)/fd"))
        }
        #expect(Set(counts).count == 1, "descriptors after each pool went: \(counts)")
        await daemon.cleanUp()
    }
}
#endif
