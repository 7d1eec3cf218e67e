#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol

/// A send's way onto the disk: its copies gathered with the sends around it and written in
/// one batch (the group commit). The batch is queued, and so sent, as its write starts: the
/// promise is that a send is on disk before its sender hears anything, which the request
/// need not wait for (one fsync or two of a round trip). What changes on disk for a
/// delivery afterwards (its removal once delivered) waits for its batch (`afterCommit`).
/// Until a write has worked, and again after one failed, a batch is queued only once it is
/// written: a disk that refuses the outbox sends nothing its senders are told failed.
extension Outbox {
    /// Validates, persists and queues a message for each platform, as the account logged in
    /// now; returns the delivery ids. When one copy cannot be saved, none is kept or sent
    /// from then on, and the sender hears why, and whether it had gone out (`withdraw`).
    public func submit(to: String, message: String, platforms: [Platform]) async throws(CoreError) -> [String] {
        let ids = try await enqueue(to: to, message: message, platforms: platforms)
        try await committed(ids)
        return ids
    }

    /// `submit` in two steps, for a caller that reads the next request meanwhile: hands a
    /// delivery for each platform to the next group commit and returns the ids at once.
    /// Not accepted yet: `committed(_:)` says when they are on disk and queued, and only
    /// then may the sender hear so. All copies of one message go in the same batch.
    public func enqueue(to: String, message: String, platforms: [Platform], options: SendOptions = SendOptions()) async throws(CoreError) -> [String] {
        guard let account = accounts.currentKey else { throw accounts.noAccountReason }
        guard !stopped else { throw .shuttingDown }
        let plan = try plan(to: to, message: message, platforms: platforms, options: options, account: account)
        try checkRoom(for: plan.copies.count, bytes: message.utf8.count)
        let now = clock.now()
        // `outbox_expiry` as it is now: a reload changes it for the messages accepted after it.
        let expiry = settings[\.outboxExpiry]
        var copies: [Delivery] = []
        for (platform, request) in plan.copies {
            var delivery = Delivery(sequence: commits.takeSequence(), to: plan.to, platform: platform, message: message,
                                    createdAt: now, expiresAt: Delivery.expiry(acceptedAt: now, after: expiry), account: account, request: request)
            delivery.senderWaiting = true
            delivery.idempotencyKey = Delivery.newIdempotencyKey()
            copies.append(delivery)
        }
        commits.collect(copies)
        let ids = copies.map(\.id)
        // The account that just sent is the one logged in, whether or not its login was announced yet.
        if queue.account != account {
            queue.setAccount(account)
            // What is held changed: the waiters of the other account's messages have their answer.
            pump()
        }
        logger.info("outbox: queued a message to \(plan.to) for \(copies.map(\.pns).joined(separator: ","))")
        return ids
    }

    /// Refuses a message whose copies would take the outbox past `outbox_max`, naming whom
    /// the messages already there wait for; nothing accepted is dropped for it.
    private func checkRoom(for copies: Int, bytes: Int) throws(CoreError) {
        let limit = settings[\.outboxMax]
        let byteLimit = settings[\.outboxMaxBytes]
        let waiting = queue.queuedCount + commits.gathered
        let queuedBytes = queue.queuedBytes + commits.gatheredBytes
        let tooMany = waiting + copies > limit
        guard tooMany || queuedBytes + copies * bytes > byteLimit else { return }
        var perRecipient: [String: Int] = [:]
        // Those gathered for the write under way count too: a burst of sends in one read
        // fills the outbox before any of them is queued.
        for delivery in queue.queued + commits.gatheredCopies { perRecipient[delivery.to, default: 0] += 1 }
        for key in queue.deferred.perKey { perRecipient[key.to, default: 0] += key.count }
        let most = perRecipient.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
        let named = most.prefix(3).map { "\($0.key) (\($0.value))" } + (most.count > 3 ? ["\(most.count - 3) more"] : [])
        if tooMany { throw .outboxFull(waiting: waiting, limit: limit, recipients: named) }
        throw .outboxFullBytes(waiting: waiting, bytes: queuedBytes, limit: byteLimit, recipients: named)
    }

