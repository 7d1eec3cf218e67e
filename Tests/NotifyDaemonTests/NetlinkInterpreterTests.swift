@testable import NotifyDaemon
import Testing

/// Which of the kernel's messages bring connectivity back, and what a dump of the routes
/// says of the default route.
struct NetlinkInterpreterTests {
    typealias B = NetlinkBytes

    @Test func aLinkCountsWhenItStartsRunningNotEachTimeItIsHeardOf() {
        var interpreter = NetlinkInterpreter(port: B.ourPort)
        #expect(interpreter.take(B.parse(B.link(index: 3))).signals == [.up], "first heard of, running")
        #expect(interpreter.take(B.parse(B.link(index: 3) + B.link(index: 3))).signals.isEmpty, "a wireless interface's other news")
        #expect(interpreter.take(B.parse(B.link(index: 3, running: false))).signals == [.down])
        #expect(interpreter.take(B.parse(B.link(index: 3, running: false))).signals.isEmpty)
        #expect(interpreter.take(B.parse(B.link(index: 3))).signals == [.up])
        #expect(interpreter.take(B.parse(B.link(index: 3, removed: true))).signals == [.down])
        #expect(interpreter.take(B.parse(B.link(index: 1, loopback: true))).signals.isEmpty, "loopback carries nothing to the backend")
    }

    @Test func addressesAndDefaultRoutes() {
        var interpreter = NetlinkInterpreter(port: B.ourPort)
        let signals = interpreter.take(B.parse(B.address(index: 3) + B.address(index: 3, removed: true) + B.address(index: 1, scope: 254)
                                               + B.route() + B.route(removed: true) + B.route(table: 255) + B.route(destinationLength: 8))).signals
        #expect(signals == [.up, .down, .up, .down, .down])
    }

    @Test func aDumpOfOursSaysWhetherADefaultRouteCarriesPackets() {
        var interpreter = NetlinkInterpreter(port: B.ourPort)
        interpreter.dumpStarted(sequence: 9)
        #expect(interpreter.isDumping)
        let first = interpreter.take(B.parse(B.route(destinationLength: 24, sequence: 9, port: B.ourPort) + B.route(table: 255, sequence: 9, port: B.ourPort)))
        #expect(first.signals.isEmpty && first.defaultRoute == nil && !first.dumpEnded, "a dump is not news")
        // A notification in the middle of the dump is news, and not part of it.
        let news = interpreter.take(B.parse(B.route(sequence: 3, port: 77)))
        #expect(news.signals == [.up] && news.defaultRoute == nil)
        let end = interpreter.take(B.parse(B.done(sequence: 9)))
        #expect(end.dumpEnded && end.defaultRoute == false)
        #expect(!interpreter.isDumping)

        interpreter.dumpStarted(sequence: 10)
        let withRoute = interpreter.take(B.parse(B.route(sequence: 10, port: B.ourPort) + B.done(sequence: 10)))
        #expect(withRoute.defaultRoute == true)
        #expect(interpreter.take(B.parse(B.done(sequence: 10))).dumpEnded == false, "a stray end")
    }

    @Test func aDumpTheKernelRefusedEndsWithoutAnAnswer() {
        var interpreter = NetlinkInterpreter(port: B.ourPort)
        interpreter.dumpStarted(sequence: 4)
        let refused = interpreter.take(B.parse(B.error(-16, sequence: 4)))
        #expect(refused.dumpEnded && refused.defaultRoute == nil)
        #expect(!interpreter.isDumping)
    }
}
