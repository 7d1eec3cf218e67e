#if !canImport(Darwin)
import CCurl
import Dispatch

/// The pool's life: opened, with a hold on libcurl, for the first request after the loop
/// held none; let go with libcurl once `keep_alive` has passed with no request under way;
/// and the loop parked on `unparked` in between, as nothing wakes a pool that is not there.
extension CurlLoop {
    /// A connection pool of `connections`, with a hold on libcurl (loaded if nothing held it).
    private static func newPool(connections: Int) -> Result<UnsafeMutableRawPointer, HTTPFailure> {
        var error = [CChar](repeating: 0, count: 512)
        guard ncurl_hold(&error, error.count) == 0 else {
            return .failure(HTTPFailure(kind: .other, detail: String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)))
        }
        guard let multi = ncurl_multi_new(connections) else {
            ncurl_release()
            return .failure(HTTPFailure(kind: .other, detail: "libcurl could not set up a connection pool"))
        }
        return .success(multi)
    }

    /// Whether the loop holds its pool and libcurl now.
    var holdsPool: Bool { shared.withLock { _ in multi != nil } }
    /// Whether the loop waits, with no pool, for the next request.
    var isParked: Bool { shared.withLock { $0.parked } }

    /// Waits until there is something to do: at most an hour, as libcurl wakes sooner for
    /// its own timers, a new request or a cancellation wakes it at once, and outcomes held
    /// back are told in time. Idle for `keep_alive`, it lets the pool and libcurl go first.
    func waitForWork() {
        guard let multi else { return park() }
        if let holdingSince {
            ncurl_multi_wait(multi, Self.millisecondsLeft(of: Self.holdLimit, since: holdingSince))
        } else if !running.isEmpty {
            idleSince = nil
            ncurl_multi_wait(multi, 3_600_000)
        } else {
            let since = idleSince ?? .now
            idleSince = since
            let left = Self.millisecondsLeft(of: .seconds(keepAlive()), since: since)
            if left > 0 {
                ncurl_multi_wait(multi, left)
            } else if letPoolGo() {
                park()
            }
        }
    }

    /// Frees the pool and gives libcurl back, unless a request was handed over meanwhile.
    func letPoolGo() -> Bool {
        let pool = shared.withLock { shared -> UnsafeMutableRawPointer? in
            guard shared.starting.isEmpty, !shared.stopping, let pool = multi else { return nil }
            // Under the lock: `wake` may be calling `ncurl_wakeup` on it.
            multi = nil
            return pool
        }
        guard let pool else { return false }
        releasePool(pool)
        return true
    }

    func releasePool(_ pool: UnsafeMutableRawPointer) {
        dropStandby(from: pool)
        ncurl_multi_free(pool)
        ncurl_release()
        idleSince = nil
    }

    /// Waits with no pool until a request is handed over (or notifyd stops).
    func park() {
        let parks = shared.withLock { shared -> Bool in
            guard shared.starting.isEmpty, !shared.stopping else { return false }
            shared.parked = true
            return true
        }
        if parks { unparked.wait() }
    }

    /// Opens a pool for requests handed over while the loop holds none; when libcurl cannot
    /// be loaded, they fail with the reason, and the next request tries again.
    func openPool() {
        switch Self.newPool(connections: maximumConnections) {
        case .success(let pool):
            shared.withLock { _ in
                multi = pool
                // Whatever was handed over (a request, a cancellation, a stop) while
                // libcurl loaded found no pool to wake: the loop looks once more.
                ncurl_wakeup(pool)
            }
            // New, and of the size in effect: what a network change or a reload said of
            // an earlier pool, or while there was none, is true of it already.
            staleConnections = false
            poolTooLarge = false
        case .failure(let failure): noPool = failure
        }
    }

    /// Never more than an hour, which poll()'s milliseconds hold.
    static func millisecondsLeft(of limit: Duration, since start: ContinuousClock.Instant) -> Int32 {
        let left = (start + limit) - ContinuousClock.now
        return Int32(max(0, min(limit, left, .seconds(3600)) / .milliseconds(1)).rounded(.up))
    }
}
#endif
