#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// The password source runs once at a time: callers arriving while it runs wait for that
/// run (a `pass` or pinentry prompt appears once, not once per waiting message). Its last
/// failure is kept for `status` until a run succeeds. What `status` shows of it is read
/// under a lock, with no hop onto the account keeper that owns the runs.
final class PasswordSourceRuns: Sendable {
    typealias Run = Task<Result<String, CoreError>, Never>

    private struct State {
        /// The run under way, the source it runs, and since when.
        var current: (source: PasswordSource, run: Run, since: Date)?
        /// Why the source failed last, and which source that was.
        var problem: (text: String, source: PasswordSource)?
        /// notifyd is stopping: no source runs any more.
        var stopped = false
    }

    private let state = Mutex(State())

    init() {}

    /// Why the source failed last, until a run succeeds or another source is in effect.
    var problem: String? { state.withLock { $0.problem?.text } }

    /// Since when the source has been running, while it runs.
    var runningSince: Date? { state.withLock { $0.current?.since } }

    /// The run under way of `source`, or a new one `start` makes; nil once stopping.
    func run(of source: PasswordSource, start: () -> Run) -> Run? {
        state.withLock { state -> Run? in
            guard !state.stopped else { return nil }
            if let current = state.current, current.source == source { return current.run }
            let run = start()
            state.current = (source, run, Date())
            return run
        }
    }

    /// `run` of `source` ended with `result`: its failure is kept, or a success clears the
    /// last one. A run no longer the current one (stopped meanwhile) changes nothing.
    func ended(_ run: Run, of source: PasswordSource, with result: Result<String, CoreError>) {
        state.withLock { state in
            guard state.current?.run == run else { return }
            state.current = nil
            switch result {
            case .success: state.problem = nil
            case .failure(let error): state.problem = (error.description, source)
            }
        }
    }

    /// A reload put `source` in effect: a run of another source is stopped (one that hangs,
    /// say), with what it started, and the failure of another source forgotten.
    func sourceChanged(to source: PasswordSource) {
        let stoppedRun = state.withLock { state -> Run? in
            if state.problem.map({ $0.source != source }) == true { state.problem = nil }
            guard let current = state.current, current.source != source else { return nil }
            state.current = nil
            return current.run
        }
        stoppedRun?.cancel()
    }

    /// notifyd stops: the run under way is stopped, and none starts again.
    func stop() {
        let run = state.withLock { state -> Run? in
            state.stopped = true
            defer { state.current = nil }
            return state.current?.run
        }
        run?.cancel()
    }
}
