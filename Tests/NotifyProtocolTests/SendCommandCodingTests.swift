import NotifyCoding
import Foundation
import NotifyProtocol
import Testing

/// `send` and `outbox` on the wire: flat requests, snake_case statuses, open delivery states.
struct SendCommandCodingTests {
    private static func encoded<T: Encodable>(_ value: T) throws -> String {
        String(decoding: try WireCoding.encoder().encode(value), as: UTF8.self)
    }

    private static func tree(_ text: String) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
    }

    private static func decoded<T: Decodable>(_ type: T.Type, _ text: String) throws -> T {
        try WireCoding.decoder().decode(type, from: Data(text.utf8))
    }

    /// 2027-01-15T08:00:00Z
    private static let created = Date(timeIntervalSince1970: 1_800_000_000)

    private static let queuedStatus = DeliveryStatus(
        id: "0000000007-apns", to: "bob", pns: "apns", state: .queued, attempts: 2, createdAt: created,
        nextAttemptAt: created.addingTimeInterval(60), expiresAt: created.addingTimeInterval(3600),
        error: WireError(code: .backendUnavailable, message: "HTTP 503"), preview: "hello")

    // MARK: Requests

    @Test func sendEncodesFlat() throws {
        let message = "He said \"hi\"\n<b>&🍷"
        let request = Request(id: nil, command: SendCommand(to: "bob", message: message, pns: ["apns"]))
        #expect(try Self.tree(Self.encoded(request)) == .object([
            "cmd": .string("send"),
            "to": .string("bob"),
            "message": .string(message),
            "pns": .array([.string("apns")]),
        ]))
    }

    @Test func sendWithEveryOption() throws {
        let command = SendCommand(to: "carol", message: "hi", pns: ["apns", "wns"], wait: true, queue: false, timeout: 12.5)
        let text = try Self.encoded(Request(id: .number(4), command: command))
        #expect(try Self.tree(text) == .object([
            "cmd": .string("send"),
            "id": .number(4),
            "to": .string("carol"),
            "message": .string("hi"),
            "pns": .array([.string("apns"), .string("wns")]),
            "wait": .bool(true),
            "queue": .bool(false),
            "timeout": .number(12.5),
        ]))

        let back = try Self.decoded(SendCommand.self, text)
        #expect(back.to == "carol")
        #expect(back.message == "hi")
        #expect(back.pns == ["apns", "wns"])
        #expect(back.wait == true)
        #expect(back.queue == false)
        #expect(back.timeout == 12.5)
        #expect(try Self.decoded(RequestHeader.self, text).cmd == "send")
    }

    @Test func sendWithoutOptionsLeavesThemForTheDaemon() throws {
        let text = try Self.encoded(Request(id: nil, command: SendCommand(to: "bob", message: "hi")))
        #expect(try Self.tree(text) == .object(["cmd": .string("send"), "to": .string("bob"), "message": .string("hi")]))
        let back = try Self.decoded(SendCommand.self, #"{"cmd":"send","to":"bob","message":"hi"}"#)
        #expect(back.pns == nil)
        #expect(back.wait == nil)
        #expect(back.queue == nil)
        #expect(back.timeout == nil)
    }

    /// A message is always needed; a recipient may be named by tags instead (an
    /// installations backend), which the daemon checks, saying so, rather than the decoder.
    @Test func aSendWithoutAMessageDoesNotDecodeAndOneWithoutRecipientDoes() throws {
        #expect(throws: DecodingError.self) { try Self.decoded(SendCommand.self, #"{"cmd":"send","to":"bob"}"#) }
        let tagged = try Self.decoded(SendCommand.self, #"{"cmd":"send","message":"hi","tags":["news"],"action":"open","silent":true}"#)
        #expect(tagged.to == nil && tagged.tags == ["news"] && tagged.action == "open" && tagged.silent == true)
        #expect(SendCommand(plainLine: Array(#"{"cmd":"send","to":"bob","message":"hi","tags":["news"]}"#.utf8)) == nil,
                "a line with tags is left to the decoder, not read without them")
    }

    @Test func outboxRequests() throws {
        #expect(try Self.tree(Self.encoded(Request(id: .number(1), command: OutboxCommand())))
            == .object(["cmd": .string("outbox"), "id": .number(1)]))
        #expect(try Self.tree(Self.encoded(Request(id: nil, command: OutboxCommand(purge: true))))
            == .object(["cmd": .string("outbox"), "purge": .bool(true)]))
        #expect(try Self.decoded(OutboxCommand.self, #"{"cmd":"outbox","purge":true}"#).purge == true)
        #expect(try Self.decoded(OutboxCommand.self, #"{"cmd":"outbox"}"#).purge == nil)
    }

    @Test func commandNames() {
        #expect(SendCommand.name == "send")
        #expect(OutboxCommand.name == "outbox")
        #expect(EventName.send == "send")
    }

    // MARK: Statuses

    @Test func deliveryStatusUsesSnakeCase() throws {
        #expect(try Self.tree(Self.encoded(Self.queuedStatus)) == .object([
            "id": .string("0000000007-apns"),
            "to": .string("bob"),
            "pns": .string("apns"),
            "state": .string("queued"),
            "attempts": .number(2),
            "created_at": .string("2027-01-15T08:00:00Z"),
            "next_attempt_at": .string("2027-01-15T08:01:00Z"),
            "expires_at": .string("2027-01-15T09:00:00Z"),
            "error": .object(["code": .string("backend_unavailable"), "message": .string("HTTP 503")]),
            "preview": .string("hello"),
        ]))
    }

    @Test func deliveryStatusDecodesFromSnakeCase() throws {
        let status = try Self.decoded(DeliveryStatus.self, """
            {"id":"0000000007-apns","to":"bob","pns":"apns","state":"queued","attempts":2,
             "created_at":"2027-01-15T08:00:00Z","next_attempt_at":"2027-01-15T08:01:00Z",
             "expires_at":"2027-01-15T09:00:00Z",
             "error":{"code":"backend_unavailable","message":"HTTP 503"},"preview":"hello"}
            """)
        #expect(status == Self.queuedStatus)
    }

    @Test func aDeliveredStatusLeavesOutWhatItDoesNotHave() throws {
        let status = DeliveryStatus(id: "0000000001-wns", to: "bob", pns: "wns", state: .delivered, attempts: 1, createdAt: Self.created)
        #expect(try Self.tree(Self.encoded(status)) == .object([
            "id": .string("0000000001-wns"),
            "to": .string("bob"),
            "pns": .string("wns"),
            "state": .string("delivered"),
            "attempts": .number(1),
            "created_at": .string("2027-01-15T08:00:00Z"),
        ]))
        let back = try Self.decoded(DeliveryStatus.self, try Self.encoded(status))
        #expect(back == status)
    }

    @Test(arguments: [("queued", DeliveryState.queued), ("delivered", .delivered), ("failed", .failed), ("expired", .expired)])
    func knownStatesOnTheWire(raw: String, state: DeliveryState) throws {
        #expect(state.rawValue == raw)
        #expect(try Self.encoded([state]) == "[\"\(raw)\"]")
        #expect(try Self.decoded([DeliveryState].self, "[\"\(raw)\"]") == [state])
    }

    @Test func anUnknownDeliveryStateDecodes() throws {
        let status = try Self.decoded(DeliveryStatus.self, """
            {"id":"0000000002-fcm","to":"bob","pns":"fcm","state":"bounced","attempts":1,
             "created_at":"2027-01-15T08:00:00Z","color":"green"}
            """)
        #expect(status.state == DeliveryState("bounced"))
        #expect(status.state.rawValue == "bounced")
        #expect(status.state.description == "bounced")
        #expect(![DeliveryState.queued, .delivered, .failed, .expired].contains(status.state))
        // And it goes out again as it came in.
        #expect(try Self.tree(Self.encoded(status)).objectValue?["state"] == .string("bounced"))
    }

    // MARK: Results and events

    @Test func sendResultRoundTrips() throws {
        let result = SendResult(deliveries: [Self.queuedStatus])
        let text = try Self.encoded(result)
        guard case .object(let object) = try Self.tree(text), case .array(let deliveries)? = object["deliveries"] else {
            Issue.record("not an object with a deliveries array: \(text)")
            return
        }
        #expect(object.keys.sorted() == ["deliveries"])
        #expect(deliveries.count == 1)
        #expect(try Self.decoded(SendResult.self, text) == result)
    }

    @Test func aSendReplyDecodes() throws {
        let response = try Self.decoded(Response<SendResult>.self, """
            {"id":1,"ok":true,"result":{"deliveries":[{"id":"0000000003-apns","to":"bob","pns":"apns",
             "state":"delivered","attempts":1,"created_at":"2027-01-15T08:00:00Z","preview":"hi"}]}}
            """)
        #expect(response.ok)
        let delivery = try #require(response.result?.deliveries.first)
        #expect(delivery.state == .delivered)
        #expect(delivery.createdAt == Self.created)
        #expect(delivery.nextAttemptAt == nil)
        #expect(delivery.preview == "hi")
    }

    @Test func outboxResultCarriesPurgedOnlyWhenSet() throws {
        let listing = OutboxResult(deliveries: [Self.queuedStatus])
        guard case .object(let plain) = try Self.tree(Self.encoded(listing)) else {
            Issue.record("not an object")
            return
        }
        #expect(plain.keys.sorted() == ["deliveries"])

        let purge = OutboxResult(deliveries: [], purged: 3)
        #expect(try Self.tree(Self.encoded(purge)) == .object(["deliveries": .array([]), "purged": .number(3)]))
        #expect(try Self.decoded(OutboxResult.self, try Self.encoded(purge)) == purge)
    }

    @Test func sendEventSaysWhatItIs() throws {
        let event = SendEvent(time: Self.created.addingTimeInterval(5), delivery: Self.queuedStatus)
        #expect(event.event == "send")
        let text = try Self.encoded(event)
        guard case .object(let object) = try Self.tree(text) else {
            Issue.record("not an object: \(text)")
            return
        }
        #expect(object.keys.sorted() == ["delivery", "event", "time"])
        #expect(object["event"] == .string("send"))
        #expect(object["time"] == .string("2027-01-15T08:00:05Z"))
        #expect(object["delivery"] == (try Self.tree(Self.encoded(Self.queuedStatus))))
        #expect(try Self.decoded(SendEvent.self, text) == event)

        let header = try Self.decoded(IncomingLineHeader.self, text)
        #expect(header.event == "send")
        #expect(header.ok == nil)
    }
}

private extension JSONValue {
    var objectValue: [String: JSONValue]? {
        if case .object(let object) = self { return object }
        return nil
    }
}
