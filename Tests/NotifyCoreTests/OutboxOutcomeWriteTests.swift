import Foundation
import NotifyProtocol
import Synchronization
import Testing
@testable import NotifyCore
import NotifyTestSupport

/// An attempt's outcome on its way to the disk: what an expiry, a waiting sender and a
/// batch that could not be written make of a delivery meanwhile.
struct OutboxOutcomeWriteTests {
    /// A message past its expiry whose attempt failed waits for its outcome to be written
    /// before it expires; meanwhile its record still says never tried, and an expiry mark
    /// written for another message must leave it out, or a start after a crash would take
    /// it for expired though nobody heard so.
    @Test func aMarkWrittenWhileAnOutcomeIsOnItsWayLeavesThatMessageOut() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let recorder = FileCallRecorder(root: directory.path)
        let backend = FakeBackend()
        backend.holdNext("send")
        let clock = ManualClock()
        let outbox = try await DurableWriteTests.outbox(directory, recorder, backend: backend, clock: clock)
        let ids = try await outbox.enqueue(to: "bob", message: "in flight", platforms: [.apns])
            + outbox.enqueue(to: "bob", message: "never tried", platforms: [.apns])
        try await outbox.committed(ids)
        #expect(await eventually { backend.isHolding })
        // The machine slept through both expiries: no timer fired.
        clock.jump(by: 7 * 86_400 + 1)
        recorder.holdNext("fsync outbox/\(ids[0]).json.tmp")
        backend.failEverything(.status(503, retryAfter: nil, body: ""))
        backend.release()
        #expect(await eventually { recorder.isHolding })
        #expect(await eventually { await outbox.list().first { $0.id == ids[1] }?.state == .expired })
        #expect(await eventually { FileManager.default.fileExists(atPath: directory.file("outbox-expired")) })
        #expect(await outbox.list().first { $0.id == ids[0] }?.state == .queued)

        // What a start would find after a crash now.
        let store = OutboxStore(stateDirectory: directory.path)
        let first = try #require(store.loadEntries().0.first { $0.id == ids[0] })
        #expect(first.state == .queued && first.untried)
        #expect(!store.expiredBefore(first), "taken for expired, never reported so")

