@testable import NotifyDaemon
import Testing

/// The routing messages notifyd reads from the kernel, and what it does with the ones it
/// cannot read: a kind it does not know is skipped, one cut short or claiming more than
/// arrived ends the datagram with a problem for a debug line, and nothing is read past
/// what arrived.
struct NetlinkParserTests {
    typealias B = NetlinkBytes

    @Test func linksAddressesAndDefaultRoutesAreRead() {
        let datagram = B.parse(B.link(index: 3) + B.link(index: 3, running: false) + B.link(index: 1, loopback: true)
                               + B.link(index: 4, removed: true) + B.address(index: 3) + B.address(index: 1, scope: 254, removed: true)
                               + B.route() + B.route(removed: true))
        #expect(datagram.problem == nil)
        #expect(datagram.messages.map(\.message) == [
            .link(index: 3, running: true, loopback: false, removed: false),
            .link(index: 3, running: false, loopback: false, removed: false),
            .link(index: 1, running: true, loopback: true, removed: false),
            .link(index: 4, running: true, loopback: false, removed: true),
            .address(index: 3, hostOnly: false, removed: false),
            .address(index: 1, hostOnly: true, removed: true),
            .defaultRoute(usable: true, removed: false),
            .defaultRoute(usable: true, removed: true),
        ])
    }

    @Test func anInterfaceUpWithoutCarrierIsNotRunning() {
        let datagram = B.parse(B.link(index: 3, up: true, running: false) + B.link(index: 3, up: false, running: true))
        #expect(datagram.messages.map(\.message) == [
            .link(index: 3, running: false, loopback: false, removed: false),
            .link(index: 3, running: false, loopback: false, removed: false),
        ])
    }

    @Test func onlyAUnicastDefaultRouteOutsideTheLocalTableThatIsNotDownCarriesPackets() {
        let datagram = B.parse(B.route(destinationLength: 24) + B.route(table: 255) + B.route(type: 7)
                               + B.route(flags: NetlinkParser.nexthopLinkDown) + B.route(flags: NetlinkParser.nexthopDead) + B.route(table: 252))
        #expect(datagram.messages.map(\.message) == [
            .other(type: NetlinkParser.newRoute),
            .defaultRoute(usable: false, removed: false),
            .defaultRoute(usable: false, removed: false),
            .defaultRoute(usable: false, removed: false),
            .defaultRoute(usable: false, removed: false),
            .defaultRoute(usable: true, removed: false),
        ])
    }

    @Test func theEndOfADumpAndErrorsCarryTheirHeader() {
        let datagram = B.parse(B.route(sequence: 7, port: B.ourPort) + B.done(sequence: 7) + B.error(-16, sequence: 8))
        #expect(datagram.messages.map(\.message) == [.defaultRoute(usable: true, removed: false), .done, .error(-16)])
        #expect(datagram.messages.map(\.header.sequence) == [7, 7, 8])
        #expect(datagram.messages.allSatisfy { $0.header.port == B.ourPort })
    }

    @Test func aKindNeverSeenIsSkippedAndTheRestRead() {
        let neighbour = B.message(type: 28, body: [UInt8](repeating: 1, count: 28))
        let unknown = B.message(type: 0xBEEF, body: [])
        let datagram = B.parse(neighbour + unknown + B.link(index: 2))
        #expect(datagram.problem == nil)
        #expect(datagram.messages.map(\.message) == [.other(type: 28), .other(type: 0xBEEF), .link(index: 2, running: true, loopback: false, removed: false)])
    }

    @Test func aMessageLongerThanWhatArrivedEndsTheDatagram() {
        let whole = B.link(index: 2) + B.link(index: 5)
        let datagram = B.parse(Array(whole.dropLast(3)))
        #expect(datagram.messages.map(\.message) == [.link(index: 2, running: true, loopback: false, removed: false)])
        #expect(datagram.problem?.contains("left in the datagram") == true)
    }

    @Test func aMessageShorterThanItsHeaderEndsTheDatagram() {
        var broken = B.link(index: 2)
        broken.replaceSubrange(0..<4, with: B.raw(UInt32(8)))
        let datagram = B.parse(B.address(index: 1) + broken + B.link(index: 3))
        #expect(datagram.messages.count == 1)
        #expect(datagram.problem?.contains("shorter than its own header") == true)
    }

    @Test func aFixedPartCutShortIsDroppedNotReadPast() {
        for (type, name) in [(NetlinkParser.newLink, "link"), (NetlinkParser.newAddress, "address"), (NetlinkParser.newRoute, "route"), (NetlinkParser.error, "error")] {
            let datagram = B.parse(B.message(type: type, body: [1, 2]))
            #expect(datagram.messages.isEmpty)
            #expect(datagram.problem?.contains("a \(name) message of 2 bytes") == true)
        }
    }

    @Test func bytesAfterTheLastMessageAndAMissingLastPaddingAreToldApart() {
        let trailing = B.parse(B.link(index: 2) + [1, 2, 3])
        #expect(trailing.messages.count == 1)
        #expect(trailing.problem == "3 bytes after the last message")
        // A last message whose length is not a multiple of four, without its padding: read.
        let unpadded = B.message(type: NetlinkParser.done, body: [0, 0, 0, 0, 9])
        let datagram = B.parse(Array(unpadded.prefix(NetlinkParser.headerSize + 5)))
        #expect(datagram.messages.map(\.message) == [.done])
        #expect(datagram.problem == nil)
    }

    @Test func nothingAndLessThanAHeaderAreNothing() {
        #expect(B.parse([]).messages.isEmpty)
        #expect(B.parse([]).problem == nil)
        #expect(B.parse([16, 0, 0]).problem == "3 bytes after the last message")
    }
}
