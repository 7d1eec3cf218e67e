@testable import NotifyDaemon
import NotifyProtocol
import Testing

/// The commands notifyd answers, looked up by name in `CommandRouter.registry`.
@Suite struct CommandRegistryTests {
    static func answer(_ line: String) -> String? {
        guard case .answered(let reply) = CommandRouter.read(Array(line.utf8)) else { return nil }
        return String(decoding: reply, as: UTF8.self)
    }

    @Test func anUnknownCommandIsAnsweredWithTheKnownOnes() {
        let known = "ping, hello, status, login, logout, set-token, set-tags, register, unregister, watch, send, outbox, outbox-retry, outbox-cancel, reload, stop"
        #expect(Self.answer(#"{"id":6,"cmd":"fly"}"#)
                == #"{"error":{"code":"unknown_command","message":"unknown command 'fly'; known commands: "# + known + #""},"id":6,"ok":false}"# + "\n")
        // A name the client escaped is read as the decoder reads it.
        #expect(Self.answer(#"{"cmd":"st\u006fp!"}"#)
                == #"{"error":{"code":"unknown_command","message":"unknown command 'stop!'; known commands: "# + known + #""},"ok":false}"# + "\n")
    }

    @Test func everyCommandTypeIsRegisteredUnderItsName() {
        let types: [any NotifyCommand.Type] = [PingCommand.self, StatusCommand.self, LoginCommand.self, LogoutCommand.self, SetTokenCommand.self,
                                               SetTagsCommand.self, RegisterCommand.self, UnregisterCommand.self, WatchCommand.self, SendCommand.self,
                                               OutboxCommand.self, OutboxRetryCommand.self, OutboxCancelCommand.self, ReloadCommand.self, StopCommand.self]
        for type in types {
            #expect(CommandRouter.registry[type.name]?.name == type.name, "\(type)")
        }
        #expect(CommandRouter.registry["hello"]?.name == PingCommand.name)
        #expect(Set(CommandRouter.registry.names) == Set(types.map { $0.name } + ["hello"]))
    }

    @Test func parametersAreCheckedOnlyForACommandThatHasThem() {
        #expect(Self.answer(#"{"id":1,"cmd":"set-token","token":42}"#)
                == #"{"error":{"code":"invalid_argument","message":"set-token: \"token\" must be a string"},"id":1,"ok":false}"# + "\n")
        // A command without parameters ignores whatever else the line holds.
        #expect(Self.answer(#"{"id":2,"cmd":"unregister","token":42}"#) == nil)
    }
}
