import NotifyCoding
import Foundation
import NotifyProtocol
import Testing

/// Replies: `{"id","ok","result"}` or `{"id","ok","error":{"code","message"}}`.
struct ResponseTests {
    @Test func successEncodesOkAndResult() throws {
        let response = Response(id: .number(1), result: PingResult(version: "0.1.0", protocol: 1, pid: 42))
        let text = try WireText.encode(response)
        #expect(text == #"{"id":1,"ok":true,"result":{"pid":42,"protocol":1,"version":"0.1.0"}}"#)
    }

    @Test func successRoundTrips() throws {
        let original = Response(id: .string("a"), result: PingResult(version: "9.9", protocol: 3, pid: 7))
        let decoded = try WireCoding.decoder().decode(Response<PingResult>.self, from: WireCoding.line(original))
        #expect(decoded.id == .string("a"))
        #expect(decoded.ok)
        #expect(decoded.result == PingResult(version: "9.9", protocol: 3, pid: 7))
        #expect(decoded.error == nil)
    }

    @Test func failureEncodesCodeAndMessage() throws {
        let response = Response<EmptyResult>(id: .number(1), error: WireError(code: .notLoggedIn, message: "log in first"))
        #expect(try WireText.encode(response)
            == #"{"error":{"code":"not_logged_in","message":"log in first"},"id":1,"ok":false}"#)
    }

    @Test func failureRoundTrips() throws {
        let original = Response<PingResult>(id: .number(5), error: WireError(code: .backendUnavailable, message: "down"))
        let decoded = try WireCoding.decoder().decode(Response<PingResult>.self, from: WireCoding.line(original))
        #expect(decoded.id == .number(5))
        #expect(decoded.ok == false)
        #expect(decoded.result == nil)
        #expect(decoded.error == WireError(code: .backendUnavailable, message: "down"))
    }

    @Test func unknownErrorCodeDecodesAndKeepsItsText() throws {
        let text = #"{"id":1,"ok":false,"error":{"code":"quota_exceeded","message":"slow down","hint":"later"}}"#
        let decoded = try WireText.decode(Response<EmptyResult>.self, text)
        let error = try #require(decoded.error)
        #expect(error.code.rawValue == "quota_exceeded")
        #expect(error.code == ErrorCode("quota_exceeded"))
        #expect(error.code != .internalError)
        #expect(error.message == "slow down")
        #expect(error.code.description == "quota_exceeded")
    }

    @Test func unknownFieldsAreIgnored() throws {
        let text = #"{"id":2,"ok":true,"server":"x","result":{"version":"1.2","protocol":2,"pid":99,"uptime":5}}"#
        let decoded = try WireText.decode(Response<PingResult>.self, text)
        #expect(decoded.id == .number(2))
        #expect(decoded.result == PingResult(version: "1.2", protocol: 2, pid: 99))
    }

    @Test(arguments: [
        (ErrorCode.malformedRequest, "malformed_request"),
        (.unknownCommand, "unknown_command"),
        (.invalidArgument, "invalid_argument"),
        (.lineTooLong, "line_too_long"),
        (.notLoggedIn, "not_logged_in"),
        (.noBackend, "no_backend"),
        (.noToken, "no_token"),
        (.unauthorized, "unauthorized"),
        (.backendUnavailable, "backend_unavailable"),
        (.backendRejected, "backend_rejected"),
        (.unsupportedPlatform, "unsupported_platform"),
        (.timeout, "timeout"),
        (.shuttingDown, "shutting_down"),
        (.internalError, "internal_error"),
    ])
    func errorCodesAreStableSnakeCaseStrings(code: ErrorCode, wire: String) throws {
        #expect(try WireText.encode(code) == "\"\(wire)\"")
        #expect(try WireText.decode(ErrorCode.self, "\"\(wire)\"") == code)
    }

    @Test func snakeCaseKeysOfOtherResults() throws {
        let status = RegistrationStatus(state: .unregistered)
        let unregister = try WireText.parse(try WireText.encode(UnregisterResult(deletedId: "r-1", registration: status)))
        #expect(unregister["deleted_id"] == .string("r-1"))
        #expect(unregister["deletedId"] == nil)

        let logout = try WireText.parse(try WireText.encode(LogoutResult(user: "bob", deletedId: "r-2", warning: "w")))
        #expect(logout == .object(["user": .string("bob"), "deleted_id": .string("r-2"), "warning": .string("w")]))

        let started = try WireText.date("2026-03-04T05:06:07Z")
        let daemon = StatusResult.Daemon(version: "0.1.0", protocol: 1, pid: 3, socket: "/run/s", stateDirectory: "/st", startedAt: started)
        let daemonJSON = try WireText.parse(try WireText.encode(daemon))
        #expect(daemonJSON["state_directory"] == .string("/st"))
        #expect(daemonJSON["started_at"] == .string("2026-03-04T05:06:07Z"))
        let account = try WireText.parse(try WireText.encode(StatusResult.Account(user: "bob", passwordSource: "file")))
        #expect(account == .object(["user": .string("bob"), "password_source": .string("file")]))
    }
}
