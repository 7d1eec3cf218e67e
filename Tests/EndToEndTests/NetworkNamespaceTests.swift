import Foundation
import NotifyTestSupport
import Testing

/// The built notifyd in a network namespace of its own, the dev backend in another, a
/// veth pair between them: notifyd's end is pulled out, a message queued, the end put
/// back, and the message arrives. The backoff is an hour, so a message that arrives within
/// the test's patience arrived because notifyd saw the link come back. Skipped, with the
/// reason, where root or namespaces are missing; under CI it always runs.
@Suite struct NetworkNamespaceTests {
    @Test(.enabled(if: NetworkNamespaces.shouldRun, Comment(rawValue: NetworkNamespaces.skipReason)))
    func aMessageQueuedWhileTheLinkWasDownArrivesOnceItIsBack() async throws {
        let pair = try await NamespacePair.make()
        defer { pair.stop() }
        let backend = try await SpawnedProcess.start(pair.nsenter, pair.enter(.backend) + [BuiltProducts.path("notify-devbackend"), "--host", NamespacePair.backendAddress, "--port", "0"])
        defer { backend.signal(SIGTERM) }
        let url = try #require(await backend.outputLines(atLeast: 1).first?.split(separator: " ").last.map(String.init), "the dev backend did not start: \(backend.standardError)")
        let daemon = try await DaemonUnderTest(backend: url, extraArguments: ["--allow-insecure-http", "--retry-min", "1h", "--retry-max", "1h"],
                                               launcher: [pair.nsenter] + pair.enter(.daemon))
        let watch = try await SpawnedProcess.start(BuiltProducts.path("notifyctl"), ["--socket", daemon.socket, "--json", "watch"])
        defer { watch.signal(SIGTERM) }
        try await daemon.logIn("alice")

        try await pair.setDaemonLink(up: false)
        // A request made in the very moment the link went could still take a connection from
        // before, and wait for its timeout: this test waits until notifyd has seen it go.
        #expect(await eventually { watch.standardOutput.contains(#""change":"down""#) }, "\(watch.standardOutput) \(daemon.child.standardError)")
        let send = try await daemon.notifyctl(["send", "--to", "bob", "while the link was down"])
        #expect(send.status == 4, "queued: \(send.output) \(send.error)")
        #expect(send.output.contains("no route to the host"), "\(send.output)")
        let offline = try await daemon.notifyctl(["status"])
        #expect(offline.output.contains("network:      offline since "), "\(offline.output)")
        let json = try await daemon.notifyctl(["--json", "status"])
        let network = try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any]
        #expect((network?["network"] as? [String: Any])?["offline_since"] is String, "\(json.output)")

        try await pair.setDaemonLink(up: true)
        #expect(await eventually(30) { backend.standardOutput.contains("From alice: while the link was down") }, "not delivered: \(daemon.child.standardError)")
        #expect(await eventually { (try? await daemon.notifyctl(["status"]).output.contains("offline since")) == false })
        let outbox = try await daemon.notifyctl(["--json", "outbox"])
        let deliveries = (try JSONSerialization.jsonObject(with: Data(outbox.output.utf8)) as? [String: Any])?["deliveries"] as? [Any]
        #expect(deliveries?.isEmpty == true, "\(outbox.output)")
        #expect(await eventually { watch.standardOutput.contains(#""change":"online""#) })
        let events = watch.standardOutput.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let changes = events.filter { $0["event"] as? String == "network" }.compactMap { $0["change"] as? String }
        let fromTheLinkDown = changes.drop { $0 != "down" }
        #expect(fromTheLinkDown.starts(with: ["down", "offline"]) && fromTheLinkDown.contains("up") && changes.last == "online", "network events: \(changes)")
        await daemon.cleanUp()
    }
}

/// Two network namespaces, each held open by a sleeping process, joined by a veth pair:
/// the backend's end 10.77.0.1, notifyd's 10.77.0.2. Nothing of the machine's own network
/// is touched, and the namespaces go when their processes do.
final class NamespacePair: Sendable {
    enum Side { case backend, daemon }

