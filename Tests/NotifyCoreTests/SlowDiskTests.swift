import Foundation
import NotifyProtocol
import Testing
@testable import NotifyCore
import NotifyTestSupport

/// What a slow disk must not change. Files are written on threads of their own, and the
/// actors await them instead of blocking the Swift concurrency pool; while a write takes
/// its time (here: as long as the test holds its fsync), nothing is told before it is on
/// disk, changes do not undo one another, and sends that arrive meanwhile share one write.
struct SlowDiskTests {
    /// Sends that arrive while a batch is being written go to disk together, with one write
    /// and fsync, and none of their senders hears "queued" before that.
    @Test func sendsArrivingDuringACommitShareTheNextOneAndAreAnsweredAfterIt() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let recorder = FileCallRecorder(root: directory.path)
        let backend = FakeBackend()
        // Nothing is sent meanwhile: the first message is held at the backend, the rest wait behind it.
        backend.holdNext("send")
        let outbox = try await DurableWriteTests.outbox(directory, recorder, backend: backend)

        recorder.holdNext("fsync outbox/")
        let first = try await outbox.enqueue(to: "bob", message: "first", platforms: [.apns])
        // As a sender does: waiting for the answer starts the write.
        let firstAnswer = Task { try await outbox.committed(first) }
        #expect(await eventually { recorder.isHolding })
        var burst: [String] = []
        for number in 1...5 { burst += try await outbox.enqueue(to: "bob", message: "burst \(number)", platforms: [.apns]) }
        let answers = burst.map { id in
            Task {
                try await outbox.committed([id])
                recorder.note("answered")
            }
        }
        recorder.release()
        try await firstAnswer.value
        for answer in answers { try await answer.value }
        #expect(await eventually { backend.isHolding })
        backend.release()
        _ = await outbox.wait(for: first + burst, untilFinal: true, timeout: 60)
        await outbox.shutdown()