    /// Returns once the deliveries `submit` returned are on disk and queued, or throws
    /// why they could not be written (then they were never accepted).
    ///
    /// The first sender to ask starts the write of what has gathered: a caller that hands
    /// over several sends before it waits for any (the socket's requests of one read) has
    /// them all in one batch.
    public func committed(_ ids: [String]) async throws(CoreError) {
        startCommit()
        await afterCommit(ids)
        if let error = commits.takeFailure(ids) { throw error }
    }

    /// Returns once the batches holding `ids` are written, or failed to be.
    func afterCommit(_ ids: [String]) async {
        // A batch not written yet is the one the write under way writes or, taken as that
        // write ends (`finishCommit`), one a later write does: waiting for each in turn is
        // waiting for it.
        while commits.unwrittenBatch(of: ids) != nil {
            if commits.write == nil { startCommit() }
            guard let write = commits.write else { return }
            commits.waitingCount += 1
            await write.value
            commits.waitingCount -= 1
        }
    }

    /// Writes everything collected since the last commit with one batch write, on the
    /// commit writer's thread, so that sends arriving meanwhile gather for the next one;
    /// queues the batch meanwhile.
    func startCommit() {
        guard let (number, batch) = commits.takeBatch() else { return }
        let sentEarly = commits.writesWork
        // Those that would be deferred are added once written, with where they are on
        // disk: an index entry is read back from there. So are those behind them.
        var heldBack: Set<Int> = []
        if sentEarly {
            var deferredKeys = Set<String>()
            for (index, delivery) in batch.enumerated() {
                if deferredKeys.contains(delivery.orderKey) || queue.wouldDefer(delivery) {
                    deferredKeys.insert(delivery.orderKey)
                    heldBack.insert(index)
                } else {
                    queue.add(delivery)
                }
            }
            // Its senders wait for the write (`committed`): there is no waiter to answer yet.
            pump(changed: [])
        }
        let (store, writer) = (self.store, self.commitWriter)
        // Kept in `commits` (`GroupCommit.write`): one batch is written at a time, and
        // shutdown waits for it; its senders wait for the batch, not for this task.
        let write = Task {
            let result = await writer.value { () -> Result<[StoredEntry], CoreError> in
                do throws(CoreError) {
                    return .success(try store.save(batch: batch))
                } catch {
                    return .failure(error)
                }
            }
            self.finishCommit(number, batch, result, sentEarly: sentEarly, heldBack: heldBack)
        }
        commits.started(write)
    }

    private func finishCommit(_ number: Int, _ batch: [Delivery], _ result: Result<[StoredEntry], CoreError>, sentEarly: Bool, heldBack: Set<Int>) {
        switch result {
        case .failure(let failure):
            logger.error("outbox: \(failure.description); \(batch.count == 1 ? "1 message" : "\(batch.count) messages") not accepted")
            // Those held back were never queued: nothing to take back.
            let queued = batch.enumerated().filter { !heldBack.contains($0.offset) }.map(\.element)
            commits.written(number, batch, failure: failure, alreadySent: sentEarly ? withdraw(queued) : [])
        case .success(let places):
            for (index, delivery) in batch.enumerated() {
                let stored = index < places.count ? places[index] : nil
                if !sentEarly || heldBack.contains(index) {
                    queue.add(delivery, stored: stored)
                } else if let stored {
                    // Queued before it was written: where its record is, is known now.
                    queue.noteWritten(delivery.id, at: stored)
                }
            }
            // Told as they were accepted: before any outcome, which waits for this write.
            for delivery in batch { onEvent(delivery.status) }
            commits.written(number, batch, failure: nil)
        }
        startCommit()
        pump(changed: batch.map(\.id))
    }

    /// Takes a batch that could not be written back out of the queue: what waits is never
    /// sent, and what is on its way is forgotten when it comes back (`finished`). Returns
    /// the ids that had gone to the backend already.
    private func withdraw(_ batch: [Delivery]) -> Set<String> {
        var sent = Set<String>()
        for delivery in batch {
            if queue.isInFlight(delivery.id) {
                outcomes.withdraw(delivery.id)
                // Handed to the backend, or about to be: a lane's next one may still be held back.
                if !lanes.waitsToBeHanded(delivery) { sent.insert(delivery.id) }
            } else if queue.cancel(delivery.id) == nil {
                // Its attempt is over: delivered or refused already.
                sent.insert(delivery.id)
            }
        }
        return sent
    }
}
