#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol

extension Outbox {
    /// One request to the backend, interpreted.
    func attempt(_ delivery: Delivery) async -> DeliveryResult {
        guard let key = delivery.account else { return .accountGone }
        let account: BackendAccount
        do {
            account = try await accounts.backendAccount(for: key)
        } catch {
            switch error {
            case .passwordUnavailable(let reason):
                // A password command that failed once is tried again later, like an outage.
                return .transient(retryAfter: nil, error: WireError(code: .internalError, message: reason))
            case .accountGone, .notLoggedIn, .noBackend:
                // Another login came first: hold this account's messages from now on.
                queue.setAccount(accounts.currentKey)
                return .accountGone
            default:
                return .failed(error.wireError)
            }
        }
        let body: String
        do {
            body = try NotificationText.body(delivery.message, for: delivery.platform, escaping: settings[\.escaping])
        } catch {
            return .failed(error.wireError)
        }
        let pns = delivery.platform.backendName(android: settings[\.androidName])
        switch await backend.sendNotification(pns: pns, toTag: delivery.to, body: body, account: account) {
        case .success:
            return .delivered
        case .failure(let error):
            switch recovery?.classify(error, route: .send, backend: key.backend) ?? BackendFailure.classify(error, route: .send) {
            case .unauthorized(let status):
                await accounts.passwordRefused()
                return .unauthorized(CoreError.unauthorized(user: account.user, status: status).wireError)
            case .transient(let retryAfter, let reason):
                return .transient(retryAfter: retryAfter, error: CoreError.backendUnavailable(reason).wireError)
            case .offline(let reason):
                return .offline(CoreError.backendUnavailable(reason + "; offline: sent when the network comes back").wireError)
            case .rejected(let status, let detail):
                return .failed(CoreError.backendRejected(status: status, detail: detail).wireError)
            case .gone(let status):
                // Not produced for the send route; a 404/410 there is a refusal like any other.
                return .failed(CoreError.backendRejected(status: status, detail: "").wireError)
            }
        }
    }
}
