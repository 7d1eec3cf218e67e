import Foundation
import Testing
import NotifyTestSupport

/// A core file of notifyd would hold the password: the built daemon forbids them at start,
/// as the kernel reports it in /proc, unless `--allow-core-dumps` is given.
@Suite(.enabled(if: FileManager.default.fileExists(atPath: "/proc/self/limits"), "needs Linux /proc"))
struct CoreDumpTests {
    @Test func notifydForbidsCoreDumpsAndBecomesUndumpable() async throws {
        let daemon = try await Self.start()
        let limit = Self.coreLimit(daemon.child.pid)
        let owner = Self.procOwner(daemon.child.pid)
        await daemon.cleanUp()
        #expect(limit == "0 0", "the launcher set 4096")
        // An undumpable process's /proc entries belong to root whatever its user.
        #expect(owner == 0)
    }

    @Test func allowCoreDumpsKeepsThem() async throws {
        let daemon = try await Self.start(["--allow-core-dumps"])
        let limit = Self.coreLimit(daemon.child.pid)
        let owner = Self.procOwner(daemon.child.pid)
        await daemon.cleanUp()
        // The hard limit: a sanitizer's runtime lowers the soft one itself.
        #expect(limit?.split(separator: " ").last == "4096", "\(limit ?? "no limit")")
        #expect(owner == Self.daemonUser.uid)
        #expect(daemon.child.standardError.contains("core dumps are allowed"))
    }

    /// `notifyctl login` holds the password it reads: at its prompt (where Ctrl-\\ dumps
    /// core) it has already forbidden core files and made itself undumpable.
    @Test func notifyctlLoginForbidsCoreDumpsBeforeItReadsThePassword() async throws {
        let daemon = try await Self.start(["--backend", "http://127.0.0.1:9"])
        let terminal = try PseudoTerminal()
        let user = Self.daemonUser
        let asUser = getuid() == 0 ? ["/usr/bin/setpriv", "--reuid=\(user.uid)", "--regid=\(user.gid)", "--clear-groups"] : []
        let command = ["--core=4096:4096"] + asUser + [BuiltProducts.path("notifyctl"), "--socket", daemon.socket, "login", "alice"]
        let login = try await SpawnedProcess.start("/usr/bin/prlimit", command, terminal: terminal.path)
        let prompted = await eventually { terminal.shown(containing: "Password for alice", seconds: 0.2).contains("Password for alice") || !login.isRunning }
        let limit = Self.coreLimit(login.pid)
        let owner = Self.procOwner(login.pid)
        login.signal(SIGKILL)
        _ = await login.wait()
        await daemon.cleanUp()
        #expect(prompted && limit != nil, "notifyctl waits at its prompt: \(login.standardError)")
        #expect(limit == "0 0", "the launcher set 4096")
        #expect(owner == 0, "undumpable: its /proc entries are root's")
    }

    /// notifyd with a core limit it must lower, as a user other than root (whose /proc entries
    /// would be root's anyway): run as nobody when the tests run as root.
    static func start(_ flags: [String] = []) async throws -> DaemonUnderTest {
        let prlimit = ["/usr/bin/prlimit", "--core=4096:4096"]
        guard getuid() == 0 else { return try await DaemonUnderTest(backend: nil, extraArguments: flags, launcher: prlimit) }
        let user = daemonUser
        let setpriv = ["/usr/bin/setpriv", "--reuid=\(user.uid)", "--regid=\(user.gid)", "--clear-groups"]
        return try await DaemonUnderTest(backend: nil, extraArguments: flags, launcher: prlimit + setpriv, owner: user)
    }

    static var daemonUser: (uid: uid_t, gid: gid_t) { getuid() == 0 ? (65534, 65534) : (getuid(), getgid()) }

    /// Soft and hard limit from the "Max core file size" line of /proc/PID/limits.
    static func coreLimit(_ pid: pid_t) -> String? {
        guard let limits = try? String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8),
              let line = limits.split(separator: "\n").first(where: { $0.hasPrefix("Max core file size") }) else { return nil }
        return line.dropFirst("Max core file size".count).split(separator: " ").prefix(2).joined(separator: " ")
    }

    static func procOwner(_ pid: pid_t) -> uid_t? {
        ((try? FileManager.default.attributesOfItem(atPath: "/proc/\(pid)/status"))?[.ownerAccountID] as? NSNumber)?.uint32Value
    }
}
