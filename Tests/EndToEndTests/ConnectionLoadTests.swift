import Foundation
import NotifyClient
import NotifySocket
import NotifyTestSupport
import Testing

/// The built notifyd with a thousand clients at once: threads do not grow with them,
/// every one is answered, their descriptors are given back, and SIGTERM still stops it.
@Suite struct ConnectionLoadTests {
    static func count(_ directory: String) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: directory).count) ?? -1
    }

    /// The socket descriptors `pid` has open.
    static func sockets(_ pid: pid_t) -> [String] {
        let directory = "/proc/\(pid)/fd"
        return ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter {
            (try? FileManager.default.destinationOfSymbolicLink(atPath: directory + "/" + $0))?.hasPrefix("socket:") == true
        }
    }

    @Test func aThousandConnectionsCostNoThreadsAndAreAllAnswered() async throws {
        let daemon = try await DaemonUnderTest(backend: nil)
        let pid = daemon.child.pid
        let socket = daemon.socket
        // Once notifyd serves, all its own sockets are open (the network monitor's is opened
        // after the listening socket appears).
        #expect(try await daemon.notifyctl(["ping"]).status == 0)
        let socketsBefore = Self.sockets(pid)
        let connections = 1000
        let (answered, threads) = try await onDedicatedThread { () -> (Int, Int) in
            OpenFiles.raiseSoftLimit(to: connections + 256)
            var fds: [Int32] = []
            defer { fds.forEach { close($0) } }
            for _ in 0..<connections { fds.append(try UnixSocket.connect(path: socket)) }
            let ping = Array("{\"cmd\":\"ping\"}\n".utf8)
            for fd in fds { try UnixSocket.writeAll(fd, ping) }
            var answered = 0
            for fd in fds {
                UnixSocket.setReceiveTimeout(fd, seconds: 20)
                if case .line(let reply) = LineReader(fd: fd, maximumLength: 4096).next(), String(decoding: reply, as: UTF8.self).contains("\"ok\":true") {
                    answered += 1
                }
            }
            // Counted while all of them are still open.
            return (answered, Self.count("/proc/\(pid)/task"))
        }
        #expect(answered == connections)
        #expect(threads <= 32, "\(threads) threads with \(connections) connections open")
        // The clients' sockets: what notifyd opens by itself meanwhile (a timer's descriptor
        // when its first sleep is set) is not theirs.
        #expect(await eventually(20) { Self.sockets(pid).count <= socketsBefore.count },
                "descriptors given back: \(Self.sockets(pid).count) sockets open, \(socketsBefore.count) before")
        #expect(await daemon.stop() == 0, "SIGTERM stops it")
        await daemon.cleanUp()
    }
}

extension ConnectionLoadTests {
    /// Under a low open-file limit, clients get only what the daemon does not keep for its
    /// backend connections and removal logs, so a crowd of clients cannot take the
    /// descriptors a send needs. 160 descriptors, 64 backend connections and 8 logs kept
    /// open leave 160 - 32 - 64 - 8 = 56 for clients (it was 160 - 32 = 128).
    /// `count` clients connect at once and each asks `ping`: how many notifyd answered, and
    /// how many it refused as too many (a refused one was told why: its line stays readable
    /// after notifyd closed the socket, though the ask failed).
    static func pingFromClientsAtOnce(_ count: Int, socket: String) async throws -> (answered: Int, refused: Int) {
        try await onDedicatedThread { () -> (answered: Int, refused: Int) in
            var fds: [Int32] = []
            defer { fds.forEach { close($0) } }
            for _ in 0..<count { fds.append(try UnixSocket.connect(path: socket)) }
            let ping = Array("{\"cmd\":\"ping\"}\n".utf8)
            for fd in fds { _ = ping.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } }
            var answers = (answered: 0, refused: 0)
            for fd in fds {
                UnixSocket.setReceiveTimeout(fd, seconds: 20)
                guard case .line(let reply) = LineReader(fd: fd, maximumLength: 4096).next() else { continue }
                let text = String(decoding: reply, as: UTF8.self)
                if text.contains("\"ok\":true") { answers.answered += 1 }
                if text.contains("too_many_connections") { answers.refused += 1 }
            }
            return answers
        }
    }

    @Test func clientsGetOnlyWhatTheDaemonDoesNotKeepForItself() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let config = scratch.file("config")
        try Data("max_connections = 64\n".utf8).write(to: URL(fileURLWithPath: config))
        let daemon = try await DaemonUnderTest(backend: nil, extraArguments: ["--config", config],
                                               launcher: ["/usr/bin/prlimit", "--nofile=160:160"])
        let answers = try await Self.pingFromClientsAtOnce(100, socket: daemon.socket)
        #expect(answers.answered == 56 && answers.refused == 44, "\(answers)")
        #expect(await daemon.stop() == 0)
        #expect(daemon.child.standardError.contains("open-file limit of 160 leaves room for 56 client connection(s)"), "said at start")
        await daemon.cleanUp()
    }
}

enum OpenFiles {
    /// The test opens more sockets than a default soft limit of 1024 allows.
    static func raiseSoftLimit(to wanted: Int) {
        var limit = rlimit()
        getrlimit(resource, &limit)
        guard limit.rlim_cur < rlim_t(wanted) else { return }
        limit.rlim_cur = min(rlim_t(wanted), limit.rlim_max)
        setrlimit(resource, &limit)
    }

    #if canImport(Glibc)
    private static let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    private static let resource = RLIMIT_NOFILE
    #endif
}
