#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// notifyd holds the password in memory, so a core file of it holds the password too (and
/// a crash loop under a service manager writes one per crash). Like ssh-agent, it makes
/// itself undumpable at start: no core file, and on Linux no ptrace or /proc/PID/mem by
/// other processes of the same user. `--allow-core-dumps` keeps them for debugging.
/// `notifyctl login` does the same before it reads a password (Ctrl-\\ at its prompt dumps core).
public enum CoreDumps {
    /// Forbids core dumps for the rest of the process's life, and returns what could not be done.
    public static func forbid() -> [String] {
        var problems: [String] = []
        var none = rlimit(rlim_cur: 0, rlim_max: 0)
        if setrlimit(coreLimit, &none) != 0 {
            problems.append("cannot set the core file size limit to 0: \(String(cString: strerror(errno)))")
        }
        #if os(Linux)
        // prctl is variadic in C, which Swift does not import; the arguments are plain longs.
        typealias Prctl = @convention(c) (Int32, UInt, UInt, UInt, UInt) -> Int32
        let setDumpable: Int32 = 4 // PR_SET_DUMPABLE, from <linux/prctl.h>
        if let symbol = dlsym(nil, "prctl") {
            if unsafeBitCast(symbol, to: Prctl.self)(setDumpable, 0, 0, 0, 0) != 0 {
                problems.append("cannot make the process undumpable: \(String(cString: strerror(errno)))")
            }
        } else {
            problems.append("cannot make the process undumpable: prctl not found")
        }
        #elseif os(macOS)
        // Looked up at run time, as launch_activate_socket is, so the code needs no bridging header.
        typealias Ptrace = @convention(c) (Int32, pid_t, UnsafeMutablePointer<CChar>?, Int32) -> Int32
        let denyAttach: Int32 = 31 // PT_DENY_ATTACH, from <sys/ptrace.h>
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: -2), "ptrace") {
            if unsafeBitCast(symbol, to: Ptrace.self)(denyAttach, 0, nil, 0) != 0 {
                problems.append("cannot deny debugger attachment: \(String(cString: strerror(errno)))")
            }
        } else {
            problems.append("cannot deny debugger attachment: ptrace not found")
        }
        #endif
        return problems
    }

    #if os(Linux)
    private static let coreLimit = __rlimit_resource_t(RLIMIT_CORE.rawValue)
    #else
    private static let coreLimit = RLIMIT_CORE
    #endif
}
