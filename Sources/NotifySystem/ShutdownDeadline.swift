/// How long a stop lets work under way go on before cutting it short: attempts to send,
/// a registration step, the probes of a backend, a part of the group whose stop hangs.
/// One value, so that no part holds the stop longer than the others, and systemd's
/// `TimeoutStopSec` need only be well above it.
public enum ShutdownDeadline {
    public static let duration: Duration = .seconds(2)
    public static var seconds: Double { Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18 }

    /// Runs `work` with `deadline` to cut it short: if it has not returned by then, or the
    /// caller is cancelled first (a deadline around this one passed), `atDeadline` runs (to
    /// cancel what `work` waits on) and `work`'s task is cancelled. Returns once `work` has
    /// returned, either way: nothing started here outlives it.
    public static func bound(by deadline: Duration = duration, _ work: @escaping @Sendable () async -> Void,
                             atDeadline: @escaping @Sendable () async -> Void = {}) async {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await work()
                return true
            }
            group.addTask {
                try? await Task.sleep(for: deadline)
                return false
            }
            let workEndedFirst = await group.next() ?? true
            if !workEndedFirst { await atDeadline() }
            // The timer, or the work that overran; the group then waits for both to return.
            group.cancelAll()
        }
    }
}
