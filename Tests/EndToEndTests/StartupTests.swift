import Foundation
import Testing
import NotifyTestSupport

/// notifyd's start: checking the configuration, failing clearly, where the log goes.
@Suite struct StartupTests {
    @Test func checkConfigShowsEverySettingWithItsOriginEvenWithoutAFile() async throws {
        let home = try ScratchDirectory()
        defer { home.remove() }
        let result = try await run("/usr/bin/env", ["-i", "HOME=\(home.path)", BuiltProducts.path("notifyd"), "--check-config", "--retry-min", "2s"])
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output.contains("(none; defaults apply)"))
        for key in ["backend = none (default)", "refresh_interval = 24h (default)", "retry_min = 2s (from --retry-min)", "log_level = notice (default)",
                    "log_file = standard error (default)", "state_dir = \(home.path)/.local/state/notifyd (default)"] {
            #expect(result.output.contains(key), "\(key) in \(result.output)")
        }
    }

    @Test func checkConfigListsProblemsInLineOrder() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let config = directory.file("config")
        try Data("refresh_interval = often\nthis line has no equals sign\nescape = sometimes\n".utf8).write(to: URL(fileURLWithPath: config))
        let result = try await run(BuiltProducts.path("notifyd"), ["--config", config, "--check-config"])
        #expect(result.status == 78, "the status a start ends with for the same problems")
        let lines = result.error.split(separator: "\n").map(String.init)
        let order = [":1: refresh_interval", ":2: expected", ":3: escape"].map { marker in lines.firstIndex { $0.contains(config + marker) } }
        #expect(order.allSatisfy { $0 != nil } && order == order.sorted { ($0 ?? 0) < ($1 ?? 0) }, "\(lines)")
    }

    /// Names that look like this machine but that libcurl would ask DNS for: refused for
    /// plain http wherever they are given, so no password goes to whatever answers there.
    @Test(arguments: ["http://localhost.:9", "http://127.0.0.1.:9"])
    func aTrailingDotIsNotThisMachine(backend: String) async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let config = directory.file("config")
        try Data("backend = \(backend)\n".utf8).write(to: URL(fileURLWithPath: config))
        let checked = try await run(BuiltProducts.path("notifyd"), ["--config", config, "--check-config"])
        #expect(checked.status == 78, "\(checked.output)\(checked.error)")
        #expect(checked.error.contains("refusing plain http") && checked.error.contains("without a trailing dot"), "\(checked.error)")
        let daemon = try await DaemonUnderTest(backend: nil)
        let login = try await daemon.notifyctl(["login", "--backend", backend, "--password-stdin", "alice"], stdin: Data("alice\n".utf8))
        #expect(login.status == 2, "\(login.output)\(login.error)")
        #expect(login.error.contains("refusing plain http"), "\(login.error)")
        await daemon.cleanUp()
    }

    /// One byte that is not UTF-8, in a comment: the line and the byte are named, and
    /// checking the file ends with the status a start ends with.
    @Test func aByteThatIsNotUTF8IsNamedAndCheckingAndStartingAgreeOnTheStatus() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let config = directory.file("config")
        try Data(Array("log_level = info\n# caf".utf8) + [0xE9] + Array("\n".utf8)).write(to: URL(fileURLWithPath: config))
        let checked = try await run(BuiltProducts.path("notifyd"), ["--config", config, "--check-config"])
        let started = try await run(BuiltProducts.path("notifyd"), ["--config", config, "--socket", directory.file("s.sock"), "--state-dir", directory.file("state")])
        for result in [checked, started] {
            #expect(result.status == 78)
            #expect(result.error.contains("\(config):2: byte 0xe9 (column 6) is not UTF-8; the config file must be UTF-8 text"), "\(result.error)")
        }
    }

    @Test func aConfigurationErrorUnderTheJournalIsAnErrorWithItsOwnExitStatus() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let config = directory.file("config")
        try Data("retry_min = soon\n".utf8).write(to: URL(fileURLWithPath: config))
        let result = try await run(BuiltProducts.path("notifyd"), ["--config", config, "--socket", directory.file("s.sock")], environment: ["JOURNAL_STREAM": "8:1234"])
        #expect(result.status == 78, "EX_CONFIG, which the unit's RestartPreventExitStatus= names")
        let lines = result.error.split(separator: "\n")
        #expect(!lines.isEmpty)
        #expect(lines.allSatisfy { $0.hasPrefix("<3>") }, "\(lines)")
        let unit = try Contrib.read("systemd/notifyd.service.in")
        #expect(unit.contains("RestartPreventExitStatus=78"))
    }

    @Test func withALogFileTheLogGoesThere() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let log = directory.file("notifyd.log")
        let daemon = try await DaemonUnderTest(backend: nil, extraArguments: ["--log-file", log], environment: ["JOURNAL_STREAM": "8:1234"])
        #expect(try await daemon.notifyctl(["ping"]).status == 0)
        #expect(await daemon.stop() == 0)
        let text = try String(contentsOfFile: log, encoding: .utf8)
        #expect(text.contains("notice: notifyd") && text.contains("listening on"), "timestamped lines, not journal ones: \(text)")
        #expect(!text.contains("<5>"))
        #expect(daemon.child.standardError.isEmpty)
        #expect(permissionBits(log) == 0o600)
        await daemon.cleanUp()
    }

    #if os(Linux) && (arch(x86_64) || arch(arm64))
    /// The main thread sleeps through the daemon's life. An `await` at the top level of
    /// main.swift would hand it to `dispatch_main()`, which ends it with `pthread_exit`
    /// (libdispatch then keeps it in `rt_sigsuspend`): unwinding it left libgcc_s loaded and
    /// the executable's unwind tables mapped for good. Reading /proc/PID/syscall needs ptrace
    /// access to the daemon; where that is forbidden (Yama ptrace_scope 2 or 3), this fails.
    @Test func theMainThreadIsParkedNotEnded() async throws {
        // Core dumps allowed: only then may a non-root test read the daemon's /proc/PID/syscall.
        let daemon = try await DaemonUnderTest(backend: nil, extraArguments: ["--allow-core-dumps"])
        #expect(try await daemon.notifyctl(["ping"]).status == 0)
        let pid = daemon.child.pid
        let syscall = try String(contentsOfFile: "/proc/\(pid)/task/\(pid)/syscall", encoding: .utf8)
        // Parked, it waits on a futex (the semaphore); taken by dispatch_main, in rt_sigsuspend.
        #if arch(x86_64)
        let futex = "202"
        #else
        let futex = "98"
        #endif
        #expect(syscall.split(separator: " ").first.map(String.init) == futex, "the main thread is not parked (rt_sigsuspend is dispatch_main's): \(syscall)")
        #expect(await daemon.stop() == 0)
        await daemon.cleanUp()
    }
    #endif
}
