#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol

/// An attempt's outcome: written to disk, then told to its sender (a delivered message's
/// at once: all that is left of it to write is its removal), and what it freed started.
extension Outbox {
    /// Records an attempt's outcome on disk, then tells the sender and starts what may start.
    /// `lane`: the key whose lane the delivery went in.
    func finished(_ id: String, _ result: DeliveryResult, lane: String? = nil) async {
        await finished([(id, result, lane)])
    }

    /// `finished` for several outcomes that came together (a lane's answers while the
    /// outbox was busy): one hand-over to the writer for all of them, one pass after.
    func finished(_ results: [(id: String, result: DeliveryResult, lane: String?)]) async {
        var settled: [(delivery: Delivery, done: Bool)] = []
        var unsent = false
        for (id, result, lane) in results {
            attempts[id] = nil
            if let lane { laneReturned(lane, result) }
            if outcomes.dropIfWithdrawn(id) {
                queue.finished(id, .notAttempted, now: clock.now())
                _ = queue.cancel(id)
                continue
            }
            if result == .notAttempted {
                // Unsent and unchanged: it waits its turn again, behind the one that failed.
                queue.finished(id, result, now: clock.now())
                unsent = true
                continue
            }
            guard let delivery = queue.finished(id, result, now: clock.now()) else { continue }
            if delivery.state == .delivered, let backend = delivery.account?.backend { recovery?.backendAnswered(backend) }
            if case .unreachable = result, let backend = delivery.account?.backend { recovery?.watchForReturn(of: backend) }
            recovery?.setWaiting(.outbox, queue.waitsOnBackend)
            outcomes.writing(id)
            // Delivered, or refused at once (the sender has the answer): nothing to keep.
            let done = delivery.state == .delivered || (delivery.state == .failed && queue.delivery(id) == nil)
            if done {
                if delivery.state == .delivered {
                    logger.info("outbox: delivered \(id) to \(delivery.to)")
                } else {
                    logger.warning("outbox: \(id) to \(delivery.to) refused: \(delivery.lastError?.message ?? "")")
                }
            } else if let error = delivery.lastError {
                logger.warning("outbox: \(id) to \(delivery.to): \(error.message)\(delivery.state == .queued ? "; will retry" : "")")
            }
            settled.append((delivery, done))
        }
        if !settled.isEmpty {
            // What these outcomes free, a place and their recipients' turns, goes to the next
            // deliveries now: none waits for these writes (one kept for a retry, being
            // written, holds back those behind it: `beingWritten`). Their senders hear
            // below, once the outcomes are on disk.
            pump(changed: [], onlyRemoved: true)
            // A delivery's batch may still be being written: what it leaves on disk comes after.
            await afterCommit(settled.map(\.delivery.id))
            // A delivered message's sender hears now: all that is left to write is its
            // removal, and a crash before that sends it again, as at-least-once allows. A
            // refusal is told only once written: a sender told "failed" must never see the
            // message go after a restart.
            let delivered = settled.filter { $0.done && $0.delivery.state == .delivered }.map(\.delivery)
            if !delivered.isEmpty {
                for delivery in delivered {
                    outcomes.written(delivery.id)
                    report(delivery)
                }
                releaseSettledWaiters(among: delivered.map(\.id))
            }
            let (store, logger) = (self.store, self.logger)
            // In order; the removals one after another go together (one write to their
            // batch's log, see `OutboxStore.remove(_:)`).
            var writes: [@Sendable () -> Void] = []
            var removals: [String] = []
            func removeTogether() {
                guard !removals.isEmpty else { return }
                let ids = removals
                removals = []
                writes.append {
                    for error in store.remove(ids) { logger.error("\(error.description); it may be sent again after a restart") }
                }
            }
            for (delivery, done) in settled {
                if done {
                    removals.append(delivery.id)
                } else if queue.delivery(delivery.id) != nil {
                    removeTogether()
                    writes.append(persisting(delivery))
                }
                // Else withdrawn (its batch could not be written), cancelled or purged while
                // its batch was: its removal was handed over already, and written back now
                // it would come back at the next start.
            }
            removeTogether()
            let jobs = writes
            outcomes.writeStarted()
            await writer.value { for write in jobs { write() } }
            outcomes.writeDone()
        }
        for (delivery, done) in settled where delivery.state != .delivered {
            outcomes.written(delivery.id)
            // Delivered ones were told above. A cancel, purge or expiry while it was being
            // written reported the delivery itself.
            if done || queue.stillHolds(delivery) { report(delivery) }
        }
        let ids = results.map(\.id)
        // Their senders hear these outcomes before a retry that fell due during the write starts.
        releaseSettledWaiters(among: ids)
        // Out of the queue (delivered or refused) settles its own waiters only; a retry,
        // a hold or a message sent back unsent changes what other deliveries wait for.
        let onlyRemoved = !unsent && !settled.contains { $0.delivery.state == .queued }
        pump(changed: onlyRemoved ? ids : nil, onlyRemoved: onlyRemoved)
        releaseIfEmptied()
    }

    /// At the end of a burst: nothing under way, waiting or being written any more.
    func releaseIfEmptied() {
        guard attempts.isEmpty && lanes.isEmpty && queue.queuedCount == 0 && outcomes.noneBeingWritten else { return }
        attempts.releaseStorageIfEmpty()
        queue.releaseStorageIfEmpty()
        outcomes.releaseStorageIfEmpty()
        // Every removal was written: none is left for the writer to change the index with.
        store.releaseStorageIfEmpty()
        onEmptied()
    }

    func report(_ delivery: Delivery) {
        let status = delivery.status
        if delivery.state != .queued && delivery.senderWaiting { outcomes.keep(status) }
        onEvent(status)
    }

    /// Saves `delivery` after the file changes handed over before; a failure is logged.
    func persist(_ delivery: Delivery) {
        writer.enqueue(persisting(delivery))
    }

    func persisting(_ delivery: Delivery) -> @Sendable () -> Void {
        let (store, logger) = (self.store, self.logger)
        return {
            do throws(CoreError) {
                try store.save(delivery)
            } catch {
                logger.error(error.description)
            }
        }
    }
}
