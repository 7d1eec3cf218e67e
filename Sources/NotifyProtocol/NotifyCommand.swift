/// A protocol command: its wire name, its parameters (the type's own fields) and
/// the type of its result.
public protocol NotifyCommand: Codable, Sendable {
    associatedtype Result: Codable & Sendable
    static var name: String { get }
}

/// A result with nothing to say beyond success.
public struct EmptyResult: Codable, Sendable, Equatable {
    public init() {}
}
