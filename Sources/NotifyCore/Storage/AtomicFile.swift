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

/// Files that are either wholly old or wholly new, even across a crash or power loss:
/// write a temporary file in the same directory, fsync it, rename it over the target,
/// fsync the directory. Always mode 0600: these files hold tokens and passwords. The calls
/// go through `calls`, so that tests can see their order (`FileSystemCalls`).
public enum AtomicFile {
    public static func write(_ data: Data, to path: String, using calls: FileSystemCalls = .system) throws(CoreError) {
        let directory = FilePath.directory(of: path)
        let temporary = path + temporaryMarker + "\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = calls.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw .storage("cannot write \(temporary): \(String(cString: strerror(errno)))")
        }
        var failure: String?
        if let error = data.withUnsafeBytes({ calls.writeWhole(fd, $0) }) {
            failure = "cannot write \(path): \(String(cString: strerror(error)))"
        }
        if failure == nil, calls.fsync(fd) != 0 {
            failure = "cannot flush \(path) to disk: \(String(cString: strerror(errno)))"
        }
        _ = calls.close(fd)
        if failure == nil, calls.rename(temporary, path) != 0 {
            failure = "cannot replace \(path): \(String(cString: strerror(errno)))"
        }
        if let failure {
            _ = calls.unlink(temporary)
            throw .storage(failure)
        }
        syncDirectory(directory, using: calls)
    }

    private static let temporaryMarker = ".tmp-"

    /// Removes the temporary files a write interrupted by a crash left in `directory`
    /// (all of them, or only those of the file named `target`), and returns their names.
    /// They may hold a password, so they must not outlive the crash. Only for when no
    /// write to those files can be under way: at start under the state directory lock,
    /// or by the one owner of the file.
    @discardableResult
    public static func removeStaleTemporaries(in directory: String, of target: String? = nil) -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        let removed = names.filter { name in
            guard isTemporary(name, of: target) else { return false }
            return unlink(FilePath.join(directory, name)) == 0
        }
        if !removed.isEmpty { syncDirectory(directory) }
        return removed.sorted()
    }

    /// `NAME.tmp-PID-NUMBER`, as `write` names them.
    static func isTemporary(_ name: String, of target: String?) -> Bool {
        guard let marker = name.lastRange(of: temporaryMarker) else { return false }
        let base = name[..<marker.lowerBound]
        guard !base.isEmpty, target == nil || base == target! else { return false }
        let parts = name[marker.upperBound...].split(separator: "-", omittingEmptySubsequences: false)
        return parts.count == 2 && parts.allSatisfy { part in !part.isEmpty && part.allSatisfy { $0.isASCII && $0.isNumber } }
    }

    /// Makes a rename or unlink in `directory` durable.
    public static func syncDirectory(_ directory: String, using calls: FileSystemCalls = .system) {
        let fd = calls.open(directory.isEmpty ? "." : directory, O_RDONLY | O_CLOEXEC, 0)
        guard fd >= 0 else { return }
        _ = calls.fsync(fd)
        _ = calls.close(fd)
    }

    /// Creates `directory` (and parents) with mode 0700 when missing.
    public static func ensureDirectory(_ directory: String) throws(CoreError) {
        do {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw .storage("cannot create \(directory): \(Self.describe(error))")
        }
    }
}

extension AtomicFile {
    /// What went wrong with a file, in the system's words where there are some.
    static func describe(_ error: any Error) -> String {
        if let posix = error as? POSIXError { return String(cString: strerror(posix.code.rawValue)) }
        if let cocoa = error as? CocoaError, let underlying = cocoa.underlying as? POSIXError {
            return String(cString: strerror(underlying.code.rawValue))
        }
        return "\(error)"
    }
}