        let commits = Array(recorder.steps(under: "outbox/").prefix(13))
        #expect(commits == DurableWriteTests.durableWrite("\(first[0]).json", in: "outbox/") + DurableWriteTests.durableWrite("batch-\(burst[4]).json", in: "outbox/")
                    + Array(repeating: "note answered", count: 5))
    }

    /// An fsync can take tens of milliseconds; on the Swift concurrency pool (one thread
    /// per core) two of them would stop every actor. Each store writes on a thread of its own.
    @Test func filesAreSyncedOnTheWritersThreadsNotOnTheConcurrencyPool() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let recorder = FileCallRecorder(root: directory.path)
        let backend = FakeBackend()
        backend.answerNextSends([.status(503, retryAfter: nil, body: "")])
        let components = Components(settings: SettingsStore(.init(backend: DurableWriteTests.backend)), stateDirectory: directory.path,
                                    backend: backend, clock: ManualClock(), logger: .silent, fileSystem: recorder.calls)
        let (accounts, registrar, outbox) = (components.accounts, components.registrar, components.outbox)
        _ = try await registrar.setToken("AB", platform: .apns).generation
        try await accounts.commit(Credentials(user: "alice", password: "alice", backend: nil))
        await outbox.start()
        // Committed by the group commit; then its first attempt meets an outage, which is saved.
        let ids = try await outbox.submit(to: "bob", message: "hello", platforms: [.apns])
        #expect(await outbox.wait(for: ids, untilFinal: false, timeout: 10).map(\.state) == [.queued])
        await outbox.shutdown()
        // A file and its directory each.
        // The outbox's id counter goes first in the commit, before the batch it covers.
        #expect(recorder.syncThreads == ["notifyd-state", "notifyd-state", "notifyd-account", "notifyd-account",
                                         "notifyd-commit", "notifyd-commit", "notifyd-commit", "notifyd-commit", "notifyd-outbox", "notifyd-outbox"])
    }

    /// Two changes at once: the second waits until the first is saved, and builds on it
    /// (started from the state before it, it would save over it and undo it).
    @Test func aChangeMadeWhileAnotherIsBeingSavedKeepsIt() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let recorder = FileCallRecorder(root: directory.path)
        let registrar = DurableWriteTests.registrar(directory, recorder)
        recorder.holdNext("fsync state.json")
        let token = Task { try await registrar.setToken("AB", platform: .apns).generation }
        #expect(await eventually { recorder.isHolding })
        let tags = Task { try await registrar.setTags(["sports"]) }
        #expect(await eventually { await registrar.turns.waitingCount == 1 })
        recorder.release()
        _ = try await token.value
        _ = try await tags.value
        let device = registrar.snapshot().device
        #expect(device.token == "AB" && device.tags == ["sports"])
        let saved = StateStore(directory: directory.path).load().0
        #expect(saved.token == "AB" && saved.tags == ["sports"])
    }

    /// A new registration id is on disk before a request uses it: otherwise a crash could
    /// leave a registration at the backend that this device has forgotten, and that still
    /// receives its notifications.
    @Test func aNewRegistrationIdIsOnDiskBeforeARequestUsesIt() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let recorder = FileCallRecorder(root: directory.path)
        let backend = FakeBackend()
        let registrar = DurableWriteTests.registrar(directory, recorder, backend: backend)
        // Without a token the login is checked and saved, with nothing to register yet.
        _ = try await registrar.loginOutcome(try await registrar.login(user: "alice", password: "alice", backend: nil), timeout: 30)
        // The token's own save goes through; the save of the id the backend then hands out waits.
        recorder.holdNext("fsync state.json", skipping: 1)
        backend.holdNext("upsert")
        let generation = try await registrar.setToken("AB", platform: .apns).generation
        #expect(await eventually { recorder.isHolding })
        #expect(backend.registrationCalls == [.create(handle: "AB")])
        // The pass hands its next step to a task only after the save it waits on: with the
        // save held, no step is under way (an upsert handed over first would be, held at
        // the backend), however soon or late this looks.
        #expect(await registrar.stepTask == nil, "no upsert under an id that is not on disk yet")
        #expect(!backend.isHolding, "no upsert under an id that is not on disk yet")
        recorder.release()
        #expect(await eventually { backend.isHolding })
        #expect(StateStore(directory: directory.path).load().0.registration.id == "id-1")
        backend.release()
        #expect(await registrar.waitForOutcome(generation: generation, timeout: 10).registration.state == .registered)
        await registrar.shutdown()
    }

    /// "Registered" is told once the registration is saved as such, not while it is being written.
    @Test func anOutcomeIsToldOnceItIsOnDisk() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let recorder = FileCallRecorder(root: directory.path)
        let registrar = DurableWriteTests.registrar(directory, recorder)
        _ = try await registrar.login(user: "alice", password: "alice", backend: nil)
        // The token's save and the new id's go through; the save of the registration's success waits.
        recorder.holdNext("fsync state.json", skipping: 2)
        let generation = try await registrar.setToken("AB", platform: .apns).generation
        #expect(await eventually { recorder.isHolding })
        let told = CallCount()
        let outcome = Task {
            defer { told.add() }
            return await registrar.waitForOutcome(generation: generation, timeout: 10)
        }
        // Waiting its turn behind the save under way: nothing but the held write lets it on.
        #expect(await eventually { await registrar.turns.waitingCount == 1 }, "told while the outcome is being written")
        #expect(told.value == 0, "not told while the outcome is being written")
        recorder.release()
        #expect(await outcome.value.registration.state == .registered)
        #expect(StateStore(directory: directory.path).load().0.registration.registered?.handle == "AB")
        await registrar.shutdown()
    }

    /// A logout of the old login that comes while a new login is being saved waits for it,
    /// and then keeps it.
    @Test func aLogoutDuringTheSaveOfANewLoginKeepsTheNewLogin() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let recorder = FileCallRecorder(root: directory.path)
        let keeper = AccountKeeper(stateDirectory: directory.path, settings: SettingsStore(.init(backend: DurableWriteTests.backend)),
                                   fileSystem: recorder.calls)
        let alice = Credentials(user: "alice", password: "alice", backend: nil)
        let bob = Credentials(user: "bob", password: "bob", backend: nil)
        try await keeper.commit(alice)
        recorder.holdNext("fsync credentials.json")
        let login = Task { try await keeper.commit(bob) }
        #expect(await eventually { recorder.isHolding })
        let logout = Task { try await keeper.remove(revision: alice.revision) }
        #expect(await eventually { await keeper.turns.waitingCount == 1 })
        recorder.release()
        _ = try await login.value
        #expect(try await logout.value == .replaced, "alice was no longer logged in")
        #expect(keeper.loggedIn?.revision == bob.revision)
        #expect(CredentialStore(directory: directory.path).load().0?.revision == bob.revision)
    }

    /// The outcome of an attempt (here: an outage, so "queued, next attempt at …") is
    /// written before the sender hears it, even when something else wakes the senders
    /// meanwhile (here: another message retried on request).
    @Test func aSenderHearsTheOutcomeOfAnAttemptOnceItIsWritten() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let recorder = FileCallRecorder(root: directory.path)
        let backend = FakeBackend()
        let outage = BackendCallError.status(503, retryAfter: nil, body: "")
        backend.answerNextSends([outage, outage, outage])
        let outbox = try await DurableWriteTests.outbox(directory, recorder, backend: backend)
        let waiting = try await outbox.submit(to: "carol", message: "earlier", platforms: [.apns])
        #expect(await outbox.wait(for: waiting, untilFinal: false, timeout: 10).map(\.state) == [.queued])

        // The message's own commit goes through; the save of its first attempt's outcome waits.
        let ids = try await outbox.enqueue(to: "bob", message: "hello", platforms: [.apns])
        recorder.holdNext("fsync outbox/\(ids[0]).json", skipping: 1)
        try await outbox.committed(ids)
        let told = CallCount()
        let answer = Task {
            defer { told.add() }
            return await outbox.wait(for: ids, untilFinal: false, timeout: 10)
        }
        #expect(await eventually { recorder.isHolding })
        #expect(await eventually { await outbox.waiters.all.count == 1 }, "told while the outcome is being written")
        // The retry's pass looks at every waiter before it returns: one it answered would be gone.
        #expect(try await outbox.retry(waiting[0]) == 1)
        #expect(await outbox.waiters.all.count == 1, "told while the outcome is being written")
        #expect(told.value == 0, "not told while the outcome is being written")
        recorder.release()
        #expect(await answer.value.map(\.state) == [.queued])
        await outbox.shutdown()
    }

    /// A slow write must not change what the sender hears: an outage is "queued" even when
    /// the retry fell due while its outcome was being written, not the retry's outcome.
    @Test func anOutageIsToldQueuedEvenWhenTheRetryFellDueDuringTheWrite() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let recorder = FileCallRecorder(root: directory.path)
        let backend = FakeBackend()
        backend.answerNextSends([.status(503, retryAfter: nil, body: "")])
        let clock = ManualClock()
        let outbox = try await DurableWriteTests.outbox(directory, recorder, backend: backend, clock: clock)
        let ids = try await outbox.enqueue(to: "bob", message: "hello", platforms: [.apns])
        recorder.holdNext("fsync outbox/\(ids[0]).json", skipping: 1)
        try await outbox.committed(ids)
        let answer = Task { await outbox.wait(for: ids, untilFinal: false, timeout: 10) }
        #expect(await eventually { recorder.isHolding })
        clock.advance(by: 3600)
        recorder.release()
        #expect(await answer.value.map(\.state) == [.queued])
        #expect(await eventually { await outbox.list().isEmpty }, "and the retry went out")
        #expect(backend.calls.count == 2)
        await outbox.shutdown()
    }

    /// An expiry is written before anyone waiting on the message hears of it.
    @Test func anExpiryIsToldOnceItIsWritten() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let recorder = FileCallRecorder(root: directory.path)
        let backend = FakeBackend()
        backend.answerNextSends([.status(503, retryAfter: nil, body: "")])
        let clock = ManualClock()
        let outbox = try await DurableWriteTests.outbox(directory, recorder, backend: backend, clock: clock, settings: .init(outboxExpiry: 3600))
        let ids = try await outbox.submit(to: "bob", message: "hello", platforms: [.apns])
        #expect(await outbox.wait(for: ids, untilFinal: false, timeout: 10).map(\.state) == [.queued])
        #expect(await eventually { clock.sleeperCount == 1 })

        recorder.holdNext("fsync outbox/\(ids[0]).json")
        let told = CallCount()
        let answer = Task {
            defer { told.add() }
            return await outbox.wait(for: ids, untilFinal: true, timeout: 60)
        }
        clock.advance(by: 7200)
        #expect(await eventually { recorder.isHolding })
        // Waiting, so not answered on arrival; and nothing but the held write can answer it now.
        #expect(await eventually { await outbox.waiters.all.count == 1 }, "told while the expiry is being written")
        #expect(told.value == 0, "not told while the expiry is being written")
        recorder.release()
        #expect(await answer.value.map(\.state) == [.expired])
        #expect(backend.calls.count == 1, "expired before its retry")
        await outbox.shutdown()
    }

    /// Once a write has worked, a send's request does not wait for its write (a round trip
    /// need not pay for an fsync), but its sender hears nothing before it is on disk, and
    /// its removal once delivered comes after the write.
    @Test func aSendGoesWhileItIsWrittenAndIsAnsweredOnceWritten() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let recorder = FileCallRecorder(root: directory.path)
        let backend = FakeBackend()
        let outbox = try await DurableWriteTests.outbox(directory, recorder, backend: backend)
        _ = try await outbox.submit(to: "carol", message: "the first write", platforms: [.apns])
        #expect(await eventually { backend.calls.count == 1 })
        recorder.holdNext("fsync outbox/")
        let ids = try await outbox.enqueue(to: "bob", message: "hello", platforms: [.apns])
        let answer = Task {
            try await outbox.committed(ids)
            recorder.note("answered")
            return await outbox.wait(for: ids, untilFinal: false, timeout: 10)
        }
        #expect(await eventually { recorder.isHolding })
        #expect(await eventually { backend.calls.count == 2 }, "sent while its write is held")
        // Its sender and its attempt's outcome, both parked until its batch is written:
        // nothing but the held write can answer the sender now.
        #expect(await eventually { await outbox.commits.waitingCount == 2 }, "answered before it was on disk")
        #expect(!recorder.steps.contains("note answered"), "answered before it was on disk")
        recorder.release()
        #expect(try await answer.value.map(\.state) == [.delivered])
        await outbox.shutdown()
        let file = "outbox/\(ids[0]).json"
        let all = recorder.steps(under: "outbox/")
        let steps = Array(all.drop { !$0.hasPrefix("write \(file)") }).filter { $0.contains(file) || $0 == "fsync outbox/" }
        #expect(Array(steps.prefix(4)) == DurableWriteTests.durableWrite("\(ids[0]).json", in: "outbox/"), "\(steps)")
        #expect(steps.firstIndex(of: "unlink \(file)").map { $0 > 3 } == true, "removed after it was written: \(steps)")
        #expect(!FileManager.default.fileExists(atPath: directory.file(file)))
    }

    /// A retry that falls due while the outcome before it is still being written waits for
    /// that write: a message is not sent again before its last attempt is on disk, however
    /// soon other outcomes free a place for it.
    @Test func aRetryDueWhileItsOutcomeIsWrittenWaitsForTheWrite() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let recorder = FileCallRecorder(root: directory.path)
        let backend = FakeBackend()
        let clock = ManualClock()
        let outbox = try await DurableWriteTests.outbox(directory, recorder, backend: backend, clock: clock)
        func sendsTo(_ recipient: String) -> Int { backend.calls.filter { if case .send(_, recipient, _) = $0 { true } else { false } }.count }
        // carol's message is under way, held at the backend.
        backend.holdNext("send")
        let carol = try await outbox.submit(to: "carol", message: "under way", platforms: [.apns])
        #expect(await eventually { backend.isHolding })
        // bob's is answered 503, and the write of that outcome is held (past its batch's
        // own two syncs).
        backend.answerNextSends([.status(503, retryAfter: nil, body: "")])
        recorder.holdNext("fsync outbox/", skipping: 2)
        let ids = try await outbox.submit(to: "bob", message: "hello", platforms: [.apns])
        #expect(await eventually { recorder.isHolding })
        #expect(sendsTo("bob") == 1)
        // bob's retry falls due, and carol's answer frees a place and makes the outbox look.
        clock.advance(by: 3600)
        backend.release()
        // carol's sender hears after the pass her answer made, where bob's retry would have
        // begun; once nothing is under way, such a retry would be in the backend's calls.
        #expect(await outbox.wait(for: carol, untilFinal: true, timeout: 60).map(\.state) == [.delivered])
        #expect(await eventually { await outbox.nothingUnderWay })
        #expect(sendsTo("bob") == 1, "sent again while its last attempt was being written")
        recorder.release()
        clock.advance(by: 3600)
        #expect(await outbox.wait(for: ids, untilFinal: true, timeout: 60).map(\.state) == [.delivered])
        #expect(sendsTo("bob") == 2)
        await outbox.shutdown()
    }

    /// A batch being written does not hold up the messages sent before it: each is removed,
    /// and its sender told, without waiting for the batches of later sends.
    @Test func aSlowCommitHoldsUpNoMessageAlreadySent() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let recorder = FileCallRecorder(root: directory.path)
        let backend = FakeBackend()
        backend.holdNext("send")
        let outbox = try await DurableWriteTests.outbox(directory, recorder, backend: backend)
        let sent = try await outbox.submit(to: "bob", message: "first", platforms: [.apns])
        #expect(await eventually { backend.isHolding })

        recorder.holdNext("fsync outbox/")
        let later = try await outbox.enqueue(to: "carol", message: "later", platforms: [.apns])
        let laterAnswer = Task { try await outbox.committed(later) }
        #expect(await eventually { recorder.isHolding })
        backend.release()
        #expect(await outbox.wait(for: sent, untilFinal: true, timeout: 60).map(\.state) == [.delivered])
        #expect(!recorder.steps.contains("fsync outbox/\(later[0]).json.tmp"), "told while the later send's commit was still held")
        recorder.release()
        try await laterAnswer.value
        await outbox.shutdown()
    }
}
