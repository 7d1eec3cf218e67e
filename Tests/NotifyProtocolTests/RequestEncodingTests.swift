import NotifyCoding
import Foundation
import NotifyProtocol
import Testing

/// A request is one flat object: the command's own fields next to `id` and `cmd`.
struct RequestEncodingTests {
    @Test func setTokenEncodesFlatWithCmdAndId() throws {
        let request = Request(id: .number(1), command: SetTokenCommand(token: "A1B2"))
        let text = try WireText.encode(request)
        #expect(text == #"{"cmd":"set-token","id":1,"token":"A1B2"}"#)
        #expect(try WireText.parse(text) == .object([
            "cmd": .string("set-token"),
            "id": .number(1),
            "token": .string("A1B2"),
        ]))
    }

    @Test func optionalParametersAppearOnlyWhenSet() throws {
        let request = Request(
            id: .string("req-9"),
            command: SetTokenCommand(token: "fcm:APA91-b", platform: .fcm, wait: false, timeout: 2.5))
        let parsed = try WireText.parse(try WireText.encode(request))
        #expect(parsed == .object([
            "cmd": .string("set-token"),
            "id": .string("req-9"),
            "token": .string("fcm:APA91-b"),
            "platform": .string("fcm"),
            "wait": .bool(false),
            "timeout": .number(2.5),
        ]))
    }

    @Test func requestWithoutIdHasNoIdKey() throws {
        let text = try WireText.encode(Request(id: nil, command: StatusCommand()))
        #expect(text == #"{"cmd":"status"}"#)
    }

    @Test func commandWithoutParametersCarriesOnlyTheHeader() throws {
        #expect(try WireText.encode(Request(id: .number(7), command: PingCommand())) == #"{"cmd":"ping","id":7}"#)
        #expect(try WireText.encode(Request(id: .number(8), command: WatchCommand())) == #"{"cmd":"watch","id":8}"#)
        #expect(try WireText.encode(Request(id: .number(9), command: UnregisterCommand())) == #"{"cmd":"unregister","id":9}"#)
    }

    @Test func loginKeepsSlashesInTheBackendURLUnescaped() throws {
        let request = Request(id: .number(2), command: LoginCommand(user: "bob", password: "pw", backend: "https://b.example/app"))
        let text = try WireText.encode(request)
        #expect(text == #"{"backend":"https://b.example/app","cmd":"login","id":2,"password":"pw","user":"bob"}"#)
    }

    @Test func setTagsEncodesTheTagsAsAnArray() throws {
        let request = Request(id: .number(3), command: SetTagsCommand(tags: ["news", "from:alice"]))
        #expect(try WireText.parse(try WireText.encode(request)) == .object([
            "cmd": .string("set-tags"),
            "id": .number(3),
            "tags": .array([.string("news"), .string("from:alice")]),
        ]))
    }

    @Test func commandNamesOnTheWire() {
        #expect(PingCommand.name == "ping")
        #expect(StatusCommand.name == "status")
        #expect(WatchCommand.name == "watch")
        #expect(LoginCommand.name == "login")
        #expect(SetTokenCommand.name == "set-token")
        #expect(SetTagsCommand.name == "set-tags")
        #expect(RegisterCommand.name == "register")
        #expect(UnregisterCommand.name == "unregister")
        #expect(LogoutCommand.name == "logout")
    }

    @Test func theDaemonCanReadBackWhatAClientWrote() throws {
        let line = try WireCoding.line(Request(id: .string("x"), command: SetTokenCommand(token: "abc", platform: .wns, timeout: 4)))
        let header = try WireCoding.decoder().decode(RequestHeader.self, from: line)
        #expect(header.cmd == "set-token")
        #expect(header.id == .string("x"))
        let command = try WireCoding.decoder().decode(SetTokenCommand.self, from: line)
        #expect(command.token == "abc")
        #expect(command.platform == .wns)
        #expect(command.wait == nil)
        #expect(command.timeout == 4)
    }

    @Test func aLineIsOneJSONTextAndOneNewline() throws {
        let line = try WireCoding.line(Request(id: .number(1), command: SetTagsCommand(tags: ["a\nb"])))
        let text = String(decoding: line, as: UTF8.self)
        #expect(text.last == "\n")
        #expect(text.filter { $0 == "\n" }.count == 1)
        #expect(text == #"{"cmd":"set-tags","id":1,"tags":["a\nb"]}"# + "\n")
    }

    @Test func headerOfALineWithoutIdOrCmdDecodesAsNil() throws {
        let header = try WireText.decode(RequestHeader.self, #"{"token":"x"}"#)
        #expect(header.id == nil)
        #expect(header.cmd == nil)
    }
}
