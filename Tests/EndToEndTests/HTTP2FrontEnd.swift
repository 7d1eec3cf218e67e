import Foundation
#if canImport(Glibc)
import Glibc
#endif
import NotifyTestSupport

/// nginx in front of a dev backend, terminating TLS and HTTP/2 (or HTTP/1.1 alone) as a
/// cloud front door does (HTTP/1.1 with kept-alive connections behind it), with a
/// certificate from a CA made for the test; each request it answered is in its access log.
/// notifyd trusts the CA in a mount namespace of its own in which the system's CA bundle
/// (read by libcurl at a fixed path) has the CA added; the machine's bundle is not touched.
final class HTTP2FrontEnd: Sendable {
    static let nginx = ["/usr/sbin/nginx", "/usr/bin/nginx"].first { FileManager.default.isExecutableFile(atPath: $0) }
    static let openssl = ["/usr/bin/openssl", "/usr/local/bin/openssl"].first { FileManager.default.isExecutableFile(atPath: $0) }
    static let unshare = ["/usr/bin/unshare", "/bin/unshare"].first { FileManager.default.isExecutableFile(atPath: $0) }
    static let systemBundle = "/etc/ssl/certs/ca-certificates.crt"

    /// Why it cannot run here, or nil.
    static let unavailable: String? = {
        guard getuid() == 0 else { return "needs root: notifyd trusts the test CA through a bind mount in a mount namespace" }
        guard nginx != nil else { return "needs nginx as an HTTP/2 front end (Debian package nginx-light)" }
        guard openssl != nil else { return "needs openssl for the test CA (Debian package openssl)" }
        guard unshare != nil, FileManager.default.fileExists(atPath: systemBundle) else {
            return "needs unshare (util-linux) and the system CA bundle at \(systemBundle)"
        }
        return nil
    }()

    /// Runs wherever it can; under CI (`$CI` set) always, to fail with the reason instead.
    static var shouldRun: Bool { Contrib.isCI || unavailable == nil }
    static var skipReason: String { unavailable ?? "nginx, openssl and a mount namespace are available" }

    let directory: ScratchDirectory
    let port: Int
    /// Plain HTTP, nginx's counts of connections (`stub_status`).
    let statusPort: Int
    private let server: SpawnedProcess

    var url: String { "https://127.0.0.1:\(port)" }

    /// Starts nginx for the backend listening on `backendPort` of 127.0.0.1; with `http2`
    /// false, it speaks HTTP/1.1 alone, as a front door without HTTP/2 does. With
    /// `requestsPerConnection`, nginx ends a connection after that many requests (over
    /// HTTP/2 with a GOAWAY), as its `keepalive_requests` does after 1,000 by default.
    init(backendPort: Int, http2: Bool = true, requestsPerConnection: Int? = nil) async throws {
        if let reason = Self.unavailable { throw Failure(message: reason) }
        directory = try ScratchDirectory()
        let path = directory.path
        try await Self.makeCertificates(in: path)
        port = try LoopbackPort.free()
        statusPort = try LoopbackPort.free()
        let configuration = """
            daemon off;
            master_process off;
            user root;
            pid \(path)/nginx.pid;
            error_log \(path)/error.log;
            events { worker_connections 256; }
            http {
                log_format timing '$connection $connection_requests $server_protocol $msec $request_time $status $request_uri $connection_time';
                access_log \(path)/access.log timing;
                keepalive_requests \(requestsPerConnection ?? 1_000_000);
                client_body_temp_path \(path)/body;
                proxy_temp_path \(path)/proxy;
                fastcgi_temp_path \(path)/fastcgi;
                uwsgi_temp_path \(path)/uwsgi;
                scgi_temp_path \(path)/scgi;
                upstream backend {
                    server 127.0.0.1:\(backendPort);
                    keepalive 64;
                }
                server {
                    listen 127.0.0.1:\(statusPort);
                    access_log off;
                    location / { stub_status; }
                }
                server {
                    listen 127.0.0.1:\(port) ssl\(http2 ? " http2" : "");
                    ssl_certificate \(path)/server.pem;
                    ssl_certificate_key \(path)/server.key;
                    location / {
                        proxy_pass http://backend;
                        proxy_http_version 1.1;
                        proxy_set_header Connection "";
                    }
                }
            }

            """
        try configuration.write(toFile: path + "/nginx.conf", atomically: false, encoding: .utf8)
        server = try await SpawnedProcess.start(Self.nginx!, ["-p", path, "-c", path + "/nginx.conf"])
        let server = self.server
        let port = self.port
        guard await eventually(20, { LoopbackPort.accepts(port) || !server.isRunning }), server.isRunning else {
            try await offThePool { self.stop() }
            throw Failure(message: "nginx did not start: \(server.standardError)\((try? String(contentsOfFile: path + "/error.log", encoding: .utf8)) ?? "")")
        }
    }

