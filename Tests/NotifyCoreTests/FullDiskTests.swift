import Foundation
import NotifyProtocol
import Testing
@testable import NotifyCore
import NotifyTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A full disk, for real: the state directory on a small tmpfs (`SmallDisk`) that the
/// test fills up. Needs the right to mount (root or CAP_SYS_ADMIN); cancelled elsewhere.
struct FullDiskTests {
    @Test func aFullDiskRefusesChangesKeepsTheGoodFilesAndRecovers() async throws {
        let disk = try SmallDisk(kilobytes: 256)
        defer { disk.unmount() }
        let backend = FakeBackend()
        let settings = SettingsStore(.init(backend: "http://127.0.0.1:1", policy: RegistrationPolicy(debounce: 0)))
        let components = Components(settings: settings, stateDirectory: disk.path, backend: backend, clock: ManualClock(), logger: .silent)
        let (outbox, registrar) = (components.outbox, components.registrar)
        await outbox.start()
        _ = try await registrar.setToken("AB", platform: nil).generation
        _ = try await registrar.loginOutcome(try await registrar.login(user: "alice", password: "alice", backend: nil), timeout: 30)
        let goodState = try Data(contentsOf: URL(fileURLWithPath: disk.path + "/state.json"))

        disk.fill()
        let refused = await #expect(throws: CoreError.self) { try await registrar.setToken("CD", platform: nil).generation }
        #expect(refused?.description.contains("the change was not saved") == true)
        #expect(registrar.snapshot().device.token == "AB")
        await #expect(throws: CoreError.self) { try await outbox.submit(to: "bob", message: "hi", platforms: [.apns, .fcm]) }
        #expect(await outbox.list().isEmpty, "never queued: not on disk")
        #expect(try Data(contentsOf: URL(fileURLWithPath: disk.path + "/state.json")) == goodState, "the good file is untouched")
        #expect(try FileManager.default.contentsOfDirectory(atPath: disk.path).filter { $0.contains(".tmp-") }.isEmpty)
        #expect(!backend.calls.contains(.upsert(id: "id-1", handle: "CD", tags: [])))

        disk.free()
        _ = await registrar.waitForOutcome(generation: try await registrar.setToken("CD", platform: nil).generation, timeout: 30)
        #expect(backend.calls.last == .upsert(id: "id-1", handle: "CD", tags: []))
        let ids = try await outbox.submit(to: "bob", message: "hi", platforms: [.apns, .fcm])
        #expect(await outbox.wait(for: ids, untilFinal: true, timeout: 60).map(\.state) == [.delivered, .delivered])
        await outbox.shutdown()
        await registrar.shutdown()
    }

    /// The filler held open elsewhere, as a program started by another test holds it
    /// between its fork and its exec: the space must come back all the same.
    @Test func freeingTheDiskGivesItsSpaceBackWhileTheFillerIsStillOpen() throws {
        let disk = try SmallDisk(kilobytes: 256)
        defer { disk.unmount() }
        disk.fill()
        let holder = open(disk.path + "/filler", O_RDONLY | O_CLOEXEC)
        try #require(holder >= 0)
        defer { close(holder) }
        disk.free()
        var space = statvfs()
        try #require(statvfs(disk.path, &space) == 0)
        #expect(Int(space.f_bavail) * Int(space.f_bsize) >= 200 * 1024, "free blocks: \(space.f_bavail)")
    }
}
