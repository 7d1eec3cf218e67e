import Foundation
import NotifyClient
import NotifyProtocol
import NotifyTestSupport
import Testing

/// Who may talk to whom: notifyd serves its own user (and root) only, and notifyctl talks
/// only to a notifyd of its own user (or root's), whatever the socket file's mode says.
/// The other party runs with a uid different from its gid, so that reading one for the
/// other would show. Acting as another user needs root.
@Suite(.enabled(if: getuid() == 0, "needs root to act as another user; without root no second uid exists here"), .stopsFixtures)
struct PeerIdentityTests {
    /// Runs a Python snippet as `uid`:`gid` with no supplementary groups; returns what it printed.
    static func runAs(uid: Int, gid: Int, _ script: String, _ arguments: [String]) throws -> String {
        let prologue = "import os, socket, sys\nos.setgroups([]); os.setgid(\(gid)); os.setuid(\(uid))\n"
        // The system's python3: one under root's home would be out of the other user's reach.
        let python = try SpawnedProcess("/usr/bin/python3", ["-c", prologue + script] + arguments)
        guard python.waitBlocking() == 0 else { throw ScriptFailed(complaint: python.standardError) }
        return python.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    struct ScriptFailed: Error { let complaint: String }

    static let pingScript = """
        s = socket.socket(socket.AF_UNIX); s.settimeout(10); s.connect(sys.argv[1])
        try:
            s.sendall(b'{"cmd":"ping"}\\n')
            print("answered" if s.recv(100) else "closed")
        except (ConnectionResetError, BrokenPipeError):
            print("closed")
        """

    @Test(arguments: [(uid: 65534, gid: 0, served: false), (uid: 0, gid: 65534, served: true)])
    func theDaemonChecksThePeersUIDNotItsGID(peer: (uid: Int, gid: Int, served: Bool)) async throws {
        let fixture = try await DaemonFixture()
        chmod(fixture.socketPath, 0o777)
        chmod(fixture.directory, 0o755)
        // On a thread of its own: waiting for the child must not block the daemon's actors.
        let path = fixture.socketPath
        let outcome: String
        do {
            outcome = try await onThread { try Self.runAs(uid: peer.uid, gid: peer.gid, Self.pingScript, [path]) }
        } catch {
            outcome = "\(error)"
        }
        let log = fixture.log
        await fixture.stop()
        #expect(outcome == (peer.served ? "answered" : "closed"))
        #expect(log.contains("refused a connection from uid \(peer.uid)") == !peer.served)
    }

    @Test func notifyctlRefusesASocketServedByAnotherUser() async throws {
        let directory = "/tmp/nd-impostor-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o777])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/notifyd.sock"
        // Another user's listener, as if it had replaced the socket in a shared directory;
        // its gid is root's, so a client that read the gid would trust it.
        let impostor = """
            s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o777); s.listen(1)
            s.settimeout(10)
            print("listening", flush=True)
            try:
                c, _ = s.accept(); c.settimeout(2)
                data = c.recv(4096)
                print("received" if data else "nothing")
            except socket.timeout:
                print("nothing")
            """
        let listener = Task { try await onThread { try Self.runAs(uid: 65534, gid: 0, impostor, [path]) } }
        let refusal = try await onThread { () -> String in
            // Until the impostor listens, there is nothing to refuse: Python as another user
            // may take seconds to start on a loaded machine, so it has up to 30.
            for _ in 0..<3000 {
                do {
                    let client = try NotifyClient(socketPath: path, timeout: 5)
                    _ = try client.call(LoginCommand(user: "alice", password: "secret"))
                    return "talked"
                } catch ClientError.notRunning(_, let detail) where detail.hasPrefix("no notifyd is listening") {
                    usleep(10_000)
                } catch {
                    return "\(error)"
                }
            }
            return "the impostor never listened"
        }
        #expect(refusal.contains("served by uid 65534, not by you"), "\(refusal)")
        #expect(try await listener.value.hasSuffix("nothing"), "the impostor got no byte")
    }
}
