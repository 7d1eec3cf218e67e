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
    }

    private let startOrder: [any Service]
    private let stopOrder: [any Service]
    private let deadline: Duration
    private let state = Mutex(State())
    /// A start and a shutdown each go through the services in a turn of their own: a
    /// shutdown waits for the start under way, a second shutdown for the first.
    private let turns = Turns()

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
            return true
        }
        guard first else { return }
        await turns.begin()
        defer { turns.end() }
        for service in startOrder {
            let go = state.withLock { state -> Bool in
                guard state.phase == .starting else { return false }
                state.started.insert(ObjectIdentifier(service))
                return true
            }
            guard go else { break }
            await service.start()
        }
        state.withLock { state in
            if state.phase == .starting { state.phase = .started }
        }
    }

    /// Shuts down the services started, in the stop order; returns once they all have
    /// returned. A second call waits for the first to end.
    public func shutdown() async {
        // At once, not in the turn: the start under way starts no further service.
        state.withLock { state in
            if state.phase != .stopped { state.phase = .stopping }
        }
        await turns.begin()
        defer { turns.end() }
        // Whichever shutdown has the first turn shuts down; the others find it done.
        let started = state.withLock { state -> Set<ObjectIdentifier>? in
            state.phase == .stopped ? nil : state.started
        }
        guard let started else { return }
        for service in stopOrder where started.contains(ObjectIdentifier(service)) {
            await Self.shutDown(service, within: deadline)
        }
        state.withLock { $0.phase = .stopped }
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
