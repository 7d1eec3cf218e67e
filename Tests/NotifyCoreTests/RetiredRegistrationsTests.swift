import Foundation
import NotifyTestSupport
import Testing
@testable import NotifyCore

/// `RetiredRegistrations` with a scripted backend and a clock the test moves: a deletion
/// that fails is retried with the backoff and kept on disk; one refused for good, or
/// failing for 7 days, is given up; a reclaim cancels it.
struct RetiredRegistrationsTests {
    static let old = "https://old.example"
    static let alice = Credentials(user: "alice", password: "alice-password", backend: nil)

    struct Fixture {
        let directory: ScratchDirectory
        let backend = FakeBackend()
        let clock = ManualClock()
        let accounts: AccountKeeper
        let settings = SettingsStore(.init(backend: "https://new.example"))

        init() throws {
            directory = try ScratchDirectory()
            accounts = AccountKeeper(stateDirectory: directory.path, settings: settings)
        }

        func retired() -> RetiredRegistrations {
            RetiredRegistrations(stateDirectory: directory.path, backend: backend, accounts: accounts, settings: settings, clock: clock, logger: .silent)
        }

        var deletions: Int { backend.calls.filter { if case .delete = $0 { true } else { false } }.count }
        var file: String { directory.file("retired-registrations.json") }
    }

    @Test func aFailedDeletionIsRetriedWithTheBackoffAndKeptAcrossARestart() async throws {
        let fixture = try Fixture()
        defer { fixture.directory.remove() }
        fixture.backend.failNextDelete(.status(503, retryAfter: nil, body: ""))
        let retired = fixture.retired()
        await retired.retire(id: "id-1", backend: Self.old, credentials: Self.alice)
        #expect(await eventually { retired.summary.first?.failures == 1 })
        let entry = try #require(retired.summary.first)
        #expect(entry.error == "the backend is unavailable for now (HTTP 503)")
        let next = try #require(entry.nextAttemptAt)
        #expect(next > fixture.clock.now() && next <= fixture.clock.now().addingTimeInterval(5))
        await retired.shutdown()
        let saved = try String(contentsOfFile: fixture.file, encoding: .utf8)
        #expect(saved.contains("id-1") && saved.contains("alice-password"), "what the deletion needs, in a 0600 file")

        let again = fixture.retired()
        #expect(again.summary.map(\.id) == ["id-1"], "kept across a restart")
        await again.start()
        fixture.clock.advance(by: 5)
        #expect(await eventually { again.summary.isEmpty })
        #expect(fixture.deletions == 2)
        #expect(await eventually { !FileManager.default.fileExists(atPath: fixture.file) })
        await again.shutdown()
    }

    /// `status` is answered from a copy while nothing it shows has changed: a deletion done
    /// counts as a change as soon as it is done, not once its file is written, or a `status`
    /// in between would still show it to do.
    @Test func aDoneDeletionIsAChangeForStatusBeforeItsFileIsWritten() async throws {
        let fixture = try Fixture()
        defer { fixture.directory.remove() }
        let recorder = FileCallRecorder(root: fixture.directory.path)
        let retired = RetiredRegistrations(stateDirectory: fixture.directory.path, backend: fixture.backend, accounts: fixture.accounts,
                                           settings: fixture.settings, clock: fixture.clock, logger: .silent, fileSystem: recorder.calls)
        fixture.backend.holdNext("delete")
        await retired.retire(id: "id-1", backend: Self.old, credentials: Self.alice)
        #expect(await eventually { fixture.backend.isHolding })
        #expect(retired.summary.map(\.id) == ["id-1"])
        recorder.holdNext("unlink retired-registrations.json")
        fixture.backend.release()
        #expect(await eventually { recorder.isHolding }, "the file's removal is held")
        #expect(retired.summary.isEmpty, "the deletion is shown done while its file is still being written")
        recorder.release()
        await retired.shutdown()
        #expect(!FileManager.default.fileExists(atPath: fixture.file))
    }

    @Test func aRefusedLoginIsGivenUpNotRetried() async throws {
        let fixture = try Fixture()
        defer { fixture.directory.remove() }
        fixture.backend.failNextDelete(.status(403, retryAfter: nil, body: ""))
        let retired = fixture.retired()
        await retired.retire(id: "id-1", backend: Self.old, credentials: Self.alice)
        #expect(await eventually { retired.summary.isEmpty })
        #expect(fixture.deletions == 1)
        await retired.shutdown()
    }

    @Test func aDeletionStillFailingAfterSevenDaysIsGivenUp() async throws {
        let fixture = try Fixture()
        defer { fixture.directory.remove() }
        fixture.backend.failEverything(.cannotConnect("connection refused", tls: false))
        let retired = fixture.retired()
        await retired.retire(id: "id-1", backend: Self.old, credentials: Self.alice)
        var attempts = 0
        while !retired.summary.isEmpty, attempts < 1000 {
            let done = fixture.deletions
            #expect(await eventually { fixture.deletions > done || fixture.clock.sleeperCount == 1 })
            guard let next = retired.summary.first?.nextAttemptAt else { break }
            fixture.clock.advance(by: max(0.001, next.timeIntervalSince(fixture.clock.now())))
            _ = await eventually { fixture.deletions > done }
            attempts += 1
        }
        #expect(await eventually { retired.summary.isEmpty }, "given up")
        let elapsed = fixture.clock.now().timeIntervalSince(Date(timeIntervalSince1970: 1_800_000_000))
        #expect(elapsed >= RetiredRegistrations.giveUpAfter && elapsed < RetiredRegistrations.giveUpAfter + 1800)
        // Each wait between half and all of 30 min: at retry_max (5 min) it would be four times as many.
        #expect(fixture.deletions < 7 * 86400 / 900 + 20, "unreachable: the backoff grew to 30 min")
        await retired.shutdown()
    }

    @Test func aReclaimCancelsTheDeletion() async throws {
        let fixture = try Fixture()
        defer { fixture.directory.remove() }
        fixture.backend.failNextDelete(.status(503, retryAfter: nil, body: ""))
        let retired = fixture.retired()
        await retired.retire(id: "id-1", backend: Self.old, credentials: Self.alice)
        #expect(await eventually { retired.summary.first?.failures == 1 })
        #expect(await retired.reclaim(backend: "https://another.example", api: .registrations) == nil)
        #expect(await retired.reclaim(backend: Self.old, api: .registrations) == "id-1")
        #expect(retired.summary.isEmpty)
        fixture.clock.advance(by: 3600)
        // Another registration retired now is deleted after any deletion already due: once
        // it is, one of id-1 would have come first.
        await retired.retire(id: "id-2", backend: Self.old, credentials: Self.alice)
        #expect(await eventually { fixture.deletions >= 2 })
        #expect(fixture.backend.calls.filter { if case .delete = $0 { true } else { false } } == [.delete(id: "id-1"), .delete(id: "id-2")],
                "no deletion after the reclaim")
        await retired.shutdown()
    }
}
