import Foundation
import NotifyCore
import Synchronization

/// A clock that moves only when a test says so. Sleepers wake when `advance` passes
/// their deadline; cancelled sleepers throw at once.
final class ManualClock: WakeClock {
    private struct Sleeper {
        var deadline: Date
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now: Date
        var sleepers: [UInt64: Sleeper] = [:]
        var nextID: UInt64 = 0
    }

    private let state: Mutex<State>

    init(now: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        state = Mutex(State(now: now))
    }

    func now() -> Date { state.withLock { $0.now } }

    var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// Every sleep begun, cancelled ones included.
    var sleepsStarted: Int { state.withLock { Int($0.nextID) } }

    func sleep(until deadline: Date) async throws {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Next { case wait, wake, cancel }
                let next = state.withLock { state -> Next in
                    // Cancelled before it got here: the cancellation handler found nothing to resume.
                    if Task.isCancelled { return .cancel }
                    if deadline <= state.now { return .wake }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return .wait
                }
                switch next {
                case .wait: break
                case .wake: continuation.resume()
                case .cancel: continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            let sleeper = state.withLock { $0.sleepers.removeValue(forKey: id) }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the time without waking anyone: a sleep on a clock that stopped while the
    /// machine slept, or the wall clock set forward.
    func jump(by seconds: Double) {
        state.withLock { $0.now = $0.now.addingTimeInterval(seconds) }
    }

    func advance(by seconds: Double) {
        let due = state.withLock { state -> [Sleeper] in
            state.now = state.now.addingTimeInterval(seconds)
            let now = state.now
            let due = state.sleepers.filter { $0.value.deadline <= now }
            for key in due.keys { state.sleepers[key] = nil }
            return Array(due.values)
        }
        for sleeper in due { sleeper.continuation.resume() }
    }
}
