import Synchronization

/// The one owner of the settings in effect. Every part of notifyd reads a setting here
/// when it uses it, instead of keeping a copy made at start; a reload replaces the value,
/// and then tells each part that derives state from it (a timer armed, a pool sized, a
/// file opened) through that part's own `settingsChanged`.
public final class SettingsStore: Sendable {
    private let state: Mutex<(settings: RuntimeSettings, generation: UInt64)>

    public init(_ settings: RuntimeSettings = RuntimeSettings()) {
        state = Mutex((settings, 0))
    }

    public var current: RuntimeSettings { state.withLock { $0.settings } }

    /// One setting, without copying the others.
    public subscript<Value: Sendable>(_ key: KeyPath<RuntimeSettings, Value>) -> Value {
        state.withLock { $0.settings[keyPath: key] }
    }

    /// Raised by every `replace`: a part that sized something from the settings knows from
    /// it whether to look again.
    public var generation: UInt64 { state.withLock { $0.generation } }

    /// Makes `settings` the ones in effect; returns those they replace.
    @discardableResult
    public func replace(with settings: RuntimeSettings) -> RuntimeSettings {
        state.withLock { state in
            defer {
                state.settings = settings
                state.generation += 1
            }
            return state.settings
        }
    }
}
