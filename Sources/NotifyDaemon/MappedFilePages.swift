#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Most of an idle notifyd's memory is pages of files it has mapped: its own executable
/// (the Swift runtime linked in) and the libraries libcurl loads. The kernel maps them in
/// blocks of up to 64 KiB around each page first touched, so a few hundred touches at start
/// and on the first send leave 15 MiB or more in its page tables, counted as its own
/// private memory wherever no other process maps the same files. Once the daemon has been
/// quiet for a while it lets go of them: the pages stay in the page cache, free for the
/// kernel to reclaim, and the next command maps back what it uses (about 2 ms, once).
public enum MappedFilePages {
    /// Unmaps the pages of every read-only private file mapping that holds no page of its
    /// own. Does nothing off Linux.
    public static func release() {
        #if os(Linux)
        guard let smaps = readWhole("/proc/self/smaps") else { return }
        for range in releasable(smaps: smaps) {
            _ = madvise(UnsafeMutableRawPointer(bitPattern: range.lowerBound), range.count, MADV_DONTNEED)
        }
        #endif
    }

    /// The address ranges in `/proc/self/smaps` text whose pages can be dropped and read
    /// again from their file unchanged: private (`p`), not writable, file-backed, and with
    /// no anonymous pages. A page is anonymous once written, as the dynamic loader writes
    /// relocations into what it then makes read-only (RELRO) and a debugger writes its
    /// breakpoints into code; dropping such a page would put the file's bytes back.
    static func releasable(smaps: String) -> [Range<UInt>] {
        var ranges: [Range<UInt>] = []
        var candidate: Range<UInt>?
        for line in smaps.split(separator: "\n", omittingEmptySubsequences: true) {
            if let first = line.utf8.first, isLowerHexDigit(first) {
                candidate = readOnlyPrivateFileMapping(line)
            } else if let range = candidate, line.hasPrefix("Anonymous:") {
                if line.dropFirst("Anonymous:".count).split(separator: " ").first == "0" { ranges.append(range) }
                candidate = nil
            }
        }
        return ranges
    }

    /// "start-end perms offset device inode path": the range, when perms read `r-?p` and
    /// the path is a file's.
    private static func readOnlyPrivateFileMapping(_ header: Substring) -> Range<UInt>? {
        let fields = header.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
        guard fields.count == 6, fields[5].drop(while: { $0 == " " }).hasPrefix("/") else { return nil }
        let permissions = Array(fields[1].utf8)
        guard permissions.count == 4, permissions[0] == UInt8(ascii: "r"), permissions[1] == UInt8(ascii: "-"),
              permissions[3] == UInt8(ascii: "p") else { return nil }
        let bounds = fields[0].split(separator: "-")
        guard bounds.count == 2, let start = UInt(bounds[0], radix: 16), let end = UInt(bounds[1], radix: 16), start < end else { return nil }
        return start..<end
    }

    private static func isLowerHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }

    /// A /proc file, whose size is not known until it has been read.
    private static func readWhole(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
