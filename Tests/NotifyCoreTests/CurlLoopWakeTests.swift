#if !canImport(Darwin)
import Foundation
import NotifyTestSupport
import Testing
@testable import NotifyCore

/// A request handed to the HTTP thread while it has no pool to wake, or is replacing the
/// one it has, still wakes it: otherwise it waits until keep_alive passes.
@Suite struct CurlLoopWakeTests {
    /// After a network change the loop replaces its pool once no request runs; a wake-up
    /// written to the old pool in between went with it.
    @Test func aRequestHandedAsThePoolIsReplacedIsNotHeldForKeepAlive() async throws {
        let server = try KeepAliveTests.answering()
        defer { server.stop() }
        let (transport, _) = KeepAliveTests.transport(keepAlive: 120)
        defer { transport.invalidate() }
        _ = await transport.perform(HTTPTransportTests.post(server))
        var slow: [(Int, Duration)] = []
        for round in 0..<3000 {
            transport.networkChanged()
            let pause = (round % 40) * 5
            if pause > 0 { usleep(UInt32(pause)) }
            let start = ContinuousClock.now
            _ = await transport.perform(HTTPTransportTests.post(server))
            let took = ContinuousClock.now - start
            // Held, it takes keep_alive (2 minutes); answered, milliseconds even on a loaded
            // machine. Half of keep_alive leaves room for a test process stalled as a whole:
            // under strace on a saturated machine, one was, for 15 s.
            if took > .seconds(60) { slow.append((round, took)); break }
        }
        #expect(slow.isEmpty, "requests held until keep_alive: \(slow)")
    }

    /// The pool let go; a request that fails at once, and another handed while
    /// the loop loads libcurl for the first, when there is no pool to wake.
    @Test func aRequestHandedWhileThePoolOpensIsNotHeldForKeepAlive() async throws {
        let server = try KeepAliveTests.answering()
        defer { server.stop() }
        let (transport, settings) = KeepAliveTests.transport(keepAlive: 1)
        defer { transport.invalidate() }
        // Fails in connect() itself, before the first pass is over: TCP to a multicast
        // address is refused by the kernel, and no packet leaves the machine.
        let refused = HTTPRequest(method: "POST", url: URL(string: "http://224.0.0.1:9/api/register")!, headers: [], body: Data())
        var slow: [(Int, Duration)] = []
        for round in 0..<3 {
            // A short keep_alive lets the pool go between rounds; a long one is what a request
            // held by a lost wake-up waits for, far longer than a loaded machine holds one.
            await KeepAliveTests.publish(keepAlive: 1, to: settings)
            #expect(await eventually(30) { !transport.holdsLibcurl })
            await KeepAliveTests.publish(keepAlive: 120, to: settings)
            // The new keep_alive woke the loop: the request must find it waiting again.
            #expect(await eventually(30) { transport.isParked })
            let first = Task { await transport.perform(refused) }
            usleep(UInt32(50 + round * 60))
            let start = ContinuousClock.now
            _ = await transport.perform(HTTPTransportTests.post(server))
            let took = ContinuousClock.now - start
            _ = await first.value
            // Held, it takes keep_alive (2 minutes); answered, milliseconds even on a loaded machine.
            if took > .seconds(60) { slow.append((round, took)); break }
        }
        #expect(slow.isEmpty, "requests held until keep_alive: \(slow)")
    }
}
#endif
