#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol
import NotifySystem
import Synchronization

/// A backend that answered a request with a 2xx works: whatever waits on it because it was
/// unreachable or failing is tried now, not at the end of its own backoff. The registrar
/// and the outbox say when they have such a wait and when a request of theirs succeeded;
/// with nothing waiting, a success costs one lock.
///
/// A backend that could not be reached at all is watched (`ReachabilityWatch`): a probe
/// that costs it no request sees it return, and wakes what waits on it the same way. One
/// that answered with an error (5xx, 429, 403 with `Retry-After`) is up and asked for
/// less: nothing probes it, and its backoff and `Retry-After` stand.
///
/// The network is watched the same way: when a monitor sees a link, an address or a
/// default route come up, or the machine wake, every party is woken and tries again what
/// waited on the network. A request that found no route to the backend is not the
/// backend's failure: it is judged here (`classify`), the parties wait for the network
/// without growing their backoff, and `status` says since when notifyd is offline.
public final class BackendRecovery: Service {
    public enum Party: Sendable, Hashable {
        case registrar, outbox, retirement
    }

    private struct Wakes {
        var backendAnswered: @Sendable (String) async -> Void
        var networkChanged: @Sendable (NetworkChange) async -> Void
    }

    private struct State {
        var waiting: Set<Party> = []
        var wakes: [Party: Wakes] = [:]
        var network = NetworkView()
        /// Since when each party's attempts have found no route to the backend.
        var offline: [Party: Date] = [:]

        /// The backend watched longest, as the watch last said; its interval is read anew for `status`.
        var unreachable: ReachabilityWatch.Earliest?

        var status: NetworkStatus {
            NetworkStatus(monitor: network.monitor, offlineSince: offline.values.min(),
                          backendUnreachableSince: unreachable?.since, checkingEvery: unreachable?.interval)
        }
    }

    private let state = Mutex(State())
    /// Set once, by `watchReachability`.
    private let reachability = Mutex<ReachabilityWatch?>(nil)
    private let onEvent: @Sendable (NetworkEvent) -> Void

    /// The wakes started and not yet ended, which `stop` waits for.
    private let wakesUnderWay = TrackedTasks()

    /// `onEvent` gets a `network` event for each change `status` shows of the network.
    public init(onEvent: @escaping @Sendable (NetworkEvent) -> Void = { _ in }) {
        self.onEvent = onEvent
    }

    /// Nothing to take up: parts report to it as they start.
    public func start() async {}

    /// Wakes no more parties, probes no more, and returns once the probes and the wakes
    /// under way have ended.
    public func shutdown() async {
        await watch?.stop()
        await wakesUnderWay.stopAndWait()
    }

    /// `wake` ends the waits of `party` on the backend at the URL it is given;
    /// `networkChanged` those on the network, and looks at its timers again.
    public func attach(_ party: Party, wake: @escaping @Sendable (String) async -> Void,
                       networkChanged: @escaping @Sendable (NetworkChange) async -> Void = { _ in }) {
        state.withLock { $0.wakes[party] = Wakes(backendAnswered: wake, networkChanged: networkChanged) }
    }

    public func setWaiting(_ party: Party, _ waiting: Bool) {
        let began = state.withLock { state -> Bool in
            guard waiting else {
                state.waiting.remove(party)
                return false
            }
            return state.waiting.insert(party).inserted
        }
        if began { watch?.somethingWaits() }
    }

    /// Watches a backend that could not be reached for its return, with `probe` (see
    /// `BackendAPI.probe`) and intervals on `clock`.
    public func watchReachability(clock: any WakeClock, probe: @escaping @Sendable (String, Bool) async -> Bool) {
        let watch = ReachabilityWatch(
            clock: clock, probe: probe,
            anythingWaits: { [weak self] in self?.state.withLock { !$0.waiting.isEmpty } ?? false },
            changed: { [weak self] backend, watched, earliest in self?.watchChanged(backend, watched: watched, earliest: earliest) },
            returned: { [weak self] backend in self?.backendAnswered(backend) })
        reachability.withLock { $0 = watch }
    }

    private var watch: ReachabilityWatch? { reachability.withLock { $0 } }

    /// Wakes started so far, and those not yet ended: none runs once every part woken has
    /// taken its wake in.
    var wakes: (started: Int, running: Int) { (wakesUnderWay.started, wakesUnderWay.count) }

    /// The reachability watch's loops begun and still running (see `ReachabilityWatch.loops`).
    var reachabilityLoops: (begun: Int, running: Int) { watch?.loops ?? (0, 0) }

