#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The system calls through which the stores change files (`AtomicFile`, the outbox's
/// batches and removal logs): the system's own, or in tests a recorder wrapped around them.
/// What makes a file durable is the order of these calls (write, fsync the file, rename,
/// fsync the directory), and no crash test can see it: `kill -9` keeps the page cache, so
/// a missing fsync only shows after a power cut. Plain function values, set once per
/// store: a call costs an indirect jump and allocates nothing.
public struct FileSystemCalls: Sendable {
    public var open: @Sendable (_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32
    public var write: @Sendable (_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int
    public var fsync: @Sendable (_ fd: Int32) -> Int32
    public var close: @Sendable (_ fd: Int32) -> Int32
    public var rename: @Sendable (_ from: String, _ to: String) -> Int32
    public var unlink: @Sendable (_ path: String) -> Int32

    public init(open: @escaping @Sendable (String, Int32, mode_t) -> Int32,
                write: @escaping @Sendable (Int32, UnsafeRawPointer, Int) -> Int,
                fsync: @escaping @Sendable (Int32) -> Int32,
                close: @escaping @Sendable (Int32) -> Int32,
                rename: @escaping @Sendable (String, String) -> Int32,
                unlink: @escaping @Sendable (String) -> Int32) {
        self.open = open
        self.write = write
        self.fsync = fsync
        self.close = close
        self.rename = rename
        self.unlink = unlink
    }

    /// The system calls themselves.
    public static let system = FileSystemCalls(
        open: systemOpen, write: systemWrite, fsync: systemFsync, close: systemClose, rename: systemRename, unlink: systemUnlink)

    /// Writes all of `bytes`, going on after a short write or a signal; the `errno` of a failure.
    func writeWhole(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32? {
        var offset = 0
        while offset < bytes.count {
            let written = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return errno
            }
            offset += written
        }
        return nil
    }
}

// At file scope, where these names are the C library's and not the members above.
private func systemOpen(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 { open(path, flags, mode) }
private func systemWrite(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int { write(fd, bytes, count) }
private func systemFsync(_ fd: Int32) -> Int32 { fsync(fd) }
private func systemClose(_ fd: Int32) -> Int32 { close(fd) }
private func systemRename(_ from: String, _ to: String) -> Int32 { rename(from, to) }
private func systemUnlink(_ path: String) -> Int32 { unlink(path) }
