import NotifyProtocol

/// The backend service's NotificationsController and its NotificationHubsService, answering
/// as the ASP.NET Core sample does, quirks included. Runs after the API key was accepted.
struct InstallationRoutes: Sendable {
    let options: DevBackend.Options
    let state: SharedState

    /// The hub refuses a tag expression with more tags than this, so the service sends to
    /// longer lists in batches of this many.
    static let tagBatchSize = 20

    private var android: String { options.installationsAndroidName.rawValue }

    func handle(_ match: RouteMatch, _ request: HTTPRequest) -> HTTPResponse {
        switch match.route {
        case .installationUpsert: upsert(request)
        case .installationDelete: delete(id: match.id ?? "")
        case .notificationRequest: send(request)
        case .create, .upsert, .delete, .send: AspNetCoreResponses.empty(404)
        }
    }

    // MARK: PUT /api/notifications/installations

    private func upsert(_ request: HTTPRequest) -> HTTPResponse {
        if let refusal = refuseNonJSON(request) { return refusal }
        let parameter = "deviceInstallation"
        let id: String?, platform: String?, pushChannel: String?, tags: [String]?
        do {
            let model = try ModelBinding(request.body, parameter: parameter)
            id = try model.string("installationId")
            platform = try model.string("platform")
            pushChannel = try model.string("pushChannel")
            tags = try model.strings("tags")
        } catch {
            return AspNetCoreResponses.bindingProblem(error, parameter: parameter)
        }
        // The model's [Required] strings, checked before the action runs.
        let required = [("InstallationId", id), ("Platform", platform), ("PushChannel", pushChannel)]
        let errors = required.filter { AspNetCoreResponses.isMissing($0.1) }.map { name, _ in
            (key: name, message: "The \(name) field is required.")
        }
        guard errors.isEmpty, let id, let platform, let pushChannel else {
            return AspNetCoreResponses.validationProblem(errors)
        }
        // The service answers false, and the controller 422, for a platform it has no
        // name for and for whatever the hub refuses (the exception is swallowed).
        guard platform == "apns" || platform == android else { return AspNetCoreResponses.empty(422) }
        var unique: [String] = []
        for tag in tags ?? [] where !unique.contains(tag) { unique.append(tag) }
        guard unique.count <= InstallationStore.tagLimit, unique.allSatisfy(TagRule.isValid) else {
            return AspNetCoreResponses.empty(422)
        }
        let installation = DevBackend.Installation(id: id, platform: platform, pushChannel: pushChannel, tags: unique)
        state.withLock { $0.installations.upsert(installation) }
        return AspNetCoreResponses.empty(200)
    }

    // MARK: DELETE /api/notifications/installations/{installationId}

    private func delete(id: String) -> HTTPResponse {
        // The service refuses a blank id before it calls the hub.
        if id.allSatisfy(\.isWhitespace) { return AspNetCoreResponses.empty(422) }
        state.withLock { $0.installations.delete(id: id) }
        return AspNetCoreResponses.empty(200)
    }

    // MARK: POST /api/notifications/requests

