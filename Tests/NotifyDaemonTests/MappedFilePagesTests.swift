import Foundation
@testable import NotifyDaemon
import Testing

/// Letting go of mapped file pages once quiet: only pages the file holds unchanged, so
/// nothing the process wrote is lost, and the pages come back when touched.
@Suite struct MappedFilePagesTests {
    static let header = "00400000-00500000"

    @Test func onlyReadOnlyPrivateFileMappingsWithNoPageOfTheirOwnAreReleasable() {
        let smaps = """
        00400000-00500000 r-xp 00000000 fe:01 11 /usr/bin/notifyd
        Rss:                 400 kB
        Anonymous:             0 kB
        AnonHugePages:         0 kB
        00500000-00600000 r--p 00100000 fe:01 11 /usr/bin/notifyd
        Anonymous:             8 kB
        00600000-00700000 rw-p 00200000 fe:01 11 /usr/bin/notifyd
        Anonymous:             0 kB
        00700000-00800000 r--s 00000000 fe:01 12 /dev/shm/shared
        Anonymous:             0 kB
        00800000-00900000 rw-p 00000000 00:00 0
        Anonymous:             4 kB
        7ffd0000-7ffd2000 r-xp 00000000 00:00 0                          [vdso]
        Anonymous:             0 kB
        7f000000-7f001000 r--p 00000000 fe:01 13                         /usr/lib/with space/libx.so (deleted)
        Rss:                   4 kB
        Anonymous:             0 kB
        7f002000-7f003000 ---p 00000000 fe:01 13                         /usr/lib/libx.so
        Anonymous:             0 kB
        """
        #expect(MappedFilePages.releasable(smaps: smaps) == [0x400000..<0x500000, 0x7f000000..<0x7f001000])
    }

    @Test func aHeaderWithoutItsAnonymousLineIsNotReleased() {
        // The same mapping read half-way (or a kernel that does not say): not released.
        #expect(MappedFilePages.releasable(smaps: "00400000-00500000 r-xp 00000000 fe:01 11 /usr/bin/notifyd\nRss: 4 kB\n").isEmpty)
    }

    #if os(Linux)
    @Test func aTouchedReadOnlyMappingIsReleasedAndReadsTheSameAfterwards() async throws {
        try await MappedFile.with(bytes: 256 * 1024, protection: PROT_READ) { file in
            try #require(file.touchUntilResident() > 0, "the pages are mapped before")
            MappedFilePages.release()
            #expect(file.residentKiB() == 0)
            #expect(file.matchesTheFile(), "read again from the file")
        }
    }

    /// What the dynamic loader does with relocations (RELRO) and a debugger with
    /// breakpoints: write into a private file mapping, then make it read-only. Dropping those
    /// pages would put the file's bytes back under the process.
    @Test func pagesWrittenIntoAPrivateMappingAreKept() async throws {
        try await MappedFile.with(bytes: 64 * 1024, protection: PROT_READ | PROT_WRITE) { file in
            file.pointer.storeBytes(of: 0x5A, toByteOffset: 4096, as: UInt8.self)
            try #require(mprotect(file.pointer, file.count, PROT_READ) == 0)
            MappedFilePages.release()
            #expect(file.pointer.load(fromByteOffset: 4096, as: UInt8.self) == 0x5A)
            #expect(file.residentKiB() > 0)
        }
    }
    #endif
}

#if os(Linux)
/// A temporary file of known bytes, mapped private.
struct MappedFile {
    let pointer: UnsafeMutableRawPointer
    let count: Int
    let contents: [UInt8]

    static func with(bytes count: Int, protection: Int32, _ body: (MappedFile) async throws -> Void) async throws {
        let path = "/tmp/nd-mapped-" + UUID().uuidString.prefix(8)
        let contents = (0..<count).map { UInt8(truncatingIfNeeded: $0 * 7 + 1) }
        try Data(contents).write(to: URL(fileURLWithPath: path))
        defer { unlink(path) }
        let fd = open(path, O_RDONLY)
        try #require(fd >= 0)
        defer { close(fd) }
        let mapped: UnsafeMutableRawPointer? = mmap(nil, count, protection, MAP_PRIVATE, fd, 0)
        let pointer = try #require(mapped)
        try #require(pointer != UnsafeMutableRawPointer(bitPattern: -1), "mmap failed")
        defer { munmap(pointer, count) }
        try await body(MappedFile(pointer: pointer, count: count, contents: contents))
    }

    func matchesTheFile() -> Bool {
        contents.withUnsafeBytes { memcmp($0.baseAddress!, pointer, count) == 0 }
    }

    /// Reads every page, and again should another test in this process release them
    /// in between (a daemon fixture at rest does).
    func touchUntilResident() -> Int {
        for _ in 0..<5 {
            var sum = 0
            for offset in stride(from: 0, to: count, by: 4096) { sum &+= Int(pointer.load(fromByteOffset: offset, as: UInt8.self)) }
            precondition(sum >= 0)
            let resident = residentKiB()
            if resident > 0 { return resident }
        }
        return 0
    }

    /// The mapping's `Rss` in /proc/self/smaps.
    func residentKiB() -> Int {
        let start = String(UInt(bitPattern: pointer), radix: 16)
        // Read to the end: /proc files say their size is 0.
        guard let handle = FileHandle(forReadingAtPath: "/proc/self/smaps") else { return -1 }
        defer { try? handle.close() }
        let smaps = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        var inMapping = false
        for line in smaps.split(separator: "\n") {
            // Headers start with the address in lower-case hex; field names with a capital.
            if let first = line.first, first.isNumber || ("a"..."f").contains(first) {
                inMapping = line.hasPrefix(start + "-")
            } else if inMapping, line.hasPrefix("Rss:") {
                return Int(line.split(separator: " ")[1]) ?? -1
            }
        }
        return -1
    }
}
#endif
