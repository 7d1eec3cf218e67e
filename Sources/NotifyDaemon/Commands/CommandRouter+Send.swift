#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyCore
import NotifyProtocol

extension CommandRouter {
    /// Checks the request, then either queues the message (persisted before the reply) and
    /// waits for its first attempt (or, with `wait`, its delivery), or with `queue: false`
    /// makes one attempt and keeps nothing.
    func send(_ id: RequestID?, _ command: SendCommand) async throws(CoreError) -> Reply {
        if let to = command.to { try Credentials.validateUser(to, role: "recipient") }
        let platforms = try command.pns.map { (names: [String]) throws(CoreError) in try Platform.list(names) } ?? sendPlatforms
        let options = Outbox.SendOptions(tags: command.tags ?? [], action: command.action, silent: command.silent ?? false, platformsNamed: command.pns != nil)
        let outbox = self.outbox
        let to = command.to ?? ""
        if command.queue == false {
            let checked = try await outbox.sendOnce(to: to, message: command.message, platforms: platforms, options: options)
            return .now(Reply.success(id, SendResult(deliveries: checked)))
        }
        let ids = try await outbox.enqueue(to: to, message: command.message, platforms: platforms, options: options)
        let untilFinal = command.wait == true
        let timeout = max(0, min(command.timeout ?? SendCommand.defaultTimeout, 3600))
        // The reply waits for the group commit, so pipelined sends share one write
        // while none of them is acknowledged before it is on disk.
        return .later {
            do throws(CoreError) {
                try await outbox.committed(ids)
            } catch {
                return Reply.failure(id, error)
            }
            return Reply.success(id, SendResult(deliveries: await outbox.wait(for: ids, untilFinal: untilFinal, timeout: timeout)))
        }
    }
}
