import Foundation

/// The dev backend: the tutorial's API on a loopback HTTP server, plus thread-safe
/// inspection and fault injection for tests.
///
/// ```swift
/// let backend = DevBackendServer(options: .init(quiet: true))
/// try backend.start()
/// defer { backend.stop() }
/// // point a client at backend.baseURL, then inspect backend.pushes()
/// ```
public final class DevBackendServer: Sendable {
    public let options: DevBackend.Options
    private let state = SharedState()
    private let server: HTTPServer

    public init(options: DevBackend.Options = DevBackend.Options()) {
        self.options = options
        let dispatcher = RequestDispatcher(options: options, state: state)
        server = HTTPServer(host: options.host, port: options.port) { request, context in
            dispatcher.handle(request, context)
        }
    }

    /// A backend deployed anew in front of the same hub as `previous`: it starts with the
    /// registrations and installations the hub holds (ids issued included), and nothing else of `previous`'s
    /// (no pushes, faults or logged requests). As when the tutorial backend is updated for
    /// FCM v1 and redeployed, with the devices registered before still at the hub.
    public convenience init(options: DevBackend.Options, sameHubAs previous: DevBackendServer) {
        self.init(options: options)
        let hub = previous.state.withLock { ($0.store, $0.installations) }
        state.withLock { $0.store = hub.0; $0.installations = hub.1 }
    }

    /// Binds and starts serving; returns the bound port (the real one for port 0).
    /// A server starts once: after `stop()`, make a new one.
    @discardableResult
    public func start() throws -> Int {
        try server.start()
    }

    /// Closes the listener and every connection and waits for their threads to end.
    /// Safe to call more than once. Must not be called from a request handler.
    public func stop() {
        server.stop()
    }

    /// The bound port; 0 before `start()`.
    public var port: Int { server.port }

    /// `http://HOST:PORT`, for clients; a wildcard bind is reached through loopback.
    public var baseURL: URL {
        let host = options.host == "0.0.0.0" ? "127.0.0.1" : options.host
        return URL(string: "http://\(host):\(port)")!
    }

    /// TCP connections accepted so far; shows whether clients reuse connections.
    public var acceptedConnections: Int { server.acceptedConnections }

    /// TCP connections ended so far: what their clients sent is in `requests()` by then.
    public var endedConnections: Int { server.endedConnections }

    // MARK: Inspection

    public func registrations() -> [DevBackend.Registration] {
        state.withLock { $0.store.registrations }
    }

    public func pushes() -> [DevBackend.Push] {
        state.withLock { $0.pushes }
    }

    /// The installations dialect's devices, in the order first stored.
    public func installations() -> [DevBackend.Installation] {
        state.withLock { $0.installations.installations }
    }

    /// The installations dialect's notification requests, taken or refused, oldest first.
    public func notificationRequests() -> [DevBackend.NotificationRequest] {
        state.withLock { $0.notificationRequests }
    }

    /// API requests, each logged once answered (control routes are not logged): in the
    /// order answered, and what one did (a push, a registration) shows a moment before it does.
    public func requests() -> [DevBackend.LoggedRequest] {
        state.withLock { $0.requests }
    }

    public func requestCount(route: DevBackend.Route) -> Int {
        state.withLock { $0.requests.count { $0.route == route } }
    }

    public func snapshot() -> DevBackend.StateSnapshot {
        state.withLock { $0.snapshot }
    }

    // MARK: Fault injection

    /// Appends a rule; rules are tried in the order they were added.
    /// Throws when the rule cannot be applied (say, a negative delay).
    public func addFault(_ rule: DevBackend.FaultRule) throws {
        if let problem = rule.problem { throw HTTPServerError("invalid fault rule: \(problem)") }
        state.withLock { $0.faults.add(rule) }
    }

    public func clearFaults() {
        state.withLock { $0.faults.clear() }
    }

    /// The rules still in force, with their remaining counts.
    public func faults() -> [DevBackend.FaultRule] {
        state.withLock { $0.faults.rules }
    }

    /// The registration (or issued id) is gone from now on, as when the hub expires it.
    public func expire(id: String) {
        state.withLock { $0.store.expire(id: id) }
    }

    /// Forgets registrations, issued ids, installations, pushes, notification requests,
    /// faults and the request log.
    public func reset() {
        state.withLock { $0.reset() }
    }
}
