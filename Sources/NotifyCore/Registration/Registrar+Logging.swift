#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Registrar {
    static func describe(_ step: RegistrationStep, user: String) -> String {
        switch step {
        case .createId(_, let backend, .registrations): "asking \(backend) for a registration id (user \(user))"
        case .createId(_, let backend, .installations): "choosing an installation id for \(backend) (user \(user))"
        case .upsert(let id, let target): "registering \(target.platform) device as \(user) at \(target.backend) (id \(id), tags \(target.tags))"
        case .delete(let id, let backend, .registrations): "deleting registration \(id) at \(backend)"
        case .delete(let id, let backend, .installations): "deleting installation \(id) at \(backend)"
        }
    }

    func log(_ step: RegistrationStep, _ result: StepResult) {
        switch result {
        case .created(let id): logger.info(step.api == .installations ? "chose installation id \(id)" : "got registration id \(id)")
        case .done:
            guard case .upsert(let id, let target) = step else { break }
            logger.notice("registered (id \(id))")
            if target.platform.isLegacyAndroid { logger.warning(AndroidNameAdvice.legacy(target.platform)) }
        case .failed(.gone(let status)):
            logger.warning("registration id is gone at the backend (HTTP \(status)); it will not be used again")
        case .failed(.unauthorized(let status)):
            logger.warning("the backend refused the credentials (HTTP \(status)); waiting for `notifyctl login`")
        case .failed(.transient(_, let reason)):
            logger.warning("backend call failed: \(reason); will retry")
        case .failed(.unreachable(let reason, _)):
            logger.warning("backend call failed: \(reason); will retry when the backend is back")
        case .failed(.offline(let reason)):
            logger.notice("offline: \(reason); will retry when the network comes back")
        case .failed(.rejected(let status, let detail)):
            if case .upsert(_, let target) = step, RefusedPlatform.proves(status: status, platform: target.platform) {
                logger.warning(RefusedPlatform(backend: target.backend, platform: target.platform, detail: detail).advice)
            } else {
                logger.warning("the backend refused the request (HTTP \(status)\(detail.isEmpty ? "" : ": \(detail)"))")
            }
        }
    }
}
