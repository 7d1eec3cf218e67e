import NotifyProtocol

/// Everything that can go wrong in notifyd's core, worded for the person who reads it.
/// Mapped to a wire error code in one place: `wireError`.
public indirect enum CoreError: Error, Equatable, Sendable, CustomStringConvertible {
    case invalidArgument(String)
    case notLoggedIn
    case noBackend
    case noToken
    case unauthorized(user: String, status: Int)
    case backendUnavailable(String)
    case backendRejected(status: Int, detail: String)
    case messageTooLarge(String)
    /// A send failed with 500 under an Android name its backend refused a registration under.
    case unknownPlatform(RefusedPlatform)
    /// `logout` kept the credentials because the registration could not be deleted.
    case stillLoggedIn(because: CoreError)
    case storage(String)
    case shuttingDown
    /// A queued message's account is no longer the one logged in: it is held, not re-attributed.
    case accountGone(user: String)
    /// A queued message's user is logged in, but at another backend than the one it was queued for.
    case heldForBackend(user: String, backend: String)
    /// The login saved was made at `origin`, and the backend in force is at another one: a
    /// password goes only to the backend it was given for.
    case loginForAnotherBackend(user: String, origin: String, backend: String)
    /// The saved login was made for the other API (`backend_api` changed since): its secret
    /// is a password where an API key is wanted, or the reverse.
    case loginForAnotherAPI(user: String, api: BackendDialect, inForce: BackendDialect)
    /// `outbox_max` messages wait already: this one is not accepted.
    case outboxFull(waiting: Int, limit: Int, recipients: [String])
    /// `outbox_max_bytes` of message text wait already: this one is not accepted.
    case outboxFullBytes(waiting: Int, bytes: Int, limit: Int, recipients: [String])
    /// The password command or systemd credential failed; tried again later.
    case passwordUnavailable(String)
    /// `login` was refused by the backend; the previous credentials stay in force.
    case loginRefused(user: String, status: Int, previous: String?, secret: String = "password")
    /// `login` could not be checked (the backend cannot be reached) while another login is
    /// in force: it is not saved, and the one in force stays.
    case loginUnchecked(user: String, reason: String, previous: String?, secret: String = "password")
    /// `login` was replaced by a later one before the backend answered.
    case loginSuperseded(user: String)
    /// `login` waited as long as it was told to, and the check (the backend, or the password
    /// command) has not finished: the login is not in force yet, and may still be.
    case loginPending(user: String, previous: String?)

    public var description: String {
        switch self {
        case .invalidArgument(let message):
            return message
        case .notLoggedIn:
            return "not logged in: run `notifyctl login USER` first"
        case .noBackend:
            return "no backend URL is configured: run `notifyctl login --backend URL USER`, or set `backend = URL` in notifyd's config file (`notifyd --check-config` names it) and run `notifyctl reload`"
        case .noToken:
            return "no device token is set: run `notifyctl set-token TOKEN` first"
        case .unauthorized(let user, let status):
            return "the backend refused the credentials of '\(user)' (HTTP \(status)): run `notifyctl login \(user)` again"
        case .backendUnavailable(let detail):
            // The detail says what happened: the backend answered (throttled, failed), or
            // could not be reached (`BackendFailure.unreachableText`).
            return detail
        case .backendRejected(let status, let detail):
            return "the backend refused the request (HTTP \(status))" + (detail.isEmpty ? "" : ": \(detail)")
        case .messageTooLarge(let message), .storage(let message):
            return message
        case .unknownPlatform(let refusal):
            return "the backend answered HTTP 500 and \(refusal.doesNotKnow), so the message is not retried: \(refusal.fix)"
        case .shuttingDown:
            return "notifyd is shutting down"
        case .accountGone(let user):
            return "queued by \(user), who is no longer logged in: sent once \(user) logs in again, or dropped with `notifyctl outbox --purge`"
        case .heldForBackend(let user, let backend):
            return "queued by \(user) for \(backend), which notifyd no longer uses: sent once \(user) uses that backend again (a login there, or the backend setting back), or dropped with `notifyctl outbox --purge`"
        case .passwordUnavailable(let message):
            return message
        case .outboxFull(let waiting, let limit, let recipients):
            let whom = recipients.isEmpty ? "" : " for " + recipients.joined(separator: ", ")
            return "the outbox is full: \(waiting) messages waiting\(whom) (outbox_max = \(limit)); this one was not queued, and none "
                + "of those was dropped: send it again once they have gone out (`notifyctl outbox` says why they wait), or raise outbox_max"
        case .outboxFullBytes(let waiting, let bytes, let limit, let recipients):
            let whom = recipients.isEmpty ? "" : " for " + recipients.joined(separator: ", ")
            return "the outbox is full: \(waiting) messages waiting\(whom), \(ByteText.describe(bytes)) of text (outbox_max_bytes = \(ByteText.describe(limit))); "
                + "this one was not queued, and none of those was dropped: send it again once they have gone out (`notifyctl outbox` says why they wait), or raise outbox_max_bytes"
        case .loginForAnotherBackend(let user, let origin, let backend):
            return "the login of \(user) is for \(origin), and notifyd now uses \(backend): its password goes only where it was given; "
                + "log in there with `notifyctl login \(user)`"
        case .loginForAnotherAPI(let user, let api, let inForce):
            return "the login of \(user) was made for a backend with backend_api = \(api), and notifyd now uses backend_api = \(inForce): "
                + "its \(api.secretName) is not a \(inForce.secretName); log in with `notifyctl login \(user)` and the backend's \(inForce.secretName)"
        case .loginRefused(let user, let status, let previous, let secret):
            let kept = previous.map { "the credentials of '\($0)' stay in force" } ?? "no one is logged in"
            return "the backend refused the \(secret) of '\(user)' (HTTP \(status)); the login was not saved and \(kept)"
        case .loginUnchecked(let user, let reason, let previous, let secret):
            let kept = previous.map { "'\($0)' stays logged in" } ?? "no one is logged in"
            return "the \(secret) of '\(user)' could not be checked (\(reason)); the login was not saved and \(kept): log in again once the backend can be reached"
        case .loginSuperseded(let user):
            return "the login of '\(user)' was replaced by a later login before the backend answered; the later one is checked and kept"
        case .loginPending(let user, let previous):
            let kept = previous.map { "'\($0)' stays logged in until then" } ?? "no one is logged in until then"
            return "the password of '\(user)' is still being checked (the backend, or the password command, has not answered yet); "
                + "the login takes effect only if it is accepted, and \(kept): `notifyctl status` tells"
        case .stillLoggedIn(let reason):
            return "the registration could not be deleted (\(reason)), so you are still logged in; try again later, or run `notifyctl logout --force` to forget the credentials anyway"
        }
    }

    public var wireError: WireError {
        let code: ErrorCode
        switch self {
        case .stillLoggedIn(let reason): code = reason.wireError.code
        case .invalidArgument: code = .invalidArgument
        case .notLoggedIn: code = .notLoggedIn
        case .noBackend: code = .noBackend
        case .noToken: code = .noToken
        case .unauthorized: code = .unauthorized
        case .backendUnavailable: code = .backendUnavailable
        case .backendRejected: code = .backendRejected
        case .messageTooLarge: code = .messageTooLarge
        case .unknownPlatform: code = .unsupportedPlatform
        case .storage: code = .internalError
        case .shuttingDown: code = .shuttingDown
        case .accountGone, .heldForBackend, .loginForAnotherBackend, .loginForAnotherAPI: code = .notLoggedIn
        case .passwordUnavailable: code = .internalError
        case .outboxFull, .outboxFullBytes: code = .outboxFull
        case .loginRefused: code = .unauthorized
        case .loginUnchecked: code = .backendUnavailable
        case .loginSuperseded: code = .loginSuperseded
        case .loginPending: code = .loginPending
        }
        return WireError(code: code, message: description)
    }
}
