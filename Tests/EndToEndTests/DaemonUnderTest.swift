import Foundation
import NotifySocket
import NotifyTestSupport
import Testing

/// The built `notifyd` running on a temporary socket and state directory, with the
/// built `notifyctl` pointed at it.
final class DaemonUnderTest: Sendable {
    let directory: String
    let socket: String
    let stateDirectory: String
    let child: SpawnedProcess

    /// `launcher` runs notifyd (e.g. `prlimit ...`), and `owner` is the user it then runs as,
    /// who gets the temporary directory. Without `stateDirectoryFlag`, the state directory
    /// must come from a config file in `extraArguments`.
    init(backend: String?, extraArguments: [String] = [], stateDirectory: String? = nil, environment: [String: String] = [:],
         logLevelFlag: Bool = true, stateDirectoryFlag: Bool = true, launcher: [String] = [], owner: (uid: uid_t, gid: gid_t)? = nil) async throws {
        // Short: sun_path holds about 100 bytes.
        directory = "/tmp/nd-e2e-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        // The mode too: a umask another thread set for a moment may have left the directory unusable.
        if let owner, chown(directory, owner.uid, owner.gid) != 0 || chmod(directory, 0o700) != 0 {
            throw StartFailure(message: "cannot give \(directory) to uid \(owner.uid): \(String(cString: strerror(errno)))")
        }
        socket = directory + "/notifyd.sock"
        self.stateDirectory = stateDirectory ?? directory + "/state"
        var arguments = ["--socket", socket] + (stateDirectoryFlag ? ["--state-dir", self.stateDirectory] : [])
            + (logLevelFlag ? ["--log-level", "debug"] : [])
        if let backend { arguments += ["--backend", backend] }
        let command = launcher + [BuiltProducts.path("notifyd")] + arguments + extraArguments
        child = try await SpawnedProcess.start(command[0], Array(command.dropFirst()), environment: environment)
        let socket = self.socket
        let child = self.child
        let up = await eventually { FileManager.default.fileExists(atPath: socket) || !child.isRunning }
        if !up || !child.isRunning {
            _ = await child.wait(seconds: 1)
            throw StartFailure(message: "notifyd did not start: \(child.standardError)")
        }
    }

    struct StartFailure: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    func notifyctl(_ arguments: [String], stdin: Data? = nil, seconds: Double = 30) async throws -> (status: Int32, output: String, error: String) {
        try await run(BuiltProducts.path("notifyctl"), ["--socket", socket] + arguments, stdin: stdin, seconds: seconds)
    }

    /// `notifyctl login --password-stdin USER` with `password`, else the user's name (the dev
    /// backend's rule), which must succeed.
    func logIn(_ user: String, password: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let login = try await notifyctl(["login", "--password-stdin", user], stdin: Data("\(password ?? user)\n".utf8))
        #expect(login.status == 0, "\(login.output)\(login.error)", sourceLocation: sourceLocation)
    }

    /// Writes all `lines` at once on one connection and reads as many replies, as a client
    /// that pipelines does.
    func exchange(_ lines: [String]) async throws -> [String] {
        let socket = self.socket
        return try await offThePool {
            let fd = try UnixSocket.connect(path: socket)
            defer { close(fd) }
            try UnixSocket.writeAll(fd, Array(lines.map { $0 + "\n" }.joined().utf8))
            UnixSocket.setReceiveTimeout(fd, seconds: 60)
            let reader = LineReader(fd: fd, maximumLength: 65536)
            var replies: [String] = []
            while replies.count < lines.count, case .line(let reply) = reader.next() {
                replies.append(String(decoding: reply, as: UTF8.self))
            }
            return replies
        }
    }

    /// SIGTERM, and the exit status. The bound is for a stop that hangs, which takes far
    /// longer (a password fetch waits out `password_timeout`), not for a machine that stalls.
    func stop() async -> Int32 {
        child.signal(SIGTERM)
        return await child.wait(seconds: 60)
    }

    func cleanUp() async {
        if child.isRunning { _ = await stop() }
        try? FileManager.default.removeItem(atPath: directory)
    }
}
