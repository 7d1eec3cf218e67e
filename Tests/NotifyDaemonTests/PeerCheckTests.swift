import Foundation
@testable import NotifyDaemon
import NotifySocket
import NotifyTestSupport
import Testing

/// The loop's check of who connected, with the system's answer played by the test, so that
/// it runs without root (`PeerIdentityTests` has real other users, as root): a peer that is
/// not known to be this user is closed before a byte is read, with a log line; this user
/// is served.
@Suite struct PeerCheckTests {
    static var limits: ServerLimits {
        var limits = ServerLimits()
        limits.shutdownGrace = 0.5
        return limits
    }

    static let otherUID: UInt32 = currentUID() == 1 ? 2 : 1

    @Test(arguments: [
        (peer: nil, refusal: "refused a connection whose uid the system does not tell: notifyd serves uid \(currentUID()) only"),
        (peer: otherUID, refusal: "refused a connection from uid \(otherUID): notifyd serves uid \(currentUID()) only"),
    ] as [(peer: UInt32?, refusal: String)])
    func aPeerNotKnownToBeThisUserIsRefused(peer: UInt32?, refusal: String) async throws {
        let server = try await ServerUnderTest.with(Self.limits, peerUID: { _ in peer }) { server in
            let connection = try RawConnection(path: server.socketPath)
            try? connection.send("ping\n")
            #expect(try await onThread { connection.receive() } == nil, "closed without an answer")
            #expect(server.handler.handled == 0)
            return server
        }
        #expect(server.log.contains(refusal), "\(server.log)")
    }

    @Test(arguments: [currentUID(), 0])
    func thisUserAndRootAreServed(peer: UInt32) async throws {
        try await ServerUnderTest.with(Self.limits, peerUID: { _ in peer }) { server in
            let connection = try RawConnection(path: server.socketPath)
            try connection.send("ping\n")
            #expect(try await onThread { connection.receive() }?["echo"] == .string("ping"))
            #expect(!server.log.contains("refused"))
        }
    }

    /// Peers the system cannot name, one after another, are logged at the bounded rate of
    /// every refusal: one line at once, and the count of the others at shutdown.
    @Test func manyPeersWhoseUIDCannotBeReadLogTwoLines() async throws {
        let server = try await ServerUnderTest.with(Self.limits, peerUID: { _ in nil }) { server in
            let path = server.socketPath
            let closed = try await onThread {
                try (1...50).filter { _ in
                    let connection = try RawConnection(path: path)
                    try? connection.send("ping\n")
                    return connection.receive() == nil
                }.count
            }
            #expect(closed == 50)
            return server
        }
        let lines = server.log.split(separator: "\n").filter { $0.contains("refused") }
        #expect(lines.count == 2, "\(lines)")
        #expect(lines.contains { $0.contains("refused 49 more connections whose uid the system does not tell") }, "\(lines)")
    }
}
