#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol

extension RegistrationMachine {
    /// At an installations backend, the id this device has there: registered under, or kept
    /// for it since `unregister` (never one kept for another backend).
    private var installationIdShown: String? {
        guard inputs.api == .installations, let backend = inputs.backend else { return nil }
        if record.idIsAt(backend, .installations) { return record.id }
        return record.installation.flatMap { $0.backend == backend ? $0.id : nil }
    }

    /// Where things stand, with a message that says what to do when something is wrong.
    public var status: RegistrationStatus {
        var status = RegistrationStatus(
            state: .registering, id: record.id, registeredAt: record.registeredAt,
            lastAttemptAt: lastAttemptAt, failures: failures, registered: record.registered,
            installationId: installationIdShown)
        let target = inputs.target
        if isBusy {
            status.state = .registering
            status.message = inputs.enabled ? "talking to the backend" : "deleting the registration"
            return status
        }
        guard inputs.enabled else {
            if record.deletionWanted != nil, let id = record.id, let account = inputs.account, record.refusedRevision == account.revision {
                status.state = .unauthorized
                status.message = "the backend refused the credentials of '\(account.user)' when notifyd went to delete registration \(id): "
                    + "run `notifyctl login \(account.user)` again, and the deletion goes on"
                return status
            }
            if record.deletionWanted != nil, record.id != nil {
                status.state = .unregistering
                status.nextAttemptAt = retryAt
                status.message = "\(lastReason ?? "the backend is unavailable"); "
                    + (offlineWait ? "offline: retrying when the network comes back" : "retrying automatically")
                return status
            }
            status.state = .unregistered
            if let id = record.id {
                status.message = "not registered on request, but registration \(id) is still at the backend: its deletion failed; "
                    + "run `notifyctl unregister` to try again"
            } else {
                status.message = "not registered on request: run `notifyctl register` to register again"
            }
            return status
        }
        // No backend first: a login needs one, and its message says how to give both.
        guard inputs.backend != nil else {
            status.state = .noBackend
            status.message = CoreError.noBackend.description
            return status
        }
        guard let account = inputs.account else {
            status.state = .notLoggedIn
            status.message = CoreError.notLoggedIn.description
            return status
        }
        guard let target else {
            status.state = .noToken
            status.message = "no device token: run `notifyctl set-token TOKEN`"
            return status
        }
        if record.refusedRevision == account.revision {
            status.state = .unauthorized
            status.message = "the backend refused the credentials of '\(account.user)': run `notifyctl login \(account.user)` again"
            return status
        }
        if record.rejected == target {
            status.state = .rejected
            if let refusal = record.refusal(of: target.platform, at: target.backend) {
                status.message = refusal.advice
            } else {
                status.message = "the backend refused this registration (\(record.rejectedReason ?? "no reason given")): check the token, platform and tags, then run `notifyctl register`"
            }
            return status
        }
        if let retryAt {
            status.state = .retrying
            status.nextAttemptAt = retryAt
            status.message = "\(lastReason ?? "the backend is unavailable"); "
                + (offlineWait ? "offline: retrying when the network comes back" : "retrying automatically")
            return status
        }
        if record.registered == target, let registeredAt = record.registeredAt {
            status.state = .registered
            status.nextAttemptAt = registeredAt.addingTimeInterval(policy.refreshInterval)
            if target.platform.isLegacyAndroid { status.message = AndroidNameAdvice.legacy(target.platform) }
            return status
        }
        status.state = .registering
        status.message = "waiting to register"
        return status
    }
}
