import Foundation
import Testing
import NotifyTestSupport

/// contrib/install.sh into a temporary prefix, with HOME and the XDG directories in a
/// temporary directory and stand-ins for systemctl and launchctl first on PATH, so that
/// neither the real home nor a real service manager is touched.
@Suite struct ContribInstallTests {
    struct Sandbox {
        let scratch: ContribScratch
        var prefix: String { scratch.path + "/prefix" }
        var home: String { scratch.path + "/home" }
        var configHome: String { scratch.path + "/config" }
        var dataHome: String { scratch.path + "/data" }
        /// What the stand-in systemctl and launchctl were asked to do, one call a line.
        var callLog: String { scratch.path + "/calls.log" }

        /// `userSystemd`: whether the stand-in systemctl says a user manager runs.
        init(_ scratch: ContribScratch, userSystemd: Bool) throws {
            self.scratch = scratch
            _ = try scratch.sub("home")
            let status = userSystemd ? 0 : 1
            _ = try scratch.write("stubs/systemctl", """
                #!/bin/sh
                printf 'systemctl %s\\n' "$*" >>"$NOTIFYD_TEST_CALL_LOG"
                exit \(status)
                """, mode: 0o755)
            _ = try scratch.write("stubs/launchctl", """
                #!/bin/sh
                printf 'launchctl %s\\n' "$*" >>"$NOTIFYD_TEST_CALL_LOG"
                exit 0
                """, mode: 0o755)
        }

        var environment: [String: String] {
            [
                "HOME": home,
                "XDG_CONFIG_HOME": configHome,
                "XDG_DATA_HOME": dataHome,
                "PATH": scratch.path + "/stubs:" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"),
                "NOTIFYD_TEST_CALL_LOG": callLog,
                "TMPDIR": scratch.path,
            ]
        }

        /// Without systemd, install.sh starts notifyd itself: it needs a runtime directory
        /// for the socket and a state directory, both in the scratch directory.
        func autostartEnvironment() throws -> [String: String] {
            var environment = self.environment
            environment["XDG_RUNTIME_DIR"] = try scratch.sub("run")
            environment["XDG_STATE_HOME"] = try scratch.sub("state")
            return environment
        }

        func install(_ arguments: [String]) async throws -> (status: Int32, output: String, error: String) {
            try await runCaptured("/bin/sh", [Contrib.path("install.sh")] + arguments, environment: environment, seconds: 120)
        }

