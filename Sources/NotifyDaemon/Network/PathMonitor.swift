#if canImport(Network)
import Darwin
import Dispatch
import Network
import NotifyCore
#if canImport(IOKit)
import IOKit.pwr_mgt
#endif

/// macOS: the system's own view of the network (`NWPathMonitor`) and its wake from sleep
/// (IOKit's power notifications), on a queue of their own, waited out in bursts as the
/// Linux monitor's are (`NetworkBurst`), with the same reports. Built only where the
/// Network framework is; kept small, as no machine it is tested on has it.
final class PathMonitor: NetworkWatch, @unchecked Sendable {
    // @unchecked: everything below is touched on `queue` alone, after `start`.
    private let queue = DispatchQueue(label: "notifyd-network")
    private let monitor = NWPathMonitor()
    private let logger: Logger
    private let report: NetworkReport
    private var burst = NetworkBurst()
    private var random = SystemRandomNumberGenerator()
    private var sleep = SleepWatch()
    private var satisfied: Bool?
    private var timer: DispatchWorkItem?
    #if canImport(IOKit)
    private var rootPort: io_connect_t = 0
    private var notifier: io_object_t = 0
    private var notificationPort: IONotificationPortRef?
    // iokit_common_msg(0x270), (0x280) and (0x300): function-like macros Swift does not import.
    private static let canSystemSleep: UInt32 = 0xE000_0270
    private static let systemWillSleep: UInt32 = 0xE000_0280
    private static let systemHasPoweredOn: UInt32 = 0xE000_0300
    #endif

    init(logger: Logger, report: NetworkReport) {
        self.logger = logger
        self.report = report
    }

    func start() {
        monitor.pathUpdateHandler = { [weak self] path in self?.pathChanged(path.status == .satisfied) }
        monitor.start(queue: queue)
        queue.async { self.watchPower() }
    }

    func stop() {
        monitor.cancel()
        queue.sync {
            timer?.cancel()
            #if canImport(IOKit)
            if rootPort != 0 {
                IODeregisterForSystemPower(&notifier)
                IOServiceClose(rootPort)
                if let notificationPort { IONotificationPortDestroy(notificationPort) }
                rootPort = 0
            }
            #endif
        }
    }

    /// The first path only says where things stand; each later one is a change.
    private func pathChanged(_ isSatisfied: Bool) {
        report.defaultRoute(isSatisfied)
        defer { satisfied = isSatisfied }
        guard satisfied != nil else { return }
        note(isSatisfied ? .up : .down)
    }

    private func note(_ signal: NetworkBurst.Signal) {
        if burst.deadline == nil { report.connectionsStale() }
        burst.note(signal, now: Self.uptime(), using: &random)
        timer?.cancel()
        guard let deadline = burst.deadline else { return }
        let item = DispatchWorkItem { [weak self] in self?.burstDue() }
        timer = item
        queue.asyncAfter(deadline: .now() + max(0, deadline - Self.uptime()), execute: item)
    }

    private func burstDue() {
        guard let ending = burst.end(now: Self.uptime()) else { return }
        if let change = ending.report { report.changed(change) }
    }

    /// Seconds on the clock `asyncAfter` counts in, which stops while the machine sleeps.
    private static func uptime() -> Double {
        Double(DispatchTime.now().uptimeNanoseconds) / 1e9
    }

    #if canImport(IOKit)
    private func watchPower() {
        let context = Unmanaged.passUnretained(self).toOpaque()
        rootPort = IORegisterForSystemPower(context, &notificationPort, { context, _, message, argument in
            guard let context else { return }
            Unmanaged<PathMonitor>.fromOpaque(context).takeUnretainedValue().power(message, argument)
        }, &notifier)
        guard rootPort != 0, let notificationPort else {
            logger.notice("cannot watch for the machine waking from sleep (IORegisterForSystemPower failed): what fell due is done at the next network change")
            return
        }
        IONotificationPortSetDispatchQueue(notificationPort, queue)
    }

    private func power(_ message: UInt32, _ argument: UnsafeMutableRawPointer?) {
        switch message {
        case Self.canSystemSleep, Self.systemWillSleep:
            // notifyd never holds the machine awake; the clocks are read as it goes to sleep.
            _ = sleep.look(boot: Self.continuous(), monotonic: Self.uptime())
            IOAllowPowerChange(rootPort, Int(bitPattern: argument))
        case Self.systemHasPoweredOn:
            note(.resumed(slept: sleep.look(boot: Self.continuous(), monotonic: Self.uptime()) ?? 0))
        default:
            break
        }
    }

    /// Seconds on a clock that goes on while the machine sleeps.
    private static func continuous() -> Double {
        Double(clock_gettime_nsec_np(CLOCK_MONOTONIC_RAW)) / 1e9
    }
    #else
    private func watchPower() {}
    #endif
}
#endif
