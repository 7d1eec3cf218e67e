import Foundation
import NotifyProtocol
import Testing
@testable import NotifyCore
import NotifyTestSupport

/// Each owner's check of the part it publishes for `status` (what the tests' daemons run
/// after every `status`): true while the part is the one its state gives, false once it
/// is not, as it would be after a change that did not publish it.
struct StatusPartTests {
    @Test func eachOwnerTellsAStalePartFromACurrentOne() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let components = Components(settings: SettingsStore(.init(backend: "http://127.0.0.1:1")), stateDirectory: directory.path,
                                    backend: FakeBackend(), clock: ManualClock(), logger: .silent)
        let (registrar, outbox, retired) = (components.registrar, components.outbox, components.retired)
        #expect(await registrar.statusShownIsCurrent())
        #expect(await outbox.countsShownAreCurrent())
        #expect(await retired.summaryShownIsCurrent())

        var registration = registrar.statusShown.current
        registration.device.tags = ["never-set"]
        registrar.statusShown.publish(registration)
        #expect(await !registrar.statusShownIsCurrent())
        #expect(registrar.snapshot().device.tags == ["never-set"], "status reads the part as published")

        outbox.countsShown.publish(OutboxCounts(waiting: 3))
        #expect(await !outbox.countsShownAreCurrent())
        #expect(outbox.summary.waiting == 3)

        retired.summaryShown.publish([RetiredRegistration(backend: "http://old", id: "id-1", user: "alice", since: Date(), failures: 0)])
        #expect(await !retired.summaryShownIsCurrent())
    }
}
