// The libFuzzer entry point for `contrib/tests/fuzz-decoder netlink`: one datagram through
// the parser of the kernel's routing messages, built together with
// Sources/NotifyDaemon/Network/NetlinkMessage.swift under the address sanitizer, which
// stops at the first byte read past what arrived.

@_cdecl("LLVMFuzzerTestOneInput")
public func parseOneDatagram(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let datagram = NetlinkParser.parse(UnsafeRawBufferPointer(start: data, count: size))
    // No message is made of fewer bytes than a header.
    if datagram.messages.count > size / NetlinkParser.headerSize { fatalError("\(datagram.messages.count) messages from \(size) bytes") }
    return 0
}
