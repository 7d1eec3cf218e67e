#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol

/// Which deliveries start now: order per key, the places (connections) they share, lanes,
/// and the turns keys take when there are more of them than places.
extension OutboxQueue {
    /// How many deliveries a lane may take past one that waits for a place before it must
    /// empty and let that one have its place. With none, every answer made a trip through
    /// the outbox before the next request (20 recipients on 16 connections to a loopback
    /// backend: 130 µs of CPU per send, against 100 µs with 2); with 4, the recipients
    /// waiting fell further behind, and a client's 128 requests in flight, answered in
    /// order, ran out sooner (40 ms away: 1.5 % fewer sends a second).
    static let turn = 2

    /// The deliveries to start now; they count as in flight until `finished`.
    ///
    /// With `depth` 1, one delivery per recipient and platform at a time. With more, those
    /// behind it follow, up to `depth` in flight per key, for a sender that keeps their
    /// order (each goes only once the one before it was accepted, and none after one that
    /// was not; see `BackendAPI.lanes`), except for the keys of `unchained`, whose
    /// lane broke and which wait until their deliveries in flight are back. Up to
    /// `concurrency` connections' worth of keys have deliveries in flight at once: one key
    /// per connection, or `requestsPerConnection` where the backend multiplexes (HTTP/2).
    /// A delivery of `beingWritten` (its last outcome is being saved, and its sender may
    /// not have heard it yet) does not start again, nor do those behind it.
    ///
    /// Keys take turns: once a delivery that could start waits only for a place (every place
    /// taken), a lane takes at most `turn` deliveries queued after it, then empties, and the
    /// oldest waiting takes the place it leaves. Lanes that kept taking their keys' next
    /// messages would keep their places for as long as those keys had any, and the keys
    /// without a place would wait for them all: with 20 recipients and 16 connections, 4
    /// recipients went last, and the requests in flight fell to 4.
    public mutating func takeReady(now: Date, depth: Int = 1, unchained: Set<String> = [], requestsPerConnection: Int = 1,
                                   beingWritten: Set<String> = []) -> [Delivery] {
        guard !paused else { return [] }
        let concurrency = self.concurrency * max(1, requestsPerConnection)
        var started: [Delivery] = []
        // Kept as deliveries go in flight and come back, not found from the ids in flight:
        // this runs after every commit and every attempt, over a queue a burst makes long.
        var running = queued.inFlightPerKey
        if !turnsTaken.isEmpty { turnsTaken = turnsTaken.filter { running[$0.key] != nil } }
        // A delivery earlier in the queue waits for a place.
        var someoneWaits = false
        // Keys whose next delivery may not start now: it waits behind one that is not in
        // flight, for a retry, or for room in its lane; or the key's account is not the one
        // logged in (a key is one account's: all its deliveries are held).
        var closed = Set<String>()
        // Most of a long queue is messages behind others of their key, often of the same
        // key one after another: compared with the last key closed, and the last key seen
        // open, before it is hashed.
        var lastClosed = ""
        var lastOpen = ""
        var lanesInUse = running.count
        var roomy = depth > 1 ? running.filter { $0.value < depth && !unchained.contains($0.key) }.count : 0
        let keys = queued.keyCount
        let account = self.account
        for index in queued.indices {
            guard lanesInUse < concurrency || roomy > 0 else { break }
            // Every key queued is closed: nothing further in the queue may start.
            if closed.count == keys { break }
            // In flight: nothing to decide. Looked at first, and without touching the
            // delivery: each pass goes past the ones in flight at the head of a lane.
            if queued.isInFlight(at: index) { continue }
            let key = queued[index].orderKey
            if key == lastClosed { continue }
            if key != lastOpen {
                if closed.contains(key) { continue }
                lastOpen = key
            }
            if queued[index].state == .queued && (queued[index].account.map { $0 != account } ?? true) {
                // Held (see `isHeld`).
                closed.insert(key)
                lastClosed = key
                lastOpen = ""
                continue
            }
            if !beingWritten.isEmpty && beingWritten.contains(queued[index].id) {
                closed.insert(key)
                lastClosed = key
                lastOpen = ""
                continue
            }
            let delivery = queued[index]
            // Whatever happens, later deliveries with this key wait for this one.
            closed.insert(key)
            lastClosed = key
            lastOpen = ""
            if let count = running[key] {
                // Right behind those in flight: follows them in their lane, or waits.
                guard count < depth, !unchained.contains(key) else { continue }
                if let until = retryAt[key]?.until, until > now { continue }
                if someoneWaits {
                    guard turnsTaken[key, default: 0] < Self.turn else { continue }
                    turnsTaken[key, default: 0] += 1
                }
                closed.remove(key)
                lastClosed = ""
                lastOpen = key
                running[key] = count + 1
                if count + 1 == depth { roomy -= 1 }
            } else {
                if let until = retryAt[key]?.until, until > now { continue }
                guard lanesInUse < concurrency else {
                    someoneWaits = true
                    continue
                }
                lanesInUse += 1
                running[key] = 1
                if depth > 1 {
                    closed.remove(key)
                    lastClosed = ""
                    lastOpen = key
                    roomy += 1
                }
            }
            queued.setInFlight(true, at: index)
            started.append(delivery)
        }
        return started
    }
}
