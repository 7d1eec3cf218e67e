import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A full disk, for real: a small tmpfs mounted on a fresh directory, that a test fills
/// up and frees again; `unmount()` when done. Needs the right to mount (root or
/// CAP_SYS_ADMIN); the test is cancelled with a message elsewhere.
public struct SmallDisk: Sendable {
    let scratch: ScratchDirectory
    public var path: String { scratch.file("disk") }

    public init(kilobytes: Int) throws {
        scratch = try ScratchDirectory()
        try FileManager.default.createDirectory(atPath: scratch.file("disk"), withIntermediateDirectories: false)
        let status = Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(kilobytes)k,mode=0700", "tmpfs", scratch.file("disk")])
        guard status == 0 else {
            scratch.remove()
            try Test.cancel("cannot mount a small tmpfs here (mount exited \(status); it needs root or CAP_SYS_ADMIN)")
        }
    }

    /// Writes a file until the disk is full; `free()` gives the space back.
    public func fill() {
        let fd = open(path + "/filler", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        let chunk = [UInt8](repeating: 0, count: 4096)
        while chunk.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
        close(fd)
    }

    /// Truncated before it is unlinked: an unlinked file keeps its pages while anything
    /// still has it open, and a program another test starts meanwhile does, from its
    /// fork until it closes what it inherited before exec (slow under strace).
    public func free() {
        truncate(path + "/filler", 0)
        unlink(path + "/filler")
    }

    /// Detached even while something still holds a file on it (a test that failed half
    /// way): lazily then, so that no mount outlives the test.
    public func unmount() {
        if Self.run("/bin/umount", [path]) != 0 { _ = Self.run("/bin/umount", ["-l", path]) }
        scratch.remove()
    }

    private static func run(_ tool: String, _ arguments: [String]) -> Int32 {
        (try? SpawnedProcess(tool, arguments))?.waitBlocking() ?? -1
    }
}
