import Foundation
import NotifyClient
import NotifyProtocol
import NotifyTestSupport
import Testing

/// The built notifyd logging to what cannot take its lines: a FIFO whose reader stopped
/// reading, a device, another file's mode through a symbolic link.
@Suite struct LogFileTests {
    /// What was reported: after about 300 pings the socket thread blocked in `pipe_write`,
    /// and `ping` and `status` timed out until the reader went away. Now the lines wait,
    /// bounded, then are dropped and counted, and every command answers.
    @Test func aLogNobodyReadsNeitherStallsNotifydNorGrowsWithoutBound() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let fifo = directory.file("fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        // A reader that never reads: opening for writing needs one.
        let reader = open(fifo, O_RDONLY | O_NONBLOCK)
        #expect(reader >= 0)
        defer { close(reader) }
        let daemon = try await DaemonUnderTest(backend: nil, extraArguments: ["--log-file", fifo])
        // Each connection logs two lines at debug: 6,000 of them are far more than the pipe
        // and the bound hold.
        let socket = daemon.socket
        let answered = try await offThePool { () -> Int in
            var answered = 0
            // A stalled notifyd fails the first ping that waits (5 s), not all of them.
            for _ in 0..<3000 {
                guard (try? NotifyClient(socketPath: socket).call(PingCommand())) != nil else { break }
                answered += 1
            }
            return answered
        }
        #expect(answered == 3000, "every ping answered")
        let status = try await daemon.notifyctl(["status"], seconds: 10)
        #expect(status.output.contains("registration:"), "status answers: \(status.error)")

        // The reader reads again: the lines kept, then how many were dropped.
        var text = ""
        #expect(await eventually(30) {
            var buffer = [UInt8](repeating: 0, count: 65536)
            let count = read(reader, &buffer, buffer.count)
            if count > 0 { text += String(decoding: buffer[..<count], as: UTF8.self) }
            return text.contains("log lines dropped: the log file is not being read")
        }, "\(text.suffix(500))")
        await daemon.cleanUp()
    }

    @Test func aDeviceIsNotALogFile() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let result = try await run(BuiltProducts.path("notifyd"), ["--log-file", "/dev/full", "--socket", directory.file("s.sock"),
                                                                   "--state-dir", directory.file("state")], seconds: 10)
        #expect(result.status == 78, "\(result.error)")
        #expect(result.error.contains("cannot use the log file /dev/full: it is not a regular file or a FIFO"), "\(result.error)")
    }

    /// A symbolic link to a file others can read: the file, which is what gets the lines, is made 0600.
    @Test func aLogFileReachedThroughALinkIsMadePrivate() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let target = directory.file("real.log")
        try Data().write(to: URL(fileURLWithPath: target))
        #expect(chmod(target, 0o644) == 0)
        let link = directory.file("notifyd.log")
        #expect(symlink(target, link) == 0)
        let daemon = try await DaemonUnderTest(backend: nil, extraArguments: ["--log-file", link])
        var info = stat()
        #expect(stat(target, &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(await eventually { ((try? String(contentsOfFile: target, encoding: .utf8)) ?? "").contains("listening on") })
        await daemon.cleanUp()
    }

    /// Whoever may change a directory the log file is in could put a link there to a file of
    /// the user's (here root's): notifyd must not append to that file, nor make it 0600.
    @Test(arguments: [(owner: uid_t(65534), mode: mode_t(0o755), says: "belongs to uid 65534"),
                      (owner: uid_t(0), mode: mode_t(0o777), says: "is writable by other users (mode 777)"),
                      (owner: uid_t(0), mode: mode_t(0o1777), says: "symbolic link in a directory others may write to")])
    func aLinkOthersCouldHavePlantedIsNotFollowed(owner: uid_t, mode: mode_t, says: String) async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let target = directory.file("root-owned")
        try Data("precious\n".utf8).write(to: URL(fileURLWithPath: target))
        #expect(chmod(target, 0o644) == 0)
        let theirs = directory.file("theirs")
        #expect(mkdir(theirs, 0o755) == 0 && chown(theirs, owner, owner) == 0 && chmod(theirs, mode) == 0)
        let link = theirs + "/notifyd.log"
        #expect(symlink(target, link) == 0)
        let arguments = ["--log-file", link, "--socket", directory.file("s.sock"), "--state-dir", directory.file("state")]
        for extra in [["--check-config"], []] {
            let result = try await run(BuiltProducts.path("notifyd"), arguments + extra, seconds: 10)
            #expect(result.status == 78, "\(extra): \(result.error)")
            #expect(result.error.contains("log file \(link)") && result.error.contains(says), "\(extra): \(result.error)")
        }
        var info = stat()
        #expect(stat(target, &info) == 0 && info.st_mode & 0o777 == 0o644, "its mode is left alone")
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "precious\n")
    }

    /// `--check-config` refuses what a start refuses, and changes nothing.
    @Test(arguments: ["fifo", "/dev/full", "/dev/tty", "theirs.log"])
    func theConfigCheckRefusesTheLogFilesAStartRefuses(name: String) async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let path = name.hasPrefix("/") ? name : directory.file(name)
        if name == "fifo" { #expect(mkfifo(path, 0o600) == 0) }
        if name == "theirs.log" {
            try Data().write(to: URL(fileURLWithPath: path))
            #expect(chown(path, 65534, 65534) == 0)
        }
        let arguments = ["--log-file", path, "--socket", directory.file("s.sock"), "--state-dir", directory.file("state")]
        let check = try await run(BuiltProducts.path("notifyd"), arguments + ["--check-config"], seconds: 10)
        let start = try await run(BuiltProducts.path("notifyd"), arguments, seconds: 10)
        #expect(start.status == 78, "\(start.error)")
        #expect(check.status == 78, "\(check.output)\(check.error)")
        #expect(check.error.contains("log file \(path)"), "\(check.error)")
        if name == "theirs.log" {
            var info = stat()
            #expect(stat(path, &info) == 0 && info.st_uid == 65534)
        }
    }
}