    struct Failure: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    /// A CA of the test's own, a certificate for 127.0.0.1 signed by it, and the system's
    /// bundle with the CA added (`bundle.pem`).
    private static func makeCertificates(in path: String) async throws {
        let curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
        try "subjectAltName = IP:127.0.0.1\nbasicConstraints = CA:FALSE\nextendedKeyUsage = serverAuth\n"
            .write(toFile: path + "/server.ext", atomically: false, encoding: .utf8)
        let steps = [
            ["req", "-x509"] + curve + ["-keyout", path + "/ca.key", "-out", path + "/ca.pem", "-days", "2", "-subj", "/CN=notifyd test CA"],
            ["req"] + curve + ["-keyout", path + "/server.key", "-out", path + "/server.csr", "-subj", "/CN=127.0.0.1"],
            ["x509", "-req", "-in", path + "/server.csr", "-CA", path + "/ca.pem", "-CAkey", path + "/ca.key", "-CAcreateserial",
             "-out", path + "/server.pem", "-days", "2", "-extfile", path + "/server.ext"],
        ]
        for step in steps {
            let made = try await run(openssl!, step)
            guard made.status == 0 else { throw Failure(message: "openssl \(step[0]) failed: \(made.error)") }
        }
        let bundle = try String(contentsOfFile: systemBundle, encoding: .utf8) + String(contentsOfFile: path + "/ca.pem", encoding: .utf8)
        try bundle.write(toFile: path + "/bundle.pem", atomically: false, encoding: .utf8)
    }

    /// A `DaemonUnderTest` launcher: notifyd runs where the system's CA bundle trusts the test CA.
    var trustingLauncher: [String] {
        [Self.unshare!, "--mount", "--propagation", "private", "/bin/sh", "-c", #"mount --bind "$0" "$1" && shift && exec "$@""#,
         directory.file("bundle.pem"), Self.systemBundle]
    }

    /// One request nginx answered.
    struct Request {
        /// nginx's serial number of the client's connection.
        var connection: Int
        /// 1 for the first request on its connection.
        var number: Int
        var httpVersion: String
        var start: Double
        var end: Double
        var status: Int
        var target: String
        /// When its connection was opened (its TCP connection accepted).
        var connectionOpened: Double
    }

    /// What nginx answered, from its access log, in the order it answered.
    func requests() -> [Request] {
        let log = (try? String(contentsOfFile: directory.file("access.log"), encoding: .utf8)) ?? ""
        return log.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ").map(String.init)
            guard fields.count == 8, let connection = Int(fields[0]), let number = Int(fields[1]), let end = Double(fields[3]),
                  let duration = Double(fields[4]), let status = Int(fields[5]), let age = Double(fields[7]) else { return nil }
            return Request(connection: connection, number: number, httpVersion: fields[2], start: end - duration, end: end, status: status,
                           target: fields[6], connectionOpened: end - age)
        }
    }

    /// The most of `requests` in flight at once, each from its arrival at nginx for the
    /// `held` seconds the backend holds it. Arrivals only: a request's start is its log time
    /// less its duration, both nginx's, while the time it is logged may come a little after
    /// its answer went out (under strace, after the next request of its lane had arrived),
    /// so ends are not read. A lane's next request goes only once the one before it was
    /// answered, after its `held` seconds: two of one lane are never counted together.
    static func mostInFlight(_ requests: [Request], held: Double) -> Int {
        var events: [(at: Double, change: Int)] = []
        for request in requests {
            events.append((request.start, 1))
            events.append((request.start + held, -1))
        }
        // At the same moment an end comes before a start: back to back is not together.
        events.sort { $0.at != $1.at ? $0.at < $1.at : $0.change < $1.change }
        var most = 0, now = 0
        for event in events {
            now += event.change
            most = max(most, now)
        }
        return most
    }

    /// The connections nginx has accepted since it started, on either port: its status
    /// page's `accepts`, this request's own among them. nil when it cannot be read.
    func acceptedConnections() -> Int? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(statusPort).bigEndian)
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        let request = Array("GET / HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        guard connected, write(fd, request, request.count) == request.count else { return nil }
        var reply: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count <= 0 { break }
            reply += buffer[0..<count]
        }
        // "... server accepts handled requests\n 12 12 40 \n ..."
        let lines = String(decoding: reply, as: UTF8.self).split(separator: "\n")
        guard let heading = lines.firstIndex(where: { $0.contains("accepts handled requests") }), heading + 1 < lines.count else { return nil }
        return lines[heading + 1].split(separator: " ").first.flatMap { Int($0) }
    }

    /// Connections to nginx's port that are established, as the client's side of each
    /// (/proc/net/tcp: the remote port in hex, state 01).
    func clientConnections() -> Int {
        let table = (try? String(contentsOfFile: "/proc/net/tcp", encoding: .utf8)) ?? ""
        let remote = ":" + String(port, radix: 16, uppercase: true).leftPadded(to: 4)
        return table.split(separator: "\n").dropFirst().filter { line in
            let fields = line.split(separator: " ")
            return fields.count > 3 && fields[2].hasSuffix(remote) && fields[3] == "01"
        }.count
    }

    /// Blocks until nginx is gone (killed after 10 s): call it off the pool.
    func stop() {
        server.signal(SIGTERM)
        server.waitBlocking(seconds: 10)
        directory.remove()
    }
}

private extension String {
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
