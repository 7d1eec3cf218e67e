import DevBackend
import Foundation
import NotifySocket
import Testing
import NotifyTestSupport

/// notifyctl as a script uses it: exit codes, `--json`, options anywhere, usage errors.
@Suite struct ScriptingTests {
    @Test func loginExitsZeroWhenOnlyTheUserCanActAndFourWhileNotifydRetries() async throws {
        let backend = try CommandLineTests.backend()
        defer { backend.stop() }
        let daemon = try await DaemonUnderTest(backend: backend.baseURL.absoluteString)
        let login = try await daemon.notifyctl(["login", "--password-stdin", "alice"], stdin: Data("alice\n".utf8))
        #expect(login.status == 0, "no token yet: waits for the user, not for notifyd: \(login.output)\(login.error)")
        #expect(login.output.hasPrefix("Logged in as alice; no device token yet"), "one sentence on what comes next: \(login.output)")
        let tags = try await daemon.notifyctl(["set-tags", "news"])
        #expect(tags.status == 0, "\(tags.output)\(tags.error)")
        await daemon.cleanUp()

        // The backend is down: notifyd keeps retrying by itself, and that is exit 4.
        let down = try await DaemonUnderTest(backend: "http://127.0.0.1:9")
        #expect(try await down.notifyctl(["set-token", "ABCD"]).status == 0)
        let retried = try await down.notifyctl(["login", "--password-stdin", "--timeout", "2", "alice"], stdin: Data("alice\n".utf8))
        #expect(retried.status == 4, "\(retried.output)\(retried.error)")
        #expect(retried.output.contains("next attempt"))
        #expect(retried.output.contains("cannot connect to http://127.0.0.1:9: connection refused"), "names the URL: \(retried.output)")
        await down.cleanUp()
    }

    @Test func globalOptionsWorkAfterTheCommandAndEveryHelpListsThem() async throws {
        let daemon = try await DaemonUnderTest(backend: nil)
        let status = try await run(BuiltProducts.path("notifyctl"), ["status", "--json", "--socket", daemon.socket])
        #expect(status.status == 1, "no backend, which needs you: \(status.error)")
        let object = try JSONSerialization.jsonObject(with: Data(status.output.utf8)) as? [String: Any]
        #expect((object?["registration"] as? [String: Any])?["state"] as? String == "no_backend")
        let equals = try await run(BuiltProducts.path("notifyctl"), ["ping", "--socket=\(daemon.socket)"])
        #expect(equals.status == 0, "\(equals.error)")
        await daemon.cleanUp()

        for command in ["login", "logout", "set-token", "set-tags", "register", "unregister", "send", "outbox", "status", "watch", "ping", "reload", "stop"] {
            let help = try await run(BuiltProducts.path("notifyctl"), [command, "--help"])
            #expect(help.output.contains("--json") && help.output.contains("--socket PATH"), "\(command) --help")
        }
    }

    @Test func underJSONErrorsAreJSONOnStandardOutputWithTheSameStatus() async throws {
        let daemon = try await DaemonUnderTest(backend: "http://127.0.0.1:9")
        let cases: [([String], Int32, String)] = [
            (["--json", "set-token"], 2, "usage"),
            (["send", "--to", "bob", "hi", "--json"], 1, "not_logged_in"),
            (["--json", "frobnicate"], 2, "usage"),
        ]
        for (arguments, status, code) in cases {
            let result = try await daemon.notifyctl(arguments)
            #expect(result.status == status, "\(arguments)")
            #expect(result.error.isEmpty, "\(arguments): nothing on stderr: \(result.error)")
            let object = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any]
            let error = object?["error"] as? [String: Any]
            #expect(error?["code"] as? String == code, "\(arguments): \(result.output)")
            #expect((error?["message"] as? String)?.isEmpty == false)
        }
        // notifyd's words, escapes and line breaks included, come through as they are: once
        // escaped, by JSON, not also as they are shown at a terminal.
        let odd = "\u{1B}[31mX\nY"
        let unknown = try await daemon.notifyctl(["--json", "outbox", "cancel", odd])
        let object = try JSONSerialization.jsonObject(with: Data(unknown.output.utf8)) as? [String: Any]
        let message = try #require((object?["error"] as? [String: Any])?["message"] as? String, "\(unknown.output)")
        #expect(message.contains("'\(odd)'"), "\(message)")
        await daemon.cleanUp()

