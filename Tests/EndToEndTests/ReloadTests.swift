import Foundation
import NotifyClient
import NotifySocket
import NotifyTestSupport
import Testing

/// What a reload of the built notifyd changes outside its settings store: the log file,
/// the clients' share of the open-file limit.
@Suite struct ReloadTests {
    /// logrotate renames the file and sends SIGHUP (or runs `notifyctl reload`): the log goes
    /// on in a new file of the old name, not in the renamed one.
    @Test func theLogFileIsOpenedAgainAtEverySIGHUPAndReload() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let config = directory.file("config")
        let log = directory.file("notifyd.log")
        try Data("log_file = \(log)\n".utf8).write(to: URL(fileURLWithPath: config))
        let daemon = try await DaemonUnderTest(backend: nil, extraArguments: ["--config", config], environment: ["JOURNAL_STREAM": "8:1234"])
        #expect(try await daemon.notifyctl(["ping"]).status == 0)
        let rotated = log + ".1"
        #expect(rename(log, rotated) == 0)

        daemon.child.signal(SIGHUP)
        #expect(await eventually { Self.text(log).contains("reloaded \(config)") }, "a new file under the old name")
        let before = Self.text(rotated)
        #expect(try await daemon.notifyctl(["ping"]).status == 0)
        #expect(await eventually { Self.text(log).contains("connection 2 opened") })
        #expect(Self.text(rotated) == before, "nothing more goes to the renamed file")
        #expect(permissionBits(log) == 0o600)

