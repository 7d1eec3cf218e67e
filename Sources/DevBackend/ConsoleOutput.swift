#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NotifySocket
import Synchronization

/// Whole lines to standard output, one writer at a time.
///
/// Written with write(2) rather than print() so that nothing sits in a stdio
/// buffer: a test reading the executable's stdout through a pipe sees each line
/// as soon as it happens.
public enum ConsoleOutput {
    private static let lock = Mutex(())

    public static func line(_ text: String) {
        let bytes = Array((text + "\n").utf8)
        lock.withLock { _ in
            var offset = 0
            while offset < bytes.count {
                let written = bytes.withUnsafeBytes { raw in
                    retryingOnInterrupt { write(1, raw.baseAddress! + offset, raw.count - offset) }
                }
                if written <= 0 { return }
                offset += written
            }
        }
    }
}
