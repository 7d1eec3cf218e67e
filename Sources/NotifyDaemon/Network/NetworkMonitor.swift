import CNetworkWatch
import NotifyCore
import NotifySocket
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NotifySystem

/// Where a network monitor reports, from whatever thread it runs on. Both must be quick.
struct NetworkReport: Sendable {
    /// A burst of changes is over and something came up, or the machine woke.
    var changed: @Sendable (NetworkChange) -> Void
    /// Whether a default route that carries packets exists (nil: unknown).
    var defaultRoute: @Sendable (Bool?) -> Void
    /// A burst of changes began, or ended, whatever it brings: connections kept alive from
    /// before may lead nowhere now.
    var connectionsStale: @Sendable () -> Void
}

/// The kernel's news of the network on Linux, read on the socket loop with no thread and
/// no timer of its own: the routing netlink socket (links, IPv4 and IPv6 addresses and
/// routes) and a wall-clock timer that the kernel cancels when the clock is set or the
/// machine resumes. Their descriptors are polled with the clients'; the loop's timeout
/// includes `deadline` only while a burst of messages is being waited out, so an idle
/// loop still never wakes.
///
/// Nothing from netlink is trusted: only the kernel's datagrams are read, each is taken
/// apart by `NetlinkParser`, a bounded number per pass, and what cannot be read is dropped
/// with a debug line.
final class NetworkMonitor {
    // Not Sendable: made before the loop starts, handed to the socket server as `sending`,
    // then used by the loop's thread alone.
    private let netlink: Int32?
    private let clock: Int32?
    private let logger: Logger
    private let report: NetworkReport
    private var interpreter: NetlinkInterpreter
    private var burst = NetworkBurst()
    private var sleep = SleepWatch()
    private var random = SystemRandomNumberGenerator()
    private let bootClock: () -> Double
    private var nextSequence: UInt32 = 1
    /// A burst ended while a dump was under way: one more once it is over.
    private var dumpAgain = false
    /// Datagrams read per readiness, at most: a flood cannot keep the loop from its clients.
    static let datagramsPerPass = 64

    /// The name `status` shows: "netlink" when the routing socket is open, else nil.
    var name: String? { netlink == nil ? nil : "netlink" }

    let descriptors: [Int32]

    /// When the burst under way ends (monotonic seconds), or nil: nothing to wait for.
    var deadline: Double? { burst.deadline }

    /// Opens what it can. What cannot be opened (a sandbox without netlink) is said in one
    /// notice, and notifyd goes on without it: retries then follow the backoff alone.
    /// `bootClock` reads CLOCK_BOOTTIME in seconds.
    init(logger: Logger, report: NetworkReport,
         openNetlink: () -> (fd: Int32, port: UInt32)? = NetworkMonitor.openNetlink, openClock: () -> Int32? = NetworkMonitor.openClock,
         bootClock: @escaping () -> Double = nwatch_boot_seconds) {
        self.logger = logger
        self.bootClock = bootClock
        self.report = report
        let routing = openNetlink()
        netlink = routing?.fd
        if routing == nil {
            logger.notice("cannot watch the network (a netlink socket: \(errnoText())): a message waiting for the backend is retried with the backoff alone")
        }
        clock = openClock()
        if clock == nil {
            logger.notice("cannot watch the clock (a timerfd: \(errnoText())): a wake from sleep is noticed at notifyd's next wake-up")
        }
        descriptors = [netlink, clock].compactMap { $0 }
        interpreter = NetlinkInterpreter(port: routing?.port ?? 0)
        requestRoutes()
    }

    static func openNetlink() -> (fd: Int32, port: UInt32)? {
        var port: UInt32 = 0
        let fd = nwatch_netlink_open(&port)
        return fd < 0 ? nil : (fd, port)
    }

    static func openClock() -> Int32? {
        let fd = nwatch_clock_open()
        return fd < 0 ? nil : fd
    }

    /// `fd`, one of `descriptors`, is readable (or in error).
    func readable(_ fd: Int32, scratch: UnsafeMutableRawBufferPointer, now: Double) {
        if fd == clock {
            if nwatch_clock_changed(fd) == 1 { note(.clockSet, now: now) }
        } else if fd == netlink {
            readDatagrams(fd, scratch: scratch, now: now)
        }
    }

    /// At each wake-up of the loop: tells a resume, and ends a burst whose time has come.
    func pass(now: Double) {
        if let slept = sleep.look(boot: bootClock(), monotonic: now) {
            note(.resumed(slept: slept), now: now)
        }
        guard let ending = burst.end(now: now) else { return }
        report.connectionsStale()
        if ending.readRoutes { requestRoutes() }
        guard let change = ending.report else { return }
        switch change {
        case .up: logger.info("network: a link, an address or a default route came up; retrying what waited on the network")
        case .down: logger.info("network: a link, an address or a default route went away")
        case .resumed(let slept): logger.info("network: the machine woke after \(Int(slept)) s asleep; retrying what waited, doing what fell due")
        case .clockSet: logger.info("network: the wall clock was set; looking at the timers again")
        }
        report.changed(change)
    }

    /// The first signal of a burst says at once that connections may be stale, so that a
    /// request made while the burst is waited out does not use one that leads nowhere.
    private func note(_ signal: NetworkBurst.Signal, now: Double) {
        if burst.deadline == nil { report.connectionsStale() }
        burst.note(signal, now: now, using: &random)
    }

    func close() {
        for fd in descriptors { closeDescriptor(fd) }
    }

    private func readDatagrams(_ fd: Int32, scratch: UnsafeMutableRawBufferPointer, now: Double) {
        for _ in 0..<Self.datagramsPerPass {
            var fromKernel: Int32 = 0
            let length = nwatch_receive(fd, scratch.baseAddress, scratch.count, &fromKernel)
            if length == 0 { return }
            if length < 0 {
                let failure = errno
                guard failure == ENOBUFS else {
                    logger.debug("network: cannot read the netlink socket: \(errnoText(failure))")
                    return
                }
                // The kernel had more to say than the socket could hold. What was lost may
                // have brought the network back: treated as such, and the routes read anew.
                logger.debug("network: the kernel dropped netlink messages (\(errnoText(failure))); treating them as a change")
                note(.up, now: now)
                continue
            }
            guard fromKernel != 0 else {
                logger.debug("network: dropped a netlink datagram another process sent")
                continue
            }
            guard length <= scratch.count else {
                logger.debug("network: dropped a netlink datagram of \(length) bytes, more than the \(scratch.count) read at once")
                continue
            }
            take(NetlinkParser.parse(UnsafeRawBufferPointer(rebasing: scratch[..<length])), now: now)
        }
    }

    private func take(_ datagram: NetlinkDatagram, now: Double) {
        if let problem = datagram.problem { logger.debug("network: dropped the rest of a netlink datagram: \(problem)") }
        let (signals, defaultRoute, dumpEnded) = interpreter.take(datagram)
        for signal in signals { note(signal, now: now) }
        if dumpEnded {
            report.defaultRoute(defaultRoute)
            if dumpAgain { requestRoutes() }
        }
    }

    /// Asks for the routes, to learn whether a default route exists; one dump at a time.
    private func requestRoutes() {
        guard let netlink else { return }
        guard !interpreter.isDumping else {
            dumpAgain = true
            return
        }
        dumpAgain = false
        let sequence = nextSequence
        nextSequence &+= 1
        if nwatch_request_routes(netlink, sequence) == 0 {
            interpreter.dumpStarted(sequence: sequence)
        } else {
            logger.debug("network: cannot ask for the routes: \(errnoText())")
        }
    }
}