        // Without log_file, the log goes back to the standard error notifyd was given.
        try Data("".utf8).write(to: URL(fileURLWithPath: config))
        #expect(try await daemon.notifyctl(["reload"]).status == 0)
        #expect(await eventually { daemon.child.standardError.contains("<5>reloaded \(config)") }, "\(daemon.child.standardError)")
        await daemon.cleanUp()
    }

    @Test func aLogFileThatCannotBeOpenedIsAProblemAndChangesNothing() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let config = directory.file("config")
        let log = directory.file("notifyd.log")
        try Data("log_file = \(log)\n".utf8).write(to: URL(fileURLWithPath: config))
        let daemon = try await DaemonUnderTest(backend: nil, extraArguments: ["--config", config], logLevelFlag: false)
        // A regular file where the directory would have to be.
        try Data("log_file = \(config)/notifyd.log\nlog_level = debug\n".utf8).write(to: URL(fileURLWithPath: config))
        let reload = try await daemon.notifyctl(["reload"])
        #expect(reload.status == 1)
        #expect(reload.error.contains("\(config):1: log_file: cannot open the log file \(config)/notifyd.log"), "\(reload.error)")
        #expect(try await daemon.notifyctl(["ping"]).status == 0)
        #expect(!Self.text(log).contains("debug:"), "log_level was not applied either")
        #expect(Self.text(log).contains("configuration unchanged"), "the old log file is still in use")
        await daemon.cleanUp()
    }

    /// Opening a FIFO to write waits for a reader, which may never come: the reload that
    /// waited for it never answered, and every later reload waited behind it.
    @Test func aLogFileThatIsAFIFOWithoutAReaderIsAProblemAndLaterReloadsWork() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let config = directory.file("config")
        let log = directory.file("notifyd.log")
        let fifo = directory.file("fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        try Data("log_file = \(log)\n".utf8).write(to: URL(fileURLWithPath: config))
        let daemon = try await DaemonUnderTest(backend: nil, extraArguments: ["--config", config])
        try Data("log_file = \(fifo)\n".utf8).write(to: URL(fileURLWithPath: config))
        let refused = try await daemon.notifyctl(["reload"])
        #expect(refused.status == 1)
        #expect(refused.error.contains("\(config):1: log_file: cannot open the log file \(fifo)"), "\(refused.error)")

        try Data("log_file = \(log)\nmax_connections = 4\n".utf8).write(to: URL(fileURLWithPath: config))
        let reload = try await daemon.notifyctl(["reload"])
        #expect(reload.status == 0, "\(reload.error)")
        #expect(reload.output.contains("now in effect: max_connections"), "\(reload.output)")
        await daemon.cleanUp()
    }

    /// Started with standard error closed (`2>&-`), notifyd's first descriptor of its own
    /// took number 2, and the log file put in the place of standard error, at start or
    /// at a reload, replaced it: SIGTERM no longer reached notifyd, and a thread spun.
    @Test func aLogFileDoesNotReplaceADescriptorOfNotifydsWhenStandardErrorWasClosed() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let config = directory.file("config")
        let log = directory.file("notifyd.log")
        try Data("log_file = \(log)\n".utf8).write(to: URL(fileURLWithPath: config))
        let daemon = try await DaemonUnderTest(backend: nil, extraArguments: ["--config", config],
                                               launcher: ["/bin/sh", "-c", "exec \"$0\" \"$@\" 2>&-"])
        #expect(try await daemon.notifyctl(["reload"]).status == 0)
        #expect(try await daemon.notifyctl(["ping"]).status == 0)
        #expect(await daemon.stop() == 0, "stopped by SIGTERM")
        #expect(Self.text(log).contains("notifyd stopped"))
        await daemon.cleanUp()
    }

    /// 160 descriptors with max_connections = 8 leave 160 - 32 - 8 - 8 = 112 for clients;
    /// with max_connections = 64, 160 - 32 - 64 - 8 = 56 (`ConnectionLoadTests`). The share
    /// shrinks here rather than grows: a child of the test process may inherit descriptors
    /// other tests hold at that moment, so notifyd is kept well below its real limit.
    @Test func theClientsShareOfTheOpenFileLimitFollowsMaxConnections() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let config = scratch.file("config")
        try Data("max_connections = 8\n".utf8).write(to: URL(fileURLWithPath: config))
        let daemon = try await DaemonUnderTest(backend: nil, extraArguments: ["--config", config],
                                               launcher: ["/usr/bin/prlimit", "--nofile=160:160"])
        try Data("max_connections = 64\n".utf8).write(to: URL(fileURLWithPath: config))
        #expect(try await daemon.notifyctl(["reload"]).status == 0)
        let answers = try await ConnectionLoadTests.pingFromClientsAtOnce(100, socket: daemon.socket)
        #expect(answers.answered == 56 && answers.refused == 44, "\(answers)")
        await daemon.cleanUp()
    }

    /// `systemctl --user reload notifyd` runs the unit's ExecReload= and fails when it
    /// fails: here it is run as systemd would, with @BINDIR@ filled in as install.sh does
    /// and `%t` the runtime directory that holds notifyd.socket's socket.
    @Test func systemctlReloadFailsForABrokenConfigAndSaysWhy() async throws {
        let unit = try Contrib.read("systemd/notifyd.service.in")
        let line = try #require(unit.split(separator: "\n").first { $0.hasPrefix("ExecReload=") })
        #expect(line == "ExecReload=@BINDIR@/notifyctl --socket %t/notifyd/notifyd.sock reload")
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let config = scratch.file("config")
        try Data("log_level = notice\n".utf8).write(to: URL(fileURLWithPath: config))
        let daemon = try await DaemonUnderTest(backend: nil, extraArguments: ["--config", config])
        let runtime = scratch.file("runtime")
        try FileManager.default.createDirectory(atPath: runtime + "/notifyd", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try FileManager.default.createSymbolicLink(atPath: runtime + "/notifyd/notifyd.sock", withDestinationPath: daemon.socket)
        let command = line.dropFirst("ExecReload=".count).replacingOccurrences(of: "@BINDIR@", with: BuiltProducts.directory.path)
            .replacingOccurrences(of: "%t", with: runtime).split(separator: " ").map(String.init)

        #expect(try await run(command[0], Array(command.dropFirst())).status == 0)
        try Data("log_level = chatty\nretry_min = soon\n".utf8).write(to: URL(fileURLWithPath: config))
        let broken = try await run(command[0], Array(command.dropFirst()))
        #expect(broken.status == 1, "systemctl reports the reload as failed")
        #expect(broken.error.contains("\(config):1: log_level") && broken.error.contains("\(config):2: retry_min"), "\(broken.error)")
        await daemon.cleanUp()
    }

    static func text(_ path: String) -> String {
        (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    }
}
