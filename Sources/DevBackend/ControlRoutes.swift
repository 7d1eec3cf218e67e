import Foundation

/// The /_dev/ routes: the same inspection and fault injection as the library API,
/// for tests that run the backend as a separate process. No authentication: they
/// exist only on this stand-in, never on a real backend.
struct ControlRoutes: Sendable {
    let state: SharedState

    static func owns(_ path: String) -> Bool {
        path == "/_dev" || path.hasPrefix("/_dev/")
    }

    func handle(_ request: HTTPRequest) -> HTTPResponse {
        var segments = request.path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        segments.removeFirst()  // "_dev"
        switch (request.method, segments.first, segments.count) {
        case ("GET", "state", 1):
            return .json(200, WebAPIResponses.encode(state.withLock { $0.snapshot }))
        case ("POST", "reset", 1):
            state.withLock { $0.reset() }
            return confirmation()
        case ("GET", "faults", 1):
            return faultList()
        case ("POST", "faults", 1):
            return addFault(request.body)
        case ("DELETE", "faults", 1):
            state.withLock { $0.faults.clear() }
            return faultList()
        case ("POST", "expire", 2):
            let id = QueryString.percentDecoded(segments[1])
            state.withLock { $0.store.expire(id: id) }
            return confirmation()
        default:
            return problem(404, "no control route \(request.method) \(request.path); see GET /_dev/state, "
                + "POST /_dev/reset, GET|POST|DELETE /_dev/faults, POST /_dev/expire/{id}")
        }
    }

    private func addFault(_ body: [UInt8]) -> HTTPResponse {
        let rule: DevBackend.FaultRule
        do {
            rule = try JSONDecoder().decode(DevBackend.FaultRule.self, from: Data(body))
        } catch {
            return problem(400, "the body must be one fault rule, e.g. {\"route\":\"send\",\"status\":503,\"count\":1}")
        }
        if let reason = rule.problem { return problem(400, reason) }
        state.withLock { $0.faults.add(rule) }
        return faultList()
    }

    private func faultList() -> HTTPResponse {
        .json(200, WebAPIResponses.encode(FaultListBody(faults: state.withLock { $0.faults.rules })))
    }

    private func confirmation() -> HTTPResponse {
        .json(200, Array("{\"ok\":true}".utf8))
    }

    private func problem(_ status: Int, _ message: String) -> HTTPResponse {
        .json(status, WebAPIResponses.encode(ProblemBody(error: message)))
    }

    private struct FaultListBody: Encodable {
        var faults: [DevBackend.FaultRule]
    }

    private struct ProblemBody: Encodable {
        var error: String
    }
}