        let nowhere = try await run(BuiltProducts.path("notifyctl"), ["--json", "--socket", daemon.directory + "/gone.sock", "status"])
        #expect(nowhere.status == 3)
        #expect(nowhere.output.contains(#""code":"not_running""#), "\(nowhere.output)")
    }

    /// A message read from standard input is text: bytes that are not UTF-8 are refused,
    /// not sent with U+FFFD in their place.
    @Test func aMessageOnStandardInputThatIsNotUTF8OrFarTooLongIsRefused() async throws {
        let daemon = try await DaemonUnderTest(backend: "http://127.0.0.1:9")
        let sent = try await daemon.notifyctl(["send", "--to", "bob", "-"], stdin: Data([0x68, 0x69, 0xFF, 0xFE, 0x0A]))
        #expect(sent.status == 2, "\(sent.output)\(sent.error)")
        #expect(sent.error.contains("the message on standard input is not UTF-8 text"), "\(sent.error)")
        // Far too long for any push: said so, not as a request line notifyd would not read.
        let huge = try await daemon.notifyctl(["send", "--to", "bob", "-"], stdin: Data(String(repeating: "a", count: 300_000).utf8))
        #expect(huge.status == 2, "\(huge.output)\(huge.error)")
        #expect(huge.error.contains("the message is 300000 bytes, far more than a push carries"), "\(huge.error)")
        await daemon.cleanUp()
    }

    @Test func logoutWhenNotLoggedInSucceeds() async throws {
        let daemon = try await DaemonUnderTest(backend: nil)
        let logout = try await daemon.notifyctl(["logout"])
        #expect(logout.status == 0, "\(logout.error)")
        #expect(logout.output.contains("Not logged in"))
        await daemon.cleanUp()
    }

    @Test func humanStatusSaysStatesInWordsAndCountsTheOutbox() async throws {
        // The queued message waits an hour for its retry, so that `outbox retry` finds it
        // waiting however slowly the test runs, not already under way by itself.
        let daemon = try await DaemonUnderTest(backend: "http://127.0.0.1:9", extraArguments: ["--retry-min", "1h", "--retry-max", "1h"])
        let before = try await daemon.notifyctl(["status"])
        #expect(before.output.contains("registration: not logged in\n"), "\(before.output)")
        #expect(!before.output.contains("not_logged_in"))
        #expect(before.output.contains("outbox:       empty"))

        _ = try await daemon.notifyctl(["login", "--password-stdin", "alice"], stdin: Data("alice\n".utf8))
        let sent = try await daemon.notifyctl(["send", "--to", "bob", "hi"])
        #expect(sent.status == 4, "queued: the backend is down")
        let queued = try await daemon.notifyctl(["status"])
        #expect(queued.output.contains(/outbox:       1 waiting, 0 failed; next attempt in \d/), "\(queued.output)")

        let listed = try await daemon.notifyctl(["--json", "outbox"])
        let id = try #require(listed.output.firstMatch(of: /"id":"([^"]+)"/).map { String($0.output.1) })
        let retried = try await daemon.notifyctl(["outbox", "retry", id])
        #expect(retried.status == 0, "\(retried.error)")
        #expect(retried.output.contains("Trying 1 waiting message now"))
        // The retry may still be under way, and a message being sent cannot be cancelled.
        var cancelled = try await daemon.notifyctl(["outbox", "cancel", id])
        _ = await eventually {
            if cancelled.status != 0 { cancelled = (try? await daemon.notifyctl(["outbox", "cancel", id])) ?? cancelled }
            return cancelled.status == 0
        }
        #expect(cancelled.status == 0, "\(cancelled.error)")
        #expect(cancelled.output.contains("Cancelled \(id) to bob"))
        #expect(try await daemon.notifyctl(["status"]).output.contains("outbox:       empty"))
        let missing = try await daemon.notifyctl(["outbox", "cancel"])
        #expect(missing.status == 2)
        #expect(missing.error.contains("missing ID"))
        await daemon.cleanUp()
    }

    /// `outbox cancel 1` and `outbox retry 2` for 0000000001-apns and 0000000002-fcm, as
    /// the ids are read off the list (with or without the platform).
    @Test func theOutboxTakesAnIdsShortNumber() async throws {
        let daemon = try await DaemonUnderTest(backend: "http://127.0.0.1:9", extraArguments: ["--retry-min", "1h", "--retry-max", "1h"],
                                               environment: ["NOTIFYD_SEND_PLATFORMS": "apns,fcm"])
        _ = try await daemon.notifyctl(["login", "--password-stdin", "alice"], stdin: Data("alice\n".utf8))
        #expect(try await daemon.notifyctl(["send", "--to", "bob", "hi"]).status == 4)
        let listed = try await daemon.notifyctl(["--json", "outbox"])
        let ids = listed.output.matches(of: /"id":"([^"]+)"/).map { String($0.output.1) }.sorted()
        #expect(ids.count == 2, "\(ids)")
        let numbers = ids.compactMap { Int($0.prefix { $0 != "-" }) }
        let (apns, fcm) = (try #require(ids.first { $0.hasSuffix("-apns") }), try #require(ids.first { $0.hasSuffix("-fcm") }))

        let retried = try await daemon.notifyctl(["outbox", "retry", "\(Int(fcm.prefix { $0 != "-" }) ?? -1)-fcm"])
        #expect(retried.status == 0, "\(retried.error)")
        let short = String(Int(apns.prefix { $0 != "-" }) ?? -1)
        var cancelled = try await daemon.notifyctl(["outbox", "cancel", short])
        _ = await eventually {
            if cancelled.status != 0 { cancelled = (try? await daemon.notifyctl(["outbox", "cancel", short])) ?? cancelled }
            return cancelled.status == 0
        }
        #expect(cancelled.output.contains("Cancelled \(apns) to bob"), "\(cancelled.output)\(cancelled.error)")
        let unknown = try await daemon.notifyctl(["outbox", "cancel", String((numbers.max() ?? 0) + 1)])
        #expect(unknown.status == 2 && unknown.error.contains("no message '\((numbers.max() ?? 0) + 1)'"), "\(unknown.error)")
        let wrongPlatform = try await daemon.notifyctl(["outbox", "cancel", "\(short)-fcm"])
        #expect(wrongPlatform.status == 2, "\(wrongPlatform.error)")
        await daemon.cleanUp()
    }

    @Test func aRefusedLoginSaysSoWithoutClaimingToBeLoggedIn() async throws {
        let backend = try CommandLineTests.backend()
        defer { backend.stop() }
        let daemon = try await DaemonUnderTest(backend: backend.baseURL.absoluteString)
        _ = try await daemon.notifyctl(["set-token", "ABCD"])
        // The dev backend's password is the user name: this one is wrong.
        let login = try await daemon.notifyctl(["login", "--password-stdin", "bob"], stdin: Data("wrong\n".utf8))
        #expect(login.status == 1)
        #expect(login.error.contains("refused the password of 'bob'"), "\(login.error)")
        #expect(!(login.output + login.error).contains("Logged in"), "\(login.output)\(login.error)")
        await daemon.cleanUp()
    }

    @Test func usageErrorsNameTheArgumentSuggestTheNearestAndPointAtHelp() async throws {
        let notifyctl = BuiltProducts.path("notifyctl")
        let cases: [([String], String)] = [
            (["set-tokn", "AB"], "did you mean `set-token`?"),
            (["set-token"], "missing TOKEN"),
            (["login"], "missing USER"),
            (["set-token", "--nowait", "AB"], "did you mean `--no-wait`?"),
            (["--jsn", "status"], "did you mean `--json`?"),
            (["ping", "extra"], "unexpected argument 'extra'"),
            (["send", "hi"], "missing --to USER"),
            (["send", "--to", "bob", "--timeout", "soon", "hi"], "--timeout takes seconds or a duration such as 90s, 2m or 1h, not 'soon'"),
        ]
        for (arguments, expected) in cases {
            let result = try await run(notifyctl, ["--socket", "/tmp/nd-none.sock"] + arguments)
            #expect(result.status == 2, "\(arguments)")
            #expect(result.error.contains(expected), "\(arguments): \(result.error)")
            #expect(result.error.contains("--help"), "points at the help")
            #expect(!result.error.contains("usage: notifyctl"), "\(arguments): one line, not the whole help")
        }
    }

    @Test func sendSaysTheBackendAcceptedItNotThatDevicesGotIt() async throws {
        let backend = try CommandLineTests.backend()
        defer { backend.stop() }
        let daemon = try await DaemonUnderTest(backend: backend.baseURL.absoluteString)
        _ = try await daemon.notifyctl(["login", "--password-stdin", "alice"], stdin: Data("alice\n".utf8))
        let sent = try await daemon.notifyctl(["send", "--to", "bob", "--pns", "fcm,wns", "hello"])
        #expect(sent.status == 0)
        #expect(sent.output == "fcm: accepted by the backend for bob\nwns: accepted by the backend for bob\n")
        await daemon.cleanUp()
    }

    /// The durations notifyd's config takes (`1m`), and plain seconds as before.
    @Test func timeoutsTakeDurationsAsTheConfigDoes() async throws {
        let backend = try CommandLineTests.backend()
        defer { backend.stop() }
        let daemon = try await DaemonUnderTest(backend: backend.baseURL.absoluteString)
        let login = try await daemon.notifyctl(["login", "--password-stdin", "--timeout", "2m", "alice"], stdin: Data("alice\n".utf8))
        #expect(login.status == 0, "\(login.error)")
        for timeout in ["1m", "90s", "90", "1.5m"] {
            let sent = try await daemon.notifyctl(["send", "--to", "bob", "--wait", "--timeout", timeout, "hello"])
            #expect(sent.status == 0, "--timeout \(timeout): \(sent.error)")
        }
        #expect(try await daemon.notifyctl(["stop", "--timeout", "1m"]).status == 0)
        await daemon.cleanUp()
    }

    @Test func aConnectionClosedBeforeAnyAnswerIsNotifydNotRunningProperly() async throws {
        let directory = "/tmp/nd-rst-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // What a notifyd that fails at start leaves under socket activation: a listening
        // socket whose connections are closed unanswered.
        let listener = try UnixSocket.listen(path: directory + "/s.sock")
        let closed = DispatchSemaphore(value: 0)
        let closer = Thread {
            let fd = accept(listener, nil, nil)
            if fd >= 0 { close(fd) }
            closed.signal()
        }
        // The listener is closed only once the closer is past accept(): its number could
        // otherwise be reused by another test's socket and accepted from here.
        defer {
            shutdown(listener, Int32(SHUT_RDWR))
            closed.wait()
            close(listener)
        }
        closer.start()
        let result = try await run(BuiltProducts.path("notifyctl"), ["--socket", directory + "/s.sock", "status"])
        #expect(result.status == 3)
        #expect(result.error.contains("notifyd is not running properly"), "\(result.error)")
        #expect(result.error.contains("journalctl --user -u notifyd"))
        #expect(result.error.contains("notifyd --check-config"))
    }
}
