import Foundation
import NotifyProtocol
import Testing
@testable import NotifyCore
import NotifyTestSupport

/// The order of the file calls that makes each file survive a power cut: the new content
/// is written to a temporary file and fsynced, renamed over the file, then the directory
/// is fsynced so that the rename holds too; and a sender hears "queued" only after all of
/// that for its batch. A crash test cannot see this (`kill -9` keeps the page cache), so
/// the calls are recorded as they are made.
struct DurableWriteTests {
    static let backend = "http://127.0.0.1:1"

    /// The four steps of a durable write of `file` in `directory` ("" for the state directory).
    static func durableWrite(_ file: String, in directory: String = "") -> [String] {
        let temporary = directory + file + ".tmp"
        return ["write \(temporary)", "fsync \(temporary)", "rename \(temporary) \(directory + file)",
                "fsync \(directory.isEmpty ? "./" : directory)"]
    }

    /// A registrar whose file calls `recorder` sees.
    static func registrar(_ directory: ScratchDirectory, _ recorder: FileCallRecorder, backend: FakeBackend = FakeBackend()) -> Registrar {
        Components(settings: SettingsStore(.init(backend: Self.backend, policy: RegistrationPolicy(debounce: 0))), stateDirectory: directory.path,
                   backend: backend, clock: ManualClock(), logger: .silent, fileSystem: recorder.calls).registrar
    }

    /// A started outbox whose file calls `recorder` sees, with alice logged in.
    static func outbox(_ directory: ScratchDirectory, _ recorder: FileCallRecorder, backend: FakeBackend, clock: ManualClock = ManualClock(),
                       settings: RuntimeSettings = .init()) async throws -> Outbox {
        var settings = settings
        settings.backend = Self.backend
        let store = SettingsStore(settings)
        // A login saved earlier, whose writes are not the outbox's.
        try await AccountKeeper(stateDirectory: directory.path, settings: store).commit(Credentials(user: "alice", password: "alice", backend: nil))
        let outbox = Components(settings: store, stateDirectory: directory.path, backend: backend, clock: clock, logger: .silent,
                                fileSystem: recorder.calls).outbox
        await outbox.start()
        return outbox
    }

    @Test func aStateChangeIsOnDiskBeforeItIsAnswered() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let recorder = FileCallRecorder(root: directory.path)
        let registrar = Self.registrar(directory, recorder)
        _ = try await registrar.setToken("AB", platform: .apns).generation
        recorder.note("answered")
        // Not logged in: the change is saved and nothing else is written.
        #expect(recorder.steps == Self.durableWrite("state.json") + ["note answered"])
    }

    @Test func aLoginIsOnDiskBeforeItIsAnsweredAndALogoutToo() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let recorder = FileCallRecorder(root: directory.path)
        let keeper = AccountKeeper(stateDirectory: directory.path, settings: SettingsStore(.init(backend: Self.backend)), fileSystem: recorder.calls)
        let alice = Credentials(user: "alice", password: "alice", backend: nil)
        try await keeper.commit(alice)
        recorder.note("logged in")
        #expect(try await keeper.remove(revision: alice.revision) == .removed(warning: nil))
        recorder.note("logged out")
        #expect(recorder.steps == Self.durableWrite("credentials.json") + ["note logged in", "unlink credentials.json", "fsync ./", "note logged out"])
    }

    @Test func aBatchOfSendsIsWrittenSyncedRenamedThenItsDirectorySynced() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let recorder = FileCallRecorder(root: directory.path)
        let store = OutboxStore(stateDirectory: directory.path, calls: recorder.calls)
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let burst = (1...3).map { Delivery(sequence: $0, to: "bob", platform: .apns, message: "m\($0)", createdAt: start, expiresAt: start) }
        try store.save(batch: burst)
        // The id counter first: no entry is on disk above the mark it holds.
        #expect(recorder.steps == Self.durableWrite("outbox-ids") + Self.durableWrite("batch-\(burst[2].id).json", in: "outbox/"))
    }

    @Test func aSendIsAnsweredQueuedOnlyOnceItsFileAndDirectoryAreSynced() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let recorder = FileCallRecorder(root: directory.path)
        let backend = FakeBackend()
        backend.answerNextSends([.status(503, retryAfter: nil, body: "")])
        let outbox = try await Self.outbox(directory, recorder, backend: backend)
        // As the socket answers a send: once committed, with the outcome of its first attempt.
        let ids = try await outbox.enqueue(to: "bob", message: "hello", platforms: [.apns])
        try await outbox.committed(ids)
        let answer = await outbox.wait(for: ids, untilFinal: false, timeout: 10)
        recorder.note("answered \(answer.map(\.state.rawValue).joined())")
        await outbox.shutdown()

        #expect(answer.map(\.state) == [.queued])
        // The id counter first, as for a batch: no entry is on disk above the mark it holds.
        let steps = recorder.steps
        #expect(Array(steps.prefix(8)) == Self.durableWrite("outbox-ids") + Self.durableWrite("\(ids[0]).json", in: "outbox/"), "\(steps)")
        #expect(steps.firstIndex(of: "note answered queued").map { $0 >= 8 } == true, "\(steps)")
    }

    /// A caller that hands over several sends before it waits for any (the socket, for the
    /// requests of one read) has them written together: one batch, not the first alone.
    @Test func sendsHandedOverBeforeAnyIsAwaitedShareOneWrite() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let recorder = FileCallRecorder(root: directory.path)
        let backend = FakeBackend()
        let outbox = try await Self.outbox(directory, recorder, backend: backend)
        var ids: [String] = []
        for number in 1...5 { ids += try await outbox.enqueue(to: "bob", message: "m\(number)", platforms: [.apns]) }
        try await outbox.committed(ids)
        _ = await outbox.wait(for: ids, untilFinal: true, timeout: 60)
        await outbox.shutdown()
        let writes = recorder.steps(under: "outbox/").filter { $0.hasPrefix("write ") && $0.hasSuffix(".json.tmp") }
        #expect(writes == ["write outbox/batch-\(ids[4]).json.tmp"], "\(writes)")
    }

    /// A send handed over whose sender has not asked for its answer yet is written all
    /// the same when notifyd stops: it goes out after the next start.
    @Test func aSendNotYetAwaitedIsWrittenAtShutdown() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let recorder = FileCallRecorder(root: directory.path)
        let backend = FakeBackend()
        backend.holdNext("send")
        let outbox = try await Self.outbox(directory, recorder, backend: backend)
        let ids = try await outbox.enqueue(to: "bob", message: "hello", platforms: [.apns])
        await outbox.shutdown()
        backend.release()
        #expect(Array(recorder.steps(under: "outbox/").prefix(4)) == Self.durableWrite("\(ids[0]).json", in: "outbox/"))
    }
}
