import Foundation
import NotifyCore
import NotifyDaemon
import NotifyProtocol
@testable import NotifySocket
import Testing

/// The socket and state directory: modes, one daemon at a time, stale sockets, cleanup.
@Suite(.stopsFixtures) struct SocketSafetyTests {
    static func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    static func daemon(socket: SocketLocation, state: String) -> Daemon {
        Daemon(configuration: DaemonConfiguration(socket: socket, stateDirectory: state), logger: .silent)
    }

    /// The socket's path appears only once it listens (bound under a name of its own and
    /// linked into place), so a client never finds a socket that refuses it; nothing of
    /// the name of its own is left, and a file already at the path is never replaced.
    @Test func theSocketAppearsListeningAndTakesNoPathAlreadyTaken() throws {
        let directory = "/tmp/nd-bind-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/s.sock"
        let fd = try UnixSocket.listen(path: path)
        defer { close(fd) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["s.sock"], "no name of its own is left")
        #expect(try Self.mode(path) == 0o600)
        let client = try UnixSocket.connect(path: path)
        close(client)
        #expect(throws: SocketError.self, "a path already taken is not replaced") { try UnixSocket.listen(path: path) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["s.sock"], "nor is anything left by the refused one")
    }

    @Test func theSocketIsPrivateAndTheFilesToo() async throws {
        let fixture = try await DaemonFixture()
        _ = try await fixture.login()
        #expect(try Self.mode(fixture.socketPath) == 0o600)
        #expect(try Self.mode(fixture.stateDirectory) == 0o700)
        #expect(try Self.mode(fixture.stateDirectory + "/state.json") == 0o600)
        #expect(try Self.mode(fixture.stateDirectory + "/credentials.json") == 0o600)
    }

    @Test func aSecondDaemonOnTheSameSocketIsRefused() async throws {
        let fixture = try await DaemonFixture()
        let second = Self.daemon(socket: SocketLocation(path: fixture.socketPath, source: .flag), state: fixture.directory + "/other-state")
        await #expect(throws: DaemonError.self) { try await second.start() }
        // The first one is untouched.
        #expect(FileManager.default.fileExists(atPath: fixture.socketPath))
        _ = try await fixture.call(StatusCommand())
    }

    @Test func aSecondDaemonOnTheSameStateDirectoryIsRefused() async throws {
        let fixture = try await DaemonFixture()
        let second = Self.daemon(socket: SocketLocation(path: fixture.directory + "/other.sock", source: .flag), state: fixture.stateDirectory)
        await #expect(throws: DaemonError.self) { try await second.start() }
    }

