import Synchronization

/// One owner's part of what `status` reports, published by the owner as part of each change
/// to the state the part is made from, and read by `status` on the socket loop without a
/// hop onto the owner (an actor) or a wake of a pool thread.
///
/// A part is not a copy to be invalidated: the owner makes it afresh from its own state
/// whenever that state changes (a `didSet` on the state itself), so no change can leave
/// `status` showing what was. What lives under a lock already (the login, the password
/// source's runs, reachability, the settings) is read by `status` directly and needs no part.
public final class StatusPart<Value: Sendable>: Sendable {
    private let value: Mutex<Value>

    init(_ initial: Value) {
        value = Mutex(initial)
    }

    public var current: Value { value.withLock { $0 } }

    func publish(_ newValue: Value) {
        value.withLock { $0 = newValue }
    }
}
