#if !canImport(Darwin)
import CCurl
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Synchronization
import NotifySystem

/// The thread that owns libcurl's multi handle. Other threads only hand it requests and
/// cancellations through `shared` and wake it; everything else happens on its thread.
///
/// The loop opens its pool, and takes a hold on libcurl, for the first request. Once no
/// request has run for `keep_alive`, it frees the pool and gives libcurl back
/// (`ncurl_release`), and waits with neither until the next request: libcurl would reuse
/// no connection that old, and unloaded, the libraries it brought take no memory.
final class CurlLoop: @unchecked Sendable {
    // @unchecked: `multi` and `running` are touched by the loop's thread alone (and
    // `ncurl_wakeup`, which writes to the pool's wake pipe from any thread, under the lock of
    // `shared`, which the loop's thread also holds to replace `multi`); the rest is in `shared`.
    // What is not private is for the pool's life in CurlLoop+Pool.swift, on the same thread;
    // a lane's waiting requests are in CurlLoop+Lane.swift.
    /// nil while the loop holds no pool, and no hold on libcurl.
    var multi: UnsafeMutableRawPointer?
    /// Why there is no pool, for a request that finds none.
    var noPool = CurlLoop.stopping
    private static let stopping = HTTPFailure(kind: .cancelled, detail: "notifyd is stopping")
    /// Seconds: `keep_alive`, read when the loop falls idle.
    let keepAlive: @Sendable () -> Double
    /// Since when no request has run, while the loop holds its pool.
    var idleSince: ContinuousClock.Instant?
    /// Wakes the loop while it holds no pool, as `ncurl_wakeup` does while it does.
    let unparked = DispatchSemaphore(value: 0)
    /// The pool's size: `max_connections`, as the last reload left it.
    var maximumConnections: Int
    private let replyLimit: Int

    struct Job {
        var id: UInt64
        var request: HTTPRequest
        var timeoutMilliseconds: Int
        var lane: UInt64?
        /// Called once, on the loop's thread.
        var then: @Sendable (HTTPOutcome) -> Void
        /// Sent again on a new connection after one kept alive turned out to be closed.
        var resent = false
    }

    struct Shared {
        var nextID: UInt64 = 0
        var starting: [Job] = []
        var cancelled: [UInt64] = []
        var stopping = false
        /// The multi handle is freed: nobody may wake it any more.
        var stopped = false
        /// The loop waits on `unparked`, with no pool.
        var parked = false
        /// The network changed since the loop last looked.
        var networkChanged = false
        /// A new size for the pool, for the loop's thread to set.
        var resize: Int?
        var endedLanes: [UInt64] = []
        var brokenLanes: [UInt64] = []
        /// The last response came over HTTP/2: a connection carries many requests at once.
        var multiplexing = false
    }

    let shared = Mutex(Shared())
    var running: [UnsafeMutableRawPointer: Job] = [:]
    /// Lanes with a request under way, and broken lanes until they are ended.
    private var lanes: [UInt64: Lane] = [:]
    /// Outcomes whose callers are told once the pass has put the next requests of their
    /// lanes on the wire: telling one costs the HTTP thread a task to start.
    private var outcomes: [(job: Job, outcome: HTTPOutcome)] = []
    /// Since when the outcomes held back wait (see `tellCallers`).
    var holdingSince: ContinuousClock.Instant?
    /// Accepted requests of lanes that go on are told in groups of this many (or after
    /// `holdLimit`): the caller then does its part for them together, with one wake-up of
    /// its threads and one write to disk, while the lane runs ahead of it.
    static let laneGroup = 8
    static let holdLimit: Duration = .milliseconds(2)
    /// The pool may hold connections from before the network changed: closed with the pool
    /// once no request runs; until then, requests open new ones.
    var staleConnections = false
    /// A reload made the pool smaller: it may hold more idle connections than it now may
    /// (libcurl closes one only as a request ends), and the descriptors they hold are
    /// counted for clients. Replaced with a pool of the new size once no request runs.
    var poolTooLarge = false
    /// `shared.multiplexing` as the loop last set it: the lock is taken only when it changes.
    var multiplexing = false
    /// Where the last response that came over HTTP/2 came from.
    var multiplexedURL: URL?
    /// The transfer making a standby connection (CurlLoop+Standby.swift), and when the last began.
    var standby: UnsafeMutableRawPointer?
    var lastStandbyStart: ContinuousClock.Instant?

