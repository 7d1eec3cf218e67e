import DevBackend
import Foundation
import NotifyCore
import NotifyProtocol
import NotifyTestSupport
import Testing

/// A send line whose number the decoder refuses is refused on the wire, not sent, whether
/// it is written plainly (the fast path) or not (the decoder's path).
@Suite(.stopsFixtures) struct PlainSendLineWireTests {
    @Test(arguments: ["1e-400", "-1e-400", "2e-324", "0e3", "0.00e2"])
    func aTimeoutThatUnderflowsIsRefusedAndNotSent(timeout: String) async throws {
        let fixture = try await DaemonFixture(settings: .fast)
        _ = try await fixture.login()
        let connection = try RawConnection(path: fixture.socketPath)
        try connection.send(#"{"id":1,"cmd":"send","to":"bob","message":"plain","timeout":\#(timeout)}"# + "\n")
        try connection.send(#"{"id":2,"cmd":"send","to":"bob","message":"esc\u0061ped","timeout":\#(timeout)}"# + "\n")
        let replies = try await onThread { (1...2).map { _ in connection.receive() } }
        #expect(replies[0]?["ok"] == replies[1]?["ok"], "\(replies)")
        #expect(replies[0]?["ok"] == .bool(false), "\(replies)")
        #expect(fixture.backend.pushes().isEmpty, "\(fixture.backend.pushes())")
    }
}
