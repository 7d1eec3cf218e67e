import NotifyCoding
import Foundation
import NotifyClient
import NotifyProtocol
import NotifySocket
import NotifyTestSupport
import Testing

/// Client input can be anything; the daemon answers and never falls over.
@Suite(.stopsFixtures) struct ProtocolRobustnessTests {
    @Test func malformedAndUnknownRequestsGetErrorsAndTheConnectionStaysOpen() async throws {
        let fixture = try await DaemonFixture()
        let path = fixture.socketPath
        let replies = try await onThread { () -> [JSONValue?] in
            let connection = try RawConnection(path: path)
            try connection.send("this is not json\n")
            let first = connection.receive()
            try connection.send("[1,2,3]\n")
            let second = connection.receive()
            try connection.send("{\"id\":5}\n")
            let third = connection.receive()
            try connection.send("{\"id\":6,\"cmd\":\"fly\"}\n")
            let fourth = connection.receive()
            try connection.send("{\"id\":7,\"cmd\":\"set-token\"}\n")
            let fifth = connection.receive()
            try connection.send("{\"id\":8,\"cmd\":\"set-token\",\"token\":42}\n")
            let sixth = connection.receive()
            try connection.send("\n   \n{\"id\":9,\"cmd\":\"ping\",\"extra\":{\"ignored\":true}}\n")
            let seventh = connection.receive()
            return [first, second, third, fourth, fifth, sixth, seventh]
        }
        #expect(replies[0]?["error"]?["code"] == .string("malformed_request"))
        #expect(replies[1]?["error"]?["code"] == .string("malformed_request"))
        #expect(replies[2]?["error"]?["code"] == .string("malformed_request"))
        #expect(replies[2]?["id"] == .number(5))
        #expect(replies[3]?["error"]?["code"] == .string("unknown_command"))
        #expect(replies[3]?["error"]?["message"]?.stringValue?.contains("set-token") == true, "lists the known commands")
        #expect(replies[4]?["error"]?["code"] == .string("invalid_argument"))
        #expect(replies[4]?["error"]?["message"] == .string("set-token needs \"token\""))
        #expect(replies[5]?["error"]?["message"] == .string("set-token: \"token\" must be a string"))
        #expect(replies[6]?["ok"] == .bool(true), "blank lines skipped, unknown fields ignored")
        #expect(replies[6]?["id"] == .number(9))
    }

