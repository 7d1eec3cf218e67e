import Foundation
import Synchronization
import Testing
@testable import NotifyCore
import NotifyTestSupport

/// The thread the stores write on: one job at a time, in the order they came, on a thread
/// that stays for the jobs of a burst and is gone once there is no work.
struct FileWriterTests {
    /// The calling thread's id in the kernel (`/proc/thread-self` names it).
    static func threadID() -> String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? ""
    }

    @Test func jobsRunOneAtATimeInTheOrderTheyCame() async {
        let writer = FileWriter(name: "test-writer")
        let log = Mutex<(order: [Int], running: Int, overlapped: Bool)>(([], 0, false))
        for number in 0..<500 {
            writer.enqueue {
                log.withLock { log in
                    log.running += 1
                    log.overlapped = log.overlapped || log.running > 1
                }
                log.withLock { log in
                    log.order.append(number)
                    log.running -= 1
                }
            }
            // Now and then the queue runs dry, and the next job comes while the thread waits for more.
            if number % 50 == 0 { await writer.drain() }
        }
        await writer.drain()
        let (order, _, overlapped) = log.withLock { $0 }
        #expect(order == Array(0..<500))
        #expect(!overlapped)
    }

    @Test func aValueAndAFailureComeBackToTheCaller() async {
        let writer = FileWriter(name: "test-writer")
        #expect(await writer.value { 6 * 7 } == 42)
        let failure = await #expect(throws: CoreError.self) { try await writer.run { () throws(CoreError) in throw .storage("disk full") } }
        #expect(failure == .storage("disk full"))
    }

    #if os(Linux)
    /// A burst's jobs, each handed over once the one before is done, share one thread.
    @Test func jobsOneAfterAnotherShareOneThread() async {
        let writer = FileWriter(name: "test-writer", linger: .seconds(60))
        var threads = Set<String>()
        for _ in 0..<50 { threads.insert(await writer.value { Self.threadID() }) }
        #expect(threads.count == 1)
        #expect(threads.first != Self.threadID())
    }

    /// Once there is no work the thread ends: an idle daemon keeps none.
    @Test func theThreadEndsWhenThereIsNoWork() async throws {
        let writer = FileWriter(name: "test-writer", linger: .milliseconds(1))
        let thread = await writer.value { Self.threadID() }
        #expect(thread.contains("/task/"))
        #expect(await eventually { !FileManager.default.fileExists(atPath: "/proc/" + thread) })
    }
    #endif
}
