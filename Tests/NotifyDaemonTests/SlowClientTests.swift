import Foundation
@testable import NotifyDaemon
import NotifyProtocol
import NotifySocket
import Testing

/// A client that sends its request one byte at a time, 100 ms apart, holds nothing up:
/// the loop keeps what arrived and serves everyone else between the bytes.
@Suite struct SlowClientTests {
    @Test func aClientSendingOneBytePer100msDelaysNoOne() async throws {
        var limits = ServerLimits()
        limits.shutdownGrace = 0.5
        try await ServerUnderTest.with(limits) { server in
            let slow = try RawConnection(path: server.socketPath)
            let other = try RawConnection(path: server.socketPath)
            let request = Array("trickled\n".utf8)
            var answered = 0
            for (index, byte) in request.enumerated() {
                try UnixSocket.writeAll(slow.fd, [byte])
                try await Task.sleep(for: .milliseconds(100))
                // Between two bytes of the slow client, the other one is answered: the read
                // of a partial line never waits for the rest of it.
                try other.send("ping \(index)\n")
                if try await onThread({ other.receive() })?["echo"] == .string("ping \(index)") { answered += 1 }
            }
            #expect(answered == request.count)
            #expect(try await onThread { slow.receive() }?["echo"] == .string("trickled"))
            #expect(server.handler.handled == request.count + 1, "the slow line ran once, whole")
        }
    }
}
