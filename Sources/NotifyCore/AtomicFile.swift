import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Files that are either wholly old or wholly new, even across a crash or power loss:
/// write a temporary file in the same directory, fsync it, rename it over the target,
/// fsync the directory. Always mode 0600: these files hold tokens and passwords.
public enum AtomicFile {
    public static func write(_ data: Data, to path: String) throws(CoreError) {
        let directory = (path as NSString).deletingLastPathComponent
        let temporary = path + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw .storage("cannot write \(temporary): \(String(cString: strerror(errno)))")
        }
        var failure: String?
        data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = writeBytes(fd, raw.baseAddress! + offset, raw.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = "cannot write \(path): \(String(cString: strerror(errno)))"
                    return
                }
                offset += written
            }
        }
        if failure == nil, fsync(fd) != 0 {
            failure = "cannot flush \(path) to disk: \(String(cString: strerror(errno)))"
        }
        close(fd)
        if failure == nil, rename(temporary, path) != 0 {
            failure = "cannot replace \(path): \(String(cString: strerror(errno)))"
        }
        if let failure {
            unlink(temporary)
            throw .storage(failure)
        }
        syncDirectory(directory)
    }

    /// Makes a rename or unlink in `directory` durable.
    public static func syncDirectory(_ directory: String) {
        let fd = open(directory.isEmpty ? "." : directory, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }

    /// Creates `directory` (and parents) with mode 0700 when missing.
    public static func ensureDirectory(_ directory: String) throws(CoreError) {
        do {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw .storage("cannot create \(directory): \(error.localizedDescription)")
        }
    }
}

// Inside `AtomicFile`, `write` names the static method; this reaches the system call.
private func writeBytes(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    write(fd, bytes, count)
}
