#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// notifyd started with standard input, output or error closed (`2>&-`) would give those
/// numbers to its own first descriptors (the signal and timer descriptors of the runtime,
/// a socket), write log lines into them, and put the log file in the place of one of
/// them (`LogFile.use`). Each one closed is opened on /dev/null instead, before anything
/// else opens a descriptor.
public enum StandardStreams {
    public static func openMissing() {
        for fd: Int32 in 0...2 where fcntl(fd, F_GETFD) < 0 {
            let opened = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY)
            if opened >= 0 && opened != fd {
                dup2(opened, fd)
                close(opened)
            }
        }
    }
}
