import Synchronization

/// A count of the changes to anything `status` reports: the login and its password's last
/// failure, the device and its registration, the outbox. `status` answered from a copy
/// is current exactly while the count is what it was when the copy was made.
public final class StatusChanges: Sendable {
    private let count = Atomic<UInt64>(0)

    public init() {}

    public var value: UInt64 { count.load(ordering: .acquiring) }

    func bump() {
        count.add(1, ordering: .releasing)
    }
}
