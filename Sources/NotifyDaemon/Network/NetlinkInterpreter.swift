/// What the kernel's routing messages mean for notifyd, from one datagram to the next:
/// which of them bring connectivity back (a link that starts running, an address, a
/// default route) and, from a dump of the routes, whether a default route that carries
/// packets exists. A pure value: the monitor feeds it what it read, the tests anything.
struct NetlinkInterpreter {
    /// Our socket's port: the kernel's replies to our dump carry it, notifications do not.
    let port: UInt32
    /// Whether each interface was running when last heard of. A wireless interface sends
    /// RTM_NEWLINK for many things besides its carrier; only a change counts.
    private var running: [Int32: Bool] = [:]
    /// The dump under way: its sequence number and the usable default routes seen so far.
    private var dump: (sequence: UInt32, defaultRoutes: Int)?
    static let mostInterfaces = 4096

    init(port: UInt32) {
        self.port = port
    }

    var isDumping: Bool { dump != nil }

    /// A dump of the routes was asked for with `sequence`.
    mutating func dumpStarted(sequence: UInt32) {
        dump = (sequence, 0)
    }

    /// What one datagram says: signals for the burst, and whether a default route exists
    /// once a dump of ours has ended (nil until then, or when it failed).
    mutating func take(_ datagram: NetlinkDatagram) -> (signals: [NetworkBurst.Signal], defaultRoute: Bool?, dumpEnded: Bool) {
        var signals: [NetworkBurst.Signal] = []
        var defaultRoute: Bool?
        var dumpEnded = false
        for (header, message) in datagram.messages {
            if let current = dump, header.port == port, header.sequence == current.sequence {
                switch message {
                case .defaultRoute(let usable, false) where usable:
                    dump?.defaultRoutes += 1
                case .done:
                    defaultRoute = current.defaultRoutes > 0
                    dump = nil
                    dumpEnded = true
                case .error(let code) where code != 0:
                    dump = nil
                    dumpEnded = true
                default:
                    break
                }
                continue
            }
            if let signal = signal(for: message) { signals.append(signal) }
        }
        return (signals, defaultRoute, dumpEnded)
    }

    private mutating func signal(for message: NetlinkMessage) -> NetworkBurst.Signal? {
        switch message {
        case .link(_, _, true, _):
            return nil
        case .link(let index, _, _, true):
            return running.removeValue(forKey: index) == nil ? nil : .down
        case .link(let index, let isRunning, _, false):
            let was = running[index]
            guard was != isRunning else { return nil }
            if was == nil && running.count >= Self.mostInterfaces { running = [:] }
            running[index] = isRunning
            return isRunning ? .up : .down
        case .address(_, true, _):
            return nil
        case .address(_, false, let removed):
            return removed ? .down : .up
        case .defaultRoute(let usable, let removed):
            return usable && !removed ? .up : .down
        case .done, .error, .other:
            return nil
        }
    }
}
