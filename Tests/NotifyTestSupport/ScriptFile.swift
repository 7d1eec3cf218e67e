import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes `text` to `path` with `mode`, through a descriptor opened close-on-exec: one that
/// leaked into a process another test forks at that moment would keep the file open for
/// writing until that process runs its program, and running this file meanwhile (a stand-in
/// tool, a script) would fail with ETXTBSY.
public func writeFileClosingOnExec(_ path: String, _ text: String, mode: Int) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode_t(mode))
    guard fd >= 0 else { throw CocoaError(.fileWriteUnknown) }
    let bytes = Array(text.utf8)
    let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    close(fd)
    guard written == bytes.count else { throw CocoaError(.fileWriteUnknown) }
    // The mode as given, whatever the umask took from it.
    guard chmod(path, mode_t(mode)) == 0 else { throw CocoaError(.fileWriteNoPermission) }
}
