// The routing netlink messages notifyd reads, taken apart without trusting them: every
// length is checked against what arrived before a byte is read, so a message cut short,
// longer than its datagram or of a kind never seen is dropped or skipped, never read past.
// Pure: no system calls, so the tests and contrib/tests/fuzz-decoder can feed it anything.
//
// Layouts from the kernel's uapi headers (linux/netlink.h, linux/rtnetlink.h, linux/if.h,
// linux/if_addr.h), in the machine's own byte order, as netlink sends them.

/// One message, as far as notifyd needs it.
enum NetlinkMessage: Equatable, Sendable {
    /// RTM_NEWLINK or RTM_DELLINK: an interface and whether it can carry packets (up and
    /// running: it has a carrier).
    case link(index: Int32, running: Bool, loopback: Bool, removed: Bool)
    /// RTM_NEWADDR or RTM_DELADDR. `hostOnly`: an address of this machine alone (scope host).
    case address(index: Int32, hostOnly: Bool, removed: Bool)
    /// RTM_NEWROUTE or RTM_DELROUTE of a default route (no destination prefix), and whether
    /// it carries packets: a unicast route outside the local table, not dead or on a link
    /// without carrier.
    case defaultRoute(usable: Bool, removed: Bool)
    /// NLMSG_DONE: the end of a dump.
    case done
    /// NLMSG_ERROR with its (negative) error number; 0 acknowledges a request.
    case error(Int32)
    /// Anything else: another route, a neighbour, NLMSG_NOOP, a type never seen. Skipped.
    case other(type: UInt16)
}

struct NetlinkHeader: Equatable, Sendable {
    var type: UInt16
    var flags: UInt16
    var sequence: UInt32
    /// The port of the socket that asked (the kernel's replies to a dump carry ours).
    var port: UInt32
}

/// What one datagram held.
struct NetlinkDatagram: Sendable {
    var messages: [(header: NetlinkHeader, message: NetlinkMessage)] = []
    /// Why the rest of the datagram was dropped, if it was: for a debug line.
    var problem: String?
}

enum NetlinkParser {
    static let headerSize = 16
    static let newLink: UInt16 = 16, deleteLink: UInt16 = 17
    static let newAddress: UInt16 = 20, deleteAddress: UInt16 = 21
    static let newRoute: UInt16 = 24, deleteRoute: UInt16 = 25
    static let noop: UInt16 = 1, error: UInt16 = 2, done: UInt16 = 3
    static let interfaceUp: UInt32 = 0x1, interfaceLoopback: UInt32 = 0x8, interfaceRunning: UInt32 = 0x40
    static let scopeHost: UInt8 = 254
    static let routeUnicast: UInt8 = 1, tableLocal: UInt8 = 255
    static let nexthopDead: UInt32 = 0x1, nexthopLinkDown: UInt32 = 0x10

    static func parse(_ bytes: UnsafeRawBufferPointer) -> NetlinkDatagram {
        var datagram = NetlinkDatagram()
        var offset = 0
        while bytes.count - offset >= headerSize {
            let length = Int(read(UInt32.self, bytes, offset))
            guard length >= headerSize else {
                datagram.problem = "a message of \(length) bytes, shorter than its own header"
                return datagram
            }
            guard length <= bytes.count - offset else {
                datagram.problem = "a message of \(length) bytes with \(bytes.count - offset) left in the datagram"
                return datagram
            }
            let header = NetlinkHeader(type: read(UInt16.self, bytes, offset + 4), flags: read(UInt16.self, bytes, offset + 6),
                                       sequence: read(UInt32.self, bytes, offset + 8), port: read(UInt32.self, bytes, offset + 12))
            let body = UnsafeRawBufferPointer(rebasing: bytes[(offset + headerSize)..<(offset + length)])
            switch message(header.type, body) {
            case .success(let message): datagram.messages.append((header, message))
            case .failure(let problem):
                datagram.problem = problem.text
                return datagram
            }
            // Messages start on 4-byte boundaries; the padding of the last may be missing.
            offset += min((length + 3) & ~3, bytes.count - offset)
        }
        if offset < bytes.count { datagram.problem = "\(bytes.count - offset) bytes after the last message" }
        return datagram
    }

    struct Problem: Error {
        var text: String
    }

    private static func message(_ type: UInt16, _ body: UnsafeRawBufferPointer) -> Result<NetlinkMessage, Problem> {
        func need(_ size: Int, _ what: String) -> Problem? {
            body.count < size ? Problem(text: "a \(what) message of \(body.count) bytes, \(size) needed") : nil
        }
        switch type {
        case newLink, deleteLink:
            // struct ifinfomsg: family, pad, type (u16), index (i32), flags (u32), change (u32).
            if let problem = need(16, "link") { return .failure(problem) }
            let flags = read(UInt32.self, body, 8)
            return .success(.link(index: read(Int32.self, body, 4), running: flags & interfaceUp != 0 && flags & interfaceRunning != 0,
                                   loopback: flags & interfaceLoopback != 0, removed: type == deleteLink))
        case newAddress, deleteAddress:
            // struct ifaddrmsg: family, prefix length, flags, scope (u8 each), index (u32).
            if let problem = need(8, "address") { return .failure(problem) }
            return .success(.address(index: read(Int32.self, body, 4), hostOnly: body[3] == scopeHost, removed: type == deleteAddress))
        case newRoute, deleteRoute:
            // struct rtmsg: family, dst_len, src_len, tos, table, protocol, scope, type (u8 each), flags (u32).
            if let problem = need(12, "route") { return .failure(problem) }
            guard body[1] == 0 else { return .success(.other(type: type)) }
            let flags = read(UInt32.self, body, 8)
            let usable = body[7] == routeUnicast && body[4] != tableLocal && flags & (nexthopDead | nexthopLinkDown) == 0
            return .success(.defaultRoute(usable: usable, removed: type == deleteRoute))
        case done:
            return .success(.done)
        case error:
            if let problem = need(4, "error") { return .failure(problem) }
            return .success(.error(read(Int32.self, body, 0)))
        default:
            return .success(.other(type: type))
        }
    }

    /// The field at `offset`, which the caller has checked lies within `bytes`.
    private static func read<T: FixedWidthInteger>(_ type: T.Type, _ bytes: UnsafeRawBufferPointer, _ offset: Int) -> T {
        bytes.loadUnaligned(fromByteOffset: offset, as: T.self)
    }
}