    @Test func aStaleSocketIsReplacedButAnyOtherFileIsLeftAlone() async throws {
        let directory = "/tmp/nd-stale-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }

        // A socket file nobody listens on: what a crashed daemon leaves.
        let stale = directory + "/stale.sock"
        let fd = try UnixSocket.listen(path: stale)
        close(fd)
        let daemon = Self.daemon(socket: SocketLocation(path: stale, source: .flag), state: directory + "/state")
        try await daemon.start()
        #expect(UnixSocket.isAnswering(path: stale))
        await daemon.stop()
        #expect(!FileManager.default.fileExists(atPath: stale), "removed on a clean stop")

        let regular = directory + "/regular"
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: regular))
        let refused = Self.daemon(socket: SocketLocation(path: regular, source: .flag), state: directory + "/state2")
        await #expect(throws: DaemonError.self) { try await refused.start() }
        #expect(try String(contentsOfFile: regular, encoding: .utf8) == "keep me")
    }

    @Test func aSocketDirectoryOpenToOthersIsRefused() async throws {
        let directory = "/tmp/nd-open-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let location = SocketLocation(path: directory + "/notifyd.sock", source: .runtimeDirectory, privateDirectory: directory)
        let daemon = Self.daemon(socket: location, state: directory + "-state")
        await #expect(throws: DaemonError.startup("\(directory) is open to other users (mode 755); run `chmod 700 \(directory)` and start notifyd again")) {
            try await daemon.start()
        }
        try? FileManager.default.removeItem(atPath: directory + "-state")
    }

    /// A socket path the user chose sits in a directory notifyd does not own: whoever else
    /// can rename files there could swap the socket for their own listener.
    @Test(arguments: [
        (0o777, nil as UInt32?, "is writable by other users (mode 777) and has no sticky bit"),
        (0o775, nil, "is writable by other users (mode 775) and has no sticky bit"),
        (0o757, nil, "is writable by other users (mode 757) and has no sticky bit"),
        (0o755, 65534, "belongs to uid 65534, who could replace the socket"),
        (0o1777, nil, nil), (0o755, nil, nil), (0o700, nil, nil),
    ] as [(Int, UInt32?, String?)])
    func aChosenSocketDirectoryOthersCanWriteIsRefused(mode: Int, owner: UInt32?, refusal: String?) async throws {
        let directory = "/tmp/nd-shared-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(chmod(directory, mode_t(mode)) == 0)
        if let owner {
            guard getuid() == 0 else { return }  // only root can give a directory away; the mode cases run for everyone
            #expect(chown(directory, owner, UInt32(getgid())) == 0)
        }
        for source in [SocketLocation.Source.flag, .environment] {
            let daemon = Self.daemon(socket: SocketLocation(path: directory + "/notifyd.sock", source: source), state: directory + ".state")
            defer { try? FileManager.default.removeItem(atPath: directory + ".state") }
            if let refusal {
                await #expect(throws: DaemonError.self) { try await daemon.start() }
                do { try await daemon.start() } catch { #expect("\(error)".contains("\(directory) \(refusal)")) }
                #expect(!FileManager.default.fileExists(atPath: directory + "/notifyd.sock"))
            } else {
                try await daemon.start()
                #expect(UnixSocket.isAnswering(path: directory + "/notifyd.sock"))
                await daemon.stop()
            }
        }
    }

    @Test func theDirectoryOfASocketPath() {
        #expect(parentDirectory(of: "/run/user/1/n.sock") == "/run/user/1")
        #expect(parentDirectory(of: "/n.sock") == "/")
        #expect(parentDirectory(of: "n.sock") == ".")
        #expect(parentDirectory(of: "a/n.sock") == "a")
    }

    @Test func thePrivateDirectoryIsCreatedWithMode0700() async throws {
        let parent = "/tmp/nd-run-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: parent) }
        let location = try SocketLocation.resolve(flag: nil, environment: ["XDG_RUNTIME_DIR": parent])
        #expect(location.path == parent + "/notifyd/notifyd.sock")
        let daemon = Self.daemon(socket: location, state: parent + "/state")
        try await daemon.start()
        #expect(try Self.mode(parent + "/notifyd") == 0o700)
        await daemon.stop()
    }

    @Test func socketPathResolutionOrder() throws {
        #expect(try SocketLocation.resolve(flag: "/a.sock", environment: ["NOTIFYD_SOCKET": "/b.sock", "XDG_RUNTIME_DIR": "/run/user/1"]).path == "/a.sock")
        #expect(try SocketLocation.resolve(flag: nil, environment: ["NOTIFYD_SOCKET": "/b.sock", "XDG_RUNTIME_DIR": "/run/user/1"]).path == "/b.sock")
        #expect(try SocketLocation.resolve(flag: nil, environment: ["XDG_RUNTIME_DIR": "/run/user/1"]).path == "/run/user/1/notifyd/notifyd.sock")
        let fallback = try SocketLocation.resolve(flag: nil, environment: ["TMPDIR": "/var/tmp"], uid: 1234)
        #expect(fallback.path == "/var/tmp/notifyd-1234/notifyd.sock")
        #expect(fallback.warning != nil)
        #expect(try SocketLocation.resolve(flag: nil, environment: [:], uid: 7).path == "/tmp/notifyd-7/notifyd.sock")
    }

    @Test func aTooLongSocketPathIsAClearError() {
        let long = "/tmp/" + String(repeating: "d", count: 120) + "/notifyd.sock"
        #expect(throws: SocketError.self) { try SocketLocation.resolve(flag: long, environment: [:]) }
    }
}
