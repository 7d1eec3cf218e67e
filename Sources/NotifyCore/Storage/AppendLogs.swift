#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// Files of lines appended one at a time, kept open between lines: a burst of sends
/// appends to the `.done` log of the same few batches a thousand times, and opening the
/// file for each line cost a path lookup and a close each. At most `limit` stay open; the
/// one used longest ago is closed to make room.
final class AppendLogs: Sendable {
    private let limit: Int
    private let calls: FileSystemCalls
    /// Open descriptors by path, the most recently used last.
    private let files = Mutex<[(path: String, fd: Int32)]>([])

    init(limit: Int, calls: FileSystemCalls = .system) {
        self.limit = limit
        self.calls = calls
    }

    deinit {
        files.withLock { logs in
            for log in logs { _ = calls.close(log.fd) }
        }
    }

    var openCount: Int { files.withLock { $0.count } }

    /// Appends `line` and a newline, creating the file if needed; the `errno` of a failure.
    /// Each line also starts on a newline of its own, so one cut short (a full disk) cannot
    /// run into the next: readers skip the empty lines.
    func append(_ line: String, to path: String) -> Int32? {
        append([line], to: path)
    }

    /// `append` for several lines, written with one `write`: the same bytes as appending
    /// them one after another.
    func append(_ lines: [String], to path: String) -> Int32? {
        guard !lines.isEmpty else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(lines.reduce(0) { $0 + $1.utf8.count + 2 })
        for line in lines {
            bytes.append(0x0A)
            bytes.append(contentsOf: line.utf8)
            bytes.append(0x0A)
        }
        return files.withLock { logs in
            let fd: Int32
            if let index = logs.firstIndex(where: { $0.path == path }) {
                fd = logs.remove(at: index).fd
            } else {
                // Room first: when descriptors run short, one of these is the one to give up.
                if logs.count >= limit, !logs.isEmpty { _ = calls.close(logs.removeFirst().fd) }
                fd = calls.open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
                guard fd >= 0 else { return errno }
            }
            if let error = bytes.withUnsafeBytes({ calls.writeWhole(fd, $0) }) {
                _ = calls.close(fd)
                return error
            }
            logs.append((path, fd))
            return nil
        }
    }

    /// Closes `path` if it is open, before the file is removed.
    func closeLog(_ path: String) {
        files.withLock { logs in
            guard let index = logs.firstIndex(where: { $0.path == path }) else { return }
            _ = calls.close(logs.remove(at: index).fd)
            logs.releaseStorageIfEmpty()
        }
    }
}