    /// The loop starts with no pool, and opens one for the first request.
    init(maximumConnections: Int, replyLimit: Int, keepAlive: @escaping @Sendable () -> Double) {
        self.maximumConnections = maximumConnections
        self.replyLimit = replyLimit
        self.keepAlive = keepAlive
        NativeThread.start(name: "notifyd-http") { [self] in run() }
    }

    func perform(_ request: HTTPRequest, timeoutMilliseconds: Int) async -> HTTPOutcome {
        let id = shared.withLock { shared in
            shared.nextID += 1
            return shared.nextID
        }
        // A continuation: the request is made on the HTTP thread, which owns libcurl and
        // resumes it from there once, with the outcome or a cancellation.
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let job = Job(id: id, request: request, timeoutMilliseconds: timeoutMilliseconds, lane: nil) { continuation.resume(returning: $0) }
                if !Task.isCancelled {
                    hand(job)
                } else {
                    job.then(.failed(HTTPFailure(kind: .cancelled, detail: "the request was cancelled")))
                }
            }
        } onCancel: {
            shared.withLock { $0.cancelled.append(id) }
            wake()
        }
    }

    func hand(_ request: HTTPRequest, lane: UInt64, timeoutMilliseconds: Int, then: @escaping @Sendable (HTTPOutcome) -> Void) {
        let id = shared.withLock { shared in
            shared.nextID += 1
            return shared.nextID
        }
        hand(Job(id: id, request: request, timeoutMilliseconds: timeoutMilliseconds, lane: lane, then: then))
    }

    /// Wakes the loop only when its list of new requests was empty: a burst handed over
    /// while the loop is busy costs it no extra wake-up.
    private func hand(_ job: Job) {
        let accepted = shared.withLock { shared -> Bool? in
            guard !shared.stopping else { return nil }
            shared.starting.append(job)
            return shared.starting.count == 1
        }
        switch accepted {
        case nil: job.then(.failed(HTTPFailure(kind: .cancelled, detail: "notifyd is stopping")))
        case true?: wake()
        case false?: break
        }
    }

    /// Whether the backend's last response came over a connection that multiplexes
    /// requests (HTTP/2), where `NCURL_STREAMS_PER_CONNECTION` go side by side on each.
    /// notifyd talks to one backend at a time: a request to another (the deletion of a
    /// registration at the backend used before) only changes it for as long as it is the last.
    var multiplexes: Bool { shared.withLock { $0.multiplexing } }

    func endLane(_ lane: UInt64) {
        shared.withLock { $0.endedLanes.append(lane) }
    }

    /// Taken before the requests handed over in the same pass: whatever comes after the
    /// break in the lane is not sent.
    func breakLane(_ lane: UInt64) {
        shared.withLock { $0.brokenLanes.append(lane) }
        wake()
    }

    func stop() {
        shared.withLock { $0.stopping = true }
        wake()
    }

    func networkChanged() {
        shared.withLock { $0.networkChanged = true }
        wake()
    }

    /// Done on the loop's thread, like everything else that touches the multi handle.
    func resize(to connections: Int) {
        shared.withLock { $0.resize = connections }
        wake()
    }

    private func wake() {
        shared.withLock { shared in
            if shared.stopped { return }
            if let multi {
                ncurl_wakeup(multi)
            } else if shared.parked {
                shared.parked = false
                unparked.signal()
            }
        }
    }

    private func run() {
        while true {
            let (starting, cancelled, stopping, networkChanged, resize, (endedLanes, brokenLanes)) = shared.withLock { shared in
                defer {
                    shared.starting = []
                    shared.cancelled = []
                    shared.networkChanged = false
                    shared.resize = nil
                    shared.endedLanes = []
                    shared.brokenLanes = []
                }
                return (shared.starting, shared.cancelled, shared.stopping, shared.networkChanged, shared.resize, (shared.endedLanes, shared.brokenLanes))
            }
            for id in brokenLanes {
                if lanes[id] == nil { lanes[id] = Lane() }
                lanes[id]!.broken = true
                for job in lanes[id]!.takeAll() { job.then(.notAttempted) }
            }
            // After the breaks: a lane's end comes after its break, and taken before it in
            // the same pass, the break would make the lane again, never to be ended.
            for lane in endedLanes where !(lanes[lane]?.busy ?? false) { lanes[lane] = nil }
            if networkChanged { staleConnections = true }
            if let resize {
                if resize < maximumConnections { poolTooLarge = true }
                maximumConnections = resize
                if let multi { ncurl_multi_limit(multi, resize) }
            }
            for id in cancelled {
                guard let (transfer, job) = running.first(where: { $0.value.id == id }) else { continue }
                finish(transfer, job, .failed(HTTPFailure(kind: .cancelled, detail: "the request was cancelled")))
            }
            if !starting.isEmpty {
                idleSince = nil
                if multi == nil {
                    if stopping { noPool = Self.stopping } else { openPool() }
                }
            }
            closeStaleConnectionsIfIdle()
            for job in starting { admit(job) }
            if stopping {
                for (transfer, job) in running { finish(transfer, job, .failed(Self.stopping)) }
                tellCallers(force: true)
                let pool = shared.withLock { shared in
                    shared.stopped = true
                    defer { multi = nil }
                    return multi
                }
                if let pool { releasePool(pool) }
                return
            }
            if let multi {
                // Again at once when a finished request started the next of its lane, so
                // that it is on the wire before the loop waits.
                var startedNext = true
                while startedNext {
                    startedNext = false
                    ncurl_multi_perform(multi)
                    while let transfer = ncurl_next_finished(multi) {
                        if finishedStandby(transfer) { continue }
                        guard let job = running[transfer] else { continue }
                        if finish(transfer, job, HTTPOutcome(finished: transfer)) { startedNext = true }
                    }
                }
            }
            closeStaleConnectionsIfIdle()
            keepStandbyConnection()
            tellCallers()
            waitForWork()
        }
    }

    /// Starts `job` now, or after the request of its lane under way.
    private func admit(_ job: Job) {
        guard let id = job.lane else { return start(job) }
        if lanes[id] == nil { lanes[id] = Lane() }
        if lanes[id]!.broken {
            job.then(.notAttempted)
        } else if lanes[id]!.busy {
            lanes[id]!.append(job)
        } else {
            // Marked before the start: a request libcurl cannot start settles at once, and
            // must find its lane busy to break it, or the lane would wait forever.
            lanes[id]!.busy = true
            start(job)
        }
    }

    private func start(_ job: Job) {
        guard let multi else {
            settle(job, .failed(noPool))
            return
        }
        let request = job.request
        let transfer = request.headers.withCStrings { headers in
            (request.body ?? Data()).withUnsafeBytes { body in
                ncurl_transfer_start(multi, request.url.absoluteString, request.method, headers, headers.count,
                                     body.baseAddress, body.count, request.body == nil ? 0 : 1,
                                     job.timeoutMilliseconds, job.timeoutMilliseconds, replyLimit, staleConnections || job.resent ? 1 : 0,
                                     Self.wholeSeconds(keepAlive()), request.connectOnly ? 1 : 0)
            }
        }
        guard let transfer else {
            settle(job, .failed(HTTPFailure(kind: .other, detail: "libcurl could not start the request")))
            return
        }
        running[transfer] = job
    }

    /// A connection kept alive from before the network changed may go over a link that is
    /// gone, and hold a request until its timeout instead of failing it at once: once no
    /// request runs, the pool and every connection in it go, and a new pool takes over.
    private func closeStaleConnectionsIfIdle() {
        guard staleConnections || poolTooLarge, running.isEmpty, let old = multi, let fresh = ncurl_multi_new(maximumConnections) else { return }
        dropStandby(from: old)
        shared.withLock { _ in
            ncurl_multi_free(old)
            multi = fresh
            // A wake-up written to the old pool since the loop last looked went with it:
            // the loop looks once more.
            ncurl_wakeup(fresh)
        }
        staleConnections = false
        poolTooLarge = false
    }

    private func noteProtocol(of transfer: UnsafeMutableRawPointer, to url: URL) {
        let multiplexed = ncurl_transfer_multiplexed(transfer) != 0
        if multiplexed { multiplexedURL = url }
        guard multiplexed != multiplexing else { return }
        multiplexing = multiplexed
        shared.withLock { $0.multiplexing = multiplexed }
    }

    /// Returns whether the next request of the job's lane started.
    @discardableResult
    private func finish(_ transfer: UnsafeMutableRawPointer, _ job: Job, _ outcome: HTTPOutcome) -> Bool {
        running[transfer] = nil
        running.releaseStorageIfEmpty()
        let keptAliveOnly = ncurl_transfer_new_connections(transfer) == 0
        if case .response = outcome, !job.request.connectOnly { noteProtocol(of: transfer, to: job.request.url) }
        if let multi { ncurl_transfer_free(multi, transfer) }
        // The connections kept alive were closed by the backend meanwhile (an idle timeout
        // shorter than libcurl's 118 s), and libcurl took the close for a live connection:
        // it tries six of them, closing each, and gives up. The request goes again at once
        // on a new connection instead of waiting out a backoff. The pool is kept: requests
        // under way or to come find the rest of the closed ones the same way, while its
        // live connections, the new one among them, stay in use (after a network change
        // every request opens a new one, but that would cost a burst a handshake per message).
        if case .failed(let failure) = outcome, failure.kind == .connectionLost, keptAliveOnly, !job.resent {
            var again = job
            again.resent = true
            start(again)
            return true
        }
        return settle(job, outcome)
    }

    /// Keeps the outcome for its caller (`tellCallers`); in a lane, starts the next request
    /// after a 2xx, or breaks the lane. Returns whether a next request started.
    @discardableResult
    private func settle(_ job: Job, _ outcome: HTTPOutcome) -> Bool {
        if let id = job.lane, lanes[id] != nil {
            let (next, skipped) = lanes[id]!.finished(accepted: outcome.isSuccess)
            if let lane = lanes[id], !lane.busy && !lane.broken { lanes[id] = nil }
            if let next { start(next) }
            outcomes.append((job, outcome))
            for job in skipped { outcomes.append((job, .notAttempted)) }
            lanes.releaseStorageIfEmpty()
            return next != nil
        }
        outcomes.append((job, outcome))
        return false
    }

    /// Tells the callers their outcomes, except while each is a 2xx of a lane whose next
    /// request is under way, fewer than `laneGroup` wait, and none has waited `holdLimit`.
    /// `force`: all now.
    private func tellCallers(force: Bool = false) {
        guard !outcomes.isEmpty else { return }
        let now = ContinuousClock.now
        let goingOn = outcomes.allSatisfy { job, outcome in
            outcome.isSuccess && job.lane.map { lanes[$0]?.busy ?? false } ?? false
        }
        if !force && goingOn && outcomes.count < Self.laneGroup && holdingSince.map({ now - $0 < Self.holdLimit }) ?? true {
            if holdingSince == nil { holdingSince = now }
            return
        }
        holdingSince = nil
        let told = outcomes
        outcomes = []
        for (job, outcome) in told { job.then(outcome) }
    }

    /// For libcurl's `CURLOPT_MAXAGE_CONN`, at least a second.
    static func wholeSeconds(_ seconds: Double) -> Int {
        Int(min(max(seconds, 1), Double(Int32.max)).rounded(.up))
    }
}
#endif
