#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol

extension Outbox {
    /// What one request to the backend needs, made ready before it is handed over.
    struct PreparedSend: Sendable {
        var account: BackendAccount
        var pns: String
        var body: String
    }

    /// One request to the backend, interpreted.
    func attempt(_ delivery: Delivery) async -> DeliveryResult {
        switch await prepare(delivery) {
        case .failure(let refusal):
            return refusal.result
        case .success(let send):
            let result = await backend.sendNotification(pns: send.pns, toTag: delivery.to, body: send.body, account: send.account,
                                                        idempotencyKey: delivery.sendKey)
            return await interpret(result, of: delivery, as: send.account)
        }
    }

    /// Why a delivery was not handed over: the result it gets instead.
    struct NotSent: Error {
        var result: DeliveryResult
    }

    /// The credentials of the delivery's account (`known` when the caller has them for
    /// that account already), its body and its platform's name at the backend.
    func prepare(_ delivery: Delivery, known: BackendAccount? = nil) async -> Result<PreparedSend, NotSent> {
        guard let key = delivery.account else { return .failure(NotSent(result: .accountGone)) }
        let account: BackendAccount
        if let ready = known ?? accounts.readyAccount(for: key) {
            account = ready
        } else {
            do {
                account = try await accounts.backendAccount(for: key)
            } catch {
                switch error {
                case .passwordUnavailable(let reason):
                    // A password command that failed once is tried again later, like an outage.
                    return .failure(NotSent(result: .transient(retryAfter: nil, error: WireError(code: .internalError, message: reason))))
                case .accountGone, .notLoggedIn, .noBackend:
                    // Another login came first: hold this account's messages from now on.
                    queue.setAccount(accounts.currentKey)
                    return .failure(NotSent(result: .accountGone))
                default:
                    return .failure(NotSent(result: .failed(error.wireError)))
                }
            }
        }
        return prepared(delivery, as: account)
    }

    /// What `account` sends for the delivery: its body and its platform's name at the backend.
    func prepared(_ delivery: Delivery, as account: BackendAccount) -> Result<PreparedSend, NotSent> {
        guard let platform = delivery.platform?.atBackend(android: settings[\.androidName]) else {
            guard let request = delivery.request else {
                return .failure(NotSent(result: .failed(CoreError.invalidArgument("a notification request without its tags").wireError)))
            }
            let body = NotificationRequestText.body(text: delivery.message, action: request.action, tags: request.tags, silent: request.silent,
                                                    escaping: settings[\.escaping])
            return .success(PreparedSend(account: account, pns: Delivery.everyPlatform, body: body))
        }
        let body: String
        do {
            body = try NotificationText.body(delivery.message, for: platform, escaping: settings[\.escaping])
        } catch {
            return .failure(NotSent(result: .failed(error.wireError)))
        }
        return .success(PreparedSend(account: account, pns: platform.rawValue, body: body))
    }

    /// What the backend's answer means for the delivery.
    func interpret(_ result: Result<Void, BackendCallError>, of delivery: Delivery, as account: BackendAccount) async -> DeliveryResult {
        switch result {
        case .success:
            return .delivered
        case .failure(.notAttempted):
            return .notAttempted
        case .failure(let error):
            let backendURL = delivery.account?.backend ?? account.baseURL.absoluteString
            if let refusal = unknownPlatform(error, of: delivery, at: backendURL) {
                return .failed(CoreError.unknownPlatform(refusal).wireError)
            }
            switch recovery?.classify(error, route: .send, backend: backendURL, api: account.api) ?? BackendFailure.classify(error, route: .send, api: account.api) {
            case .unauthorized(let status):
                await accounts.passwordRefused()
                return .unauthorized(CoreError.unauthorized(user: account.user, status: status).wireError)
            case .transient(let retryAfter, let reason):
                return .transient(retryAfter: retryAfter, error: CoreError.backendUnavailable(reason).wireError)
            case .unreachable(let reason, _):
                return .unreachable(CoreError.backendUnavailable(BackendFailure.unreachableText(reason)).wireError)
            case .offline(let reason):
                return .offline(CoreError.backendUnavailable(BackendFailure.unreachableText(reason) + "; offline: sent when the network comes back").wireError)
            case .rejected(let status, let detail):
                return .failed(CoreError.backendRejected(status: status, detail: detail).wireError)
            case .gone(let status):
                // Not produced for the send route; a 404/410 there is a refusal like any other.
                return .failed(CoreError.backendRejected(status: status, detail: "").wireError)
            }
        }
    }

    /// The refusal that makes a 500 to this send an unknown platform rather than an outage:
    /// the backend refused a registration under the very name the send went under.
    func unknownPlatform(_ error: BackendCallError, of delivery: Delivery, at backend: String) -> RefusedPlatform? {
        guard case .status(500, _, _) = error, let platform = delivery.platform else { return nil }
        return unknownPlatforms.refusal(of: platform.backendName(android: settings[\.androidName]), at: backend)
    }
}
