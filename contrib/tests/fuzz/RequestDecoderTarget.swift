// The libFuzzer entry point for contrib/tests/fuzz-decoder: one request line through the
// daemon's decoding path (the shape check, then the header, then each command's fields),
// built together with Sources/NotifyProtocol under the address sanitizer.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

@_cdecl("LLVMFuzzerTestOneInput")
public func decodeOneLine(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let line = Array(UnsafeBufferPointer(start: data, count: size))
    guard (try? JSONShape.check(line)) != nil else { return 0 }
    guard let header = try? WireCoding.decodeChecked(RequestHeader.self, from: line) else { return 0 }
    _ = header.id.map { try? WireCoding.encoder().encode($0) }
    let commands: [any NotifyCommand.Type] = [
        PingCommand.self, StatusCommand.self, WatchCommand.self, StopCommand.self, ReloadCommand.self,
        LoginCommand.self, LogoutCommand.self, SetTokenCommand.self, SetTagsCommand.self, RegisterCommand.self,
        UnregisterCommand.self, SendCommand.self, OutboxCommand.self, OutboxRetryCommand.self, OutboxCancelCommand.self,
    ]
    for command in commands {
        _ = try? WireCoding.decodeChecked(command, from: line)
    }
    return 0
}
