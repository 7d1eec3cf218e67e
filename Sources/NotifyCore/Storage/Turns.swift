import Synchronization

/// Lets one caller at a time through a section that awaits, in the order they came. An
/// actor that saves a change before making it waits for the file to be written; another
/// change let in meanwhile would start from the state before the first and undo it. The
/// daemon's reloads take turns too, each reading the files after the one before it.
package final class Turns: Sendable {
    private let state = Mutex<(busy: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

    package init() {}

    /// Returns once it is the caller's turn; `end()` lets the next one in.
    package func begin() async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state in
                if state.busy {
                    state.waiting.append(continuation)
                    return false
                }
                state.busy = true
                return true
            }
            if now { continuation.resume() }
        }
    }

    /// Callers waiting for their turn.
    package var waitingCount: Int { state.withLock { $0.waiting.count } }

    package func end() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.busy = false
                state.waiting.releaseStorageIfEmpty()
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
