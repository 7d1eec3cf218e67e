#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What notifyd knows of this machine's network, in `status` and in `network` events.
public struct NetworkStatus: Codable, Hashable, Sendable {
    /// What tells notifyd that the network changed: "netlink" (Linux) or "path_monitor"
    /// (macOS). Absent when there is nothing: retries then follow the backoff alone.
    public var monitor: String?
    /// Since when requests to the backend have found no route to it; absent while they
    /// do not. Meanwhile nothing counts as the backend's failure, and the next change of
    /// the network is when notifyd tries again.
    public var offlineSince: Date?
    /// Since when the backend could not be reached at all (refused, no name, no connection
    /// in time, TLS failed) while notifyd is online; absent once it answers or nothing
    /// waits on it. Meanwhile notifyd checks, without an HTTP request, whether it is back.
    public var backendUnreachableSince: Date?
    /// Seconds between those checks now; they grow to 30.
    public var checkingEvery: Double?

    public init(monitor: String? = nil, offlineSince: Date? = nil, backendUnreachableSince: Date? = nil, checkingEvery: Double? = nil) {
        self.monitor = monitor
        self.offlineSince = offlineSince
        self.backendUnreachableSince = backendUnreachableSince
        self.checkingEvery = checkingEvery
    }

    enum CodingKeys: String, CodingKey {
        case monitor
        case offlineSince = "offline_since"
        case backendUnreachableSince = "backend_unreachable_since"
        case checkingEvery = "checking_every"
    }
}

/// Why a `network` event came.
public struct NetworkChangeKind: OpenEnumeration {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// A request found no route to the backend: notifyd is offline.
    public static let offline = NetworkChangeKind("offline")
    /// notifyd no longer waits for the network: the backend answered, or what waited is gone.
    public static let online = NetworkChangeKind("online")
    /// A link, an address or a default route came up: what waited on the network is tried again.
    public static let up = NetworkChangeKind("up")
    /// A link, an address or a default route went away (and none came up).
    public static let down = NetworkChangeKind("down")
    /// The machine woke from sleep (`slept` says how long it slept): treated as `up`, and
    /// whatever fell due meanwhile is done now.
    public static let resumed = NetworkChangeKind("resumed")
    /// The wall clock was set: timers are looked at again, as after `resumed`.
    public static let clockSet = NetworkChangeKind("clock_set")
    /// The backend could not be reached (the network can): notifyd checks for its return.
    public static let backendUnreachable = NetworkChangeKind("backend_unreachable")
    /// The backend can be reached again, or nothing waits on it any more.
    public static let backendReachable = NetworkChangeKind("backend_reachable")
}

extension EventName {
    public static let network = "network"
}

/// `{"event":"network","change":"offline",...}`.
public struct NetworkEvent: Codable, Hashable, Sendable {
    public var event: String = EventName.network
    public var time: Date
    public var change: NetworkChangeKind
    /// Seconds asleep, for `resumed`.
    public var slept: Double?
    public var network: NetworkStatus

    public init(time: Date, change: NetworkChangeKind, slept: Double? = nil, network: NetworkStatus) {
        self.time = time
        self.change = change
        self.slept = slept
        self.network = network
    }
}
