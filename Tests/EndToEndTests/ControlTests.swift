import Foundation
import NotifySocket
import Testing
import NotifyTestSupport

/// Stopping and reloading notifyd from the command line, and watchers at a normal stop.
@Suite struct ControlTests {
    @Test func stopEndsTheDaemonAndAWatcherExitsZeroAfterTheShutdownEvent() async throws {
        let daemon = try await DaemonUnderTest(backend: nil)
        let watch = try await SpawnedProcess.start(BuiltProducts.path("notifyctl"), ["--socket", daemon.socket, "--json", "watch"])
        let human = try await SpawnedProcess.start(BuiltProducts.path("notifyctl"), ["--socket", daemon.socket, "watch"])
        #expect(await eventually { watch.standardOutput.contains("\"registration\"") && human.standardOutput.contains("registration:") })
        let stop = try await daemon.notifyctl(["stop"])
        #expect(stop.status == 0, "\(stop.error)")
        #expect(stop.output.contains("stopped"))
        #expect(await daemon.child.wait(seconds: 10) == 0)
        #expect(!FileManager.default.fileExists(atPath: daemon.socket))
        #expect(await watch.wait(seconds: 10) == 0, "watch: \(watch.standardError)")
        #expect(watch.standardOutput.contains(#"{"event":"shutdown""#), "\(watch.standardOutput)")
        // Every line, the first (the current registration) too, says what it is by "event".
        let lines = watch.standardOutput.split(separator: "\n").map { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(lines.allSatisfy { $0?["event"] is String }, "\(watch.standardOutput)")
        // For a person: a line each, the local time first.
        #expect(await human.wait(seconds: 10) == 0, "watch: \(human.standardError)")
        let said = human.standardOutput.split(separator: "\n")
        #expect(said.count == 2 && said[0].contains(/^\d\d:\d\d:\d\d  registration: no backend configured/) && said[1].hasSuffix("  notifyd stopped"),
                "\(human.standardOutput)")
        let first = try #require(lines.first ?? nil)
        #expect(first["event"] as? String == "registration")
        #expect((first["registration"] as? [String: Any])?["state"] is String, "\(first)")
        #expect((first["time"] as? String)?.hasSuffix("Z") == true, "\(first)")
        let again = try await daemon.notifyctl(["stop"])
        #expect(again.status == 0, "stopping a stopped notifyd is not an error")
        await daemon.cleanUp()
    }

    /// notifyd closes its clients' connections a moment before its process exits: `stop`
    /// returns only once the process named in the answer has exited, so that a notifyd
    /// started next finds the socket and the lock free; one that does not exit within the
    /// timeout is said to be still running.
    @Test func stopReturnsOnceTheProcessHasExited() async throws {
        let lingering = try await SpawnedProcess.start("/bin/sleep", ["1"])
        let stopsLate = try await HostileListener.with(serve: Self.stopAnswer(pid: lingering.pid)) { listener in
            try await run(BuiltProducts.path("notifyctl"), ["--socket", listener.path, "stop"])
        }
        #expect(stopsLate.status == 0, "\(stopsLate.error)")
        #expect(!lingering.isRunning, "stop returned while pid \(lingering.pid) still ran")

        let stays = try await SpawnedProcess.start("/bin/sleep", ["300"])
        defer { stays.signal(SIGKILL) }
        let neverStops = try await HostileListener.with(serve: Self.stopAnswer(pid: stays.pid)) { listener in
            try await run(BuiltProducts.path("notifyctl"), ["--socket", listener.path, "stop", "--timeout", "1"])
        }
        #expect(neverStops.status == 1)
        #expect(neverStops.error.contains("notifyd (pid \(stays.pid)) is still running 1 s after it was asked to stop"), "\(neverStops.error)")
    }

