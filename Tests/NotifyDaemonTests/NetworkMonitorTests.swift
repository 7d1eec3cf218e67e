import Foundation
import NotifyClient
import NotifyCore
@testable import NotifyDaemon
import NotifyTestSupport
import Synchronization
import Testing

/// The network monitor on the socket loop: the kernel's messages from a network of its
/// own (a private network namespace, so that nothing of the machine's is touched), a wake
/// from sleep told at the loop's next wake-up, and a sandbox without netlink.
@Suite struct NetworkMonitorTests {
    /// What the monitor reported, in order.
    final class Reports: Sendable {
        private let lines = LogCapture()
        let report: NetworkReport

        init() {
            let lines = self.lines
            report = NetworkReport(changed: { lines.append("\($0)") },
                                   defaultRoute: { route in lines.append("defaultRoute(\(route.map(String.init) ?? "unknown"))") },
                                   connectionsStale: { lines.append("stale") })
        }

        var all: [String] { lines.text.split(separator: "\n").map(String.init) }
    }

    @Test func withoutNetlinkItSaysSoOnceAndWatchesNoNetwork() {
        let lines = LogCapture()
        let logger = Logger(level: .debug) { level, message in lines.append("\(level.name): \(message)") }
        let monitor = NetworkMonitor(logger: logger, report: Reports().report, openNetlink: {
            errno = EPERM
            return nil
        })
        defer { monitor.close() }
        #expect(monitor.name == nil, "status shows no monitor, and nothing is judged offline")
        let notices = lines.text.split(separator: "\n").filter { $0.contains("cannot watch the network") }
        #expect(notices.count == 1)
        #expect(notices.first?.hasPrefix("notice: ") == true)
        #expect(notices.first?.contains("Operation not permitted") == true)
        #expect(monitor.descriptors.count == 1, "the clock is still watched")
    }

    @Test func aWakeFromSleepIsToldAtTheLoopsNextWakeUp() async throws {
        let reports = Reports()
        let asleep = Atomic<Int>(0)
        // CLOCK_BOOTTIME, made of the loop's own monotonic clock and the time the test says it slept.
        let monitor = NetworkMonitor(logger: .silent, report: reports.report, openNetlink: { nil }, openClock: { nil },
                                     bootClock: { Self.monotonicSeconds() + Double(asleep.load(ordering: .relaxed)) })
        try await ServerUnderTest.with(SocketServerTests.limits(), network: monitor) { server in
            let connection = try RawConnection(path: server.socketPath)
            try connection.send("echo before\n")
            _ = try await onThread { connection.receive() }
            asleep.store(3600, ordering: .relaxed)
            #expect(reports.all.isEmpty, "nothing wakes the loop by itself")
            try connection.send("echo after\n")
            _ = try await onThread { connection.receive() }
            #expect(await eventually { reports.all.contains { $0.hasPrefix("resumed") } }, "got \(reports.all)")
            let slept = reports.all.first { $0.hasPrefix("resumed(slept: ") }.flatMap { Double($0.dropFirst(15).dropLast()) }
            #expect(slept.map { abs($0 - 3600) < 1 } == true, "slept \(slept ?? 0) s")
            #expect(reports.all.first == "stale", "kept-alive connections are dropped at once, before the burst is waited out")
        }
    }

