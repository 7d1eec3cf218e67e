import Synchronization

/// The keyring calls a login or logout makes (store, clear), stoppable as a password
/// source's run is (`PasswordSourceRuns`): `stop` cancels those under way, which kills their
/// secret-tool, and those asked for afterwards do not start. A Secret Service that hangs
/// would otherwise hold notifyd's `stop` for `password_timeout`.
final class KeyringCalls: Sendable {
    private struct State {
        var stopped = false
        var next = 0
        var cancels: [Int: @Sendable () -> Void] = [:]
    }

    private let state = Mutex(State())

    init() {}

    /// `call`'s result, or `whenStopped` once notifyd is stopping. A call that `stop`
    /// cancels ends as its child process does when cancelled.
    func run<T: Sendable>(whenStopped: T, _ call: @escaping @Sendable () async -> T) async -> T {
        let id = state.withLock { state -> Int? in
            guard !state.stopped else { return nil }
            state.next += 1
            return state.next
        }
        guard let id else { return whenStopped }
        // A task of its own so that `stop` can cancel it, which kills its child process;
        // the caller awaits it, so it outlives nobody.
        let call = Task { await call() }
        let stoppedMeanwhile = state.withLock { state -> Bool in
            guard !state.stopped else { return true }
            state.cancels[id] = { call.cancel() }
            return false
        }
        if stoppedMeanwhile { call.cancel() }
        let value = await call.value
        state.withLock { _ = $0.cancels.removeValue(forKey: id) }
        return value
    }

    /// notifyd stops: the calls under way are cancelled, and none starts again.
    func stop() {
        let cancels = state.withLock { state -> [@Sendable () -> Void] in
            state.stopped = true
            defer { state.cancels = [:] }
            return Array(state.cancels.values)
        }
        for cancel in cancels { cancel() }
    }
}
