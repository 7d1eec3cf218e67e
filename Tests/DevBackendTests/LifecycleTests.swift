import DevBackend
import Foundation
import Testing

@Suite struct LifecycleTests {
    @Test func stopIsSafeTwiceAndClosesTheListener() throws {
        let backend = DevBackendServer(options: DevBackend.Options(quiet: true))
        let port = try backend.start()
        #expect(port > 0)
        #expect(backend.port == port)
        #expect(backend.baseURL.absoluteString == "http://127.0.0.1:\(port)")
        let idle = try RawHTTPClient(port: port)
        #if os(Linux)
        let listener = try #require(Self.listeningSocket(port: port), "a socket listens on \(port)")
        #expect(Self.isOpenHere(socket: listener))
        #endif
        backend.stop()
        backend.stop()
        // The idle keep-alive connection was closed too.
        #expect(try idle.isClosedByServer())
        #if os(Linux)
        // The listener itself, by its inode: the port may already be another test's.
        #expect(!Self.isOpenHere(socket: listener))
        #else
        #expect(throws: (any Error).self) { _ = try RawHTTPClient(port: port) }
        #endif
    }

    /// The inode of the socket listening on 127.0.0.1:`port` (/proc/net/tcp). Read to its
    /// end: the file claims a size of 0, and `String(contentsOfFile:)` then stops after the
    /// first page, some 27 sockets, fewer than the other tests hold open or in TIME_WAIT.
    static func listeningSocket(port: Int) -> String? {
        guard let file = FileHandle(forReadingAtPath: "/proc/net/tcp") else { return nil }
        defer { try? file.close() }
        let table = String(decoding: file.readDataToEndOfFile(), as: UTF8.self)
        let local = "0100007F:" + String(format: "%04X", port)
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            // local_address rem_address st … inode; 0A is LISTEN.
            if fields.count > 9, fields[1] == local, fields[3] == "0A" { return String(fields[9]) }
        }
        return nil
    }

    /// Whether this process holds the socket with that inode open.
    static func isOpenHere(socket inode: String) -> Bool {
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return descriptors.contains { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) == "socket:[\(inode)]" }
    }

    @Test func aServerStartsOnceAndStopBeforeStartIsHarmless() throws {
        let unused = DevBackendServer()
        unused.stop()
        let backend = try startBackend()
        defer { backend.stop() }
        #expect(throws: (any Error).self) { try backend.start() }
    }

    @Test func aBadHostIsAnError() {
        let backend = DevBackendServer(options: DevBackend.Options(host: "localhost", quiet: true))
        defer { backend.stop() }
        #expect(throws: (any Error).self) { try backend.start() }
    }
}
