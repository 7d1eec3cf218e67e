#if canImport(Glibc)
import Glibc

/// Adds to `actions` the closing of every descriptor from 3 up in the child: whatever
/// another thread opened without close-on-exec at that moment (Foundation's file writes
/// do) would otherwise go with the child for its whole life. An executable written
/// that way and held open by a child cannot be run until the child ends (`ETXTBSY`).
/// glibc 2.34's `posix_spawn_file_actions_addclosefrom_np`, which Swift's Glibc module does
/// not declare, is looked up by name; a C library without it leaves the list as it is.
public func closeInheritedDescriptors(_ actions: inout posix_spawn_file_actions_t) {
    typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return }
    _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
}
#endif
