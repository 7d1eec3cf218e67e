/// Every request's way through the backend: control routes aside, then the other
/// dialect's routes (404), then injected faults, then authentication (the tutorial's
/// Basic handler, or the backend service's API key), then the controllers, and finally
/// the request log.
struct RequestDispatcher: Sendable {
    let options: DevBackend.Options
    let state: SharedState
    let api: APIRoutes
    let installations: InstallationRoutes
    let control: ControlRoutes

    init(options: DevBackend.Options, state: SharedState) {
        self.options = options
        self.state = state
        self.api = APIRoutes(options: options, state: state)
        self.installations = InstallationRoutes(options: options, state: state)
        self.control = ControlRoutes(state: state)
    }

    func handle(_ request: HTTPRequest, _ context: HTTPRequestContext) -> HTTPHandlerResult {
        if ControlRoutes.owns(request.path) {
            return .respond(control.handle(request))
        }
        let match = RouteMatch(method: request.method, path: request.path)
        if let match, match.route.api != options.api {
            // Neither sample has a route of the other: a client of the other dialect learns
            // that it came to the wrong backend, whatever its credentials. The path only in
            // the body: the query may hold an API key.
            let response = options.api == .installations
                ? AspNetCoreResponses.empty(404)
                : WebAPIResponses.notFound(target: request.path)
            record(request, match: nil, status: response.status, user: nil, injected: false)
            return .respond(response)
        }
        let user = authenticatedUser(request)

        // Faults come first: a throttled or unreachable backend fails whatever the
        // request holds.
        if let match, let fault = state.withLock({ $0.faults.take(for: match.route) }) {
            if let result = apply(fault, request, match, context) {
                var status: Int?
                if case .respond(let response) = result { status = response.status }
                // A lost reply was handled, and recorded, as usual.
                if fault.loseReply != true { record(request, match: match, status: status, user: user, injected: true) }
                return result
            }
        }

        return .respond(handleNormally(request, match))
    }

    /// The Basic user a registrations request is from; the installations dialect knows none.
    private func authenticatedUser(_ request: HTTPRequest) -> String? {
        guard options.api == .registrations else { return nil }
        return BasicAuth.evaluate(request.header("Authorization"), accounts: options.accounts).user
    }

    /// The request handled as the sample's controllers would, and recorded.
    private func handleNormally(_ request: HTTPRequest, _ match: RouteMatch?) -> HTTPResponse {
        switch options.api {
        case .registrations: handleRegistrations(request, match)
        case .installations: handleInstallations(request, match)
        }
    }

    /// ASP.NET Core routes before it authenticates: an unknown route is 404, key or no key.
    /// A missing or wrong key is 401 with no body and no challenge.
    private func handleInstallations(_ request: HTTPRequest, _ match: RouteMatch?) -> HTTPResponse {
        let response: HTTPResponse
        if let match {
            if APIKeyAuth.accepts(request, key: options.apiKey) {
                response = installations.handle(match, request)
            } else {
                response = AspNetCoreResponses.empty(401)
            }
        } else {
            response = AspNetCoreResponses.empty(404)
        }
        record(request, match: match, status: response.status, user: nil, injected: false)
        return response
    }

    private func handleRegistrations(_ request: HTTPRequest, _ match: RouteMatch?) -> HTTPResponse {
        let auth = BasicAuth.evaluate(request.header("Authorization"), accounts: options.accounts)
        let response: HTTPResponse
        switch auth {
        case .threw(let type, let message):
            response = WebAPIResponses.exception(type, message)
        case .forbidden:
            response = WebAPIResponses.empty(403)
        case .accepted(let user):
            if let match {
                response = api.handle(match, request, user: user)
            } else {
                response = WebAPIResponses.notFound(target: request.target)
            }
        }
        record(request, match: match, status: response.status, user: auth.user, injected: false)
        return response
    }

    /// What the fault does, or nil when it only delays and normal handling follows.
    private func apply(
        _ fault: DevBackend.FaultRule, _ request: HTTPRequest, _ match: RouteMatch, _ context: HTTPRequestContext
    ) -> HTTPHandlerResult? {
        if let delay = fault.delay, delay > 0 {
            // Stopping mid-delay ends the exchange the way a dying server would.
            guard context.pause(seconds: delay) else { return .drop }
        }
        if fault.loseReply == true {
            // Handled as usual, and recorded, but the answer never leaves.
            _ = handleNormally(request, match)
            return .drop
        }
        if fault.drop == true { return .drop }
        guard let status = fault.status else { return nil }
        var response = WebAPIResponses.injected(status)
        if let retryAfter = fault.retryAfter {
            response.headers.append(("Retry-After", String(retryAfter)))
        }
        if let location = fault.location {
            response.headers.append(("Location", location))
        }
        if fault.echoHeaders == true {
            response.body = Array(request.headers.map { "\($0.name): \($0.value)\r\n" }.joined().utf8)
        } else if let body = fault.body {
            response.body = Array(body.utf8)
        }
        return .respond(response)
    }

    private func record(_ request: HTTPRequest, match: RouteMatch?, status: Int?, user: String?, injected: Bool) {
        let entry = DevBackend.LoggedRequest(
            method: request.method, path: request.path, route: match?.route, status: status, user: user,
            apiKeyInQuery: QueryString.value("apikey", in: request.query) != nil
        )
        state.withLock { $0.log(entry) }
        guard options.logRequests, !options.quiet else { return }
        let outcome = status.map(String.init) ?? "dropped"
        ConsoleOutput.line(
            "\(entry.method) \(entry.path) \(outcome) user=\(user ?? "-")\(injected ? " (injected fault)" : "")"
        )
    }
}
