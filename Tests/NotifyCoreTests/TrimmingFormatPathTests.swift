import Foundation
import NotifyTestSupport
import Testing
@testable import NotifyCore

/// The text and path operations notifyd has of its own, without Foundation, against what
/// Foundation answers for the same input.
@Suite struct TrimmingFormatPathTests {
    /// What `NSString` documents for the same paths (Foundation's own implementation traps
    /// on some of them under Linux, so it cannot be the reference here).
    @Test(arguments: [
        ("/a/b", "/a", "b", "/a/b/x.json"), ("/a/b/", "/a", "b", "/a/b/x.json"), ("a", "", "a", "a/x.json"),
        ("a/b", "a", "b", "a/b/x.json"), ("/a", "/", "a", "/a/x.json"), ("/", "/", "/", "/x.json"), ("", "", "", "x.json"),
        ("/home/u/.local/state/notifyd/", "/home/u/.local/state", "notifyd", "/home/u/.local/state/notifyd/x.json"),
    ])
    func pathsSplitAsNSStringDocumentsIt(path: String, directory: String, name: String, joined: String) {
        #expect(FilePath.directory(of: path) == directory)
        #expect(FilePath.name(of: path) == name)
        #expect(FilePath.join(path, "x.json") == joined)
    }

    @Test(arguments: ["  a b  ", "\ta\t", "a", "", "   ", "\u{00A0}x\u{3000}", " line\n", "\r\nx\r\n"])
    func trimmingSpacesAsFoundationDoes(text: String) {
        #expect(text.trimmingSpaces() == text.trimmingCharacters(in: .whitespaces))
    }

    @Test func numbersFormatAsPrintfDoes() {
        #expect(CFormat.string("%010ld", 42) == String(format: "%010ld", 42))
        #expect(CFormat.string("%04X", UInt32(0x1F)) == "001F")
        for value in [0.5, 1.0 / 3, 1234.5678, 1e-7] {
            #expect(CFormat.string("%.3g s", value) == String(format: "%.3g s", value))
        }
    }

    @Test(arguments: ["plain", "a b+c/d?e=f&g", "é😀", "~-._", "100%", "\u{0}"])
    func percentEncodingAsFoundationDoes(text: String) {
        let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        #expect(URLText.escape(text) == text.addingPercentEncoding(withAllowedCharacters: unreserved))
    }

    @Test(arguments: ["Sun, 06 Nov 1994 08:49:37 GMT", "Wed, 21 Oct 2015 07:28:00 GMT", "Mon, 29 Feb 2100 23:59:59 GMT", "Tue, 31 Dec 2030 00:00:00 GMT"])
    func httpDatesAsDateFormatterReadsThem(text: String) {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        #expect(RetryAfter.httpDate(text) == formatter.date(from: text))
    }

    @Test(arguments: ["Sun, 06 Nov 1994 08:49:37", "06 Nov 1994 08:49:37 GMT", "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 32 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 8:49 GMT"])
    func malformedHTTPDatesAreNotDates(text: String) {
        #expect(RetryAfter.httpDate(text) == nil)
    }
}

/// The one child process notifyd starts: the password command.
@Suite struct ChildProcessTests {
    @Test func itsOutputAndExitStatusComeBack() async throws {
        let finished = try #require(await ChildProcess.run(shell: "printf 'secret\\nmore'; echo oops >&2; exit 3", timeout: 10))
        #expect(finished.status == 3)
        #expect(String(decoding: finished.output, as: UTF8.self) == "secret\nmore", "standard error is not read")
    }

    /// Killed with what it started: the `sleep` below would hold the output open, and the
    /// answer would wait for it, if only the shell were killed.
    @Test func aCommandThatRunsTooLongIsKilledWithItsChildren() async throws {
        let finished = try #require(await ChildProcess.run(shell: "echo $$; sleep 30; echo late", timeout: 0.2))
        #expect(finished.status == nil)
        let group = try #require(Int32(String(decoding: finished.output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)))
        // Nothing of its process group is left, the sleep included (once the killed are reaped).
        #expect(await eventually { kill(-group, 0) == -1 && errno == ESRCH })
    }

