import Foundation
import NotifyTestSupport

/// The built `notifyd` running on a temporary socket and state directory, with the
/// built `notifyctl` pointed at it.
final class DaemonUnderTest: Sendable {
    let directory: String
    let socket: String
    let stateDirectory: String
    let child: ChildProcess

    init(backend: String?, extraArguments: [String] = [], stateDirectory: String? = nil, environment: [String: String] = [:],
         logLevelFlag: Bool = true) async throws {
        // Short: sun_path holds about 100 bytes.
        directory = "/tmp/nd-e2e-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        socket = directory + "/notifyd.sock"
        self.stateDirectory = stateDirectory ?? directory + "/state"
        var arguments = ["--socket", socket, "--state-dir", self.stateDirectory] + (logLevelFlag ? ["--log-level", "debug"] : [])
        if let backend { arguments += ["--backend", backend] }
        child = try ChildProcess(BuiltProducts.path("notifyd"), arguments + extraArguments, environment: environment)
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

    /// SIGTERM, and the exit status.
    func stop() async -> Int32 {
        child.signal(SIGTERM)
        return await child.wait(seconds: 10)
    }

    func cleanUp() async {
        if child.isRunning { _ = await stop() }
        try? FileManager.default.removeItem(atPath: directory)
    }
}
