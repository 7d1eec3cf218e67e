#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NotifyProtocol

/// A whole file read into memory, but never more than a bound: a file far larger than
/// notifyd ever writes (a damaged disk, a sparse file someone made) is refused from its
/// size, before any of it is read, instead of costing its size twice over at start.
public enum FileContents {
    public static let mebibyte = 1 << 20

    public enum Problem: Error, Equatable, Sendable, CustomStringConvertible {
        case missing
        case tooLarge(limit: Int)
        case notARegularFile
        case system(Int32)
        /// Shorter than the part of it asked for.
        case shorter

        public var description: String {
            switch self {
            case .missing: "it does not exist"
            case .tooLarge(let limit): "it is larger than \(ByteText.describe(limit)), more than notifyd reads"
            case .notARegularFile: "it is not a regular file"
            case .shorter: "it is shorter than notifyd wrote it"
            case .system(let error): String(cString: strerror(error))
            }
        }
    }

    /// `count` bytes of `path` from `offset`: a part of a file notifyd wrote and knows the
    /// layout of (an outbox entry in its batch). Fewer bytes there, and it is not that file.
    public static func load(_ path: String, offset: Int, count: Int) throws(Problem) -> Data {
        let (fd, size) = try openRegularFile(path)
        defer { close(fd) }
        guard offset >= 0, count >= 0, offset + count <= size else { throw .shorter }
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let got = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, count - done, off_t(offset + done)) }
            if got < 0 {
                if errno == EINTR { continue }
                throw .system(errno)
            }
            if got == 0 { throw .shorter }
            done += got
        }
        return Data(bytes)
    }

    /// The file's bytes, or why they were not read. Reads at most `limit` + 1 bytes
    /// whatever the file claims (a file may grow while it is read).
    public static func load(_ path: String, limit: Int) throws(Problem) -> Data {
        var bytes: [UInt8] = []
        let count = try readWhole(path, limit: limit, into: &bytes)
        return Data(bytes[..<count])
    }

    /// `load` into `buffer`, which keeps its storage from one file to the next: returns how
    /// many of its bytes are the file's.
    public static func readWhole(_ path: String, limit: Int, into bytes: inout [UInt8]) throws(Problem) -> Int {
        let (fd, size) = try openRegularFile(path)
        defer { close(fd) }
        guard size <= limit else { throw .tooLarge(limit: limit) }
        // One more byte than the file claims, to see its end; more room only if it grew.
        if bytes.count < size + 1 { bytes += [UInt8](repeating: 0, count: size + 1 - bytes.count) }
        var count = 0
        while true {
            if count == bytes.count {
                guard count <= limit else { throw .tooLarge(limit: limit) }
                bytes += [UInt8](repeating: 0, count: min(limit + 1, 2 * count) - count)
            }
            let got = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + count, $0.count - count) }
            if got < 0 {
                if errno == EINTR { continue }
                throw .system(errno)
            }
            if got == 0 { break }
            count += got
        }
        guard count <= limit else { throw .tooLarge(limit: limit) }
        return count
    }

    /// `path` opened for reading, and its size, if it is a regular file. O_NONBLOCK: a FIFO
    /// in the file's place must not hang the start.
    private static func openRegularFile(_ path: String) throws(Problem) -> (fd: Int32, size: Int) {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else { throw errno == ENOENT ? .missing : .system(errno) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let failure = errno
            close(fd)
            throw .system(failure)
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            throw .notARegularFile
        }
        return (fd, Int(info.st_size))
    }
}