    /// Answers `stop` as notifyd does, naming `pid`, and closes the connection.
    static func stopAnswer(pid: pid_t) -> @Sendable (Int32) -> Void {
        { fd in
            let reader = LineReader(fd: fd, maximumLength: 1 << 20)
            guard case .line(let bytes) = reader.next() else { return }
            let id = ((try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any])?["id"] as? Int ?? 0
            _ = try? UnixSocket.writeAll(fd, Array((#"{"id":\#(id),"ok":true,"result":{"pid":\#(pid)}}"# + "\n").utf8))
        }
    }

    @Test func reloadAppliesTheChangedSettingsAndRefusesABrokenConfig() async throws {
        let directory = "/tmp/nd-rld-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let config = directory + "/config"
        try Data("log_level = notice\n".utf8).write(to: URL(fileURLWithPath: config))
        // No --log-level flag here: a flag would win over the file.
        let daemon = try await DaemonUnderTest(backend: nil, extraArguments: ["--config", config], logLevelFlag: false)

        try Data("log_level = debug\nsend_platforms = fcm\nbackend = http://127.0.0.1:8080\n".utf8).write(to: URL(fileURLWithPath: config))
        let reload = try await daemon.notifyctl(["reload"])
        #expect(reload.status == 0, "\(reload.error)")
        #expect(reload.output.contains("now in effect: backend, send_platforms, log_level."), "\(reload.output)")
        #expect(!reload.output.contains("after notifyd starts again"), "\(reload.output)")
        _ = try await daemon.notifyctl(["ping"])
        #expect(await eventually { daemon.child.standardError.contains("debug:") }, "the new log level is in effect")

        try Data("log_level = chatty\n".utf8).write(to: URL(fileURLWithPath: config))
        let bad = try await daemon.notifyctl(["reload"])
        #expect(bad.status == 1)
        #expect(bad.error.contains("\(config):1: log_level"), "\(bad.error)")
        #expect(bad.error.contains("nothing changed"))

        // SIGHUP reloads too, and does not end the daemon.
        try Data("log_level = notice\n".utf8).write(to: URL(fileURLWithPath: config))
        daemon.child.signal(SIGHUP)
        #expect(await eventually { daemon.child.standardError.contains("received SIGHUP") })
        #expect(try await daemon.notifyctl(["ping"]).status == 0)
        await daemon.cleanUp()
    }

    /// The README's setup block: the config gets its backend, then `notifyctl reload` is the
    /// command that starts notifyd (socket activation), which reads the file as it starts.
    /// "Nothing changed" alone read as though the backend had been ignored.
    @Test func aReloadRightAfterTheStartSaysTheFileWasReadAtTheStartAndWhatItSets() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let config = directory.file("config")
        try Data("backend = http://127.0.0.1:9\n".utf8).write(to: URL(fileURLWithPath: config))
        let daemon = try await DaemonUnderTest(backend: nil, extraArguments: ["--config", config], logLevelFlag: false)
        let first = try await daemon.notifyctl(["reload"])
        #expect(first.status == 0, "\(first.error)")
        // "a moment ago" or "3 s ago": as slow as the machine is.
        let ago = /(a moment|\d+ s) ago/
        #expect(first.output.hasPrefix("Reloaded \(config): nothing changed since notifyd read it when it started, "), "\(first.output)")
        #expect(first.output.contains(ago) && first.output.hasSuffix("; in effect besides the defaults: backend, state_dir.\n"), "\(first.output)")
        let second = try await daemon.notifyctl(["reload"])
        #expect(second.output.contains(": nothing changed since the last reload, ") && second.output.contains(ago), "\(second.output)")
        let json = try await daemon.notifyctl(["--json", "reload"])
        let object = try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any]
        #expect(object?["unchanged_since"] as? String == "reload" && object?["set"] as? [String] == ["backend", "state_dir"], "\(json.output)")
        await daemon.cleanUp()
    }

    @Test func aChangedStateDirIsNamedByReloadAndStatusUntilARestart() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let config = directory.file("config")
        try Data("state_dir = \(directory.file("state"))\n".utf8).write(to: URL(fileURLWithPath: config))
        let daemon = try await DaemonUnderTest(backend: nil, extraArguments: ["--config", config], stateDirectoryFlag: false)
        try Data("state_dir = \(directory.file("elsewhere"))\n".utf8).write(to: URL(fileURLWithPath: config))
        let reload = try await daemon.notifyctl(["reload"])
        #expect(reload.status == 0, "\(reload.error)")
        #expect(reload.output.contains("Changed, but only in effect after notifyd starts again: state_dir"), "\(reload.output)")
        let status = try await daemon.notifyctl(["status"])
        #expect(status.output.contains("restart for:  state_dir (changed in the configuration; in effect once notifyd starts again)"), "\(status.output)")
        await daemon.cleanUp()
    }

    /// Under a systemd user manager (which sets INVOCATION_ID and MANAGERPID), a restart is
    /// systemd's to do.
    @Test func underASystemdUserManagerReloadNamesSystemctlRestart() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let config = directory.file("config")
        try Data("state_dir = \(directory.file("state"))\n".utf8).write(to: URL(fileURLWithPath: config))
        let daemon = try await DaemonUnderTest(backend: nil, extraArguments: ["--config", config],
                                               environment: ["INVOCATION_ID": "0123456789abcdef0123456789abcdef", "MANAGERPID": "1"], stateDirectoryFlag: false)
        try Data("state_dir = \(directory.file("elsewhere"))\n".utf8).write(to: URL(fileURLWithPath: config))
        let reload = try await daemon.notifyctl(["reload"])
        #expect(reload.status == 0, "\(reload.error)")
        #expect(reload.output.contains("after notifyd starts again: state_dir (`systemctl --user restart notifyd`)"), "\(reload.output)")
        await daemon.cleanUp()
    }

    @Test func aReloadedSendPlatformsIsUsedByTheNextSend() async throws {
        let backend = try CommandLineTests.backend()
        defer { backend.stop() }
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let config = directory.file("config")
        try Data("send_platforms = apns\n".utf8).write(to: URL(fileURLWithPath: config))
        let daemon = try await DaemonUnderTest(backend: backend.baseURL.absoluteString, extraArguments: ["--config", config])
        _ = try await daemon.notifyctl(["login", "--password-stdin", "alice"], stdin: Data("alice\n".utf8))
        try Data("send_platforms = fcm,wns\n".utf8).write(to: URL(fileURLWithPath: config))
        #expect(try await daemon.notifyctl(["reload"]).status == 0)
        let sent = try await daemon.notifyctl(["send", "--to", "bob", "hi"])
        #expect(sent.output == "fcm: accepted by the backend for bob\nwns: accepted by the backend for bob\n", "\(sent.output)\(sent.error)")
        await daemon.cleanUp()
    }
}
