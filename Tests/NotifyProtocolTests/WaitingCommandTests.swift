import Foundation
import NotifyProtocol
import Testing

/// How long a registration-changing command waits for the backend.
struct WaitingCommandTests {
    @Test func noWaitMeansNoWaitSeconds() {
        #expect(SetTokenCommand(token: "x", wait: false).waitSeconds == nil)
        #expect(SetTokenCommand(token: "x", wait: false, timeout: 30).waitSeconds == nil)
        #expect(RegisterCommand(wait: false).waitSeconds == nil)
    }

    @Test func waitsTenSecondsByDefault() {
        #expect(SetTokenCommand(token: "x").waitSeconds == 10)
        #expect(SetTokenCommand(token: "x", wait: true).waitSeconds == 10)
        #expect(SetTokenCommand.defaultTimeout == 10)
    }

    @Test(arguments: [
        (2.5, 2.5),
        (0.0, 0.0),
        (-1.0, 0.0),
        (300.0, 300.0),
        (301.0, 300.0),
        (100_000.0, 300.0),
        (Double.infinity, 300.0),
    ])
    func timeoutIsClampedToFiveMinutes(timeout: Double, expected: Double) {
        #expect(SetTagsCommand(tags: [], timeout: timeout).waitSeconds == expected)
        #expect(SetTagsCommand(tags: [], wait: true, timeout: timeout).waitSeconds == expected)
    }

    @Test func everyWaitingCommandSharesTheRule() {
        #expect(LoginCommand(user: "u", password: "p", timeout: 500).waitSeconds == 300)
        #expect(RegisterCommand(timeout: 3).waitSeconds == 3)
        #expect(SetTagsCommand(tags: ["a"]).waitSeconds == 10)
        #expect(LoginCommand(user: "u", password: "p", wait: false).waitSeconds == nil)
    }

    @Test func absentFieldsDecodeAsDefaults() throws {
        let command = try WireText.decode(SetTokenCommand.self, #"{"cmd":"set-token","id":1,"token":"AB"}"#)
        #expect(command.wait == nil)
        #expect(command.timeout == nil)
        #expect(command.waitSeconds == 10)

        let noWait = try WireText.decode(RegisterCommand.self, #"{"cmd":"register","wait":false,"timeout":9}"#)
        #expect(noWait.waitSeconds == nil)
    }
}
