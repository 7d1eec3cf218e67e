import Foundation
import NotifyClient
import NotifyProtocol
import NotifySocket
import Testing
import NotifyTestSupport

/// notifyd under a service manager: socket activation, readiness notification, journal
/// logging, and checking its settings.
@Suite struct ServiceManagerTests {
    static let activator = "/usr/bin/systemd-socket-activate"
    static var haveActivator: Bool { FileManager.default.isExecutableFile(atPath: activator) || ProcessInfo.processInfo.environment["CI"] != nil }

    /// A datagram socket standing in for systemd's $NOTIFY_SOCKET.
    final class NotifyListener: @unchecked Sendable {
        // Unchecked: the fd is only read by the one test that owns the listener.
        let path: String
        let fd: Int32

        init(path: String) throws {
            self.path = path
            fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            guard bound == 0 else { throw SocketError(.io, "cannot bind \(path)") }
            UnixSocket.setReceiveTimeout(fd, seconds: 15)
        }

        func receive() -> String? {
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = recv(fd, &buffer, buffer.count, 0)
            return count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : nil
        }

        deinit { close(fd) }
    }

    @Test(.enabled(if: haveActivator, "needs systemd-socket-activate (Debian package systemd)"))
    func underSocketActivationTheFirstConnectionIsAnsweredAndSystemdHearsReady() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.activator), "install the Debian package systemd")
        let directory = "/tmp/nd-act-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let socket = directory + "/notifyd.sock"
        let listener = try NotifyListener(path: directory + "/notify")
        let activator = try await SpawnedProcess.start(
            Self.activator, ["-l", socket, "-E", "NOTIFY_SOCKET", BuiltProducts.path("notifyd"), "--state-dir", directory + "/state"],
            environment: ["NOTIFY_SOCKET": listener.path])
        #expect(await eventually { FileManager.default.fileExists(atPath: socket) })

        // notifyd is started by this very connection, and must answer it. The socket file
        // appears at bind(), a moment before systemd-socket-activate listens on it: until
        // then a connection is refused, and is tried again.
        let ping = try await onDedicatedThread { () -> PingResult in
            for _ in 0..<3000 {
                do {
                    return try NotifyClient(socketPath: socket).call(PingCommand()).0
                } catch ClientError.notRunning {
                    usleep(10_000)
                }
            }
            return try NotifyClient(socketPath: socket).call(PingCommand()).0
        }
        #expect(ping.protocol == ProtocolVersion.current)
        let ready = try await onThreadReceive(listener)
        #expect(ready?.contains("READY=1") == true)
        #expect(ready?.contains("MAINPID=\(ping.pid)") == true)

        let status = try await onDedicatedThread { try NotifyClient(socketPath: socket).call(StatusCommand()).0 }
        #expect(status.daemon.socket == socket)

        activator.signal(SIGTERM)
        #expect(await activator.wait() == 0)
        #expect(try await onThreadReceive(listener) == "STOPPING=1")
        #expect(FileManager.default.fileExists(atPath: socket), "an activated socket belongs to the service manager")
        #expect(activator.standardError.contains("(socket activation)"))
    }

    /// A connection nobody accepts stays in an activated socket, and systemd starts notifyd
    /// again for it at once: a broken config cost five failed starts a second until
    /// systemd gave up on the socket. notifyd answers the waiting client with what to fix.
    @Test(.enabled(if: haveActivator, "needs systemd-socket-activate (Debian package systemd)"))
    func underSocketActivationABrokenConfigIsExplainedToTheClientThatStartedNotifyd() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.activator), "install the Debian package systemd")
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let config = directory.file("config")
        try Data("refresh_interval = often\n".utf8).write(to: URL(fileURLWithPath: config))
        let socket = directory.file("notifyd.sock")
        for json in [false, true] {
            let activator = try await SpawnedProcess.start(Self.activator, ["-l", socket, BuiltProducts.path("notifyd"), "--config", config, "--state-dir", directory.file("state")])
            #expect(await eventually { FileManager.default.fileExists(atPath: socket) })
            let ping = try await run(BuiltProducts.path("notifyctl"), ["--socket", socket] + (json ? ["--json"] : []) + ["ping"])
            #expect(ping.status == 3, "as unreachable as a notifyd that is not running: \(ping.output)\(ping.error)")
            if json {
                #expect(ping.output.contains(#""code":"config_error""#), "\(ping.output)")
            } else {
                #expect(ping.error.contains("notifyd cannot start with its configuration:\n  \(config):1: refresh_interval: 'often' is not a duration"), "\(ping.error)")
                #expect(ping.error.contains("notifyd --check-config"), "\(ping.error)")
            }
            #expect(await activator.wait(seconds: 10) == 78)
            try? FileManager.default.removeItem(atPath: socket)
        }
    }

    @Test func underTheJournalLinesCarrySyslogPriorities() async throws {
        let daemon = try await DaemonUnderTest(backend: nil, environment: ["JOURNAL_STREAM": "8:12345"])
        #expect(await daemon.stop() == 0)
        let lines = daemon.child.standardError.split(separator: "\n")
        #expect(!lines.isEmpty)
        #expect(lines.allSatisfy { $0.hasPrefix("<5>") || $0.hasPrefix("<6>") || $0.hasPrefix("<7>") || $0.hasPrefix("<4>") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("<5>notifyd") })
        await daemon.cleanUp()
    }

    @Test func checkConfigPointsAtTheFileLineAndKey() async throws {
        let directory = "/tmp/nd-cfg-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let config = directory + "/config"
        try Data("backend = http://127.0.0.1:8080\nrefresh_interval = often\n".utf8).write(to: URL(fileURLWithPath: config))
        let bad = try await run(BuiltProducts.path("notifyd"), ["--config", config, "--check-config"])
        #expect(bad.status == 78, "as a start with the same settings")
        #expect(bad.error.contains("\(config):2: refresh_interval: 'often' is not a duration"))

        // A daemon does not start with a setting it cannot use.
        let refused = try await run(BuiltProducts.path("notifyd"), ["--config", config, "--socket", directory + "/s.sock"])
        #expect(refused.status == 78, "the configuration error status the unit's RestartPreventExitStatus= names")
        #expect(refused.error.contains("refresh_interval"))

        try Data("backend = http://127.0.0.1:8080\nrefresh_interval = 6h\n".utf8).write(to: URL(fileURLWithPath: config))
        let good = try await run(BuiltProducts.path("notifyd"), ["--config", config, "--check-config", "--log-level", "debug"])
        #expect(good.status == 0, "\(good.error)")
        #expect(good.output.contains("refresh_interval = 6h (from \(config):2)"))
        #expect(good.output.contains("log_level = debug (from --log-level)"))
        #expect(good.output.contains("settings OK"))

        // A config file named but missing is one problem, and not "defaults apply".
        let missing = try await run(BuiltProducts.path("notifyd"), ["--config", directory + "/nothing", "--check-config"])
        #expect(missing.status == 78)
        #expect(missing.output.contains("config file: \(directory)/nothing (missing)"), "\(missing.output)")
        #expect(!missing.output.contains("defaults apply"), "\(missing.output)")
        #expect(missing.error.contains("\(directory)/nothing: the config file does not exist (it was named by --config or $NOTIFYD_CONFIG)"))
    }

    @Test func withAPasswordCommandLoginAsksForNoPassword() async throws {
        let setsid = "/usr/bin/setsid"
        try #require(FileManager.default.isExecutableFile(atPath: setsid), "setsid (util-linux) detaches notifyctl from any terminal")
        let directory = "/tmp/nd-pwcmd-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Data("password_command = echo alice\n".utf8).write(to: URL(fileURLWithPath: directory + "/config"))
        let daemon = try await DaemonUnderTest(backend: "http://127.0.0.1:9", extraArguments: ["--config", directory + "/config"])
        let login = try await run(setsid, ["-w", BuiltProducts.path("notifyctl"), "--socket", daemon.socket, "login", "alice"])
        #expect(login.status == 0, "logged in without a prompt: \(login.error)")
        let status = try await daemon.notifyctl(["status"])
        #expect(status.output.contains("user:         alice"))
        await daemon.cleanUp()
    }

    private func onThreadReceive(_ listener: NotifyListener) async throws -> String? {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: listener.receive()) }.start()
        }
    }
}
