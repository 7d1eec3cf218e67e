import Foundation
@testable import NotifyDaemon
import NotifyTestSupport
import Testing

/// From a command line to a daemon ready to start, in-process: what `main` does between
/// reading its flags and serving.
struct DaemonLaunchTests {
    /// A config file in a scratch directory (the state directory beside it, 0700).
    static func launch(config: String, flags: [String] = [], environment: [String: String] = [:]) throws -> (Result<DaemonLaunch.Outcome, DaemonLaunch.Failure>, ScratchDirectory) {
        let scratch = try ScratchDirectory()
        try Data(config.utf8).write(to: URL(fileURLWithPath: scratch.file("config")))
        let arguments = try DaemonArguments.parse(["--config", scratch.file("config"), "--state-dir", scratch.file("state"), "--socket", scratch.file("s.sock")] + flags)
        return (Result { () throws(DaemonLaunch.Failure) in try DaemonLaunch.prepare(arguments, environment: environment) }, scratch)
    }

    @Test func aGoodConfigGivesTheDaemonItsSettingsAndAWayToReadThemAgain() throws {
        let (outcome, scratch) = try Self.launch(config: "backend = https://b.example\nretry_min = 2s\n",
                                                 environment: ["INVOCATION_ID": "x", "MANAGERPID": "1"])
        defer { scratch.remove() }
        guard case .ready(let configuration, _) = try outcome.get() else {
            Issue.record("expected a daemon ready to start")
            return
        }
        #expect(configuration.settings.backend == "https://b.example")
        #expect(configuration.settings.retry.initial == 2)
        #expect(configuration.stateDirectory == scratch.file("state"))
        #expect(configuration.socket.path == scratch.file("s.sock"))
        #expect(configuration.restartCommand == "systemctl --user restart notifyd", "under a systemd user manager")
        try Data("backend = https://c.example\n".utf8).write(to: URL(fileURLWithPath: scratch.file("config")))
        #expect(configuration.settingsSource?.read().0.runtime.backend == "https://c.example", "a reload reads the same file again")
    }

    @Test func aSettingThatCannotBeUsedStopsTheStartWithStatus78() throws {
        let (outcome, scratch) = try Self.launch(config: "retry_min = soon\n")
        defer { scratch.remove() }
        #expect(throws: DaemonLaunch.Failure.self) { try outcome.get() }
        if case .failure(let failure) = outcome {
            #expect(failure.status == 78)
            #expect(failure.message.contains("retry_min") && failure.message.contains("(run `notifyd --check-config` after fixing)"), "\(failure.message)")
        }
    }

    @Test func checkingReportsTheProblemsAndStartsNothing() throws {
        let (outcome, scratch) = try Self.launch(config: "retry_min = soon\n", flags: ["--check-config"])
        defer { scratch.remove() }
        guard case .checked(let check) = try outcome.get() else {
            Issue.record("expected a report")
            return
        }
        #expect(check.status == 78 && check.problems.count == 1 && check.problems[0].contains("retry_min"))
        #expect(check.report.last == "1 problem")
        #expect(!FileManager.default.fileExists(atPath: scratch.file("state")), "nothing made")
    }

    /// The check `main` makes covers a state directory that exists (each of its files
    /// looked at), and the start need not make it again; one not made yet is checked by the
    /// start, once it exists.
    @Test func theStartChecksTheStateDirectoryAgainOnlyWhenItWasNotThere() throws {
        let (fresh, scratch) = try Self.launch(config: "")
        defer { scratch.remove() }
        guard case .ready(let unmade, _) = try fresh.get() else {
            Issue.record("expected a daemon ready to start")
            return
        }
        #expect(!unmade.stateDirectoryChecked, "not there yet: checked by the start")
        try FileManager.default.createDirectory(atPath: scratch.file("state"), withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let arguments = try DaemonArguments.parse(["--config", scratch.file("config"), "--state-dir", scratch.file("state"), "--socket", scratch.file("s.sock")])
        guard case .ready(let made, _) = try DaemonLaunch.prepare(arguments, environment: [:]) else {
            Issue.record("expected a daemon ready to start")
            return
        }
        #expect(made.stateDirectoryChecked)
    }

    @Test func aStateDirectoryOthersMayChangeIsRefused() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        try FileManager.default.createDirectory(atPath: scratch.file("open"), withIntermediateDirectories: true)
        chmod(scratch.file("open"), 0o777)
        try Data().write(to: URL(fileURLWithPath: scratch.file("config")))
        let arguments = try DaemonArguments.parse(["--config", scratch.file("config"), "--state-dir", scratch.file("open")])
        do {
            _ = try DaemonLaunch.prepare(arguments, environment: [:])
            Issue.record("started with a state directory anyone may change")
        } catch {
            #expect(error.status == 78 && error.message.contains(scratch.file("open")), "\(error.message)")
        }
    }
}
