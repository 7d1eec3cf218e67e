#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The environment, one variable at a time. notifyctl needs three names of it, and a
/// dictionary of the whole environment cost a third of the instructions of its start
/// (most of them the Swift runtime building `[String: String]`'s metadata); Foundation's
/// `ProcessInfo.processInfo.environment`, before that, a sixth of `notifyctl status`.
enum ProcessEnvironment {
    static func value(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}
