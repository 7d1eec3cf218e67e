#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What every request line has besides its command's own fields.
/// The daemon decodes this first, then the command's parameters from the same line.
public struct RequestHeader: Decodable, Sendable {
    public var id: JSONValue?
    public var cmd: String?
    /// True when `cmd` is there but is not a string: the id is still read, so that the
    /// error reply carries it.
    public var cmdIsNotAString = false

    private enum Keys: String, CodingKey { case id, cmd }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        // An id the decoder cannot hold (1e400) is still echoed from the line's own bytes.
        id = try? container.decodeIfPresent(JSONValue.self, forKey: .id)
        if container.contains(.cmd) {
            cmd = try? container.decode(String.self, forKey: .cmd)
            cmdIsNotAString = cmd == nil
        }
    }
}

/// A request as a client writes it: the command's fields plus `id` and `cmd`, flat in one object.
public struct Request<Command: NotifyCommand>: Encodable, Sendable {
    public var id: JSONValue?
    public var command: Command

    public init(id: JSONValue?, command: Command) {
        self.id = id
        self.command = command
    }

    private enum HeaderKeys: String, CodingKey { case id, cmd }

    public func encode(to encoder: any Encoder) throws {
        try command.encode(to: encoder)
        var container = encoder.container(keyedBy: HeaderKeys.self)
        try container.encode(Command.name, forKey: .cmd)
        try container.encodeIfPresent(id, forKey: .id)
    }
}

/// A reply line. `result` is present when `ok` is true, `error` when it is false.
public struct Response<Result: Codable & Sendable>: Codable, Sendable {
    public var id: JSONValue?
    public var ok: Bool
    public var result: Result?
    public var error: WireError?

    public init(id: JSONValue?, result: Result) {
        self.id = id
        self.ok = true
        self.result = result
        self.error = nil
    }

    public init(id: JSONValue?, error: WireError) {
        self.id = id
        self.ok = false
        self.result = nil
        self.error = error
    }
}

/// The parts of any line from the daemon that tell a reply from an event.
public struct IncomingLineHeader: Decodable, Sendable {
    public var id: JSONValue?
    public var ok: Bool?
    public var event: String?
}
