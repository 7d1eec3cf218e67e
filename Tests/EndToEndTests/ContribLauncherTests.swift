import Foundation
import Testing

/// The session launchers in contrib/: systemd user units, the LaunchAgent, the XDG
/// autostart entry. Each is checked by the tool its platform uses to load it.
@Suite struct ContribLauncherTests {
    /// Fills in @BINDIR@ and @LOGFILE@ as install.sh does, with the directory of the built notifyd.
    static func rendered(_ template: String) throws -> String {
        try Contrib.read(template).replacingOccurrences(of: "@BINDIR@", with: BuiltProducts.directory.path)
            .replacingOccurrences(of: "@LOGFILE@", with: "/tmp/notifyd-test.log")
    }

    /// `systemd-analyze verify --user` on one unit, with the man pages on MANPATH so
    /// that the units' Documentation= lines are checked too, and a private runtime
    /// directory so that no real user manager is involved.
    static func verify(_ unit: String, in scratch: ContribScratch) async throws -> (status: Int32, output: String, error: String) {
        let analyze = try ContribTool.systemdAnalyze.require()
        let manPath = try scratch.sub("man")
        for (page, section) in [("notifyd.1", "man1"), ("notifyctl.1", "man1")] {
            let directory = try scratch.sub("man/\(section)")
            try FileManager.default.copyItem(atPath: Contrib.path("man/\(page)"), toPath: directory + "/" + page)
        }
        let environment = [
            "XDG_RUNTIME_DIR": try scratch.sub("runtime"),
            "HOME": try scratch.sub("home"),
            "XDG_CONFIG_HOME": try scratch.sub("home/.config"),
            "XDG_DATA_HOME": try scratch.sub("home/.local/share"),
            "MANPATH": manPath,
            "SYSTEMD_PAGER": "",
            "SYSTEMD_LOG_COLOR": "0",
        ]
        return try await runCaptured(analyze, ["verify", "--user", scratch.path + "/units/" + unit], environment: environment)
    }

    static func writeUnits(in scratch: ContribScratch, binaryDirectory: String? = nil) throws {
        _ = try scratch.write("units/notifyd.socket", try Contrib.read("systemd/notifyd.socket"))
        let service = try Contrib.read("systemd/notifyd.service.in")
            .replacingOccurrences(of: "@BINDIR@", with: binaryDirectory ?? BuiltProducts.directory.path)
        _ = try scratch.write("units/notifyd.service", service)
    }

    @Test(.enabled(if: ContribTool.systemdAnalyze.shouldRun, "needs systemd-analyze (Debian package systemd)"))
    func systemdSocketUnitVerifiesClean() async throws {
        try await withContribScratch("sd") { scratch in
            try Self.writeUnits(in: scratch)
            let result = try await Self.verify("notifyd.socket", in: scratch)
            #expect(result.status == 0)
            #expect(result.output.isEmpty)
            #expect(result.error.isEmpty, "systemd-analyze verify: \(result.error)")
        }
    }

    @Test(.enabled(if: ContribTool.systemdAnalyze.shouldRun, "needs systemd-analyze (Debian package systemd)"))
    func systemdServiceUnitVerifiesCleanWithTheBuiltBinary() async throws {
        try await withContribScratch("sd") { scratch in
            try Self.writeUnits(in: scratch)
            let result = try await Self.verify("notifyd.service", in: scratch)
            #expect(result.status == 0)
            #expect(result.output.isEmpty)
            #expect(result.error.isEmpty, "systemd-analyze verify: \(result.error)")
        }
    }

    /// The check above means something only if verify looks at ExecStart at all.
    @Test(.enabled(if: ContribTool.systemdAnalyze.shouldRun, "needs systemd-analyze (Debian package systemd)"))
    func systemdVerifyRejectsAServiceWhoseBinaryIsMissing() async throws {
        try await withContribScratch("sd") { scratch in
            try Self.writeUnits(in: scratch, binaryDirectory: scratch.path + "/nowhere")
            let result = try await Self.verify("notifyd.service", in: scratch)
            #expect(result.status != 0)
            #expect(result.error.contains("nowhere/notifyd"), "systemd-analyze verify: \(result.error)")
        }
    }