    /// Links, an address and a default route in a network namespace of the monitor's own:
    /// one report per burst, and whether a default route exists once the routes were read.
    @Test(.enabled(if: NetworkNamespaces.shouldRun, Comment(rawValue: NetworkNamespaces.skipReason)))
    func aLinkComingUpInAPrivateNetworkIsReported() async throws {
        let network = try await PrivateNetwork.make()
        defer { network.close() }
        let reports = Reports()
        let monitor = NetworkMonitor(logger: .silent, report: reports.report, openNetlink: { (network.netlink, network.port) })
        try await ServerUnderTest.with(SocketServerTests.limits(), network: monitor) { _ in
            #expect(await eventually { reports.all == ["defaultRoute(false)"] }, "a new namespace has no route at all: \(reports.all)")
            try await network.ip("link", "add", "nw0", "type", "veth", "peer", "name", "nw1")
            try await network.ip("link", "set", "nw0", "up")
            try await network.ip("link", "set", "nw1", "up")
            #expect(await eventually { reports.all.contains("up") }, "got \(reports.all)")
            #expect(await eventually { reports.all.filter { $0.hasPrefix("defaultRoute") }.count >= 2 }, "the routes read again after the burst")

            let before = reports.all.count
            try await network.ipBatch("addr add 10.9.0.1/24 dev nw0", "route add default via 10.9.0.2")
            #expect(await eventually { reports.all.last == "defaultRoute(true)" }, "got \(reports.all)")
            #expect(Array(reports.all[before...]).filter { $0 == "up" }.count == 1, "one burst, one report: \(reports.all[before...])")

            let beforeDown = reports.all.count
            try await network.ip("link", "set", "nw0", "down")
            #expect(await eventually { reports.all.last == "defaultRoute(false)" }, "got \(reports.all)")
            #expect(reports.all[beforeDown...].contains("down"))
            #expect(!reports.all[beforeDown...].contains("up"), "going away brings nothing back: \(reports.all[beforeDown...])")
        }
    }

    static func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}

/// A network namespace of its own, made on a thread that leaves it at once: only the
/// netlink socket opened there, and a descriptor that keeps the namespace alive for `ip`.
struct PrivateNetwork: Sendable {
    let netlink: Int32
    let port: UInt32
    let namespace: Int32

    static func make() async throws -> PrivateNetwork {
        if let unavailable = NetworkNamespaces.unavailable { throw NetworkNamespaces.Unavailable(unavailable) }
        guard let unshare = dlsym(dlopen(nil, RTLD_NOW), "unshare").map({ unsafeBitCast($0, to: (@convention(c) (Int32) -> Int32).self) }) else {
            throw NetworkNamespaces.Unavailable("this C library has no unshare()")
        }
        return try await onDedicatedThread {
            let newNetworkNamespace: Int32 = 0x4000_0000
            guard unshare(newNetworkNamespace) == 0 else {
                throw NetworkNamespaces.Unavailable("unshare(CLONE_NEWNET): \(String(cString: strerror(errno))); run as root where namespaces are allowed")
            }
            // Without IPv6, whose addresses settle a second or two after a link comes up,
            // what the test does is all that happens in the namespace.
            for file in ["/proc/sys/net/ipv6/conf/default/disable_ipv6", "/proc/sys/net/ipv6/conf/all/disable_ipv6"] {
                try? "1".write(toFile: file, atomically: false, encoding: .utf8)
            }
            let namespace = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC)
            guard namespace >= 0, let (netlink, port) = NetworkMonitor.openNetlink() else {
                throw NetworkNamespaces.Unavailable("a netlink socket in a new namespace: \(String(cString: strerror(errno)))")
            }
            return PrivateNetwork(netlink: netlink, port: port, namespace: namespace)
        }
    }

    /// Commands of `ip` run by one process (`ip -batch`), microseconds apart.
    func ipBatch(_ commands: String...) async throws {
        guard let ip = NetworkNamespaces.ip, let nsenter = NetworkNamespaces.nsenter else { throw NetworkNamespaces.Unavailable(NetworkNamespaces.skipReason) }
        let input = Data(commands.map { $0 + "\n" }.joined().utf8)
        let result = try await run(nsenter, ["--net=/proc/\(getpid())/fd/\(namespace)", ip, "-batch", "-"], stdin: input)
        if result.status != 0 { throw NetworkNamespaces.Unavailable("ip -batch: \(result.error)") }
    }

    /// `ip ARGUMENTS` inside the namespace.
    func ip(_ arguments: String...) async throws {
        guard let ip = NetworkNamespaces.ip, let nsenter = NetworkNamespaces.nsenter else { throw NetworkNamespaces.Unavailable(NetworkNamespaces.skipReason) }
        let result = try await run(nsenter, ["--net=/proc/\(getpid())/fd/\(namespace)", ip] + arguments)
        if result.status != 0 { throw NetworkNamespaces.Unavailable("ip \(arguments.joined(separator: " ")): \(result.error)") }
    }

    /// The netlink socket belongs to the monitor, which closes it.
    func close() {
        _ = Glibc.close(namespace)
    }
}
