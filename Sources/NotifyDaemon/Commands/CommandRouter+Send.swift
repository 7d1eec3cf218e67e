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
        try Credentials.validateUser(command.to, role: "recipient")
        guard !command.message.isEmpty else { throw .invalidArgument("the message is empty") }
        let platforms = try command.pns.map { (names: [String]) throws(CoreError) in try Platform.list(names) } ?? sendPlatforms
        let outbox = self.outbox
        if command.queue == false {
            let checked = try await outbox.sendOnce(to: command.to, message: command.message, platforms: platforms)
            return .now(Reply.success(id, SendResult(deliveries: checked)))
        }
        let ids = try await outbox.enqueue(to: command.to, message: command.message, platforms: platforms)
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
