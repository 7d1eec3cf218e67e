#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `printf`-style formatting of numbers, through the C library.
public enum CFormat {
    public static func string(_ format: String, _ arguments: any CVarArg...) -> String {
        withVaList(arguments) { list in
            var buffer = [CChar](repeating: 0, count: 128)
            let written = vsnprintf(&buffer, buffer.count, format, list)
            guard written >= 0 else { return "" }
            return String(decoding: buffer.prefix(min(Int(written), buffer.count - 1)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }
}
