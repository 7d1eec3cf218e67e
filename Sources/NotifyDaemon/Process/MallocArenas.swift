#if canImport(Glibc)
import Glibc
#endif

/// glibc gives each thread that allocates an arena of its own, up to eight per core, and
/// each arena keeps the memory it once held. notifyd's threads take turns (one actor at a
/// time, the socket loop, the HTTP thread) rather than allocate side by side, so one arena
/// serves them at the same send rate, and a burst of requests leaves less behind.
public enum MallocArenas {
    /// Call first thing in `main`, before other threads allocate. Does nothing off glibc.
    public static func limitToOne() {
        #if canImport(Glibc)
        // mallopt is declared in <malloc.h>, which Swift's Glibc module leaves out.
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        let arenaMaximum: Int32 = -8 // M_ARENA_MAX
        guard let symbol = dlsym(nil, "mallopt") else { return }
        _ = unsafeBitCast(symbol, to: Mallopt.self)(arenaMaximum, 1)
        #endif
    }

    /// Hands the pages of freed memory back to the system: glibc keeps what a burst of
    /// requests freed, most of it behind a few blocks still in use, and returns it only
    /// when asked. About a millisecond after a burst of 1,000 sends; does nothing off glibc.
    public static func releaseFreePages() {
        #if canImport(Glibc)
        typealias MallocTrim = @convention(c) (Int) -> Int32
        guard let symbol = dlsym(nil, "malloc_trim") else { return }
        _ = unsafeBitCast(symbol, to: MallocTrim.self)(0)
        #endif
    }
}
