import NotifyProtocol

/// A failed backend call, interpreted for what to do next. The tutorial backend's own
/// quirks live here: 403 means bad credentials unless it carries Retry-After (throttling);
/// a 500 on PUT or DELETE of a cached id usually means the hub forgot the id.
public enum BackendFailure: Equatable, Sendable {
    /// The registration id no longer exists: drop it, never retry with it.
    case gone(status: Int)
    /// Credentials refused: nothing is retried until they change.
    case unauthorized(status: Int)
    /// Worth retrying later: network trouble, timeouts, 408, 429, 5xx, throttling.
    case transient(retryAfter: Double?, reason: String)
    /// The backend refused this request for good (a 4xx); retrying the same will not help.
    case rejected(status: Int, detail: String)
    /// This machine has no route to the backend: not the backend's failure. Tried again
    /// when the network changes, without growing the backoff.
    case offline(reason: String)
    /// The backend could not be reached at all: no connection (refused, no name, no route,
    /// none in time) while this machine is online, or a failed TLS handshake (`tls`).
    /// Retried like `transient` without `Retry-After`, and `BackendRecovery` watches for the
    /// backend's return with a probe that costs it no request.
    case unreachable(reason: String, tls: Bool)

    public enum Route: Sendable {
        case create, upsert, delete, send
    }

    /// `offline` judges a failure that the network may explain (see
    /// `BackendCallError.unreachable`): true when this machine is offline.
    public static func classify(_ error: BackendCallError, route: Route, api: BackendDialect = .registrations,
                                offline: (_ noRoute: Bool) -> Bool) -> BackendFailure {
        if case .unreachable(let reason, let noRoute, _) = error, offline(noRoute) { return .offline(reason: reason) }
        return classify(error, route: route, api: api)
    }

    public static func classify(_ error: BackendCallError, route: Route, api: BackendDialect = .registrations) -> BackendFailure {
        switch error {
        case .cannotConnect(let reason, let tls):
            return .unreachable(reason: reason, tls: tls)
        case .unreachable(let reason, let noRoute, let connecting) where noRoute || connecting:
            return .unreachable(reason: reason, tls: false)
        case .transport(let reason), .unreachable(let reason, _, _):
            return .transient(retryAfter: nil, reason: "the request to the backend failed: \(reason)")
        case .invalidResponse(let reason):
            // Already says it is the backend's answer.
            return .transient(retryAfter: nil, reason: reason)
        case .notAttempted:
            // The outbox puts these back unsent before asking; nothing else uses lanes.
            return .transient(retryAfter: nil, reason: "not sent: an earlier message to the same recipient failed")
        case .otherAPI(let status, let suggestion):
            return .rejected(status: status, detail: suggestion)
        case .status(let status, let retryAfter, let body):
            switch api {
            case .registrations: return classify(status: status, retryAfter: retryAfter, body: body, route: route)
            case .installations: return classifyAtBackendService(status: status, retryAfter: retryAfter, body: body)
            }
        }
    }

    /// The backend service keeps no id of its own to lose (the device chose it, and a PUT
    /// makes it anew), and turns every failure of the hub into a 422.
    static func classifyAtBackendService(status: Int, retryAfter: Double?, body: String) -> BackendFailure {
        switch status {
        case 422:
            return .transient(retryAfter: retryAfter, reason: "the backend could not hand it to the hub (HTTP 422)")
        case 404, 410:
            return .rejected(status: status, detail: excerpt(body))
        default:
            return classify(status: status, retryAfter: retryAfter, body: body, route: .send)
        }
    }

    static func classify(status: Int, retryAfter: Double?, body: String, route: Route) -> BackendFailure {
        let idRoute = route == .upsert || route == .delete
        switch status {
        case 401:
            return .unauthorized(status: status)
        case 403:
            if let retryAfter {
                let asked = retryAfter > 0 ? ", Retry-After \(Int(min(retryAfter, 1e9))) s" : " with Retry-After"
                return .transient(retryAfter: retryAfter, reason: "the backend asked to slow down (HTTP 403\(asked))")
            }
            return .unauthorized(status: status)
        case 404 where idRoute, 410 where idRoute:
            return .gone(status: status)
        case 500 where idRoute:
            return .gone(status: status)
        case 429:
            return .transient(retryAfter: retryAfter, reason: "the backend asked to slow down (HTTP 429)")
        case 408:
            return .transient(retryAfter: retryAfter, reason: "the backend gave up waiting for the request (HTTP 408)")
        case 502, 504:
            return .transient(retryAfter: retryAfter, reason: "the gateway in front of the backend could not get an answer from it (HTTP \(status))")
        case 503:
            return .transient(retryAfter: retryAfter, reason: "the backend is unavailable for now (HTTP 503)")
        case 500...599:
            return .transient(retryAfter: retryAfter, reason: "the backend failed (HTTP \(status))")
        case 300...399:
            // Not followed (it would carry the password), and nothing wrong with what was
            // sent: the backend URL is, which a reload fixes. Retried, so that a message
            // already accepted waits for the fix instead of failing for good.
            return .transient(retryAfter: retryAfter, reason: "the backend answered HTTP \(status): \(excerpt(body))")
        default:
            return .rejected(status: status, detail: excerpt(body))
        }
    }

    /// How a refusal that names the other API begins (`BackendCallError.otherAPI`).
    static let otherAPIPrefix = "this backend looks like"

    static func namesOtherAPI(_ detail: String) -> Bool {
        detail.hasPrefix(otherAPIPrefix)
    }

    /// What a person reads for a backend that could not be reached at all.
    public static func unreachableText(_ reason: String) -> String {
        "the backend could not be reached: \(reason)"
    }

    /// The start of an error body, on one line, for a message a person reads.
    static func excerpt(_ body: String) -> String {
        let flat = body.split(whereSeparator: \.isNewline).joined(separator: " ").trimmingSpaces()
        return flat.count > 200 ? String(flat.prefix(200)) + "…" : flat
    }
}
