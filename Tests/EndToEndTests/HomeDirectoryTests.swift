import DevBackend
import Foundation
import Testing
import NotifyTestSupport

/// What notifyd leaves in a home directory: its documented state, nothing else.
@Suite struct HomeDirectoryTests {
    @Test func aFullRunUnderAnEmptyHomeLeavesOnlyTheDocumentedPaths() async throws {
        let backend = try CommandLineTests.backend()
        defer { backend.stop() }
        let home = try ScratchDirectory()
        defer { home.remove() }
        let runtime = "/tmp/nd-hrt-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: runtime) }
        let socket = runtime + "/notifyd.sock"
        // Nothing from this test's environment: no XDG_* variable points elsewhere. Only the
        // sanitizers' settings stay (contrib/tests/sanitizers): they name reports that are not ours.
        let sanitizerSettings = ProcessInfo.processInfo.environment.filter { $0.key.hasSuffix("SAN_OPTIONS") }.map { "\($0.key)=\($0.value)" }
        let daemon = try await SpawnedProcess.start("/usr/bin/env", ["-i", "HOME=\(home.path)", "PATH=/usr/bin:/bin"] + sanitizerSettings
                                                      + [BuiltProducts.path("notifyd"), "--socket", socket, "--backend", backend.baseURL.absoluteString])
        #expect(await eventually { FileManager.default.fileExists(atPath: socket) }, "\(daemon.standardError)")
        let notifyctl = BuiltProducts.path("notifyctl")
        #expect(try await run(notifyctl, ["--socket", socket, "login", "--password-stdin", "alice"], stdin: Data("alice\n".utf8)).status == 0)
        #expect(try await run(notifyctl, ["--socket", socket, "set-token", "ABCD"]).status == 0)
        #expect(try await run(notifyctl, ["--socket", socket, "send", "--to", "bob", "hi"]).status == 0)
        #expect(try await run(notifyctl, ["--socket", socket, "stop"]).status == 0)
        #expect(await daemon.wait(seconds: 10) == 0)

        let documented = ["/.local", "/.local/state", "/.local/state/notifyd"]
        var found: [String] = []
        let walker = FileManager.default.enumerator(atPath: home.path)
        while let relative = walker?.nextObject() as? String { found.append("/" + relative) }
        let stray = found.filter { !documented.contains($0) && !$0.hasPrefix("/.local/state/notifyd/") }
        #expect(stray.isEmpty, "not documented: \(stray)")
        #expect(found.contains("/.local/state/notifyd/state.json"))
    }
}