    /// JSON numbers a field cannot hold: the decoder names no field and calls the line not
    /// JSON, which it is; the reply says what is wrong instead.
    @Test(arguments: [#""cmd":"outbox","limit":1.5"#, #""cmd":"outbox","limit":1e20"#, #""cmd":"outbox","limit":99999999999999999999999"#,
                      #""cmd":"register","timeout":1e400"#])
    func aNumberThatDoesNotFitItsFieldIsSaidSo(fields: String) async throws {
        let fixture = try await DaemonFixture()
        let path = fixture.socketPath
        let reply = try await onThread { () -> JSONValue? in
            let connection = try RawConnection(path: path)
            try connection.send("{\"id\":1,\(fields)}\n")
            return connection.receive()
        }
        #expect(reply?["error"]?["code"] == .string("invalid_argument"))
        let message = try #require(reply?["error"]?["message"]?.stringValue)
        #expect(message.hasSuffix(": a number in it does not fit its field: out of range, or with a fraction where a whole number is needed"), "\(message)")
        #expect(!message.contains("not valid JSON"))
    }

    /// A client that goes with its replies unread resets the connection: a script doing so
    /// in a loop must not fill the journal with a warning each.
    @Test func clientsThatGoWithRepliesUnreadAreNotWarnedAbout() async throws {
        let fixture = try await DaemonFixture()
        let path = fixture.socketPath
        try await onThread {
            for _ in 1...20 {
                let connection = try RawConnection(path: path)
                try connection.send(#"{"cmd":"ping"}"# + "\n")
                // The reply is there, unread, when the connection goes.
                var entry = pollfd(fd: connection.fd, events: Int16(POLLIN), revents: 0)
                _ = poll(&entry, 1, 60_000)
            }
        }
        #expect(await eventually { fixture.log.matches(of: /connection \d+ closed/).count >= 20 }, "\(fixture.log)")
        #expect(!fixture.log.contains("read failed"))
    }

    /// A platform notifyd does not know is refused with the ones it does.
    @Test func anUnknownPlatformIsRefusedNamingTheKnownOnes() async throws {
        let fixture = try await DaemonFixture()
        let path = fixture.socketPath
        let reply = try await onThread { () -> JSONValue? in
            let connection = try RawConnection(path: path)
            try connection.send(#"{"id":1,"cmd":"set-token","token":"ABCD","platform":"bogus"}"# + "\n")
            return connection.receive()
        }
        #expect(reply?["error"]?["code"] == .string("invalid_argument"))
        #expect(reply?["error"]?["message"] == .string("set-token: \"platform\" has an invalid value ('bogus' is not a platform; one of apns, fcm, fcmv1, gcm, wns)"))
    }

    @Test func anOversizedLineIsRefusedAndTheConnectionClosed() async throws {
        let fixture = try await DaemonFixture()
        let path = fixture.socketPath
        let (reply, end) = try await onThread { () -> (JSONValue?, JSONValue?) in
            let connection = try RawConnection(path: path)
            let huge = "{\"cmd\":\"ping\",\"pad\":\"" + String(repeating: "x", count: WireCoding.maximumLineLength + 10) + "\"}\n"
            try? connection.send(huge)
            return (connection.receive(), connection.receive())
        }
        #expect(reply?["error"]?["code"] == .string("line_too_long"))
        #expect(end == nil, "closed after the error")
        // The daemon itself carries on.
        let ping = try await fixture.call(PingCommand())
        #expect(ping.protocol == ProtocolVersion.current)
    }

    /// 513 `[` crash Foundation's decoder; the daemon answers each line and carries on.
    @Test(arguments: [512, 513, 514])
    func deeplyNestedLinesGetAnErrorNotACrash(depth: Int) async throws {
        let fixture = try await DaemonFixture()
        let path = fixture.socketPath
        let replies = try await onThread { () -> [JSONValue?] in
            let connection = try RawConnection(path: path)
            let brackets = String(repeating: "[", count: depth)
            try connection.send(brackets + "\n")
            let bare = connection.receive()
            try connection.send("{\"cmd\":\"ping\",\"id\":" + brackets + "\n")
            let asID = connection.receive()
            try connection.send("{\"cmd\":\"ping\",\"id\":2}\n")
            return [bare, asID, connection.receive()]
        }
        #expect(replies[0]?["error"]?["code"] == .string("malformed_request"))
        #expect(replies[1]?["error"]?["code"] == .string("malformed_request"))
        #expect(replies[1]?["error"]?["message"]?.stringValue?.contains("nested deeper") == true)
        #expect(replies[2]?["id"] == .number(2), "the same connection is still served")
    }

    @Test func aClientThatVanishesMidRequestDoesNotHurtTheDaemon() async throws {
        let fixture = try await DaemonFixture()
        let path = fixture.socketPath
        try await onThread {
            for _ in 0..<20 {
                let connection = try RawConnection(path: path)
                try connection.send("{\"cmd\":\"status\"}\n{\"cmd\":\"pi")
            }
        }
        let ping = try await fixture.call(PingCommand())
        #expect(ping.version == NotifydVersion.current)
    }

    @Test func manyClientsAtOnceAreAllAnswered() async throws {
        let fixture = try await DaemonFixture()
        let answers = try await withThrowingTaskGroup(of: Int32.self) { group in
            for _ in 0..<50 {
                group.addTask { try await fixture.call(PingCommand()).pid }
            }
            return try await group.reduce(into: [Int32]()) { $0.append($1) }
        }
        #expect(answers.count == 50)
        #expect(Set(answers) == [getpid()])
    }

    /// The reply carries the id exactly as written: integers beyond 2^53 and beyond 64
    /// bits, `1.0`, escapes, nested values, for a success and for every kind of error.
    @Test(arguments: ["9007199254740993", "-9223372036854775809", "18446744073709551616", "1.0", "1e400", "-0",
                      #""\u0041\n""#, "null", #"[1, {"a" : 2}]"#, #""x""#])
    func idsRoundTripExactly(id: String) async throws {
        let fixture = try await DaemonFixture()
        let path = fixture.socketPath
        let lines = [
            #"{"cmd":"ping","id":\#(id)}"#, #"{"id":\#(id),"cmd":"fly"}"#, #"{"id":\#(id),"cmd":7}"#,
            #"{"id":\#(id),"cmd":"set-token","token":42}"#, #"{"id":0,"id":\#(id),"cmd":"ping"}"#,
        ]
        let replies = try await onThread { () -> [String] in
            let connection = try RawConnection(path: path)
            try connection.send(lines.joined(separator: "\n") + "\n")
            return lines.map { _ in
                guard case .line(let bytes) = connection.reader.next() else { return "" }
                return String(decoding: bytes, as: UTF8.self)
            }
        }
        #expect(replies[0].hasPrefix(#"{"id":\#(id),"ok":true,"#), "\(replies[0])")
        for reply in replies[1...3] { #expect(reply.contains(#","id":\#(id),"ok":false}"#), "\(reply)") }
        #expect(replies[4].hasPrefix(#"{"id":\#(id),"ok":true,"#), "the last of repeated ids, as the decoder takes: \(replies[4])")
    }

    /// ping is answered on the socket loop, status by the actors: pipelined together,
    /// their replies still come in request order.
    @Test func pingsAnsweredAtOnceStayInOrderBehindOtherCommands() async throws {
        let fixture = try await DaemonFixture()
        let path = fixture.socketPath
        let ids = try await onThread { () -> [JSONValue?] in
            let connection = try RawConnection(path: path)
            let lines = (1...400).map { #"{"id":\#($0),"cmd":"\#($0 % 2 == 0 ? "ping" : "status")"}"# }
            try connection.send(lines.joined(separator: "\n") + "\n")
            return (1...400).map { _ in connection.receive()?["id"] }
        }
        #expect(ids == (1...400).map { .number(Double($0)) })
    }

    @Test func anUnknownErrorCodeFromANewerDaemonDecodes() throws {
        let line = #"{"id":1,"ok":false,"error":{"code":"quantum_flux","message":"try later"}}"#
        let response = try WireCoding.decoder().decode(Response<EmptyResult>.self, from: Data(line.utf8))
        #expect(response.error?.code == ErrorCode("quantum_flux"))
        #expect(response.error?.message == "try later")
    }
}
