#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol

/// Who the daemon acts as, without the password: enough for the state machine to tell
/// when credentials changed (`revision` is new at every login).
public struct AccountReference: Codable, Equatable, Sendable {
    public var user: String
    public var revision: String

    public init(user: String, revision: String) {
        self.user = user
        self.revision = revision
    }
}

/// What should be registered right now.
public struct RegistrationInputs: Equatable, Sendable {
    public var token: String?
    public var platform: Platform
    public var tags: [String]
    public var account: AccountReference?
    public var backend: String?
    /// The API of `backend` (`backend_api`).
    public var api: BackendDialect
    /// False after `unregister` until `register` or a change asks for a registration again.
    public var enabled: Bool

    public init(token: String? = nil, platform: Platform = .apns, tags: [String] = [], account: AccountReference? = nil, backend: String? = nil,
                api: BackendDialect = .registrations, enabled: Bool = true) {
        self.token = token
        self.platform = platform
        self.tags = tags
        self.account = account
        self.backend = backend
        self.api = api
        self.enabled = enabled
    }

    /// The registration these inputs call for, when they are complete.
    var target: RegisteredTarget? {
        guard enabled, let token, let account, let backend else { return nil }
        return RegisteredTarget(handle: token, platform: platform, tags: tags, user: account.user, backend: backend, api: api)
    }
}

/// What is known about the backend's side, kept across restarts.
public struct RegistrationRecord: Codable, Equatable, Sendable {
    /// The cached registration id, and the backend it belongs to.
    public var id: String?
    public var idBackend: String?
    /// The API of `idBackend`: a registration id, or an installation id this device chose.
    public var idAPI: BackendDialect = .registrations
    /// What the backend last accepted, and when.
    public var registered: RegisteredTarget?
    public var registeredAt: Date?
    /// The installation id chosen for an installations backend, kept when the installation
    /// is deleted (`unregister`): the device has one id per backend, not one per registration.
    public var installation: (id: String, backend: String)? {
        get { installationId.flatMap { id in installationBackend.map { (id, $0) } } }
        set { (installationId, installationBackend) = (newValue?.id, newValue?.backend) }
    }
    var installationId: String?
    var installationBackend: String?

    /// Whether the cached id is one made at `backend` through `api`.
    func idIsAt(_ backend: String, _ api: BackendDialect) -> Bool {
        id != nil && idBackend == backend && idAPI == api
    }

    /// The id was deleted, or handed over for deletion at its backend: nothing is cached of it.
    mutating func forgetId() {
        (id, idBackend, idAPI, registered, registeredAt) = (nil, nil, .registrations, nil, nil)
    }
    /// The login (revision) the backend refused; no request is made with it again.
    public var refusedRevision: String?
    /// A registration the backend refused with a 4xx, and why; not retried unchanged.
    public var rejected: RegisteredTarget?
    public var rejectedReason: String?
    /// Platform names backends refused registrations under (400): kept when the device
    /// moves on, for the sends still made under them (`UnknownPlatforms`).
    public var refusedPlatforms: [RefusedPlatform] = []

    public init() {}

    /// Since when an `unregister` has waited for its deletion to go through: one that
    /// failed for a reason that may pass is retried with the backoff, across restarts.
    public var deletionWanted: Date?

    /// The refusal of `platform` at `backend`, if that backend refused it.
    public func refusal(of platform: Platform, at backend: String) -> RefusedPlatform? {
        refusedPlatforms.last { $0.platform == platform && $0.backend == backend }
    }

    /// A registration under `platform` at `backend` was refused with 400 (`detail`), or,
    /// with nil, accepted.
    mutating func learn(_ platform: Platform, at backend: String, refused detail: String?) {
        refusedPlatforms.removeAll { $0.platform == platform && $0.backend == backend }
        guard let detail else { return }
        refusedPlatforms.append(RefusedPlatform(backend: backend, platform: platform, detail: detail))
        if refusedPlatforms.count > RefusedPlatform.mostKept { refusedPlatforms.removeFirst(refusedPlatforms.count - RefusedPlatform.mostKept) }
    }

    enum CodingKeys: String, CodingKey {
        case id
        case idBackend = "id_backend"
        case idAPI = "id_api"
        case installationId = "installation_id"
        case installationBackend = "installation_backend"
        case registered
        case registeredAt = "registered_at"
        case refusedRevision = "refused_revision"
        case rejected
        case rejectedReason = "rejected_reason"
        case refusedPlatforms = "refused_platforms"
        case deletionWanted = "deletion_wanted"
    }
}

/// How often and how patiently to register.
public struct RegistrationPolicy: Sendable, Equatable {
    /// A registration older than this is sent again: a 200 from the tutorial backend does
    /// not prove much, and the Azure SDKs re-register at least daily.
    public var refreshInterval: Double
    public var backoff: Backoff
    /// A change waits this long for more changes before it is sent, so a burst (a script
    /// setting tokens in a loop) costs one registration, not one per change...
    public var debounce: Double
    /// ...but a steady stream of changes is still sent at least this often.
    public var maximumDebounce: Double

    public init(refreshInterval: Double = 24 * 3600, backoff: Backoff = Backoff(), debounce: Double = 0.05, maximumDebounce: Double = 1) {
        self.refreshInterval = refreshInterval
        self.backoff = backoff
        self.debounce = debounce
        self.maximumDebounce = maximumDebounce
    }
}

/// One backend call the machine asks its driver to make.
public enum RegistrationStep: Equatable, Sendable {
    /// At an installations backend, no request: the device chooses the id.
    case createId(handle: String, backend: String, api: BackendDialect = .registrations)
    case upsert(id: String, target: RegisteredTarget)
    case delete(id: String, backend: String, api: BackendDialect = .registrations)

    /// The backend the step goes to: a registration is deleted where it was made.
    public var backend: String {
        switch self {
        case .createId(_, let backend, _), .delete(_, let backend, _): backend
        case .upsert(_, let target): target.backend
        }
    }

    /// The API of that backend.
    public var api: BackendDialect {
        switch self {
        case .createId(_, _, let api), .delete(_, _, let api): api
        case .upsert(_, let target): target.api
        }
    }
}

/// How a step ended.
public enum StepResult: Equatable, Sendable {
    case created(id: String)
    case done
    case failed(BackendFailure)
}

/// What the machine asks its driver to do, in order.
public enum RegistrationAction: Equatable, Sendable {
    case perform(RegistrationStep)
    /// Call `wake(now:)` at this time; replaces any earlier wake-up.
    case wake(at: Date)
    case cancelWake
    /// Write `record` to disk.
    case persist
    /// The registration `id` at `backend`, made as `user`, is no longer this device's
    /// (the backend changed): have it deleted there. Comes before the `persist` that
    /// forgets it, so that a crash between the two loses neither.
    case retire(id: String, backend: String, user: String?, api: BackendDialect = .registrations)
}

/// The end of an `unregister`.
public enum DeletionOutcome: Equatable, Sendable {
    case deleted(id: String?)
    /// Not deleted yet, for a reason that may pass: tried again with the backoff.
    case retrying(id: String, BackendFailure)
    case failed(BackendFailure)
}
