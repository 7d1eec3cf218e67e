/// A set of named values that may grow: error codes, registration and delivery states.
/// A newer daemon may send a value this client has never heard of; it must decode fine
/// (and be shown as it is), never fail. Encoded as its plain string (the standard library
/// provides Codable for string-backed RawRepresentable types).
public protocol OpenEnumeration: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible where RawValue == String {
    init(rawValue: String)
}

extension OpenEnumeration {
    public init(_ rawValue: String) { self.init(rawValue: rawValue) }
    public var description: String { rawValue }
}
