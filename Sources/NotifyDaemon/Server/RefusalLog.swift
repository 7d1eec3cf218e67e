/// Says which connections the loop refused, at a bounded rate: the first refusal of a kind
/// at once, then at most one line per `interval` with how many more there were. A flood of
/// connections (another user's, or more than the limit) cannot flood the journal, and no
/// refusal goes uncounted. It sets no timer of its own: the loop asks for `nextDeadline`,
/// which exists only while a count waits to be said.
struct RefusalLog {
    let interval: Double
    private var kinds: [String: Kind] = [:]

    private struct Kind {
        var lastSaid: Double
        var unsaid = 0
    }

    init(interval: Double) {
        self.interval = interval
    }

    /// A connection was refused for `reason` ("from uid 1001"), which `detail` explains;
    /// returns the line to log now, if any.
    mutating func refused(_ reason: String, because detail: String, now: Double) -> String? {
        if var kind = kinds[reason], now - kind.lastSaid < interval {
            kind.unsaid += 1
            kinds[reason] = kind
            return nil
        }
        let earlier = kinds[reason]?.unsaid ?? 0
        kinds[reason] = Kind(lastSaid: now)
        let line = "refused a connection \(reason): \(detail)"
        return earlier > 0 ? line + " (\(earlier) more refused before it)" : line
    }

    /// The counts whose interval has passed (all of them when `flushAll`, at shutdown).
    mutating func due(now: Double, flushAll: Bool = false) -> [String] {
        var lines: [String] = []
        for (reason, kind) in kinds where kind.unsaid > 0 && (flushAll || now - kind.lastSaid >= interval) {
            lines.append("refused \(kind.unsaid) more \(kind.unsaid == 1 ? "connection" : "connections") \(reason) in the last \(Int(max(1, (now - kind.lastSaid).rounded()))) s")
            kinds[reason] = Kind(lastSaid: now)
        }
        // A kind with nothing to say and a quiet interval behind it is forgotten.
        kinds = kinds.filter { $0.value.unsaid > 0 || now - $0.value.lastSaid < interval }
        return lines.sorted()
    }

    /// When the next count is due, if one waits.
    var nextDeadline: Double? {
        kinds.values.filter { $0.unsaid > 0 }.map { $0.lastSaid + interval }.min()
    }
}
