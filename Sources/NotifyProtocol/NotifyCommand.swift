/// A protocol command: its wire name, its parameters (the type's own fields) and
/// the type of its result.
public protocol NotifyCommand: Codable, Sendable {
    associatedtype Result: Codable & Sendable
    static var name: String { get }

    /// The request line, newline excluded, byte for byte as `WireCoding.line` writes
    /// `Request(id:command:)`, for a command a client sends once per run (the Codable
    /// machinery's first use in a process is hundreds of thousands of instructions); nil
    /// leaves it to `JSONValueEncoder`.
    func plainRequestLine(id: Int) -> [UInt8]?

    /// The result read from the reply's `JSONValue` as its `Decodable` conformance reads
    /// it; nil leaves it to `JSONValueDecoder`.
    static func result(json: JSONValue) -> Result?
}

extension NotifyCommand {
    public func plainRequestLine(id: Int) -> [UInt8]? { nil }
    public static func result(json: JSONValue) -> Result? { nil }
}

/// A command without parameters: its request line is its name and its id, and the
/// daemon makes it without reading more of the line.
public protocol ParameterlessCommand: NotifyCommand {
    init()
}

extension ParameterlessCommand {
    public func plainRequestLine(id: Int) -> [UInt8]? {
        var json = JSONTextWriter(pretty: false, escapingSlashes: false, capacity: 32)
        json.beginObject()
        json.key("cmd")
        json.string(Self.name)
        json.key("id")
        json.int(id)
        json.endObject()
        return json.bytes
    }
}

/// A result with nothing to say beyond success.
public struct EmptyResult: Codable, Sendable, Equatable {
    public init() {}
}
