import Synchronization

/// A backend that answered a request with a 2xx works: whatever waits on it because it was
/// unreachable or failing is tried now, not at the end of its own backoff, which may be
/// half an hour away. The registrar and the outbox say when they have such a wait and
/// when a request of theirs succeeded; with nothing waiting, a success costs one lock.
public final class BackendRecovery: Sendable {
    public enum Party: Sendable, Hashable {
        case registrar, outbox
    }

    private struct State {
        var waiting: Set<Party> = []
        var wakes: [Party: @Sendable (String) async -> Void] = [:]
    }

    private let state = Mutex(State())

    public init() {}

    /// `wake` ends the waits of `party` on the backend at the URL it is given.
    public func attach(_ party: Party, wake: @escaping @Sendable (String) async -> Void) {
        state.withLock { $0.wakes[party] = wake }
    }

    public func setWaiting(_ party: Party, _ waiting: Bool) {
        state.withLock { state in
            if waiting { state.waiting.insert(party) } else { state.waiting.remove(party) }
        }
    }

    /// The backend at `backend` answered a request with a 2xx.
    public func backendAnswered(_ backend: String) {
        let wakes = state.withLock { state in state.waiting.compactMap { state.wakes[$0] } }
        guard !wakes.isEmpty else { return }
        Task {
            for wake in wakes { await wake(backend) }
        }
    }
}
