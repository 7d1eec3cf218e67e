#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol

/// `state.json` as written on disk: its own types, apart from `DeviceState` and the wire's
/// `RegisteredTarget` and `Platform`, so that a protocol change cannot change the file by
/// accident. The keys are those of format 1.
struct StateRecord: Codable {
    struct Target: Codable {
        var handle: String
        var platform: String
        var tags: [String]
        var user: String
        var backend: String
        /// Absent for `registrations`.
        var api: BackendDialect?

        init(_ target: RegisteredTarget) {
            handle = target.handle
            platform = target.platform.rawValue
            tags = target.tags
            user = target.user
            backend = target.backend
            api = target.api == .registrations ? nil : target.api
        }

        func target() throws -> RegisteredTarget {
            RegisteredTarget(handle: handle, platform: try StateRecord.platform(platform), tags: tags, user: user, backend: backend, api: api ?? .registrations)
        }
    }

    /// A `RefusedPlatform`.
    struct Refusal: Codable {
        var backend: String
        var platform: String
        var detail: String

        init(_ refusal: RefusedPlatform) {
            backend = refusal.backend
            platform = refusal.platform.rawValue
            detail = refusal.detail
        }

        func refusal() throws -> RefusedPlatform {
            RefusedPlatform(backend: backend, platform: try StateRecord.platform(platform), detail: detail)
        }
    }

    struct Registration: Codable {
        var id: String?
        var idBackend: String?
        /// Absent for `registrations`, and from files written before there were two APIs.
        var idAPI: BackendDialect?
        var installationId: String?
        var installationBackend: String?
        var registered: Target?
        var registeredAt: Date?
        var refusedRevision: String?
        var rejected: Target?
        var rejectedReason: String?
        /// Absent from files written before it was kept.
        var refusedPlatforms: [Refusal]?
        /// Absent unless an `unregister` waits for its deletion.
        var deletionWanted: Date?

        enum CodingKeys: String, CodingKey {
            case id, registered, rejected
            case idBackend = "id_backend"
            case idAPI = "id_api"
            case installationId = "installation_id"
            case installationBackend = "installation_backend"
            case registeredAt = "registered_at"
            case refusedRevision = "refused_revision"
            case rejectedReason = "rejected_reason"
            case refusedPlatforms = "refused_platforms"
            case deletionWanted = "deletion_wanted"
        }
    }

    struct UnknownPlatform: Error, CustomStringConvertible {
        var name: String
        var description: String { "unknown platform '\(name)'" }
    }

    var version: Int
    var token: String?
    var platform: String
    var tags: [String]
    var enabled: Bool
    var registration: Registration

    init(_ state: DeviceState) {
        version = DeviceState.currentVersion
        token = state.token
        platform = state.platform.rawValue
        tags = state.tags
        enabled = state.enabled
        let record = state.registration
        registration = Registration(
            id: record.id, idBackend: record.idBackend, idAPI: record.idAPI == .registrations ? nil : record.idAPI,
            installationId: record.installation?.id, installationBackend: record.installation?.backend, registered: record.registered.map(Target.init), registeredAt: record.registeredAt,
            refusedRevision: record.refusedRevision, rejected: record.rejected.map(Target.init), rejectedReason: record.rejectedReason,
            refusedPlatforms: record.refusedPlatforms.isEmpty ? nil : record.refusedPlatforms.map(Refusal.init),
            deletionWanted: record.deletionWanted)
    }

    func state() throws -> DeviceState {
        var state = DeviceState()
        state.token = token
        state.platform = try Self.platform(platform)
        state.tags = tags
        state.enabled = enabled
        state.registration.id = registration.id
        state.registration.idBackend = registration.idBackend
        state.registration.idAPI = registration.idAPI ?? .registrations
        state.registration.installation = registration.installationId.flatMap { id in registration.installationBackend.map { (id, $0) } }
        state.registration.registered = try registration.registered?.target()
        state.registration.registeredAt = registration.registeredAt
        state.registration.refusedRevision = registration.refusedRevision
        state.registration.rejected = try registration.rejected?.target()
        state.registration.rejectedReason = registration.rejectedReason
        state.registration.refusedPlatforms = try (registration.refusedPlatforms ?? []).map { try $0.refusal() }
        state.registration.deletionWanted = registration.deletionWanted
        return state
    }

    fileprivate static func platform(_ name: String) throws -> Platform {
        guard let platform = Platform(rawValue: name) else { throw UnknownPlatform(name: name) }
        return platform
    }
}