    private func send(_ request: HTTPRequest) -> HTTPResponse {
        if let refusal = refuseNonJSON(request) { return refusal }
        let parameter = "notificationRequest"
        let text: String?, action: String?, givenTags: [String]?, silent: Bool
        do {
            let model = try ModelBinding(request.body, parameter: parameter)
            text = try model.string("text")
            action = try model.string("action")
            givenTags = try model.strings("tags")
            silent = try model.bool("silent")
        } catch {
            return AspNetCoreResponses.bindingProblem(error, parameter: parameter)
        }
        let tags = givenTags ?? []
        let noText = AspNetCoreResponses.isMissing(text)
        let noAction = AspNetCoreResponses.isMissing(action)

        func refused(_ status: Int, _ reason: String, payloads: [String: String] = [:]) -> HTTPResponse {
            let recorded = state.withLock { state in
                state.recordNotificationRequest { sequence in
                    DevBackend.NotificationRequest(
                        sequence: sequence, text: text, action: action, tags: tags, silent: silent,
                        payloads: payloads, displayedText: nil, displayedAction: nil, recipients: [],
                        accepted: false, status: status, refusal: reason
                    )
                }
            }
            describe(recorded)
            return AspNetCoreResponses.empty(status)
        }

        // The controller: silent needs an action, anything else a text.
        if silent && noAction { return refused(400, "silent without an action") }
        if !silent && noText { return refused(400, "no text") }
        // The service repeats the check with `a && b || c && d || e` where the sample meant
        // `… && (d || e)`: any request without an action is refused.
        if noAction { return refused(422, "no action (every request needs one, silent or not)") }
        // A null list makes the service throw, which it reports as a failure.
        if givenTags == nil { return refused(422, "tags is null") }

        let platforms = [android, "apns"]
        // Both built before the hub sees either, so both are on record when one is refused.
        var payloads: [String: String] = [:]
        for platform in platforms {
            payloads[platform] = PushTemplates.payload(
                platform: platform, silent: silent, text: text, action: action, escaping: options.escapesText
            )
        }
        var parsed: [String: JSONValue] = [:]
        for platform in platforms {
            switch PushTemplates.parse(payloads[platform]!) {
            case .success(let value): parsed[platform] = value
            case .failure(let refusal): return refused(422, "\(platform) payload \(refusal.reason)", payloads: payloads)
            }
        }
        // The hub refuses a tag expression naming a tag it could never hold.
        guard tags.allSatisfy(TagRule.isValid) else { return refused(422, "invalid tag", payloads: payloads) }

        let paths = PushTemplates.paths(android: android, silent: silent)
        let androidPayload = parsed[android]!
        let displayedText = PushTemplates.string(in: androidPayload, at: paths.text)
        let displayedAction = PushTemplates.string(in: androidPayload, at: paths.action)

        // A second copy of a request the backend already took (its reply was lost) is
        // answered as the first was, and not pushed again; checked and remembered under
        // one lock. Beyond the sample, as on the registrations dialect's send route.
        let key = request.header("Idempotency-Key").flatMap { $0.isEmpty ? nil : $0 }
        let taken: DevBackend.NotificationRequest? = state.withLock { state in
            if let key, state.tookIdempotencyKey(key, user: Self.idempotencyOwner) { return nil }
            let recipients = Self.recipients(of: tags, in: state.installations, platforms: Set(platforms))
            let recorded = state.recordNotificationRequest { sequence in
                DevBackend.NotificationRequest(
                    sequence: sequence, text: text, action: action, tags: tags, silent: silent,
                    payloads: payloads, displayedText: displayedText, displayedAction: displayedAction,
                    recipients: recipients, accepted: true, status: 200, refusal: nil
                )
            }
            if let key { state.rememberIdempotencyKey(key, user: Self.idempotencyOwner) }
            return recorded
        }
        guard let taken else {
            if !options.quiet { ConsoleOutput.line("already sent (Idempotency-Key \(key ?? "")): not pushed again") }
            return AspNetCoreResponses.empty(200)
        }
        describe(taken)
        return AspNetCoreResponses.empty(200)
    }

    /// Whose `Idempotency-Key`s these are: no Basic user name holds a colon, so the keys of
    /// this dialect can never be taken for a user's.
    private static let idempotencyOwner = ":installations"

    /// No tags: every installation. Otherwise the service sends to the tags OR-ed, in
    /// batches of `tagBatchSize`; an installation holding tags of two batches is counted once.
    static func recipients(of tags: [String], in store: InstallationStore, platforms: Set<String>) -> [String] {
        if tags.isEmpty { return store.targets(anyOf: nil, platforms: platforms).map(\.id) }
        var reached: Set<String> = []
        for start in stride(from: 0, to: tags.count, by: tagBatchSize) {
            let batch = Set(tags[start..<min(start + tagBatchSize, tags.count)])
            reached.formUnion(store.targets(anyOf: batch, platforms: platforms).map(\.id))
        }
        return store.installations.map(\.id).filter(reached.contains)
    }

    private func describe(_ request: DevBackend.NotificationRequest) {
        guard !options.quiet else { return }
        ConsoleOutput.line(NotificationRequestDescription.line(for: request))
    }

    /// ASP.NET Core has no input formatter for other media types: 415. A missing
    /// Content-Type is let through so hand-written curl calls still work.
    private func refuseNonJSON(_ request: HTTPRequest) -> HTTPResponse? {
        guard let contentType = request.header("Content-Type") else { return nil }
        let mediaType = contentType.split(separator: ";").first.map { $0.trimmingSpaces().lowercased() } ?? ""
        if mediaType == "application/json" || mediaType == "text/json" || mediaType.hasSuffix("+json") {
            return nil
        }
        return AspNetCoreResponses.empty(415)
    }
}

/// The console line for a notification request, e.g.
/// `request #2 to username:bob (1 device): fcmv1 {…} apns {…}`.
enum NotificationRequestDescription {
    static func line(for request: DevBackend.NotificationRequest) -> String {
        let target = request.tags.isEmpty ? "every device" : request.tags.joined(separator: " || ")
        let outcome: String
        if let refusal = request.refusal {
            outcome = "REJECTED \(request.status): \(refusal)"
        } else {
            let count = request.recipients.count
            outcome = "\(count) device\(count == 1 ? "" : "s")"
        }
        var line = "request #\(request.sequence)\(request.silent ? " silent" : "") to \(target) (\(outcome))"
        let payloads = request.payloads.sorted { $0.key > $1.key }.map { "\($0.key) \($0.value)" }
        if !payloads.isEmpty { line += ": " + payloads.joined(separator: " ") }
        return line
    }
}
