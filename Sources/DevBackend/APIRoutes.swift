import Foundation

/// The tutorial's RegisterController and NotificationsController, answering as
/// the ASP.NET originals do, bugs included. Runs after authentication succeeded.
struct APIRoutes: Sendable {
    let options: DevBackend.Options
    let state: SharedState

    func handle(_ match: RouteMatch, _ request: HTTPRequest, user: String) -> HTTPResponse {
        switch match.route {
        case .create: create(request)
        case .upsert: upsert(id: match.id ?? "", request, user: user)
        case .delete: delete(id: match.id ?? "")
        case .send: send(request, user: user)
        case .installationUpsert, .installationDelete, .notificationRequest:
            WebAPIResponses.notFound(target: request.path)
        }
    }

    private func create(_ request: HTTPRequest) -> HTTPResponse {
        var handle = QueryString.value("handle", in: request.query)
        // Web API binds an empty query value to null, so `handle=` means "no handle".
        if handle?.isEmpty == true { handle = nil }
        let id = state.withLock { $0.store.create(handle: handle) }
        return WebAPIResponses.jsonString(id)
    }

    private func upsert(id: String, _ request: HTTPRequest, user: String) -> HTTPResponse {
        if let refusal = refuseNonJSON(request) { return refusal }
        guard let object = try? JSONSerialization.jsonObject(with: Data(request.body)),
              let fields = object as? [String: Any]
        else { return WebAPIResponses.empty(400) }
        // Json.NET matches property names case-insensitively.
        func field(_ name: String) -> Any? {
            fields.first { $0.key.lowercased() == name.lowercased() }?.value
        }
        // The controller's `switch (deviceUpdate.Platform)`: its default throws 400. The
        // revision updated for FCM v1 switches on the name lower-cased, and says why.
        guard let given = field("Platform") as? String else { return WebAPIResponses.empty(400) }
        let updated = options.androidPlatformName.isUpdatedForFCMv1
        let platform = updated ? given.lowercased() : given
        guard options.acceptedPlatforms.contains(platform) else {
            return updated ? WebAPIResponses.badRequest("Unsupported platform") : WebAPIResponses.empty(400)
        }
        let rawHandle = field("Handle")
        if rawHandle == nil || rawHandle is NSNull {
            return WebAPIResponses.exception(
                "System.ArgumentNullException", "Value cannot be null.\r\nParameter name: pnsHandle"
            )
        }
        guard let handle = rawHandle as? String else { return WebAPIResponses.empty(400) }
        // `new HashSet<string>(deviceUpdate.Tags)` throws on null.
        let rawTags = field("Tags")
        if rawTags == nil || rawTags is NSNull {
            return WebAPIResponses.exception(
                "System.ArgumentNullException", "Value cannot be null.\r\nParameter name: collection"
            )
        }
        guard let list = rawTags as? [Any] else { return WebAPIResponses.empty(400) }
        var tags: [String] = []
        for element in list {
            guard let tag = element as? String else { return WebAPIResponses.empty(400) }
            if !tags.contains(tag) { tags.append(tag) }
        }
        let userTag = "username:" + user
        if !tags.contains(userTag) { tags.append(userTag) }
        guard tags.allSatisfy(TagRule.isValid) else { return WebAPIResponses.empty(400) }

        let registration = DevBackend.Registration(id: id, platform: platform, handle: handle, tags: tags)
        switch state.withLock({ $0.store.upsert(registration) }) {
        case .stored:
            return WebAPIResponses.ok
        case .gone:
            return goneResponse()
        }
    }

    /// The hub's 410, as this backend variant passes it on.
    private func goneResponse() -> HTTPResponse {
        if options.goneStatus == 500 {
            // ReturnGoneIfHubResponseIsGone throws HttpRequestException("Gone").
            return WebAPIResponses.exception("System.Net.Http.HttpRequestException", "Gone")
        }
        return WebAPIResponses.empty(options.goneStatus)
    }

    private func delete(id: String) -> HTTPResponse {
        guard state.withLock({ $0.store.delete(id: id) }) else {
            return WebAPIResponses.exception(
                "Microsoft.Azure.NotificationHubs.Messaging.MessagingEntityNotFoundException",
                "The remote server returned an error: (404) Not Found."
            )
        }
        return WebAPIResponses.ok
    }

