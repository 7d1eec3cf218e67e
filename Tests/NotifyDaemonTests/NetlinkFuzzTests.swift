import NotifyCore
@testable import NotifyDaemon
import NotifyTestSupport
import Testing
import NotifySystem

/// 100,000 generated datagrams, from a fixed seed, through what the socket loop does with
/// each one the kernel sends: the parser, the interpreter and the burst. Whole datagrams
/// of every kind of message, the same with bytes flipped, cut anywhere, lengths set to
/// the edges (0, 15, 16, one past the end, 2^32 - 1), garbage before and after, and random
/// bytes. Nothing may trap, nothing may be read past the datagram (the address sanitizer
/// run of contrib/tests/sanitizers would see it), no message may be made of fewer than 16
/// bytes, and an untouched datagram must read back exactly as it was written.
/// contrib/tests/fuzz-decoder netlink runs libFuzzer on the parser beside this.
struct NetlinkFuzzTests {
    static let seed: UInt64 = 0x6E65_746C_696E_6B21
    static let datagramCount = 100_000

    @Test func generatedDatagramsNeverTrapAndWholeOnesReadBack() async throws {
        let (mismatches, read, skipped, dropped) = try await offThePool(Self.run)
        #expect(mismatches.isEmpty, "\(mismatches.count) problems, first: \(mismatches.prefix(3).joined(separator: "; ")) (seed \(Self.seed))")
        // The generator made every case: messages read, skipped and datagrams cut short.
        #expect(read > Self.datagramCount && skipped > 1000 && dropped > Self.datagramCount / 4)
    }

    /// Every datagram through the parser, the interpreter and the burst: the problems
    /// found, and how many messages were read and skipped and datagrams dropped.
    @Sendable static func run() -> (mismatches: [String], read: Int, skipped: Int, dropped: Int) {
        var generator = DatagramGenerator(seed: Self.seed)
        var interpreter = NetlinkInterpreter(port: NetlinkBytes.ourPort)
        var burst = NetworkBurst()
        var random = SplitMix64(seed: Self.seed ^ 1)
        var mismatches: [String] = []
        var now = 0.0
        var read = 0, skipped = 0, dropped = 0
        for index in 0..<Self.datagramCount {
            let (bytes, expected) = generator.next()
            let datagram = NetlinkBytes.parse(bytes)
            if datagram.messages.count > bytes.count / NetlinkParser.headerSize {
                mismatches.append("datagram \(index): \(datagram.messages.count) messages from \(bytes.count) bytes")
            }
            if let expected, datagram.messages.map(\.message) != expected || datagram.problem != nil {
                mismatches.append("datagram \(index) did not read back: \(datagram.messages.map(\.message)), \(datagram.problem ?? "")")
            }
            read += datagram.messages.count
            skipped += datagram.messages.filter { if case .other = $0.message { true } else { false } }.count
            if datagram.problem != nil { dropped += 1 }
            if index % 1000 == 0 { interpreter.dumpStarted(sequence: UInt32(index / 1000)) }
            for signal in interpreter.take(datagram).signals { burst.note(signal, now: now, using: &random) }
            now += 0.01
            _ = burst.end(now: now)
        }
        return (mismatches, read, skipped, dropped)
    }
}

/// Datagrams of routing messages, whole or damaged, from a seed.
struct DatagramGenerator {
    private var random: SplitMix64

    init(seed: UInt64) { random = SplitMix64(seed: seed) }

    /// A datagram and, when it was left whole, the messages it must read back as.
    mutating func next() -> (bytes: [UInt8], expected: [NetlinkMessage]?) {
        var (bytes, expected) = wholeDatagram()
        switch pick(8) {
        case 0, 1:
            return (bytes, expected)
        case 2:
            for _ in 0...pick(8) where !bytes.isEmpty { bytes[pick(bytes.count)] ^= UInt8(truncatingIfNeeded: 1 << pick(8)) }
        case 3:
            bytes = Array(bytes.prefix(pick(bytes.count + 1)))
        case 4:
            // A length field of the first message, or of a later one, at an edge.
            let start = pick(2) == 0 || bytes.count < 20 ? 0 : pick(bytes.count - 4) & ~3
            guard bytes.count >= start + 4 else { return (bytes, nil) }
            let edges: [UInt32] = [0, 1, 15, 16, 17, UInt32(bytes.count - start), UInt32(bytes.count - start + 1), 0xFFFF, 0xFFFF_FFFF]
            bytes.replaceSubrange(start..<(start + 4), with: NetlinkBytes.raw(edges[pick(edges.count)]))
        case 5:
            bytes = noise(pick(24)) + bytes + noise(pick(24))
        case 6:
            bytes = noise(pick(1024))
        default:
            // Every byte of the fixed parts at random, lengths kept.
            for offset in stride(from: NetlinkParser.headerSize, to: bytes.count, by: 1) where pick(3) == 0 {
                bytes[offset] = UInt8(truncatingIfNeeded: random.next())
            }
        }
        return (bytes, nil)
    }

    private mutating func wholeDatagram() -> ([UInt8], [NetlinkMessage]) {
        var bytes: [UInt8] = []
        var messages: [NetlinkMessage] = []
        for _ in 0..<(1 + pick(6)) {
            let index = Int32(truncatingIfNeeded: random.next())
            switch pick(7) {
            case 0:
                let running = pick(2) == 0, loopback = pick(4) == 0, removed = pick(4) == 0
                bytes += NetlinkBytes.link(index: index, running: running, loopback: loopback, removed: removed)
                messages.append(.link(index: index, running: running, loopback: loopback, removed: removed))
            case 1:
                let host = pick(3) == 0, removed = pick(2) == 0
                bytes += NetlinkBytes.address(index: index, scope: host ? 254 : 0, removed: removed)
                messages.append(.address(index: index, hostOnly: host, removed: removed))
            case 2:
                let removed = pick(2) == 0
                bytes += NetlinkBytes.route(removed: removed, sequence: UInt32(pick(3)), port: pick(2) == 0 ? NetlinkBytes.ourPort : 0)
                messages.append(.defaultRoute(usable: true, removed: removed))
            case 3:
                bytes += NetlinkBytes.route(destinationLength: UInt8(1 + pick(128)))
                messages.append(.other(type: NetlinkParser.newRoute))
            case 4:
                bytes += NetlinkBytes.done(sequence: UInt32(pick(3)))
                messages.append(.done)
            case 5:
                let code = -Int32(pick(100))
                bytes += NetlinkBytes.error(code, sequence: UInt32(pick(3)))
                messages.append(.error(code))
            default:
                let type = UInt16(30 + pick(1000))
                bytes += NetlinkBytes.message(type: type, body: noise(pick(64)))
                messages.append(.other(type: type))
            }
        }
        return (bytes, messages)
    }

    private mutating func noise(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    }

    private mutating func pick(_ bound: Int) -> Int {
        Int(random.next() % UInt64(max(1, bound)))
    }
}
