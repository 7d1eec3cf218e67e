import Foundation
import NotifyProtocol
import Testing
@testable import NotifyCore
import NotifyTestSupport

/// A slow removal: a delivered message's sender does not wait for it, a refused one's does.
extension SlowDiskTests {
    /// A message to bob, answered by `backend`, whose removal from disk (its unlink) is held
    /// once the backend has answered; and its sender, waiting, who counts when it hears.
    private struct HeldRemoval {
        let directory: ScratchDirectory
        let recorder: FileCallRecorder
        let outbox: Outbox
        let told = CallCount()
        let answer: Task<[DeliveryStatus], Never>

        init(_ backend: FakeBackend) async throws {
            directory = try ScratchDirectory()
            recorder = FileCallRecorder(root: directory.path)
            let outbox = try await DurableWriteTests.outbox(directory, recorder, backend: backend)
            let ids = try await outbox.enqueue(to: "bob", message: "hello", platforms: [.apns])
            recorder.holdNext("unlink outbox/\(ids[0]).json")
            try await outbox.committed(ids)
            let told = told
            answer = Task {
                defer { told.add() }
                return await outbox.wait(for: ids, untilFinal: false, timeout: 30)
            }
            self.outbox = outbox
        }

        func end() async {
            await outbox.shutdown()
            #expect((try? FileManager.default.contentsOfDirectory(atPath: directory.file("outbox")))?.isEmpty == true, "removed once written")
            directory.remove()
        }
    }

    /// A delivered message's sender hears while its removal is still being written: nothing
    /// of the message is left to keep, and a crash before the removal sends it again, as
    /// at-least-once allows.
    @Test func aDeliveredSendIsAnsweredWhileItsRemovalIsWritten() async throws {
        let send = try await HeldRemoval(FakeBackend())
        #expect(await eventually { send.recorder.isHolding })
        #expect(await eventually { send.told.value == 1 }, "told only once the removal was written")
        send.recorder.release()
        #expect(await send.answer.value.map(\.state) == [.delivered])
        await send.end()
    }

    /// A refusal is told only once its removal is written: a sender told "failed" must never
    /// see the message go after a restart.
    @Test func aRefusedSendIsAnsweredOnceItsRemovalIsWritten() async throws {
        let backend = FakeBackend()
        backend.answerNextSends([BackendCallError.status(400, retryAfter: nil, body: "")])
        let send = try await HeldRemoval(backend)
        #expect(await eventually { send.recorder.isHolding })
        // Waiting, so not answered on arrival; and nothing but the held removal can answer it now.
        #expect(await eventually { await send.outbox.waiters.all.count == 1 }, "told while the removal was being written")
        #expect(send.told.value == 0, "told while the removal was being written")
        send.recorder.release()
        #expect(await send.answer.value.map(\.state) == [.failed])
        await send.end()
    }
}
