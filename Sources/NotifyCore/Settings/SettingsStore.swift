import Synchronization

/// The one owner of the settings in effect. Every part of notifyd reads a setting here
/// when it uses it, instead of keeping a copy made at start. A part that derives state
/// from the settings (a timer armed, a pool sized, a cached password) subscribes where it
/// is made, and a reload publishes the new settings once: no reload can forget a part.
public final class SettingsStore: Sendable {
    private let state: Mutex<(settings: RuntimeSettings, text: [String: String], generation: UInt64)>
    private let subscribers = Mutex<[@Sendable () async -> Void]>([])

    /// `text`: each setting as it was written (`retry_min` = `5s`), by key, so that a
    /// reload can tell which it changes.
    public init(_ settings: RuntimeSettings = RuntimeSettings(), text: [String: String] = [:]) {
        state = Mutex((settings, text, 0))
    }

    /// Each setting in effect as it was written, by key.
    public var text: [String: String] { state.withLock { $0.text } }

    public var current: RuntimeSettings { state.withLock { $0.settings } }

    /// One setting, without copying the others.
    public subscript<Value: Sendable>(_ key: KeyPath<RuntimeSettings, Value>) -> Value {
        state.withLock { $0.settings[keyPath: key] }
    }

    /// Raised by every `replace`: a part that sized something from the settings knows from
    /// it whether to look again.
    public var generation: UInt64 { state.withLock { $0.generation } }

    /// `changed` runs after every `publish`, after those subscribed before it: a part
    /// made from another (the outbox from the account keeper) hears after it. A subscriber
    /// holds its part weakly, so that the store does not keep it alive.
    public func subscribe(_ changed: @escaping @Sendable () async -> Void) {
        subscribers.withLock { $0.append(changed) }
    }

    /// Makes `settings` the ones in effect, then tells each subscriber in turn. `text`:
    /// as written, when it is known.
    public func publish(_ settings: RuntimeSettings, text: [String: String]? = nil) async {
        state.withLock { state in
            state.settings = settings
            if let text { state.text = text }
            state.generation += 1
        }
        for changed in subscribers.withLock({ $0 }) { await changed() }
    }
}
