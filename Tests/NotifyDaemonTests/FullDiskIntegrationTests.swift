import Foundation
import NotifyClient
import NotifyProtocol
import NotifyTestSupport
import Testing

/// A change that cannot be saved changes nothing, as a user meets it: notifyd's state
/// directory on a small tmpfs (`SmallDisk`) that fills up while it runs. Needs the right to
/// mount (root or CAP_SYS_ADMIN); cancelled elsewhere.
@Suite(.stopsFixtures) struct FullDiskIntegrationTests {
    @Test func aSendThatCannotBeSavedIsRefusedAndLeavesNoTraceThenOneIsOnceThereIsRoom() async throws {
        let disk = try SmallDisk(kilobytes: 256)
        let fixture: DaemonFixture
        do {
            fixture = try await DaemonFixture(stateDirectory: disk.path + "/state")
        } catch {
            disk.unmount()
            throw error
        }
        do {
            try await Self.fillSendAndFree(fixture, disk)
        } catch {
            // The daemon holds files on the disk: stopped first, or it cannot be unmounted.
            await fixture.stop()
            disk.unmount()
            throw error
        }
        await fixture.stop()
        disk.unmount()
    }

    private static func fillSendAndFree(_ fixture: DaemonFixture, _ disk: SmallDisk) async throws {
        _ = try await fixture.login()
        let state = fixture.stateDirectory
        let saved = try Self.files(in: state)

        disk.fill()
        let refused = try await fixture.callExpectingError(SendCommand(to: "bob", message: "hi", pns: ["apns"]))
        #expect(refused.message.contains("No space left"), "\(refused)")
        #expect(try await fixture.call(OutboxCommand()).deliveries.isEmpty, "never queued: it is not on disk")
        #expect(try Self.files(in: state) == saved, "the good files are untouched, and no partial one is left")
        // A send goes to the backend while it is written; one that went before its write
        // failed says so, and is not sent again (the outbox holds nothing to send).
        let early = fixture.backend.pushes().count
        #expect(early == 0 || refused.message.contains("may have been delivered"), "\(early) sent, yet: \(refused.message)")

        disk.free()
        let result = try await fixture.call(SendCommand(to: "bob", message: "hi", pns: ["apns"]))
        #expect(result.deliveries.map(\.state) == [.delivered], "\(result.deliveries)")
        #expect(fixture.backend.pushes().count == early + 1)
    }

    /// Every file under `directory`, by its path there, with what it holds.
    private static func files(in directory: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        guard let walker = FileManager.default.enumerator(atPath: directory) else { return files }
        for case let name as String in walker {
            var isDirectory: ObjCBool = false
            let path = directory + "/" + name
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            files[name] = try Data(contentsOf: URL(fileURLWithPath: path))
        }
        return files
    }
}
