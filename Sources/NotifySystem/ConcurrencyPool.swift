// Built only with the toolchain whose experimental executor interfaces it was written
// against (6.3): elsewhere notifyd runs on libdispatch's pool (see DaemonExecutors).
#if os(Linux) && compiler(>=6.3) && compiler(<6.4)
@_spi(ExperimentalScheduling) import _Concurrency
import Glibc

/// Swift concurrency's threads and timers, run by threads of our own instead of
/// libdispatch's pool.
///
/// On Linux, libdispatch's pool starts a monitor the first time one of its threads runs a
/// job, and the monitor then wakes the process once a second for the rest of its life
/// (`_dispatch_workq_monitor_pools` in swift-corelibs-libdispatch, with no switch to turn it
/// off), so a daemon that has run one task never sleeps for good. This pool wakes only for
/// work: its threads wait on a condition variable while there are no jobs, and its timer
/// thread waits in poll() with no timeout while no sleep is pending.
///
/// At most `width` threads run jobs, as many as libdispatch would run (one per online CPU,
/// and at least two): each is started when a job finds no idle one, and stays. Sleeps on
/// the continuous clock wait on CLOCK_BOOTTIME, which counts a suspended machine's time,
/// and those on the suspending clock on CLOCK_MONOTONIC, which does not, as libdispatch's
/// timers did.
package final class ConcurrencyPool: TaskExecutor, SchedulingExecutor, @unchecked Sendable {
    // @unchecked: every mutable field is read and written with `lock` held.
    private let name: String
    private let timerName: String
    package let width: Int
    private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let workAvailable = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var jobs: [UnownedJob] = []
    private var firstJob = 0
    private var idleWorkers = 0
    private var workers = 0
    private var timers: [Timer] = []
    private var timerThread: TimerThread?
    private var passes = 0

    private struct Timer {
        let clock: clockid_t
        let deadline: Int64
        let job: UnownedJob
    }

    /// Its threads are called `name`, and its timer thread `timerName`.
    package init(name: String, timerName: String, width: Int? = nil) {
        self.name = name
        self.timerName = timerName
        self.width = max(width ?? Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))), 2)
        pthread_mutex_init(lock, nil)
        pthread_cond_init(workAvailable, nil)
    }

    /// Threads started so far to run jobs (never more than `width`).
    package var threadsStarted: Int { locked { workers } }

    /// Sleeps set and not yet due (a cancelled one stays until its deadline).
    package var timersPending: Int { locked { timers.count } }

    /// How often the timer thread has set its timers to the earliest deadlines so far.
    package var timerPasses: Int { locked { passes } }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let startWorker = locked { () -> Bool in
            jobs.append(job)
            if idleWorkers > 0 { pthread_cond_signal(workAvailable) }
            guard jobs.count - firstJob > idleWorkers, workers < width else { return false }
            workers += 1
            return true
        }
        if startWorker { NativeThread.start(name: name) { [self] in work() } }
    }

    package func enqueue<C: Clock>(_ job: consuming ExecutorJob, at instant: C.Instant, tolerance: C.Duration?, clock: C) {
        let job = UnownedJob(job)
        let (clockID, delay): (clockid_t, Duration)
        if let instant = instant as? ContinuousClock.Instant {
            (clockID, delay) = (CLOCK_BOOTTIME, ContinuousClock.now.duration(to: instant))
        } else if let instant = instant as? SuspendingClock.Instant {
            (clockID, delay) = (CLOCK_MONOTONIC, SuspendingClock.now.duration(to: instant))
        } else {
            // Another clock: its own distance to the instant, on the clock that stops while suspended.
            (clockID, delay) = (CLOCK_MONOTONIC, clock.now.duration(to: instant) as? Duration ?? .zero)
        }
        // Wrapped round, a deadline centuries away would be one already past.
        let (deadline, overflow) = Self.now(clockID).addingReportingOverflow(Self.nanoseconds(delay))
        schedule(job, clock: clockID, deadline: overflow ? Int64.max : deadline)
    }

    package func enqueue<C: Clock>(_ job: consuming ExecutorJob, after delay: C.Duration, tolerance: C.Duration?, clock: C) {
        enqueue(job, at: clock.now.advanced(by: delay), tolerance: tolerance, clock: clock)
    }

    private func schedule(_ job: UnownedJob, clock: clockid_t, deadline: Int64) {
        let thread = locked { () -> TimerThread in
            timers.append(Timer(clock: clock, deadline: deadline, job: job))
            if let timerThread { return timerThread }
            let started = TimerThread()
            timerThread = started
            NativeThread.start(name: timerName) { [self] in waitForTimers(started) }
            return started
        }
        thread.rearm()
    }

    /// A job thread's life: run jobs, in the order they came, and wait while there are none.
    private func work() {
        let executor = asUnownedTaskExecutor()
        while true {
            let job = locked { () -> UnownedJob in
                while firstJob == jobs.count {
                    idleWorkers += 1
                    pthread_cond_wait(workAvailable, lock)
                    idleWorkers -= 1
                }
                let job = jobs[firstJob]
                firstJob += 1
                if firstJob == jobs.count {
                    jobs.removeAll(keepingCapacity: jobs.count <= 256)
                    firstJob = 0
                }
                return job
            }
            job.runSynchronously(on: executor)
        }
    }

    /// The timer thread's life: sleep until the earliest deadline of each clock, or until a
    /// new timer is set, then hand what is due to the job threads.
    private func waitForTimers(_ thread: TimerThread) {
        while true {
            let due = locked { () -> [Timer] in
                let now = (boot: Self.now(CLOCK_BOOTTIME), monotonic: Self.now(CLOCK_MONOTONIC))
                var due: [Timer] = []
                timers.removeAll { timer in
                    guard timer.deadline <= (timer.clock == CLOCK_BOOTTIME ? now.boot : now.monotonic) else { return false }
                    due.append(timer)
                    return true
                }
                thread.arm(boottime: timers.lazy.filter { $0.clock == CLOCK_BOOTTIME }.map(\.deadline).min(),
                           monotonic: timers.lazy.filter { $0.clock != CLOCK_BOOTTIME }.map(\.deadline).min())
                passes += 1
                return due
            }
            // Found due together (the thread woke late): still the earliest first.
            for timer in due.sorted(by: { $0.deadline < $1.deadline }) { enqueue(ExecutorJob(timer.job)) }
            thread.wait()
        }
    }

    private func locked<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        return body()
    }

    static func now(_ clock: clockid_t) -> Int64 {
        var time = timespec()
        clock_gettime(clock, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        guard seconds < Int64.max / 1_000_000_000 else { return Int64.max / 2 }
        // An instant centuries past would overflow the product: it is simply due.
        guard seconds >= 0 else { return 0 }
        return max(0, seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}

/// The timer thread's descriptors: a timerfd per clock, and an eventfd that says a timer
/// was added (the earliest deadline may have moved).
private final class TimerThread: Sendable {
    private let boottime: Int32
    private let monotonic: Int32
    /// A pipe, written to once per timer added: its read end is polled, its write end never blocks.
    private let changed: (read: Int32, write: Int32)

    // Glibc declares timerfd's functions in <sys/timerfd.h>, which Swift's Glibc module leaves out.
    private typealias Create = @convention(c) (clockid_t, Int32) -> Int32
    private typealias Set = @convention(c) (Int32, Int32, UnsafePointer<itimerspec>, UnsafeMutablePointer<itimerspec>?) -> Int32
    private static let create = dlsym(nil, "timerfd_create").map { unsafeBitCast($0, to: Create.self) }
    private static let set = dlsym(nil, "timerfd_settime").map { unsafeBitCast($0, to: Set.self) }
    private static let closeOnExec: Int32 = 0o2000000 // TFD_CLOEXEC, O_CLOEXEC
    private static let absolute: Int32 = 1 // TFD_TIMER_ABSTIME

    init() {
        boottime = Self.create?(CLOCK_BOOTTIME, Self.closeOnExec) ?? -1
        monotonic = Self.create?(CLOCK_MONOTONIC, Self.closeOnExec) ?? -1
        var ends: [Int32] = [-1, -1]
        let piped = pipe(&ends)
        for fd in ends {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        changed = (ends[0], ends[1])
        // Without them no task could ever sleep: a daemon that cannot get them cannot work.
        precondition(boottime >= 0 && monotonic >= 0 && piped == 0, "cannot make the timers: \(String(cString: strerror(errno)))")
    }

    /// Sets each clock's timer to its deadline (nanoseconds on that clock), or disarms it.
    func arm(boottime deadline: Int64?, monotonic monotonicDeadline: Int64?) {
        for (fd, deadline) in [(boottime, deadline), (monotonic, monotonicDeadline)] {
            var setting = itimerspec()
            if let deadline {
                // Zero would disarm the timer: a deadline already past is one nanosecond.
                let at = max(deadline, 1)
                setting.it_value = timespec(tv_sec: Int(at / 1_000_000_000), tv_nsec: Int(at % 1_000_000_000))
            }
            _ = Self.set?(fd, Self.absolute, &setting, nil)
        }
    }

    func rearm() {
        var byte: UInt8 = 1
        _ = write(changed.write, &byte, 1)
    }

    /// Returns when a timer fired or was added; never on its own while none is armed.
    func wait() {
        var fds = [pollfd(fd: boottime, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: monotonic, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: changed.read, events: Int16(POLLIN), revents: 0)]
        guard poll(&fds, nfds_t(fds.count), -1) > 0 else { return }
        var drained = [UInt8](repeating: 0, count: 64)
        for entry in fds where entry.revents != 0 { _ = read(entry.fd, &drained, drained.count) }
    }
}
#endif