    static let backendAddress = "10.77.0.1"
    static let daemonAddress = "10.77.0.2"

    let nsenter: String
    private let ip: String
    private let backendHolder: SpawnedProcess
    private let daemonHolder: SpawnedProcess

    private init(nsenter: String, ip: String, backendHolder: SpawnedProcess, daemonHolder: SpawnedProcess) {
        self.nsenter = nsenter
        self.ip = ip
        self.backendHolder = backendHolder
        self.daemonHolder = daemonHolder
    }

    static func make() async throws -> NamespacePair {
        if let unavailable = NetworkNamespaces.unavailable { throw NetworkNamespaces.Unavailable(unavailable) }
        guard let unshare = NetworkNamespaces.unshare, let nsenter = NetworkNamespaces.nsenter, let ip = NetworkNamespaces.ip else {
            throw NetworkNamespaces.Unavailable(NetworkNamespaces.skipReason)
        }
        let holders = [try await SpawnedProcess.start(unshare, ["-n", "sleep", "600"]), try await SpawnedProcess.start(unshare, ["-n", "sleep", "600"])]
        let pair = NamespacePair(nsenter: nsenter, ip: ip, backendHolder: holders[0], daemonHolder: holders[1])
        let own = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/ns/net")
        for holder in holders {
            let entered = await eventually {
                let namespace = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(holder.pid)/ns/net")
                return namespace != nil && namespace != own
            }
            guard entered else {
                pair.stop()
                throw NetworkNamespaces.Unavailable("unshare -n did not give a namespace of its own: \(holder.standardError)")
            }
        }
        do {
            // Without IPv6, whose addresses settle a second or two after a link comes up,
            // the changes notifyd sees are the test's own.
            for side in [Side.backend, .daemon] {
                _ = try? await run(nsenter, pair.enter(side) + ["/bin/sh", "-c", "echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6; echo 1 > /proc/sys/net/ipv6/conf/default/disable_ipv6"])
            }
            try await pair.ip(.backend, "link", "set", "lo", "up")
            try await pair.ip(.daemon, "link", "set", "lo", "up")
            try await pair.ip(.backend, "link", "add", "ndb0", "type", "veth", "peer", "name", "ndd0", "netns", "\(holders[1].pid)")
            try await pair.ip(.backend, "addr", "add", backendAddress + "/24", "dev", "ndb0")
            try await pair.ip(.daemon, "addr", "add", daemonAddress + "/24", "dev", "ndd0")
            try await pair.ip(.backend, "link", "set", "ndb0", "up")
            try await pair.setDaemonLink(up: true)
            // The carrier follows a moment later: notifyd starts once the link is running.
            guard await eventually(10, { (try? await run(nsenter, pair.enter(.daemon) + [ip, "link", "show", "ndd0"]))?.output.contains("state UP") == true }) else {
                throw NetworkNamespaces.Unavailable("the veth pair did not come up")
            }
        } catch {
            pair.stop()
            throw error
        }
        return pair
    }

    /// The arguments of nsenter that run a command in that side's namespace.
    func enter(_ side: Side) -> [String] {
        ["-t", "\((side == .backend ? backendHolder : daemonHolder).pid)", "-n"]
    }

    /// notifyd's end of the pair, plugged in or pulled out.
    func setDaemonLink(up: Bool) async throws {
        try await ip(.daemon, "link", "set", "ndd0", up ? "up" : "down")
    }

    func stop() {
        backendHolder.signal(SIGKILL)
        daemonHolder.signal(SIGKILL)
    }

    private func ip(_ side: Side, _ arguments: String...) async throws {
        let result = try await run(nsenter, enter(side) + [ip] + arguments)
        if result.status != 0 { throw NetworkNamespaces.Unavailable("ip \(arguments.joined(separator: " ")): \(result.error)") }
    }
}
