import Foundation
import NotifyClient
import NotifyTestSupport
import Testing

/// What notifyctl says when nothing answers at the socket notifyd.socket listens on: what
/// the user's systemd manager reports of the units, through a `systemctl` on PATH (the real
/// one under a real user manager is contrib/tests/user-manager's).
@Suite struct SystemdAdviceTests {
    static func show(socket: [String: String], service: [String: String]) -> String {
        func block(_ id: String, _ fields: [String: String]) -> String {
            (["Id=\(id)"] + fields.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }).joined(separator: "\n")
        }
        return block("notifyd.socket", socket) + "\n\n" + block("notifyd.service", service) + "\n"
    }

    static let gaveUp = show(socket: ["LoadState": "loaded", "ActiveState": "failed", "Result": "service-start-limit-hit", "UnitFileState": "enabled"],
                             service: ["LoadState": "loaded", "ActiveState": "failed", "Result": "start-limit-hit", "UnitFileState": "static"])

    @Test func aSocketSystemdGaveUpOnNamesTheExactCommandsThatBringItBack() {
        let advice = SystemdUnits(showOutput: Self.gaveUp).advice ?? ""
        #expect(advice.contains("systemd gave up starting notifyd"))
        #expect(advice.contains("too many times in a row"))
        #expect(advice.contains("systemctl --user reset-failed notifyd.socket notifyd.service && systemctl --user start notifyd.socket"))
        #expect(advice.contains("journalctl --user -u notifyd"))
    }

    @Test func eachStateOfTheSocketGetsItsOwnAdvice() {
        let loaded = ["LoadState": "loaded", "Result": "success"]
        func advice(_ socket: [String: String], service: [String: String] = loaded.merging(["ActiveState": "inactive"]) { $1 }) -> String? {
            SystemdUnits(showOutput: Self.show(socket: socket, service: service)).advice
        }
        #expect(advice(["LoadState": "masked", "ActiveState": "inactive"])?.contains("systemctl --user unmask notifyd.socket") == true)
        #expect(advice(loaded.merging(["ActiveState": "inactive", "UnitFileState": "disabled"]) { $1 })?
            .contains("systemctl --user enable --now notifyd.socket") == true)
        #expect(advice(loaded.merging(["ActiveState": "inactive", "UnitFileState": "enabled"]) { $1 })?
            .contains("systemctl --user start notifyd.socket") == true)
        #expect(advice(loaded.merging(["ActiveState": "failed", "Result": "trigger-limit-hit"]) { $1 })?
            .contains("connections came faster") == true)
        #expect(advice(loaded.merging(["ActiveState": "active"]) { $1 },
                       service: loaded.merging(["ActiveState": "failed", "Result": "exit-code"]) { $1 })?
            .contains("notifyd failed to start (exit-code)") == true)
        // systemd does not know the unit: no systemd advice at all.
        #expect(advice(["LoadState": "not-found", "ActiveState": "inactive"]) == nil)
        #expect(SystemdUnits(showOutput: "").advice == nil)
    }

    /// The first command after systemd gave up says so, asked of the systemctl on PATH.
    @Test func notifyctlAsksSystemdWhyNothingListens() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let runtime = directory.path + "/runtime"
        let bin = directory.path + "/bin"
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        let arguments = directory.path + "/arguments"
        let script = "#!/bin/sh\necho \"$*\" > \(arguments)\ncat <<'EOF'\n\(Self.gaveUp)EOF\n"
        try writeFileClosingOnExec(bin + "/systemctl", script, mode: 0o755)
        let environment = ["XDG_RUNTIME_DIR": runtime, "PATH": bin + ":/usr/bin:/bin"]
        var result = try await run(BuiltProducts.path("notifyctl"), ["ping"], environment: environment)
        // notifyctl waits 2 s at most for systemctl, and under strace on a loaded machine
        // (CI's descriptors stage) the script may not even start within them: asked again,
        // the advice comes once it does. Broken, it never does.
        for _ in 0..<4 where !result.error.contains("systemd gave up") {
            result = try await run(BuiltProducts.path("notifyctl"), ["ping"], environment: environment)
        }
        #expect(result.status == 3)
        #expect(result.error.contains("systemd gave up starting notifyd"), "\(result.error)")
        #expect(result.error.contains("systemctl --user reset-failed notifyd.socket notifyd.service && systemctl --user start notifyd.socket"))
        let asked = (try? String(contentsOfFile: arguments, encoding: .utf8)) ?? ""
        #expect(asked.contains("--user") && asked.contains("show") && asked.contains("notifyd.socket notifyd.service"), "\(asked)")

        // No systemctl answering: the advice that needs none.
        try FileManager.default.removeItem(atPath: bin + "/systemctl")
        let bare = try await run(BuiltProducts.path("notifyctl"), ["ping"], environment: ["XDG_RUNTIME_DIR": runtime, "PATH": bin])
        #expect(bare.status == 3)
        #expect(bare.error.contains("notifyd &") && !bare.error.contains("systemctl"), "\(bare.error)")
    }
}