    /// Called under the watch's lock, so events come in the order the changes happened.
    private func watchChanged(_ backend: String, watched: Bool, earliest: ReachabilityWatch.Earliest?) {
        state.withLock { state in
            state.unreachable = earliest
            onEvent(NetworkEvent(time: Date(), change: watched ? .backendUnreachable : .backendReachable, network: state.status))
        }
    }

    /// A party now waits on `backend`, which could not be reached: it is watched. Its
    /// failure started a watch already when it was judged (`classify`), but another
    /// request's answer may have ended that watch before the party recorded its wait, and
    /// the wake that came with it found nothing waiting yet.
    public func watchForReturn(of backend: String) {
        watch?.cannotReach(backend, tls: false)
    }

    /// The backend at `backend` answered a request with a 2xx.
    public func backendAnswered(_ backend: String) {
        let wakes = state.withLock { state in state.waiting.compactMap { state.wakes[$0]?.backendAnswered } }
        if !wakes.isEmpty {
            wakesUnderWay.start {
                for wake in wakes { await wake(backend) }
            }
        }
        // After the wakes are under way: nothing in between looks idle.
        watch?.reached(backend)
    }

    /// The wakes started and not yet ended.
    var wakesInProgress: Int { wakesUnderWay.count }

    // MARK: The network

    /// A monitor watches the network (nil: none could be started).
    public func networkWatched(by monitor: String?) {
        state.withLock { $0.network.monitor = monitor }
    }

    /// Whether a default route that can carry packets exists, as the monitor last saw.
    public func defaultRouteChanged(_ present: Bool?) {
        state.withLock { $0.network.defaultRoute = present }
    }

    /// What a failed request to `backend` means: `BackendFailure.classify`, except that a
    /// failure this machine's lack of a route explains is `offline`.
    /// A backend that could not be reached is watched from now on; one that answered, with
    /// whatever status, is not.
    public func classify(_ error: BackendCallError, route: BackendFailure.Route, backend: String, api: BackendDialect = .registrations) -> BackendFailure {
        let network = state.withLock { $0.network }
        let failure = BackendFailure.classify(error, route: route, api: api) { network.isOffline(reaching: backend, noRoute: $0) }
        if case .unreachable(_, let tls) = failure {
            watch?.cannotReach(backend, tls: tls)
        } else if error.isAnswer {
            watch?.reached(backend)
        }
        return failure
    }

    /// Since when the attempts of `party` have found no route to the backend (nil: they
    /// have not, or nothing waits any more). `status` shows the earliest.
    public func setOffline(_ party: Party, since: Date?) {
        state.withLock { state in
            let before = state.status
            state.offline[party] = since
            let after = state.status
            guard before != after else { return }
            // Under the lock, so that watchers see offline and online in the order they happened.
            if (before.offlineSince == nil) != (after.offlineSince == nil) {
                onEvent(NetworkEvent(time: Date(), change: after.offlineSince == nil ? .online : .offline, network: after))
            }
        }
    }

    /// What `status` shows of the network and of `backend`, the backend in use: an old
    /// backend still watched (for a deletion left there) is not this one, and is shown with
    /// its deletion (`unreachableSince(_:)`).
    public func networkStatus(of backend: String?) -> NetworkStatus {
        let watched = backend.flatMap { watch?.watched($0) }
        var status = state.withLock { $0.status }
        status.backendUnreachableSince = watched?.since
        status.checkingEvery = watched?.interval
        return status
    }

    /// Since when `backend` could not be reached, while it is watched for its return.
    public func unreachableSince(_ backend: String) -> Date? {
        watch?.watched(backend)?.since
    }

    /// The monitor saw the network change, after its burst of messages was over: unless
    /// all it saw went away, every party tries again what waited on the network, and looks
    /// at its timers again.
    public func networkChanged(_ change: NetworkChange) {
        let (wakes, status) = state.withLock { state in (state.wakes.values.map(\.networkChanged), state.status) }
        switch change {
        case .up: onEvent(NetworkEvent(time: Date(), change: .up, network: status))
        case .down: onEvent(NetworkEvent(time: Date(), change: .down, network: status))
        case .resumed(let slept): onEvent(NetworkEvent(time: Date(), change: .resumed, slept: slept, network: status))
        case .clockSet: onEvent(NetworkEvent(time: Date(), change: .clockSet, network: status))
        }
        guard change != .down, !wakes.isEmpty else { return }
        wakesUnderWay.start {
            for wake in wakes { await wake(change) }
        }
    }
}
