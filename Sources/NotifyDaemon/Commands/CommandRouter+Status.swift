#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyCore
import NotifyProtocol
import Synchronization

extension CommandRouter {
    /// `status` encoded: made afresh, and encoded only when it differs from the last one
    /// encoded (what the encoding costs is most of an answer's time on the loop).
    var encodedStatus: [UInt8]? {
        lastStatusEncoded.encoded(status())
    }

    /// `status`, made afresh at each ask from what its owners publish (`StatusPart`) and
    /// what lives under their locks: no hop onto an actor, no copy that could be stale.
    func status() -> StatusResult {
        let snapshot = registrar.snapshot()
        let retired = retiredRegistrations.summary.map { old in
            var old = old
            old.unreachableSince = recovery.unreachableSince(old.backend)
            return old
        }
        let source = settings[\.passwordSource]
        let passwordSource = source.name
        let restartNeeded = control.restartNeeded
        return StatusResult(
            daemon: .init(version: NotifydVersion.current, protocol: ProtocolVersion.current, pid: info.pid, socket: info.socketPath,
                          stateDirectory: info.stateDirectory, startedAt: info.startedAt, passwordSource: passwordSource,
                          restartNeeded: restartNeeded.isEmpty ? nil : restartNeeded),
            backend: snapshot.backend,
            account: snapshot.user.map {
                StatusResult.Account(user: $0, passwordSource: snapshot.passwordInKeyring && source == .stored ? "keyring" : passwordSource,
                                     passwordProblem: snapshot.passwordProblem)
            },
            device: .init(token: snapshot.device.token, platform: snapshot.device.platform, tags: snapshot.device.tags),
            registration: snapshot.registration, outbox: outbox.summary, network: recovery.networkStatus(of: snapshot.backend),
            retiredRegistrations: retired.isEmpty ? nil : retired,
            loginElsewhere: snapshot.strandedLogin.map { StatusResult.LoginElsewhere(user: $0.user, origin: $0.origin ?? "?") },
            backendAPI: settings[\.backendAPI])
    }
}

/// The last `status` result encoded, with its encoding. Not a copy that could go stale:
/// it is used only for a result equal to it, compared whole.
final class LastStatusEncoded: Sendable {
    private let last = Mutex<(result: StatusResult, encoded: [UInt8])?>(nil)

    init() {}

    func encoded(_ result: StatusResult) -> [UInt8]? {
        if let kept = last.withLock({ last in last.flatMap { $0.result == result ? $0.encoded : nil } }) { return kept }
        guard let encoded = Reply.encodedResult(result) else { return nil }
        last.withLock { $0 = (result, encoded) }
        return encoded
    }
}

/// The tests' daemons: after each `status`, each owner compares the part it published with
/// the one its state gives now, on its own actor, so that nothing changes in between. A
/// difference is a change that did not publish its part, and is logged as an error
/// (`staleMessage`), which the tests look for.
struct StatusCheck: Sendable {
    let logger: Logger

    static let staleMessage = "status: a part read for status differs from the state it is made from"

    func check(_ router: CommandRouter) async {
        var stale: [String] = []
        if await !router.registrar.statusShownIsCurrent() { stale.append("registration") }
        if await !router.outbox.countsShownAreCurrent() { stale.append("outbox") }
        if await !router.retiredRegistrations.summaryShownIsCurrent() { stale.append("retired registrations") }
        if !stale.isEmpty { logger.error("\(Self.staleMessage): \(stale.joined(separator: ", "))") }
    }
}
