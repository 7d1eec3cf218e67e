import Foundation
import NotifyTestSupport
import Testing

/// notifyd started by a careless parent: its standard streams closed, a file of the
/// parent's left open. Nothing of it may take a standard stream's number, and nothing the
/// parent leaked may stay open in notifyd.
@Suite struct InheritedDescriptorsTests {
    #if os(Linux)
    @Test func closedStandardStreamsBecomeDevNullAndLeakedDescriptorsAreClosed() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let stray = scratch.file("stray")
        let socket = scratch.file("notifyd.sock")
        // The shell leaves descriptor 7 open across its exec, and closes 0, 1 and 2.
        let script = #"exec 7>"$1"; exec "$0" --socket "$2" --state-dir "$3" --log-level debug <&- >&- 2>&-"#
        let daemon = try await SpawnedProcess.start("/bin/sh", ["-c", script, BuiltProducts.path("notifyd"), stray, socket, scratch.file("state")])
        defer { daemon.signal(SIGKILL) }
        #expect(await eventually { FileManager.default.fileExists(atPath: socket) })
        // A connection while debug logging writes a line about it to "standard error".
        #expect(try await run(BuiltProducts.path("notifyctl"), ["--socket", socket, "ping"]).status == 0)

        let descriptors = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(daemon.pid)/fd")
        let targets = Dictionary(uniqueKeysWithValues: descriptors.compactMap { name in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(daemon.pid)/fd/\(name)")).map { (name, $0) }
        })
        #expect(["0", "1", "2"].allSatisfy { targets[$0] == "/dev/null" }, "\(targets)")
        #expect(!targets.values.contains(stray), "\(targets)")
        daemon.signal(SIGTERM)
        #expect(await daemon.wait() == 0)
    }
    #endif
}
