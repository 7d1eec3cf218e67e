import Foundation
import NotifyCore
import NotifyDaemon
import NotifySocket
import Testing

/// The state directory holds the password and the messages sent in its user's name: like
/// ssh's StrictModes, notifyd refuses one that anybody else could change, through the
/// directory itself, a directory above it, or a file in it.
///
/// The cases about modes run for everyone; those about a file or directory of another user
/// need root, who alone can give one away (to uid 65534), and say so when skipped.
@Suite struct StateDirectorySafetyTests {
    static let onlyRoot = Testing.ConditionTrait.enabled(if: getuid() == 0, "only root can give a file to another user (uid 65534) to test this")
    static let other: UInt32 = 65534

    /// A directory under /tmp (sticky, root's: allowed above a state directory) with a
    /// home directory and a state directory inside it, none created yet.
    struct Layout {
        let base: String
        var home: String { base + "/home" }
        var state: String { base + "/home/.local/state/notifyd" }

        init() throws {
            base = "/tmp/nd-sd-" + UUID().uuidString.prefix(8)
            try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        }

        func makeState(mode: Int = 0o700) throws {
            try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
            #expect(chmod(state, mode_t(mode)) == 0)
        }

        func file(_ name: String, mode: Int = 0o600) -> String {
            let path = state + "/" + name
            try? FileManager.default.createDirectory(atPath: FilePath.directory(of: path), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            #expect(FileManager.default.createFile(atPath: path, contents: Data("{}".utf8)))
            #expect(chmod(path, mode_t(mode)) == 0)
            return path
        }

        func check(home: String? = nil) -> String? {
            do throws(DaemonError) {
                try StateDirectoryCheck.run(state, home: home ?? self.home)
                return nil
            } catch {
                #expect(error.isConfigurationError)
                return error.description
            }
        }

        func remove() {
            try? FileManager.default.removeItem(atPath: base)
        }
    }

    /// A directory on the way that others may write to, without the sticky bit: refused,
    /// naming it and the fix. With the sticky bit (as /tmp) it is allowed.
    @Test(arguments: [(0o777, true), (0o775, true), (0o757, true), (0o1777, false), (0o755, false), (0o700, false)] as [(Int, Bool)])
    func aDirectoryAboveOthersCanWriteIsRefused(mode: Int, refused: Bool) throws {
        let layout = try Layout()
        defer { layout.remove() }
        try layout.makeState()
        let parent = layout.home + "/.local"
        #expect(chmod(parent, mode_t(mode)) == 0)
        let problem = layout.check()
        if refused {
            #expect(problem == "\(parent) is writable by other users (mode \(String(mode, radix: 8))), who could replace the state directory \(layout.state) and what notifyd keeps in it; run `chmod go-w \(parent)` (or `chmod +t \(parent)`), or choose another state directory with --state-dir or state_dir")
        } else {
            #expect(problem == nil)
        }
    }

    /// The home directory itself is on the way too; what is above it is the system's, as
    /// for ssh. A state directory outside the home is checked up to `/`.
    @Test func theWayIsCheckedUpToTheHomeDirectoryOrElseToTheRoot() throws {
        let layout = try Layout()
        defer { layout.remove() }
        try layout.makeState()
        #expect(chmod(layout.home, 0o777) == 0)
        #expect(layout.check()?.hasPrefix("\(layout.home) is writable by other users (mode 777)") == true)
        #expect(chmod(layout.home, 0o755) == 0)
        #expect(chmod(layout.base, 0o777) == 0)
        #expect(layout.check() == nil, "above the home directory")
        #expect(layout.check(home: "/nonexistent-home")?.hasPrefix("\(layout.base) is writable by other users (mode 777)") == true, "outside the home directory")
    }

    /// The state directory itself is private: not even a sticky bit lets others write to it.
    @Test(arguments: [(0o770, true), (0o707, true), (0o1777, true), (0o1770, true), (0o700, false), (0o755, false)] as [(Int, Bool)])
    func theStateDirectoryItselfMayNotBeWritableByOthers(mode: Int, refused: Bool) throws {
        let layout = try Layout()
        defer { layout.remove() }
        try layout.makeState(mode: mode)
        let problem = layout.check()
        if refused {
            #expect(problem == "\(layout.state) is writable by other users (mode \(String(mode, radix: 8))), who could replace the state directory \(layout.state) and what notifyd keeps in it; run `chmod go-w \(layout.state)`, or choose another state directory with --state-dir or state_dir")
        } else {
            #expect(problem == nil)
        }
    }

