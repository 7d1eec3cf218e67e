#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The descriptors a daemon's parent left it, put right before the daemon opens any of its
/// own, as ssh-agent and sshd do at start.
public enum InheritedDescriptors {
    /// Opens /dev/null on each of standard input, output and error that the parent left
    /// closed: otherwise the first socket or file notifyd opens takes that number, and log
    /// lines written to "standard error" go into it (a client's connection, say). On Linux
    /// it also closes every other descriptor the parent leaked, except `kept` (the sockets a
    /// service manager hands over on purpose): each would count against the open-file limit
    /// that notifyd divides between its own needs and its clients, and a leaked socket stays
    /// open, its peer never seeing an end of file, for as long as notifyd runs.
    public static func tidy(keeping kept: Range<Int32>) {
        for fd: Int32 in 0...2 where fcntl(fd, F_GETFD) < 0 {
            // The lowest free number: `fd` itself, those below it being open by now.
            let opened = open("/dev/null", O_RDWR)
            if opened >= 0 && opened != fd {
                _ = dup2(opened, fd)
                closeDescriptor(opened)
            }
        }
        #if os(Linux)
        for fd in openDescriptors() where fd > 2 && !kept.contains(fd) {
            closeDescriptor(fd)
        }
        #endif
    }

    #if os(Linux)
    /// The numbers in /proc/self/fd, without the directory's own; none where /proc is not
    /// mounted (nothing is closed then).
    private static func openDescriptors() -> [Int32] {
        guard let directory = opendir("/proc/self/fd") else { return [] }
        defer { closedir(directory) }
        let own = dirfd(directory)
        var found: [Int32] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
            if let fd = Int32(name), fd != own { found.append(fd) }
        }
        return found
    }
    #endif
}
