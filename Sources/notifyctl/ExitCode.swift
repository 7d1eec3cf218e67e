/// notifyctl's exit codes, as documented in README.md ("Troubleshooting") and notifyctl(1).
enum ExitCode: Int32 {
    case done = 0
    /// The operation failed.
    case failed = 1
    /// The command line was wrong.
    case usage = 2
    /// notifyd could not be reached.
    case unreachable = 3
    /// Accepted, but it will happen later (a registration pending, a message queued).
    case later = 4
}