        var calls: [String] {
            ((try? String(contentsOfFile: callLog, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }

        func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }
    }

    static let installedFiles = [
        "bin/notifyd", "bin/notifyctl",
        "share/man/man1/notifyd.1", "share/man/man1/notifyctl.1",
        "share/doc/notifyd/protocol.md",
        "share/bash-completion/completions/notifyctl",
        "share/zsh/site-functions/_notifyctl",
        "share/fish/vendor_completions.d/notifyctl.fish",
        "share/notifyd/install-manifest",
    ]

    @Test func installsIntoAPrefixAndUninstallsExactlyThat() async throws {
        try await withContribScratch("inst") { scratch in
            let sandbox = try Sandbox(scratch, userSystemd: false)
            // Something of the user's in the prefix and the autostart directory that must survive.
            _ = try scratch.write("prefix/share/man/man1/other.1", ".TH OTHER 1\n")
            _ = try scratch.write("config/autostart/other.desktop", "[Desktop Entry]\n")
            let before = scratch.listing()

            let install = try await sandbox.install(["--prefix", sandbox.prefix, "--build-dir", BuiltProducts.directory.path, "--no-enable"])
            try #require(install.status == 0, "install.sh: \(install.output)\(install.error)")
            for file in Self.installedFiles {
                #expect(sandbox.exists(sandbox.prefix + "/" + file), "install.sh did not install \(file)")
            }
            for program in ["notifyd", "notifyctl"] {
                #expect(FileManager.default.isExecutableFile(atPath: sandbox.prefix + "/bin/" + program))
            }
            #expect(try String(contentsOfFile: sandbox.prefix + "/share/man/man1/notifyd.1", encoding: .utf8) == Contrib.read("man/notifyd.1"))
            #expect(!sandbox.exists(sandbox.prefix + "/bin/notify-devbackend"), "the dev backend only with --with-devbackend")

            #if os(macOS)
            let launcher = sandbox.home + "/Library/LaunchAgents/org.notifyd.notifyd.plist"
            #expect(!sandbox.calls.contains { $0.contains("bootstrap") }, "--no-enable bootstrapped: \(sandbox.calls)")
            #else
            // No user systemd: the XDG autostart entry, and no units.
            let launcher = sandbox.configHome + "/autostart/notifyd.desktop"
            #expect(!sandbox.exists(sandbox.dataHome + "/systemd/user/notifyd.socket"))
            let entry = try String(contentsOfFile: launcher, encoding: .utf8)
            #expect(entry.contains("\nExec=\(sandbox.prefix)/bin/notifyd --log-file /"))
            #expect(entry.contains("/notifyd/notifyd.log\n"))
            #expect(!entry.contains("@BINDIR@"))
            #endif
            #expect(sandbox.exists(launcher), "install.sh installed no launcher")

            let version = try await runCaptured(sandbox.prefix + "/bin/notifyctl", ["--version"])
            #expect(version.status == 0)
            #expect(version.output.hasPrefix("notifyctl "))

            let uninstall = try await sandbox.install(["--prefix", sandbox.prefix, "--uninstall"])
            #expect(uninstall.status == 0, "install.sh --uninstall: \(uninstall.output)\(uninstall.error)")
            // Back to what was there before: the user's files stay, nothing of notifyd's does.
            let after = scratch.listing().filter { !$0.hasPrefix("stubs") && $0 != "calls.log" }
            #expect(after == before.filter { !$0.hasPrefix("stubs") }, "left behind: \(after.subtracting(before)); removed: \(before.subtracting(after))")
            let prefixLeft = scratch.listing(under: "prefix")
            #expect(!prefixLeft.contains { $0.contains("notifyd") || $0.contains("notifyctl") }, "notifyd files left in the prefix: \(prefixLeft)")
        }
    }

    #if os(Linux)
    @Test func withAUserSystemdItInstallsAndEnablesTheUnitsAndNoAutostartEntry() async throws {
        try await withContribScratch("inst") { scratch in
            let sandbox = try Sandbox(scratch, userSystemd: true)
            let install = try await sandbox.install(["--prefix", sandbox.prefix, "--build-dir", BuiltProducts.directory.path])
            try #require(install.status == 0, "install.sh: \(install.output)\(install.error)")
            let units = sandbox.dataHome + "/systemd/user/"
            #expect(try String(contentsOfFile: units + "notifyd.socket", encoding: .utf8) == Contrib.read("systemd/notifyd.socket"))
            let service = try String(contentsOfFile: units + "notifyd.service", encoding: .utf8)
            #expect(service.contains("\nExecStart=\(sandbox.prefix)/bin/notifyd\n"))
            #expect(service.contains("\nExecReload=\(sandbox.prefix)/bin/notifyctl --socket %t/notifyd/notifyd.sock reload\n"))
            #expect(service.components(separatedBy: sandbox.prefix).count == 3, "the directory is filled in on ExecStart= and ExecReload= only, comments stay as written")
            #expect(!service.contains("@BINDIR@"))
            // One launcher only.
            #expect(!sandbox.exists(sandbox.configHome + "/autostart/notifyd.desktop"))
            let calls = sandbox.calls
            let reload = calls.firstIndex(of: "systemctl --user daemon-reload")
            let enable = calls.firstIndex(of: "systemctl --user enable --now notifyd.socket")
            #expect(reload != nil && enable != nil && reload! < enable!, "systemctl calls: \(calls)")

            let uninstall = try await sandbox.install(["--prefix", sandbox.prefix, "--uninstall"])
            #expect(uninstall.status == 0, "install.sh --uninstall: \(uninstall.output)\(uninstall.error)")
            #expect(sandbox.calls.dropFirst(calls.count).first { $0.contains("disable") } == "systemctl --user disable --now notifyd.socket")
            #expect(!sandbox.exists(units + "notifyd.socket") && !sandbox.exists(units + "notifyd.service"))
            #expect(!sandbox.exists(sandbox.prefix))
        }
    }

    @Test func noEnableLeavesTheUnitsDisabled() async throws {
        try await withContribScratch("inst") { scratch in
            let sandbox = try Sandbox(scratch, userSystemd: true)
            let install = try await sandbox.install(["--prefix", sandbox.prefix, "--build-dir", BuiltProducts.directory.path, "--no-enable"])
            try #require(install.status == 0, "install.sh: \(install.output)\(install.error)")
            #expect(sandbox.exists(sandbox.dataHome + "/systemd/user/notifyd.service"))
            #expect(!sandbox.calls.contains { $0.contains("enable") }, "systemctl calls: \(sandbox.calls)")
            let uninstall = try await sandbox.install(["--prefix", sandbox.prefix, "--uninstall"])
            #expect(uninstall.status == 0)
            #expect(!sandbox.calls.contains { $0.contains("disable") }, "it disabled what it had not enabled: \(sandbox.calls)")
        }
    }
    #endif

#if os(Linux)
    @Test func withoutSystemdUninstallAlwaysStopsTheNotifydItStartedAndNamesWhatItLeaves() async throws {
        try await withContribScratch("inst") { scratch in
            let sandbox = try Sandbox(scratch, userSystemd: false)
            let environment = try sandbox.autostartEnvironment()
            // Uninstalling at once, while notifyd may still be starting, is the hard case.
            for round in 1...3 {
                let install = try await runCaptured("/bin/sh", [Contrib.path("install.sh"), "--prefix", sandbox.prefix, "--build-dir", BuiltProducts.directory.path],
                                                    environment: environment, seconds: 120)
                try #require(install.status == 0, "install.sh: \(install.output)\(install.error)")
                let pid = try #require(install.output.firstMatch(of: /Started notifyd \(pid (\d+)\)/).flatMap { Int32($0.output.1) }, "\(install.output)")
                #expect(install.output.contains("Its log: \(scratch.path)/state/notifyd/notifyd.log"))
                let uninstall = try await runCaptured("/bin/sh", [Contrib.path("install.sh"), "--prefix", sandbox.prefix, "--uninstall"],
                                                      environment: environment, seconds: 120)
                #expect(uninstall.status == 0, "round \(round): \(uninstall.output)\(uninstall.error)")
                #expect(!Self.isRunning(pid), "round \(round): notifyd (pid \(pid)) outlived --uninstall: \(uninstall.output)")
                if Self.isRunning(pid) { kill(pid, SIGKILL) }
                #expect(uninstall.output.contains("Left in place"), "\(uninstall.output)")
                #expect(uninstall.output.contains("rm -rf '\(scratch.path)/state/notifyd'"))
            }
        }
    }

    /// An install over a running notifyd restarts it on the new binary, and every install
    /// ends with the one next step: with no backend set, setting it.
    @Test func withoutSystemdAReinstallRestartsNotifydAndTheLastLineSaysWhatToDoNext() async throws {
        try await withContribScratch("inst") { scratch in
            let sandbox = try Sandbox(scratch, userSystemd: false)
            let environment = try sandbox.autostartEnvironment()
            let arguments = [Contrib.path("install.sh"), "--prefix", sandbox.prefix, "--build-dir", BuiltProducts.directory.path]
            let first = try await runCaptured("/bin/sh", arguments, environment: environment, seconds: 120)
            try #require(first.status == 0, "install.sh: \(first.output)\(first.error)")
            let pid = try #require(first.output.firstMatch(of: /Started notifyd \(pid (\d+)\)/).flatMap { Int32($0.output.1) }, "\(first.output)")
            let lines = first.output.split(separator: "\n")
            #expect(lines.dropLast().last?.hasPrefix("Next: set your backend in \(scratch.path)/config/notifyd/config") == true
                    && lines.last?.contains("notifyctl reload && ") == true && lines.last?.contains("notifyctl login USER") == true, "\(first.output)")
            _ = await eventually { FileManager.default.fileExists(atPath: scratch.path + "/run/notifyd/notifyd.sock") }
            let again = try await runCaptured("/bin/sh", arguments, environment: environment, seconds: 120)
            #expect(again.status == 0, "\(again.output)\(again.error)")
            let restarted = again.output.firstMatch(of: /Restarted notifyd on the new binary \(pid (\d+);/).flatMap { Int32($0.output.1) }
            #expect(restarted != nil && restarted != pid, "\(again.output)")
            #expect(await eventually { !Self.isRunning(pid) }, "the old notifyd (pid \(pid)) stopped")
            let uninstall = try await runCaptured("/bin/sh", [Contrib.path("install.sh"), "--prefix", sandbox.prefix, "--uninstall"],
                                                  environment: environment, seconds: 120)
            #expect(uninstall.status == 0, "\(uninstall.output)\(uninstall.error)")
            if let restarted, Self.isRunning(restarted) {
                Issue.record("notifyd (pid \(restarted)) outlived --uninstall")
                kill(restarted, SIGKILL)
            }
        }
    }

    /// Alive, and not a zombie waiting for a parent that may never reap it.
    static func isRunning(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        return !stat[close...].hasPrefix(") Z")
    }

#endif

    @Test func withDevBackendItInstallsTheDevBackendAndItsManPage() async throws {
        try await withContribScratch("inst") { scratch in
            let sandbox = try Sandbox(scratch, userSystemd: false)
            let install = try await sandbox.install(["--prefix", sandbox.prefix, "--build-dir", BuiltProducts.directory.path, "--with-devbackend", "--no-enable"])
            try #require(install.status == 0, "install.sh: \(install.output)\(install.error)")
            let version = try await runCaptured(sandbox.prefix + "/bin/notify-devbackend", ["--version"])
            #expect(version.status == 0 && version.output.hasPrefix("notify-devbackend "), "\(version.output)\(version.error)")
            #expect(try String(contentsOfFile: sandbox.prefix + "/share/man/man1/notify-devbackend.1", encoding: .utf8) == Contrib.read("man/notify-devbackend.1"))
            let uninstall = try await sandbox.install(["--prefix", sandbox.prefix, "--uninstall"])
            #expect(uninstall.status == 0, "\(uninstall.output)\(uninstall.error)")
            #expect(!sandbox.exists(sandbox.prefix + "/bin/notify-devbackend") && !sandbox.exists(sandbox.prefix + "/share/man/man1/notify-devbackend.1"))
        }
    }

    static let bashCompletionLoader = "/usr/share/bash-completion/bash_completion"

    /// Each shell looks for completions in places of its own. For each that would not find
    /// the ones just installed, install.sh prints one line; with it, the shell completes
    /// notifyctl, and without it, so do the shells it printed nothing for. A prefix no
    /// shell looks in, and the default ~/.local (bash-completion and fish look in
    /// $XDG_DATA_HOME, zsh's default $fpath has no directory in the home).
    @Test(.enabled(if: ContribTool.bash.shouldRun && ContribTool.zsh.shouldRun && ContribTool.fish.shouldRun,
                   "needs bash, zsh and fish (Debian packages bash, zsh, fish)"))
    func completionsAreFoundOrTheLineToAddIsPrinted() async throws {
        let shells = (bash: try ContribTool.bash.require(), zsh: try ContribTool.zsh.require(), fish: try ContribTool.fish.require())
        let haveBashCompletion = FileManager.default.fileExists(atPath: Self.bashCompletionLoader)
        try await withContribScratch("inst") { scratch in
            let sandbox = try Sandbox(scratch, userSystemd: false)
            let cases: [(prefix: String, advised: Set<String>)] = [
                (scratch.path + "/elsewhere", ["bash", "zsh", "fish"]),
                (sandbox.home + "/.local", haveBashCompletion ? ["zsh"] : ["bash", "zsh"]),
            ]
            for (prefix, advised) in cases {
                var environment = sandbox.environment
                environment["XDG_DATA_HOME"] = sandbox.home + "/.local/share"
                environment["XDG_DATA_DIRS"] = "/usr/local/share:/usr/share"
                environment["ZDOTDIR"] = sandbox.home
                environment["TERM"] = "dumb"
                let install = try await runCaptured("/bin/sh", [Contrib.path("install.sh"), "--prefix", prefix, "--build-dir", BuiltProducts.directory.path, "--no-enable"],
                                                    environment: environment, seconds: 120)
                try #require(install.status == 0, "install.sh: \(install.output)\(install.error)")
                var lines: [String: String] = [:]
                for match in install.output.matches(of: /\n  (bash|zsh|fish) \([^)]*\): ([^\n]+)/) {
                    lines[String(match.output.1)] = String(match.output.2)
                }
                #expect(Set(lines.keys) == advised, "\(prefix): \(install.output)")
                // As the user would have it: fish loads completions for commands on $PATH only.
                environment["PATH"] = prefix + "/bin:" + (environment["PATH"] ?? "/usr/bin:/bin")

                let bash = try await runCaptured(shells.bash, ["--norc", "--noprofile", "-c", """
                    [ -f \(Self.bashCompletionLoader) ] && . \(Self.bashCompletionLoader)
                    \(lines["bash"] ?? "")
                    complete -p notifyctl >/dev/null 2>&1 || __load_completion notifyctl
                    complete -p notifyctl
                    """], environment: environment)
                #expect(bash.output.contains("complete -F _notifyctl notifyctl"), "bash, \(prefix): \(bash.output)\(bash.error)")
                let zsh = try await runCaptured(shells.zsh, ["-f", "-c", """
                    \(lines["zsh"] ?? "")
                    autoload -Uz compinit && compinit -u -d \(scratch.path)/zcompdump && autoload +X _notifyctl 2>/dev/null; print -r -- $_comps[notifyctl]
                    """], environment: environment)
                #expect(zsh.output == "_notifyctl\n", "zsh, \(prefix): \(zsh.output)\(zsh.error)")
                try? FileManager.default.removeItem(atPath: scratch.path + "/zcompdump")
                let fish = try await runCaptured(shells.fish, ["--no-config", "-c", """
                    source $__fish_data_dir/config.fish
                    \(lines["fish"] ?? "")
                    complete -C 'notifyctl se'
                    """], environment: environment)
                #expect(fish.output.contains("set-token"), "fish, \(prefix): \(fish.output)\(fish.error)")
            }
        }
    }

    @Test func explainsItsOptionsAndRefusesWhatItCannotDo() async throws {
        try await withContribScratch("inst") { scratch in
            let sandbox = try Sandbox(scratch, userSystemd: false)
            let help = try await sandbox.install(["--help"])
            #expect(help.status == 0)
            for option in ["--prefix", "--build-dir", "--with-devbackend", "--no-enable", "--uninstall", "--help"] {
                #expect(help.output.contains(option), "install.sh --help does not mention \(option)")
            }
            let unknown = try await sandbox.install(["--bogus"])
            #expect(unknown.status == 2)
            #expect(unknown.error.contains("--bogus"))
            let nothing = try await sandbox.install(["--prefix", sandbox.prefix, "--uninstall"])
            #expect(nothing.status == 1)
            #expect(nothing.error.contains("manifest"))
            let noBinaries = try await sandbox.install(["--prefix", sandbox.prefix, "--build-dir", try scratch.sub("empty"), "--no-enable"])
            #expect(noBinaries.status == 1)
            #expect(noBinaries.error.contains("notifyd"))
            #expect(!sandbox.exists(sandbox.prefix + "/bin"), "a failed install left files behind")
        }
    }
}
