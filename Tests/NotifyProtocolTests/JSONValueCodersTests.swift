import NotifyCoding
import Foundation
import NotifyProtocol
import Testing

/// notifyctl reads and writes the wire with `JSONValueDecoder` and `JSONValueEncoder`,
/// notifyd with Foundation's coders (`WireCoding`): every line must read, and every request
/// write, the same both ways. Replies and events are notifyd's own lines (and every change
/// of one field), requests each command notifyctl sends.
struct JSONValueCodersTests {
    /// The reply or event as notifyd wrote it, and the type notifyctl reads it as.
    static let lines: [(line: String, read: @Sendable (JSONValue, [UInt8]) -> Void)] = [
        (#"{"account":{"password_source":"file","user":"alice"},"backend":"http://127.0.0.1:33493","daemon":{"password_source":"file","pid":6436,"protocol":1,"socket":"/tmp/m/y1/sock","started_at":"2026-11-27T15:45:14Z","state_directory":"/tmp/m/y1/state","version":"0.1.0"},"device":{"platform":"apns","tags":[],"token":"ABCDEF0123"},"network":{"monitor":"netlink"},"outbox":{"failed":0,"held":0,"waiting":0},"registration":{"failures":0,"id":"9598963024928965-9668948107672018-2","last_attempt_at":"2026-11-27T15:45:15Z","next_attempt_at":"2026-11-28T15:45:15Z","registered":{"backend":"http://127.0.0.1:33493","handle":"ABCDEF0123","platform":"apns","tags":[],"user":"alice"},"registered_at":"2026-11-27T15:45:15Z","state":"registered"}}"#,
         agree(StatusResult.self)),
        (#"{"deliveries":[{"attempts":2,"created_at":"2026-11-27T13:23:38Z","error":{"code":"backend_unavailable","message":"HTTP 503"},"expires_at":"2026-12-04T15:57:17Z","id":"0000000400-apns","next_attempt_at":"2026-11-27T13:24:08Z","pns":"apns","preview":"h\u00e9","state":"queued","to":"bob"}],"purged":3}"#,
         agree(OutboxResult.self)),
        (#"{"deliveries":[{"attempts":1,"created_at":"2026-11-27T15:57:11Z","id":"0000000421-apns","pns":"apns","preview":"hi","state":"delivered","to":"user0"}]}"#,
         agree(SendResult.self)),
        (#"{"pid":6436,"protocol":1,"version":"0.1.0"}"#, agree(PingResult.self)),
        (#"{"applied":["keep_alive"],"config":"/root/.config/notifyd/config","problems":[],"restart_needed":["socket"]}"#, agree(ReloadResult.self)),
        (#"{"registration":{"failures":0,"id":"6904934244998782-4977098452469005-3","last_attempt_at":"2026-11-27T15:57:11Z","next_attempt_at":"2026-11-28T15:57:11Z","registered":{"backend":"http://127.0.0.1:33493","handle":"ABCDEF0124","platform":"apns","tags":["news","from:x"],"user":"alice"},"registered_at":"2026-11-27T15:57:11Z","state":"registered"},"settled":true,"token_platform":{"chosen":"kept","platform":"apns"}}"#,
         agree(RegistrationOutcome.self)),
        (#"{"deleted_id":"9598963024928965-9668948107672018-2","registration":{"failures":0,"last_attempt_at":"2026-11-27T15:57:11Z","message":"not registered on request: run `notifyctl register` to register again","state":"unregistered"}}"#,
         agree(UnregisterResult.self)),
        (#"{"retried":2}"#, agree(OutboxRetryResult.self)),
        (#"{"delivery":{"attempts":0,"created_at":"2026-11-27T15:57:17Z","id":"0000000423-wns","pns":"wns","preview":"x","state":"cancelled","to":"nobody"}}"#, agree(OutboxCancelResult.self)),
        (#"{"deleted_id":"6904934244998782-4977098452469005-3","user":"alice","warning":"the registration stays at the backend"}"#, agree(LogoutResult.self)),
        (#"{"pid":6436}"#, agree(StopResult.self)),
        (#"{"event":"registration","registration":{"failures":0,"id":"6904934244998782-4977098452469005-3","last_attempt_at":"2026-11-27T15:57:17Z","message":"talking to the backend","registered":{"backend":"http://127.0.0.1:33493","handle":"ABCDEF0124","platform":"apns","tags":["news","from:x"],"user":"alice"},"registered_at":"2026-11-27T15:57:11Z","state":"registering"},"time":"2026-11-27T15:57:17Z"}"#,
         agree(RegistrationEvent.self)),
        (#"{"delivery":{"attempts":0,"created_at":"2026-11-27T15:57:17Z","expires_at":"2026-12-04T15:57:17Z","id":"0000000422-apns","pns":"apns","preview":"hi","state":"queued","to":"user0"},"event":"send","time":"2026-11-27T15:57:17Z"}"#,
         agree(SendEvent.self)),
        (#"{"change":"resumed","event":"network","network":{"backend_unreachable_since":"2026-11-27T15:50:00Z","checking_every":30,"monitor":"netlink","offline_since":"2026-11-27T15:40:00Z"},"slept":12.5,"time":"2026-11-27T15:57:17Z"}"#,
         agree(NetworkEvent.self)),
        (#"{"event":"shutdown","time":"2026-11-27T15:57:17Z"}"#, agree(ShutdownEvent.self)),
        (#"{"id":3,"ok":false,"error":{"code":"not_logged_in","message":"log in first"}}"#, agreeOnResponse(PingResult.self)),
        (#"{"id":"a","ok":true,"result":{"pid":1,"protocol":1,"version":"0.1.0"}}"#, agreeOnResponse(PingResult.self)),
    ]

    /// A reader that checks `T` reads the same from a line both ways; where notifyctl reads
    /// it, Foundation must read the same value, and where Foundation reads it, notifyctl must
    /// too (unless the parser refuses the line: what notifyd never writes).
    static func agree<T: Decodable & Equatable & Sendable>(_ type: T.Type) -> @Sendable (JSONValue, [UInt8]) -> Void {
        { value, line in
            let foundation = try? WireCoding.decoder().decode(T.self, from: Data(line))
            let ours = try? JSONValueDecoder().decode(T.self, from: value)
            #expect(ours == foundation, "\(T.self) from \(String(decoding: line, as: UTF8.self))")
        }
    }

    /// `agree` for a whole reply line.
    static func agreeOnResponse<R: Codable & Sendable & Equatable>(_ type: R.Type) -> @Sendable (JSONValue, [UInt8]) -> Void {
        { value, line in
            let foundation = try? WireCoding.decoder().decode(Response<R>.self, from: Data(line))
            let ours = try? JSONValueDecoder().decode(Response<R>.self, from: value)
            #expect((ours == nil) == (foundation == nil) && ours?.id == foundation?.id && ours?.ok == foundation?.ok
                    && ours?.result == foundation?.result && ours?.error == foundation?.error, "\(String(decoding: line, as: UTF8.self))")
        }
    }

    @Test(arguments: lines.indices)
    func notifydsLineReadsTheSameBothWays(index: Int) throws {
        let (line, read) = Self.lines[index]
        let bytes = Array(line.utf8)
        let value = try #require(JSONValue(parsing: bytes))
        read(value, bytes)
        // And as notifyd wrote it: the same text out of the value.
        let object = try JSONSerialization.jsonObject(with: Data(JSONTextWriter.line(value)))
        #expect(NSDictionary(dictionary: object as? [String: Any] ?? [:]) == NSDictionary(dictionary: try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] ?? [:]))
    }

    /// Each member taken out, or given another kind of value: both read it, or neither.
    @Test(arguments: lines.indices)
    func everyChangeOfOneFieldReadsTheSameBothWays(index: Int) throws {
        let (line, read) = Self.lines[index]
        let value = try #require(JSONValue(parsing: Array(line.utf8)))
        let replacements: [JSONValue?] = [nil, .null, .string("x"), .string("2026-11-27T15:57:17Z"), .number(1.5), .number(7), .number(-1),
                                          .number(3e9), .bool(true), .array([]), .array([.string("a")]), .object([:])]
        var checked = 0
        for variant in Self.variants(of: value, replacements: replacements) {
            let bytes = JSONTextWriter.line(variant)
            read(try #require(JSONValue(parsing: bytes)), bytes)
            checked += 1
        }
        #expect(checked > 10)
    }

    static func variants(of value: JSONValue, replacements: [JSONValue?]) -> [JSONValue] {
        switch value {
        case .object(let members):
            return members.keys.flatMap { key in
                replacements.map { replacement in
                    var changed = members
                    changed[key] = replacement
                    return JSONValue.object(changed)
                } + variants(of: members[key] ?? .null, replacements: replacements).map { inner in
                    var changed = members
                    changed[key] = inner
                    return JSONValue.object(changed)
                }
            }
        case .array(let elements):
            return elements.indices.flatMap { index in
                variants(of: elements[index], replacements: replacements.compactMap { $0 }).map { inner in
                    var changed = elements
                    changed[index] = inner
                    return JSONValue.array(changed)
                }
            }
        default:
            return []
        }
    }

    /// Every request notifyctl writes, byte for byte as Foundation's encoder writes it.
    @Test func requestsAreWrittenAsTheEncoderWritesThem() throws {
        func same<Command: NotifyCommand>(_ command: Command, id: JSONValue? = .number(7), sourceLocation: SourceLocation = #_sourceLocation) throws {
            let request = Request(id: id, command: command)
            let ours = JSONTextWriter.line(try JSONValueEncoder().encode(request))
            let foundation = Array(try WireCoding.encoder().encode(request))
            #expect(String(decoding: ours, as: UTF8.self) == String(decoding: foundation, as: UTF8.self), sourceLocation: sourceLocation)
        }
        try same(LoginCommand(user: "bob", password: "p\"w/\u{1}é", backend: "https://b.example/app"))
        try same(LoginCommand(user: "bob", password: nil, backend: nil), id: .string("x"))
        try same(SetTokenCommand(token: "A1B2", platform: .fcm, wait: false, timeout: 2.5))
        try same(SetTokenCommand(token: "A1B2"), id: nil)
        try same(SetTagsCommand(tags: ["news", "from:alice", ""]))
        try same(SetTagsCommand(tags: []))
        try same(RegisterCommand())
        try same(LogoutCommand(force: true))
        try same(SendCommand(to: "bob", message: "hé 🍷\n\"", pns: ["apns", "wns"], wait: true, queue: false, timeout: 0.25))
        try same(SendCommand(to: "bob", message: "x", timeout: 1e-5))
        try same(OutboxCommand(purge: true))
        try same(OutboxRetryCommand(delivery: "0000000001-apns"))
        try same(OutboxCancelCommand(delivery: "0000000001-apns"))
        for command in [PingCommand()] as [PingCommand] { try same(command) }
        try same(StatusCommand())
        try same(WatchCommand())
        try same(StopCommand())
        try same(ReloadCommand())
        try same(UnregisterCommand())
    }

    /// Numbers as the encoder writes a `Double`; dates as its `.iso8601` strategy.
    @Test func valuesAreWrittenAsTheEncoderWritesThem() throws {
        let numbers: [Double] = [0, -0.0, 1, -7, 30, 2.5, 0.1, 0.30000000000000004, 1e-05, 1e20, 1e300, 123456789012345680, .leastNonzeroMagnitude]
        for number in numbers {
            #expect(JSONTextWriter.line(try JSONValueEncoder().encode([number])) == Array(try WireCoding.encoder().encode([number])), "\(number)")
        }
        let date = Date(timeIntervalSince1970: 1_795_785_818.75)
        #expect(JSONTextWriter.line(try JSONValueEncoder().encode(["at": date])) == Array(try WireCoding.encoder().encode(["at": date])))
        #expect(try JSONValueDecoder().decode([String: Date].self, from: .object(["at": .string("2026-11-27T13:23:38Z")]))
                == WireCoding.decoder().decode([String: Date].self, from: Data(#"{"at":"2026-11-27T13:23:38Z"}"#.utf8)))
        #expect(throws: (any Error).self) { try JSONValueEncoder().encode([Double.nan]) }
    }
}
