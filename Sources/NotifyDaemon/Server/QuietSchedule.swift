/// What the daemon tidies once a burst of activity is over: each task runs once, its own
/// number of seconds after the last activity. New activity starts the count again; an idle
/// daemon, with nothing since the last task, runs none, so it is never woken for them.
struct QuietSchedule {
    struct Task: Sendable {
        /// Seconds of quiet before it runs.
        let after: Double
        let run: @Sendable () -> Void
    }

    /// By `after`, shortest first.
    private let tasks: [Task]
    private var lastActivity: Double?
    /// How many of `tasks` have run since `lastActivity`.
    private var done = 0

    init(_ tasks: [Task]) {
        self.tasks = tasks.sorted { $0.after < $1.after }
    }

    mutating func activity(at now: Double) {
        lastActivity = now
        done = 0
    }

    /// When the next task is due; nil when none is.
    var nextDue: Double? {
        guard let lastActivity, done < tasks.count else { return nil }
        return lastActivity + tasks[done].after
    }

    /// Whether the first task is still to come after the last activity: then more activity
    /// would change nothing it does, and need not be reported.
    var firstStillDue: Bool { lastActivity != nil && done == 0 && !tasks.isEmpty }

    /// The tasks whose time has come, each returned once, shortest wait first.
    mutating func due(at now: Double) -> ArraySlice<Task> {
        guard let lastActivity else { return [] }
        let start = done
        while done < tasks.count, now >= lastActivity + tasks[done].after { done += 1 }
        return tasks[start..<done]
    }
}