    /// A descriptor open without close-on-exec at the moment the command starts (another
    /// thread's file write; Foundation's writes open so) does not go with it: a command that
    /// kept it would keep that file busy, and an executable written so could not be run.
    @Test func aCommandInheritsNoDescriptorButItsOwnThree() async throws {
        let stray = open("/dev/null", O_RDONLY)
        defer { close(stray) }
        let finished = try #require(await ChildProcess.run(shell: "ls /proc/$$/fd", timeout: 10))
        let open = String(decoding: finished.output, as: UTF8.self).split(separator: "\n").compactMap { Int32($0) }
        #expect(!open.contains(stray), "descriptor \(stray) went with the command: \(open)")
        #expect(Set(open).isSubset(of: [0, 1, 2, 3]), "\(open) (3 may be ls's own directory)")
    }

    /// A command that prints more than a password is stopped at once, not read to its end
    /// (`yes` has none) or left blocked on a full pipe.
    @Test func aFloodOfOutputIsCutAndTheCommandStopped() async throws {
        let started = Date()
        let finished = try #require(await ChildProcess.run(shell: "yes alice", timeout: 30))
        #expect(finished.ending == .killedForOutput)
        #expect(finished.output.count == ChildProcess.outputLimit)
        #expect(Date().timeIntervalSince(started) < 20, "stopped at the bound, not at the deadline")
    }

    /// The command has ended, and what it left behind, in a session of its own, goes on
    /// writing to the output for ever: what was written is taken, up to the bound, and
    /// nothing more is waited for.
    @Test(.timeLimit(.minutes(1))) func aCommandThatEndedIsDoneWhateverItLeftWritingToItsOutput() async throws {
        let marker = "1\(Int.random(in: 100_000...999_999))"
        defer {
            for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
                guard let pid = pid_t(entry), let line = try? String(contentsOfFile: "/proc/\(entry)/cmdline", encoding: .utf8), line.contains(marker) else { continue }
                kill(pid, SIGKILL)
            }
        }
        let finished = try #require(await ChildProcess.run(shell: "echo alice; setsid yes \(marker) &", timeout: 3600))
        // Which comes first, the command's end or the bound, is the scheduler's to say.
        #expect(finished.ending == .exited(0) || finished.ending == .killedForOutput, "\(finished.ending)")
        #expect(finished.output.starts(with: Data("alice\n".utf8)))
        #expect(finished.output.count <= ChildProcess.outputLimit)
    }

    @Test func cancellingTheWaitKillsTheCommandAndWhatItStarted() async throws {
        let marker = "\(Int.random(in: 100_000...999_999))"
        let run = Task { await ChildProcess.run(shell: "sleep 1\(marker)", timeout: 60) }
        #expect(await eventually { processes(matching: "sleep 1\(marker)") > 0 })
        run.cancel()
        let finished = await run.value
        #expect(finished?.ending == .killedWhenCancelled)
        #expect(await eventually { processes(matching: "sleep 1\(marker)") == 0 })
    }

    /// notifyd ignores SIGPIPE; the command must not inherit that.
    @Test func theCommandGetsSIGPIPEBackToItsDefault() async throws {
        signal(SIGPIPE, SIG_IGN)
        let finished = try #require(await ChildProcess.run(shell: "grep SigIgn /proc/self/status", timeout: 10))
        let mask = String(decoding: finished.output, as: UTF8.self).split(separator: "\t").last.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        let ignored = try #require(mask.flatMap { UInt64($0, radix: 16) })
        #expect(ignored & (1 << (UInt64(SIGPIPE) - 1)) == 0, "SIGPIPE is ignored in the child")
    }

    private func processes(matching text: String) -> Int {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.filter { entry in
            guard Int(entry) != nil, let line = try? String(contentsOfFile: "/proc/\(entry)/cmdline", encoding: .utf8) else { return false }
            return line.replacingOccurrences(of: "\0", with: " ").contains(text)
        }.count
    }

    @Test func aCommandThatCannotRunSaysSo() async throws {
        let finished = try #require(await ChildProcess.run(shell: "exec /nonexistent/command", timeout: 10))
        #expect(finished.status == 127)
    }
}
