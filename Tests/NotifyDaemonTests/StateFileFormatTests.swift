import Foundation
import NotifyCore
import NotifyDaemon
import NotifySocket
import Testing

/// A state or credentials file a newer notifyd wrote stops the start, untouched: this
/// notifyd would replace it with what it knows of it.
@Suite struct StateFileFormatTests {
    @Test(arguments: ["state.json", "credentials.json", "outbox-ids", "retired-registrations.json"])
    func aFileFromANewerNotifydStopsTheStartAndIsLeftAlone(name: String) async throws {
        let directory = "/tmp/nd-newer-" + UUID().uuidString.prefix(8)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let state = directory + "/state"
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let newer = Data(#"{"version": 99, "written_by": "notifyd 9"}"#.utf8)
        #expect(FileManager.default.createFile(atPath: state + "/" + name, contents: newer, attributes: [.posixPermissions: 0o600]))
        let socket = directory + "/notifyd.sock"
        let daemon = Daemon(configuration: DaemonConfiguration(socket: SocketLocation(path: socket, source: .flag), stateDirectory: state),
                            logger: .silent)
        let refusal = await #expect(throws: DaemonError.self) { try await daemon.start() }
        #expect(refusal?.isConfigurationError == true)
        // credentials.json's format 2 keeps the password in the keyring.
        let newest = name == "credentials.json" ? 2 : 1
        #expect(refusal?.description == "\(state)/\(name) was written by a newer notifyd (format 99; this one reads formats up to \(newest)); refusing to overwrite it. Run that newer notifyd, or move the file away to start without it")
        #expect(!FileManager.default.fileExists(atPath: socket))
        #expect(try FileManager.default.contentsOfDirectory(atPath: state) == [name])
        #expect(FileManager.default.contents(atPath: state + "/" + name) == newer)
    }
}
