@testable import NotifyDaemon

/// Routing netlink messages as the kernel writes them, for the parser's tests and the
/// fuzz test's seeds: header and fixed part in the machine's byte order, then attributes.
enum NetlinkBytes {
    static let ourPort: UInt32 = 4242

    static func message(type: UInt16, flags: UInt16 = 0, sequence: UInt32 = 0, port: UInt32 = 0, body: [UInt8]) -> [UInt8] {
        let length = UInt32(NetlinkParser.headerSize + body.count)
        var bytes = raw(length) + raw(type) + raw(flags) + raw(sequence) + raw(port) + body
        while bytes.count % 4 != 0 { bytes.append(0) }
        return bytes
    }

    /// struct ifinfomsg, with an IFLA_IFNAME attribute as the kernel adds.
    static func link(index: Int32, up: Bool = true, running: Bool = true, loopback: Bool = false, removed: Bool = false) -> [UInt8] {
        var flags: UInt32 = 0
        if up { flags |= NetlinkParser.interfaceUp }
        if running { flags |= NetlinkParser.interfaceRunning }
        if loopback { flags |= NetlinkParser.interfaceLoopback }
        let body: [UInt8] = [0, 0] + raw(UInt16(1)) + raw(index) + raw(flags) + raw(UInt32(0)) + attribute(3, Array("eth0\0".utf8))
        return message(type: removed ? NetlinkParser.deleteLink : NetlinkParser.newLink, body: body)
    }

    /// struct ifaddrmsg (AF_INET6, /64, scope as given).
    static func address(index: Int32, scope: UInt8 = 0, removed: Bool = false) -> [UInt8] {
        let body: [UInt8] = [10, 64, 0, scope] + raw(UInt32(bitPattern: index)) + attribute(1, [UInt8](repeating: 0xfd, count: 16))
        return message(type: removed ? NetlinkParser.deleteAddress : NetlinkParser.newAddress, body: body)
    }

    /// struct rtmsg (AF_INET, main table, unicast unless said).
    static func route(destinationLength: UInt8 = 0, table: UInt8 = 254, type: UInt8 = 1, flags: UInt32 = 0, removed: Bool = false,
                      sequence: UInt32 = 0, port: UInt32 = 0) -> [UInt8] {
        let body: [UInt8] = [2, destinationLength, 0, 0, table, 3, 0, type] + raw(flags) + attribute(15, raw(UInt32(table)))
        return message(type: removed ? NetlinkParser.deleteRoute : NetlinkParser.newRoute, flags: sequence == 0 ? 0 : 2, sequence: sequence, port: port, body: body)
    }

    static func done(sequence: UInt32, port: UInt32 = ourPort) -> [UInt8] {
        message(type: NetlinkParser.done, flags: 2, sequence: sequence, port: port, body: raw(Int32(0)))
    }

    static func error(_ code: Int32, sequence: UInt32, port: UInt32 = ourPort) -> [UInt8] {
        message(type: NetlinkParser.error, sequence: sequence, port: port, body: raw(code) + [UInt8](repeating: 0, count: 16))
    }

    static func attribute(_ type: UInt16, _ payload: [UInt8]) -> [UInt8] {
        var bytes = raw(UInt16(4 + payload.count)) + raw(type) + payload
        while bytes.count % 4 != 0 { bytes.append(0) }
        return bytes
    }

    /// In the machine's own byte order, as netlink has it.
    static func raw<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value) { Array($0) }
    }

    static func parse(_ bytes: [UInt8]) -> NetlinkDatagram {
        bytes.withUnsafeBytes { NetlinkParser.parse($0) }
    }
}
