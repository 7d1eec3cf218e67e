import NotifyCore

/// Turns the kernel's messages into few reports: a Wi-Fi reconnect is dozens of them
/// (the link, its carrier, addresses, routes, IPv6 coming up), and one report is made once
/// they stop, within `longest` of the first whatever follows it. A random `spread` is added,
/// so that a fleet of laptops waking on one network does not reach the backend in the same
/// millisecond. Times are seconds on one monotonic clock; a pure value, for the loop to
/// hold and the tests to drive.
struct NetworkBurst {
    /// What a message or an event says about the network.
    enum Signal: Equatable {
        /// A link stopped running or went, an address or a default route was removed.
        case down
        /// A link, an address or a default route came up.
        case up
        case resumed(slept: Double)
        case clockSet
    }

    /// What to do once a burst is over.
    struct Ending: Equatable {
        /// What the burst amounted to, for the parties and the watchers.
        var report: NetworkChange?
        /// Whether the kernel's messages changed something: the default routes are read again.
        var readRoutes: Bool
    }

    var quiet = 0.2
    var longest = 0.75
    var spread = 0.0...0.5

    /// When the burst under way ends; nil while none is: the loop then sets no timer for it.
    var deadline: Double? {
        guard let first, let last else { return nil }
        return min(last + quiet, first + longest) + delay
    }

    private var first: Double?
    private var last: Double?
    private var delay = 0.0
    private var report: NetworkChange?
    private var readRoutes = false
    private var wentAway = false

    mutating func note(_ signal: Signal, now: Double, using random: inout some RandomNumberGenerator) {
        if first == nil {
            first = now
            delay = Double.random(in: spread, using: &random)
        }
        last = now
        switch signal {
        case .down:
            readRoutes = true
            wentAway = true
        case .up:
            readRoutes = true
            report = report ?? .up
        case .resumed(let slept):
            // The strongest: it says the most, and is treated as `up` is.
            if case .resumed = report {} else { report = .resumed(slept: slept) }
        case .clockSet:
            if report == nil || report == .up { report = .clockSet }
        }
    }

    /// The burst's ending once its deadline has passed, and a fresh start.
    mutating func end(now: Double) -> Ending? {
        guard let deadline, now >= deadline else { return nil }
        defer { self = NetworkBurst(quiet: quiet, longest: longest, spread: spread) }
        return Ending(report: report ?? (wentAway ? .down : nil), readRoutes: readRoutes)
    }
}
