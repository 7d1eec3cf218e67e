import NotifySystem
import Synchronization

/// A long-lived part of notifyd: it takes up its work when started and ends it when shut
/// down, each once, by the `ServiceGroup` it belongs to and by nothing else.
public protocol Service: AnyObject, Sendable {
    /// Takes up the work: what the last run left, timers. Declared by each service, even
    /// one with nothing to take up: a default here would be chosen over a service's own
    /// `start()` that does not suspend, wherever a caller awaits it.
    func start() async
    /// Starts nothing more, lets the work under way end (cutting it short at
    /// `ShutdownDeadline.duration`, where it can wait on something that may not come) and
    /// saves what is kept. One still running at the deadline is cancelled: a wait that
    /// cancellation ends is over then, and the group waits for the rest (saving) to return.
    func shutdown() async
}

/// Starts its services in one declared order and shuts them down in another, each once, in
/// the spirit of swift-service-lifecycle's `ServiceGroup`: the order lives where the
/// services are joined, not in each caller. A shutdown waits for a start under way (which
/// starts no further service once the shutdown began), then shuts down, in its order, the
/// services that were started; a second shutdown waits for the first. A service whose
/// shutdown has not returned at the deadline is cancelled, and the next one waits until it
/// has returned: nothing a group stopped outlives its shutdown.
public final class ServiceGroup: Service {
    private enum Phase {
        case idle, starting, started, stopping, stopped
    }

    private struct State {
        var phase = Phase.idle
        var started: Set<ObjectIdentifier> = []
        /// A start is going through the services now.
        var starting = false
        /// Callers waiting for the start under way to end (a shutdown), or for the shutdown
        /// under way to end (another shutdown).
        var startEnded: [CheckedContinuation<Void, Never>] = []
        var stopEnded: [CheckedContinuation<Void, Never>] = []
    }

    private let startOrder: [any Service]
    private let stopOrder: [any Service]
    private let deadline: Duration
    private let state = Mutex(State())

    /// `stopOrder` holds the services of `startOrder`, each once, in the order they are shut
    /// down; `deadline` is how long one may take to shut down before it is cancelled.
    public init(startOrder: [any Service], stopOrder: [any Service], deadline: Duration = ShutdownDeadline.duration) {
        let starting = startOrder.map { ObjectIdentifier($0) }, stopping = stopOrder.map { ObjectIdentifier($0) }
        precondition(Set(starting).count == starting.count && Set(starting) == Set(stopping) && stopping.count == starting.count,
                     "a service group stops each service it starts, once")
        self.startOrder = startOrder
        self.stopOrder = stopOrder
        self.deadline = deadline
    }

    /// True once a shutdown began: no service starts any more.
    var isStopping: Bool { state.withLock { $0.phase == .stopping || $0.phase == .stopped } }

    /// Starts each service in turn, the next once the one before has started; only the first
    /// call starts anything, and none after a shutdown began.
    public func start() async {
        let first = state.withLock { state -> Bool in
            guard state.phase == .idle else { return false }
            state.phase = .starting
            state.starting = true
            return true
        }
        guard first else { return }
        for service in startOrder {
            let go = state.withLock { state -> Bool in
                guard state.phase == .starting else { return false }
                state.started.insert(ObjectIdentifier(service))
                return true
            }
            guard go else { break }
            await service.start()
        }
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            if state.phase == .starting { state.phase = .started }
            state.starting = false
            defer { state.startEnded = [] }
            return state.startEnded
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Shuts down the services started, in the stop order; returns once they all have
    /// returned. A second call waits for the first to end.
    public func shutdown() async {
        enum Next { case stop(waitForStart: Bool), wait, done }
        let next = state.withLock { state -> Next in
            switch state.phase {
            case .idle, .started:
                state.phase = .stopping
                return .stop(waitForStart: false)
            case .starting:
                state.phase = .stopping
                return .stop(waitForStart: true)
            case .stopping: return .wait
            case .stopped: return .done
            }
        }
        switch next {
        case .done:
            return
        case .wait:
            await waitUntil({ $0.phase == .stopped }, joining: \.stopEnded)
        case .stop(let waitForStart):
            if waitForStart { await waitUntil({ !$0.starting }, joining: \.startEnded) }
            let started = state.withLock { $0.started }
            for service in stopOrder where started.contains(ObjectIdentifier(service)) {
                await Self.shutDown(service, within: deadline)
            }
            let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.phase = .stopped
                defer { state.stopEnded = [] }
                return state.stopEnded
            }
            for waiter in waiters { waiter.resume() }
        }
    }

    /// Returns once `ended` holds of the state: at once, or when the start or the stop under
    /// way that makes it hold resumes the waiters it keeps in `waiters`.
    private func waitUntil(_ ended: (State) -> Bool, joining waiters: WritableKeyPath<State, [CheckedContinuation<Void, Never>]>) async {
        // A continuation: resumed once, by the start or the stop that ends (see above).
        await withCheckedContinuation { waiter in
            let now = state.withLock { state -> Bool in
                if !ended(state) { state[keyPath: waiters].append(waiter) }
                return ended(state)
            }
            if now { waiter.resume() }
        }
    }

    /// Shuts `service` down; cancels the shutdown once `deadline` passes, and returns when
    /// it has returned.
    private static func shutDown(_ service: any Service, within deadline: Duration) async {
        // A group within a group bounds each of its own services: one deadline for all of
        // them would cut the last ones short.
        if service is ServiceGroup {
            await service.shutdown()
            return
        }
        await ShutdownDeadline.bound(by: deadline) { await service.shutdown() }
    }
}