    /// `systemd-analyze security` of the user unit as installed, offline, with `options`.
    static func analyzeSecurity(_ options: [String] = []) async throws -> (status: Int32, output: String, error: String) {
        let analyze = try ContribTool.systemdAnalyze.require()
        return try await withContribScratch("sd") { scratch in
            try writeUnits(in: scratch)
            let environment = ["XDG_RUNTIME_DIR": try scratch.sub("runtime"), "HOME": try scratch.sub("home"), "SYSTEMD_PAGER": "", "SYSTEMD_LOG_COLOR": "0"]
            return try await runCaptured(analyze, ["security", "--offline=yes", "--user"] + options + ["--no-pager", scratch.path + "/units/notifyd.service"],
                                         environment: environment)
        }
    }

    /// The sandbox, as systemd rates it: 4.0 ("OK") or better. contrib/tests/user-manager
    /// shows notifyd still works in it under a real user manager.
    @Test(.enabled(if: ContribTool.systemdAnalyze.shouldRun, "needs systemd-analyze (Debian package systemd)"))
    func systemdServiceIsRatedOKBySystemdAnalyzeSecurity() async throws {
        let result = try await Self.analyzeSecurity(["--threshold=40"])
        let rating = try #require(result.output.firstMatch(of: /Overall exposure level for notifyd.service: ([0-9.]+) (\S+)/),
                                  "systemd-analyze security: \(result.output)\(result.error)")
        let exposure = try #require(Double(rating.output.1))
        #expect(exposure <= 4.0, "exposure \(exposure) \(rating.output.2):\n\(result.output)")
        #expect(result.status == 0, "systemd-analyze security --threshold=40: \(result.error)")
    }

    /// What contrib/docs/security.md promises of the sandbox, each part as systemd rates
    /// it: the overall rating above has room to lose one of them unnoticed.
    @Test(.enabled(if: ContribTool.systemdAnalyze.shouldRun, "needs systemd-analyze (Debian package systemd)"))
    func theSandboxKeepsEachPartThePromiseNames() async throws {
        let result = try await Self.analyzeSecurity()
        let kept = Set(result.output.split(separator: "\n").compactMap { line in
            line.firstMatch(of: /^✓ (\S+)/).map { String($0.output.1) }
        })
        // Writes only its state directory; gains no privileges; only a service's system
        // calls (none to mount, load modules, debug, reboot) and sockets.
        for part in ["ProtectSystem=", "NoNewPrivileges=", "PrivateDevices=", "SystemCallFilter=~@mount", "SystemCallFilter=~@module",
                     "SystemCallFilter=~@debug", "SystemCallFilter=~@reboot", "RestrictAddressFamilies=~AF_PACKET", "RestrictAddressFamilies=~…"] {
            #expect(kept.contains(part), "systemd-analyze security no longer rates \(part) as kept:\n\(result.output)")
        }
    }

    @Test func systemdUnitsHaveTheAgreedSettings() throws {
        let socket = try Contrib.read("systemd/notifyd.socket")
        for line in ["ListenStream=%t/notifyd/notifyd.sock", "SocketMode=0600", "DirectoryMode=0700", "RemoveOnStop=yes", "WantedBy=sockets.target"] {
            #expect(socket.split(separator: "\n").contains(Substring(line)), "notifyd.socket lacks \(line)")
        }
        #expect(socket.contains("Documentation=man:notifyd(1)"))
        let service = try Contrib.read("systemd/notifyd.service.in")
        for line in ["Type=notify", "ExecStart=@BINDIR@/notifyd", "Requires=notifyd.socket", "After=notifyd.socket", "Restart=on-failure", "Also=notifyd.socket"] {
            #expect(service.split(separator: "\n").contains(Substring(line)), "notifyd.service.in lacks \(line)")
        }
        #expect(service.contains("#LoadCredential=notifyd-password:"))
    }

    @Test(.enabled(if: ContribTool.python3.shouldRun, "needs python3 (Debian package python3)"))
    func launchAgentPlistParsesAndNamesTheListenersSocket() async throws {
        let python = try ContribTool.python3.require()
        let script = """
            import json, plistlib, sys
            with open(sys.argv[1], "rb") as f:
                print(json.dumps(plistlib.load(f)))
            """
        let result = try await runCaptured(python, ["-c", script, Contrib.path("launchd/org.notifyd.notifyd.plist.in")])
        try #require(result.status == 0, "plistlib: \(result.error)")
        let plist = try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
        #expect(plist["Label"] as? String == "org.notifyd.notifyd")
        #expect(plist["ProgramArguments"] as? [String] == ["@BINDIR@/notifyd"])
        #expect(plist["RunAtLoad"] as? Bool == false)
        let sockets = try #require(plist["Sockets"] as? [String: Any])
        #expect(Array(sockets.keys) == ["Listeners"])
        let listeners = try #require(sockets["Listeners"] as? [String: Any])
        #expect(listeners["SockPathMode"] as? Int == 384)
        #expect(listeners["SockPathName"] as? String == "@SOCKET@")
        // KeepAlive must not start notifyd before a client connects.
        if let keepAlive = plist["KeepAlive"] { #expect(keepAlive as? Bool == false) }
    }

    /// What desktop-file-validate cannot see: whether a session starts the entry at all.
    /// systemd's xdg-autostart generator decides as desktop sessions do (TryExec, phases)
    /// and writes a unit for each entry it accepts.
    @Test(.enabled(if: ContribTool.xdgAutostartGenerator.shouldRun, "needs systemd-xdg-autostart-generator (Debian package systemd)"))
    func systemdsAutostartGeneratorStartsTheEntry() async throws {
        let generator = try ContribTool.xdgAutostartGenerator.require()
        try await withContribScratch("xdg") { scratch in
            _ = try scratch.write("config/autostart/notifyd.desktop", try Self.rendered("xdg/notifyd.desktop.in"))
            let output = ["normal", "early", "late"].map { scratch.path + "/out/" + $0 }
            for directory in output { _ = try scratch.sub("out/" + (directory as NSString).lastPathComponent) }
            let result = try await runCaptured(generator, output, environment: [
                "XDG_CONFIG_HOME": scratch.path + "/config",
                // Only this entry, not the machine's own in /etc/xdg/autostart.
                "XDG_CONFIG_DIRS": try scratch.sub("no-system-config"),
                "SYSTEMD_LOG_COLOR": "0",
            ])
            #expect(result.status == 0)
            let unit = try #require(try? String(contentsOfFile: output[2] + "/app-notifyd@autostart.service", encoding: .utf8), "no unit for the entry: the generator skips one whose TryExec= names no file, or that names a startup phase")
            #expect(unit.contains("\nExecStart=:\(BuiltProducts.path("notifyd")) --log-file /tmp/notifyd-test.log\n"), "\(unit)")
            #expect(FileManager.default.fileExists(atPath: output[2] + "/xdg-desktop-autostart.target.wants/app-notifyd@autostart.service"))
        }
    }

    @Test(.enabled(if: ContribTool.desktopFileValidate.shouldRun, "needs desktop-file-validate (Debian package desktop-file-utils)"))
    func xdgAutostartEntryValidates() async throws {
        let validate = try ContribTool.desktopFileValidate.require()
        try await withContribScratch("xdg") { scratch in
            let file = try scratch.write("notifyd.desktop", try Self.rendered("xdg/notifyd.desktop.in"))
            let result = try await runCaptured(validate, [file])
            #expect(result.status == 0)
            #expect(result.output.isEmpty && result.error.isEmpty, "desktop-file-validate: \(result.output)\(result.error)")
            let entry = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n")
            for line in ["Type=Application", "Exec=\(BuiltProducts.path("notifyd")) --log-file /tmp/notifyd-test.log", "NoDisplay=true", "X-GNOME-Autostart-enabled=true"] {
                #expect(entry.contains(Substring(line)), "notifyd.desktop lacks \(line)")
            }
        }
    }
}
