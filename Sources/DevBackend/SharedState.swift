import Synchronization

/// The backend's state, one value shared by the server, its routes and the callers of the
/// inspection API, behind a `Mutex` as every shared value of the project is. A class, so
/// that the routes (values) refer to the one state rather than copy it.
final class SharedState: Sendable {
    private let state = Mutex(BackendState())

    func withLock<Result: Sendable, Failure: Error>(_ body: (inout sending BackendState) throws(Failure) -> sending Result) throws(Failure) -> sending Result {
        try state.withLock(body)
    }
}
