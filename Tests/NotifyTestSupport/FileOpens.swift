#if canImport(Glibc)
import Glibc

/// Counts the times a file is opened, by anyone, from now on (inotify's `IN_OPEN` on its
/// inode, so an open through a bind mount of it counts too). Closes are watched as well,
/// though not counted: inotify folds an event into the one queued before it when they are
/// the same, so opens one after another would count as one, while open, close, open do not.
public final class FileOpens: Sendable {
    private let descriptor: Int32

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public init(watching path: String) throws {
        descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else { throw Failure(description: "inotify_init1: errno \(errno)") }
        guard inotify_add_watch(descriptor, path, UInt32(IN_OPEN | IN_CLOSE_NOWRITE)) >= 0 else {
            let error = errno
            close(descriptor)
            throw Failure(description: "inotify_add_watch \(path): errno \(error)")
        }
    }

    deinit { close(descriptor) }

    /// The opens since the last call (or since the watch began).
    public func take() -> Int {
        var opens = 0
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { return opens }
            var offset = 0
            while offset + MemoryLayout<inotify_event>.size <= count {
                let event = buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: inotify_event.self) }
                if event.mask & UInt32(IN_OPEN) != 0 { opens += 1 }
                offset += MemoryLayout<inotify_event>.size + Int(event.len)
            }
        }
    }
}
#endif