    private func send(_ request: HTTPRequest, user: String) -> HTTPResponse {
        // Both are required action parameters: without them Web API finds no action.
        guard let pns = QueryString.value("pns", in: request.query),
              let toTag = QueryString.value("to_tag", in: request.query)
        else { return WebAPIResponses.notFound(target: request.path) }
        if let refusal = refuseNonJSON(request) { return refusal }
        guard let decoded = try? JSONSerialization.jsonObject(with: Data(request.body), options: [.fragmentsAllowed]),
              let message = decoded as? String
        else { return WebAPIResponses.empty(400) }
        // An unknown pns leaves the outcome null, and the controller answers its
        // initial InternalServerError without ever calling the hub.
        guard let service = NotificationService(pns: pns, options: options) else { return WebAPIResponses.empty(500) }

        let payload = PayloadBuilder.payload(
            service: service, sender: user, message: message, escaping: options.escapesText
        )
        let verdict = PayloadValidator.check(payload, service: service)
        let tags: Set<String> = ["username:" + toTag, "from:" + user]
        // A second copy of a send the backend already took (its reply was lost) is answered
        // as the first was, and not pushed again; checked and remembered under one lock, so
        // that two copies at once push once.
        let key = request.header("Idempotency-Key").flatMap { $0.isEmpty ? nil : $0 }
        let taken: DevBackend.Push? = state.withLock { state in
            if let key, state.tookIdempotencyKey(key, user: user) { return nil }
            let recipients: [String]
            if case .valid = verdict {
                recipients = state.store.targets(anyOf: tags, platforms: service.platforms).map(\.id)
            } else {
                recipients = []
            }
            let push = state.recordPush { sequence in
                var text: String?
                if case .valid(let displayed) = verdict { text = displayed }
                return DevBackend.Push(
                    sequence: sequence, sender: user, toTag: toTag, pns: pns.lowercased(), payload: payload,
                    valid: text != nil, displayedText: text, recipients: recipients, accepted: text != nil
                )
            }
            if let key, push.accepted { state.rememberIdempotencyKey(key, user: user) }
            return push
        }
        guard let push = taken else {
            if !options.quiet { ConsoleOutput.line("already sent (Idempotency-Key \(key ?? "")): not pushed again") }
            return WebAPIResponses.ok
        }
        if !options.quiet {
            ConsoleOutput.line(PushDescription.line(for: push, verdict: verdict))
        }
        guard push.accepted else {
            // The hub answers 400; the SDK throws and ASP.NET turns that into 500.
            return WebAPIResponses.exception(
                "Microsoft.Azure.NotificationHubs.Messaging.BadRequestException",
                "The remote server returned an error: (400) Bad Request. The notification payload is invalid."
            )
        }
        return WebAPIResponses.ok
    }

    /// Web API has no formatter for other media types and answers 415. A missing
    /// Content-Type is let through so hand-written curl calls still work.
    private func refuseNonJSON(_ request: HTTPRequest) -> HTTPResponse? {
        guard let contentType = request.header("Content-Type") else { return nil }
        let mediaType = contentType.split(separator: ";").first.map { $0.trimmingSpaces().lowercased() } ?? ""
        if mediaType == "application/json" || mediaType == "text/json" || mediaType.hasSuffix("+json") {
            return nil
        }
        return WebAPIResponses.empty(415)
    }
}

/// The console line for a push, e.g.
/// `push #3 apns from alice to bob (1 device): {"aps":{"alert":"From alice: hi"}}`.
enum PushDescription {
    static func line(for push: DevBackend.Push, verdict: PayloadValidator.Verdict) -> String {
        let outcome: String
        switch verdict {
        case .valid:
            let count = push.recipients.count
            outcome = "\(count) device\(count == 1 ? "" : "s")"
        case .invalid(let reason):
            outcome = "REJECTED: \(reason)"
        }
        return "push #\(push.sequence) \(push.pns) from \(push.sender) to \(push.toTag) (\(outcome)): \(push.payload)"
    }
}
