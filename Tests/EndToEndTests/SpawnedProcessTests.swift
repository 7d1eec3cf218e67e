import Foundation
import NotifyTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The children tests start inherit nothing of the test process but their three standard
/// streams: a notifyd started under `prlimit --nofile` must have its whole limit, and a
/// socket another test holds must not stay open in a child.
@Suite struct SpawnedProcessTests {
    #if os(Linux)
    @Test func aChildInheritsOnlyItsStandardStreams() async throws {
        var pair: [Int32] = [-1, -1]
        // Without close-on-exec, as a socket made by other code may be.
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        defer { pair.forEach { close($0) } }
        let child = try await SpawnedProcess.start("/bin/sh", ["-c", "ls /proc/$$/fd"])
        #expect(await child.wait() == 0)
        let descriptors = child.standardOutput.split(separator: "\n").compactMap { Int32($0) }
        #expect(descriptors.sorted() == [0, 1, 2], "\(descriptors)")
    }
    #endif
}
