#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// Files appended to a line at a time, kept open between lines: a burst of sends appends
/// to the `.done` log of the same few batches a thousand times, and opening the file
/// for each line cost a path lookup and a close each. At most `limit` stay open; the one
/// used longest ago is closed to make room.
final class AppendLogs: Sendable {
    private let limit: Int
    /// Open descriptors by path, the most recently used last.
    private let files = Mutex<[(path: String, fd: Int32)]>([])

    init(limit: Int = 8) {
        self.limit = limit
    }

    deinit {
        files.withLock { logs in
            for log in logs { close(log.fd) }
        }
    }

    /// Appends `line`, creating the file if needed; false with `errno` set when it could
    /// not be written whole.
    func append(_ line: String, to path: String) -> Bool {
        files.withLock { logs in
            let fd: Int32
            if let index = logs.firstIndex(where: { $0.path == path }) {
                fd = logs.remove(at: index).fd
            } else {
                fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
                guard fd >= 0 else { return false }
                if logs.count >= limit { close(logs.removeFirst().fd) }
            }
            logs.append((path, fd))
            let bytes = Array(line.utf8)
            return bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == bytes.count
        }
    }

    /// Closes `path` if it is open, before the file is removed.
    func closeLog(_ path: String) {
        files.withLock { logs in
            guard let index = logs.firstIndex(where: { $0.path == path }) else { return }
            close(logs.remove(at: index).fd)
            logs.releaseStorageIfEmpty()
        }
    }
}
