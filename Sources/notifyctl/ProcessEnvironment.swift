#if canImport(Glibc)
import Glibc
#elseif canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The environment. On Linux it is read straight from `environ`: Foundation's
/// `ProcessInfo.processInfo.environment` was a sixth of what `notifyctl status` spent.
enum ProcessEnvironment {
    static func current() -> [String: String] {
        #if canImport(Glibc)
        var variables: [String: String] = [:]
        guard var entry = environ as UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? else { return variables }
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.utf8.firstIndex(of: UInt8(ascii: "=")) {
                let name = String(text[..<equals])
                // As getenv does, the first definition of a name wins.
                if variables[name] == nil { variables[name] = String(text[text.index(after: equals)...]) }
            }
            entry += 1
        }
        return variables
        #else
        return ProcessInfo.processInfo.environment
        #endif
    }
}