        recorder.release()
        #expect(await eventually { await outbox.list().first { $0.id == ids[0] }?.state == .expired }, "expired once its outcome is written")
        await outbox.shutdown()
    }

    /// A sender waiting for the first answer (`send` without --wait) to a message whose
    /// attempt failed past its expiry hears it expired, not that it waits for a retry.
    @Test func aSenderHearsExpiredNotARetryForAMessagePastItsExpiry() async throws {
        let setup = try await OutboxDeferredTests.Setup()
        let (outbox, ids) = try await setup.outboxWithTheFirstHeld(["in flight"])
        setup.clock.advance(by: 7 * 86_400 + 1)
        let told = Task { await outbox.wait(for: ids, untilFinal: false, timeout: 60) }
        #expect(await eventually { await outbox.waiters.all.count == 1 })
        setup.backend.failEverything(.status(503, retryAfter: nil, body: ""))
        setup.backend.release()
        let answer = await told.value
        #expect(answer.map(\.state) == [.expired], "\(answer.map { "\($0.state), next \($0.nextAttemptAt.map { "\($0)" } ?? "-")" })")
        await outbox.shutdown()
    }

    /// A message sent before its batch was written, whose attempt failed, then whose batch
    /// could not be written: its sender hears it was not accepted, and its outcome is not
    /// written back, or a start would send it.
    @Test func aWithdrawnMessageIsNotWrittenBackByItsOutcome() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let recorder = FileCallRecorder(root: directory.path)
        let failRename = Mutex<String?>(nil)
        let base = recorder.calls
        let calls = FileSystemCalls(open: base.open, write: base.write, fsync: base.fsync, close: base.close,
                                    rename: { from, to in
                                        let fail = failRename.withLock { target -> Bool in
                                            guard let wanted = target, to.hasSuffix(wanted) else { return false }
                                            target = nil
                                            return true
                                        }
                                        if fail { errno = EIO; return -1 }
                                        return base.rename(from, to)
                                    }, unlink: base.unlink)
        let backend = FakeBackend()
        let settings = SettingsStore(.init(backend: DurableWriteTests.backend))
        try await AccountKeeper(stateDirectory: directory.path, settings: settings).commit(Credentials(user: "alice", password: "alice", backend: nil))
        let outbox = Components(settings: settings, stateDirectory: directory.path, backend: backend, clock: ManualClock(), logger: .silent,
                                fileSystem: calls).outbox
        await outbox.start()
        // A write that works first: from then on a batch is sent while it is written.
        let warmup = try await outbox.submit(to: "bob", message: "warmup", platforms: [.apns])
        _ = await outbox.wait(for: warmup, untilFinal: true, timeout: 60)

        backend.failEverything(.status(503, retryAfter: nil, body: ""))
        let ids = try await outbox.enqueue(to: "carol", message: "withdrawn", platforms: [.apns])
        recorder.holdNext("fsync outbox/\(ids[0]).json.tmp")
        failRename.withLock { $0 = "outbox/\(ids[0]).json" }
        let committed = Task { () -> String? in
            do { try await outbox.committed(ids); return nil } catch { return "\(error)" }
        }
        #expect(await eventually { recorder.isHolding })
        #expect(await eventually { await outbox.outcomes.isBeingWritten(ids[0]) }, "sent early, its 503 back while the batch is held")
        recorder.release()
        let refusal = await committed.value
        #expect(refusal != nil, "its sender hears it was not accepted")
        #expect(await eventually { await outbox.outcomes.noneBeingWritten })
        await outbox.shutdown()
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.file("outbox"))) ?? []
        #expect(!files.contains("\(ids[0]).json"), "not accepted (\(refusal ?? "-")), yet on disk: \(files)")
    }

    /// Held for another account while in flight past its expiry, a message's sender still
    /// hears "queued" at once, as before its expiry: it is neither expiring nor settled by
    /// an answer, which may take the whole request timeout.
    @Test func aSenderOfAHeldMessageInFlightPastItsExpiryHearsAtOnce() async throws {
        let setup = try await OutboxDeferredTests.Setup()
        let (outbox, ids) = try await setup.outboxWithTheFirstHeld(["in flight"])
        setup.clock.jump(by: 7 * 86_400 + 1)
        try await outbox.accounts.commit(Credentials(user: "bob", password: "bob", backend: nil))
        await outbox.accountChanged()
        let answeredYet = Atomic(false)
        let told = Task {
            let answer = await outbox.wait(for: ids, untilFinal: false, timeout: 600)
            answeredYet.store(true, ordering: .sequentiallyConsistent)
            return answer
        }
        let answered = await eventually { answeredYet.load(ordering: .sequentiallyConsistent) }
        setup.backend.release()
        #expect(answered, "answered while the attempt is still held")
        #expect(await told.value.map(\.state) == [.queued])
        await outbox.shutdown()
    }

    /// Only those past their expiry are left out of the mark for an outcome on its way:
    /// one that has days to go is not covered anyway, and would only make the list longer.
    @Test func onlyOutcomesPastTheirExpiryAreLeftOutOfTheMark() {
        let gone = OutboxQueueTests.delivery(1, to: "carol", expiresAfter: 100)
        let fresh = OutboxQueueTests.delivery(2, to: "bob", expiresAfter: 10_000)
        let late = OutboxQueueTests.delivery(3, to: "dave", expiresAfter: 100)
        var queue = OutboxQueueTests.queue([], concurrency: 4)
        queue.add(gone, stored: StoredEntry(offset: 0, length: 200))
        queue.add(fresh, stored: .inOwnFile)
        queue.add(late, stored: .inOwnFile)
        _ = queue.takeReady(now: OutboxQueueTests.at(0))
        for delivery in [gone, fresh, late] {
            queue.finished(delivery.id, .transient(retryAfter: 500, error: OutboxQueueTests.unavailable), now: OutboxQueueTests.at(1))
        }
        var untried = OutboxQueueTests.delivery(4, to: "erin", expiresAfter: 100)
        untried.senderWaiting = false
        queue.add(untried, stored: StoredEntry(offset: 200, length: 200))
        let expired = queue.expireKeepingPlaces(now: OutboxQueueTests.at(100), beingWritten: [fresh.id, late.id])
        #expect(expired.inPlace.map(\.id) == [untried.id])
        #expect(expired.beingTried == [late.sequence])
    }
}
