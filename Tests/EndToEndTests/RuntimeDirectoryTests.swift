import Foundation
import NotifyTestSupport
import Testing

/// notifyd started by hand or by an XDG autostart entry makes $XDG_RUNTIME_DIR/notifyd for
/// its socket, and leaves nothing there when it stops.
@Suite struct RuntimeDirectoryTests {
    @Test func aStoppedNotifydLeavesNoDirectoryInTheRuntimeDirectory() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let runtime = scratch.file("runtime")
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let environment = ["XDG_RUNTIME_DIR": runtime]
        let daemon = try await SpawnedProcess.start(BuiltProducts.path("notifyd"), ["--state-dir", scratch.file("state")], environment: environment)
        let socket = runtime + "/notifyd/notifyd.sock"
        #expect(await eventually { FileManager.default.fileExists(atPath: socket) }, "\(daemon.standardError)")
        let ping = try await run(BuiltProducts.path("notifyctl"), ["ping"], environment: environment)
        #expect(ping.status == 0, "\(ping.error)")
        daemon.signal(SIGTERM)
        #expect(await daemon.wait(seconds: 10) == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: runtime).isEmpty, "nothing left in \(runtime)")
    }
}
