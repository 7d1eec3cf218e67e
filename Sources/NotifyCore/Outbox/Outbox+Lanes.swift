#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol

/// Messages to one recipient and platform keep their order, so they go one request at a
/// time. Where the backend keeps lanes (libcurl's thread, `BackendAPI.lanes`), the
/// next ones are handed over before the one under way is answered, and the HTTP thread
/// starts each as soon as the one before it was accepted: no hop through the outbox
/// between two messages. A lane breaks at the first message not accepted, and what was
/// handed over after it comes back unsent, to go again in order.
extension Outbox {
    /// Deliveries in flight per key at most, when lanes are kept.
    static let laneDepth = 16

    /// Puts a delivery `takeReady` started into its key's lane, behind those before it.
    func handToLane(_ delivery: Delivery, _ backendLanes: any BackendLanes) {
        let key = delivery.orderKey
        let (lane, feeding) = lanes.enter(key)
        // No feeder is handing over the lane's earlier deliveries (or waiting for their
        // credentials), and this one's credentials are at hand: it goes to the backend in
        // this turn of the outbox, with no task and no hop on the way (a send's request
        // then leaves before its batch starts being written). Otherwise it goes behind them.
        if !feeding, let account = delivery.account.flatMap(accounts.readyAccount(for:)),
           case .success(let send) = prepared(delivery, as: account) {
            hand(delivery, send, key: key, lane: lane, to: backendLanes)
            return
        }
        let start = lanes.waitForFeeder(delivery)
        // After this turn: feeding awaits the password source, which must not hold up the
        // pass that is handing out deliveries to other lanes.
        if start { Task { await self.feed(key, to: backendLanes) } }
    }

    /// Hands the lane's deliveries to the backend in order. One feeder per lane at a time:
    /// the one await (for credentials) cannot let a later delivery overtake.
    private func feed(_ key: String, to backendLanes: any BackendLanes) async {
        // The credentials asked for last, and the login they came from.
        var known: (key: AccountKey, account: BackendAccount, login: String)?
        while let (lane, deliveries) = lanes.takeToHand(key) {
            for delivery in deliveries {
                if lanes.isBroken(key) || stopped || outcomes.isWithdrawn(delivery.id) {
                    await finished(delivery.id, .notAttempted, lane: key)
                    continue
                }
                // Asked again after any login since (a new password, another account).
                let login = accounts.loggedIn?.revision
                let cached = known.flatMap { $0.key == delivery.account && $0.login == login ? $0.account : nil }
                switch await prepare(delivery, known: cached) {
                case .failure(let notSent):
                    // What follows would overtake it, unless it failed for good.
                    if !notSent.result.isRefusal { lanes.markBroken(key) }
                    await finished(delivery.id, notSent.result, lane: key)
                case .success(let send):
                    if let account = delivery.account, let login { known = (account, send.account, login) }
                    hand(delivery, send, key: key, lane: lane, to: backendLanes)
                }
            }
        }
        if let ended = lanes.feederDone(key) { backendLanes.endLane(ended) }
    }

    /// Hands a prepared delivery of lane `lane` (key `key`) to the backend.
    private func hand(_ delivery: Delivery, _ send: PreparedSend, key: String, lane: UInt64, to backendLanes: any BackendLanes) {
        let id = delivery.id
        let answers = self.answers
        backendLanes.sendNotification(pns: send.pns, toTag: delivery.to, body: send.body, account: send.account,
                                 idempotencyKey: delivery.sendKey, lane: lane) { result in
            // One task for the answers that come while the outbox is busy.
            if answers.post(.init(id: id, key: key, result: result, account: send.account)) {
                Task { await self.takeAnswers() }
            }
        }
    }

    private func takeAnswers() async {
        var results: [(id: String, result: DeliveryResult, lane: String?)] = []
        for answer in answers.take() {
            let result: DeliveryResult
            if let delivery = queue.delivery(answer.id) {
                result = await interpret(answer.result, of: delivery, as: answer.account)
            } else {
                result = .notAttempted
            }
            results.append((answer.id, result, answer.key))
        }
        await finished(results)
    }

    /// A delivery of the lane is back: anything but a delivery breaks it, and once none is
    /// in flight or waiting to be handed over it is gone.
    func laneReturned(_ key: String, _ result: DeliveryResult) {
        if let ended = lanes.returned(key, delivered: result == .delivered) { backendLanes?.endLane(ended) }
    }

    /// Returns once no lane has a delivery in flight, or `stopWaitingForLanes` was called.
    func waitForLanes() async {
        guard !lanes.isEmpty else { return }
        await withCheckedContinuation { lanes.waitUntilEmpty($0) }
    }

    func stopWaitingForLanes() {
        lanes.giveUpWaiting()
    }
}

private extension DeliveryResult {
    /// Refused for good: the next message to the recipient need not wait for it.
    var isRefusal: Bool {
        if case .failed = self { return true }
        return false
    }
}
