import Foundation
import NotifySystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A fresh directory for one test that touches files; call `remove()` when done.
public struct ScratchDirectory: Sendable {
    public let path: String

    public init() throws {
        path = FileManager.default.temporaryDirectory
            .appendingPathComponent("notifyd-unit-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    }

    public func file(_ name: String) -> String {
        (path as NSString).appendingPathComponent(name)
    }

    public func entries() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: path).sorted()
    }

    public func remove() {
        removeInTheBackground(path)
    }
}

/// Removes `path` and all below it on a thread of its own. An unlink or rmdir waits on the
/// file system's journal, which the suite's fsyncs keep busy: seconds on a loaded disk,
/// which on the concurrency pool stalled every other test. Nothing waits for a scratch
/// directory to go.
public func removeInTheBackground(_ path: String) {
    NativeThread.startOrRunHere(name: "test-removal") { try? FileManager.default.removeItem(atPath: path) }
}

/// The permission bits of `path` (e.g. 0o600), read with stat(2).
public func permissionBits(_ path: String) -> mode_t? {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    return info.st_mode & 0o7777
}
