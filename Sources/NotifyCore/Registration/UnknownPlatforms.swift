import NotifyProtocol
import Synchronization

/// The platform names backends are known not to know, as the registrar learned them
/// (`RefusedPlatform`), for the outbox to read when a send under one of them fails.
///
/// The tutorial's send route answers a `pns` it does not know with 500, as it answers a
/// hub that abandoned the send: one 500 alone cannot tell the two apart, and is retried as
/// an outage. The registration route does tell: 400 only for a platform it does not know.
/// So a 500 to a send under a name its backend refused a registration under is that name,
/// and retrying cannot help until the setting changes; one under any other name is an outage.
public final class UnknownPlatforms: Sendable {
    private let refused = Mutex<[RefusedPlatform]>([])

    public init() {}

    /// Replaces what is known with what the registration record holds now.
    func update(_ refusals: [RefusedPlatform]) {
        refused.withLock { known in
            if known != refusals { known = refusals }
        }
    }

    /// The refusal of `name`, as sent in `pns=`, at `backend`; nil when none is known.
    func refusal(of name: String, at backend: String) -> RefusedPlatform? {
        refused.withLock { known in known.last { $0.platform.rawValue == name && $0.backend == backend } }
    }
}
