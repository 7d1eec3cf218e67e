#if os(Linux) && compiler(>=6.3) && compiler(<6.4)
@_spi(ExperimentalCustomExecutors) import _Concurrency
import NotifySystem

/// Where notifyd's tasks and actors run: on Linux a `ConcurrencyPool` of its own, which
/// leaves an idle daemon asleep, instead of libdispatch's pool, whose monitor would wake it
/// every second (see `ConcurrencyPool`). The main actor stays libdispatch's: notifyd's main
/// thread is parked (`MainThread`) and nothing runs there.
enum DaemonExecutors: ExecutorFactory {
    static let pool = ConcurrencyPool(name: "notifyd-pool", timerName: "notifyd-timers")
    static var mainExecutor: any MainExecutor { PlatformExecutorFactory.mainExecutor }
    static var defaultExecutor: any TaskExecutor { pool }

    /// Call first thing in `main`, before any task exists.
    static func install() {
        _createExecutors(factory: DaemonExecutors.self)
    }
}
#else
/// Elsewhere the system's own pool: on macOS it sleeps when idle; on Linux with another
/// toolchain than 6.3, whose experimental executor interfaces (`ExecutorFactory`,
/// `SchedulingExecutor`) may have changed, its monitor wakes notifyd once a second.
enum DaemonExecutors {
    static func install() {}
}
#endif