    @Test func theOutboxMayNotBeWritableByOthers() throws {
        let layout = try Layout()
        defer { layout.remove() }
        try layout.makeState()
        try FileManager.default.createDirectory(atPath: layout.state + "/outbox", withIntermediateDirectories: false)
        #expect(chmod(layout.state + "/outbox", 0o1777) == 0)
        #expect(layout.check()?.hasPrefix("\(layout.state)/outbox is writable by other users (mode 1777)") == true)
    }

    /// Before the state directory exists, the nearest directory on its way is checked.
    @Test func aStateDirectoryNotMadeYetIsCheckedFromTheNearestThatIs() throws {
        let layout = try Layout()
        defer { layout.remove() }
        try FileManager.default.createDirectory(atPath: layout.home, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        #expect(layout.check() == nil)
        #expect(chmod(layout.home, 0o757) == 0)
        #expect(layout.check()?.hasPrefix("\(layout.home) is writable by other users (mode 757)") == true)
    }

    /// A symbolic link is followed: what counts is the directory it leads to, and the
    /// directories above that one.
    @Test func theDirectoriesALinkLeadsToAreChecked() throws {
        let layout = try Layout()
        defer { layout.remove() }
        let shared = layout.base + "/shared"
        try FileManager.default.createDirectory(atPath: shared + "/state", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        #expect(chmod(shared, 0o777) == 0)
        try FileManager.default.createDirectory(atPath: layout.home + "/.local/state", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        try FileManager.default.createSymbolicLink(atPath: layout.state, withDestinationPath: shared + "/state")
        #expect(layout.check()?.hasPrefix("\(shared) is writable by other users (mode 777)") == true)
    }

    /// Any file in the state directory or its outbox that others may write to.
    @Test(arguments: ["state.json", "credentials.json", "outbox/0000000001-apns.json", "outbox/batch-0000000009-apns.json", "notifyd.lock", "notifyd.log", "outbox-ids"])
    func aFileOthersCanWriteIsRefused(name: String) throws {
        let layout = try Layout()
        defer { layout.remove() }
        try layout.makeState()
        let good = layout.file(name, mode: 0o644)
        #expect(layout.check() == nil)
        #expect(chmod(good, 0o662) == 0)
        #expect(layout.check() == "\(good) is writable by other users (mode 662), who could change what notifyd reads from it; run `chmod go-w \(good)`")
    }

    @Test(onlyRoot, arguments: ["state.json", "credentials.json", "outbox/0000000001-apns.json", "notifyd.lock", "notifyd.log", "outbox-ids"])
    func aFileOfAnotherUserIsRefused(name: String) throws {
        let layout = try Layout()
        defer { layout.remove() }
        try layout.makeState()
        let planted = layout.file(name)
        #expect(chown(planted, Self.other, Self.other) == 0)
        #expect(layout.check() == "\(planted) belongs to uid 65534, not to you (uid 0), so someone else may have put it in the state directory; look at it, then remove it or `chown 0 \(planted)`")
    }

    @Test(onlyRoot, arguments: ["", "/.local", "/.local/state/notifyd", "/.local/state/notifyd/outbox"])
    func aDirectoryOfAnotherUserIsRefused(below: String) throws {
        let layout = try Layout()
        defer { layout.remove() }
        try layout.makeState()
        try FileManager.default.createDirectory(atPath: layout.state + "/outbox", withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let given = layout.home + below
        #expect(chown(given, Self.other, Self.other) == 0)
        #expect(layout.check() == "\(given) belongs to uid 65534, who could replace the state directory \(layout.state) and what notifyd keeps in it; choose a state directory of your own with --state-dir or state_dir")
    }

    /// The case that was reported: the state directory inside a directory another user can
    /// write, where that user swapped it and planted an outbox entry. The daemon does not
    /// start, and so sends nothing.
    @Test func aDaemonDoesNotStartOnAStateDirectoryOthersCouldSwap() async throws {
        let layout = try Layout()
        defer { layout.remove() }
        let shared = layout.base + "/shared"
        let state = shared + "/notifyd"
        try FileManager.default.createDirectory(atPath: state + "/outbox", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        #expect(chmod(shared, 0o777) == 0)
        #expect(FileManager.default.createFile(atPath: state + "/outbox/0000000001-apns.json", contents: Data("{}".utf8), attributes: [.posixPermissions: 0o600]))
        let socket = layout.base + "/notifyd.sock"
        let daemon = Daemon(configuration: DaemonConfiguration(socket: SocketLocation(path: socket, source: .flag), stateDirectory: state),
                            logger: .silent)
        let refusal = await #expect(throws: DaemonError.self) { try await daemon.start() }
        #expect(refusal?.isConfigurationError == true)
        #expect(refusal?.description.hasPrefix("\(shared) is writable by other users (mode 777)") == true, "\(String(describing: refusal))")
        #expect(!FileManager.default.fileExists(atPath: socket))
    }
}
