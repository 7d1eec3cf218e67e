import Foundation

/// Network namespaces, for the tests that take a link away from notifyd without touching
/// the machine's own network: they need root, `unshare -n` allowed, and `nsenter` and
/// `ip` (Debian packages util-linux and iproute2). Where these are missing the tests are
/// skipped, saying why; under CI (`$CI` set) they run, and fail with that reason.
public enum NetworkNamespaces {
    public static let ip = executable("ip")
    public static let nsenter = executable("nsenter")
    public static let unshare = executable("unshare")

    /// Why network namespaces cannot be used here, or nil when they can.
    public static let unavailable: String? = {
        guard getuid() == 0 else { return "network namespaces need root; run the tests as root (CI does)" }
        guard let unshare, nsenter != nil else { return "unshare and nsenter are not installed (Debian package util-linux)" }
        guard ip != nil else { return "ip is not installed (Debian package iproute2: apt-get install -y iproute2)" }
        guard let probe = try? SpawnedProcess(unshare, ["-n", "true"]), probe.waitBlocking(seconds: 10) == 0 else {
            return "`unshare -n` is not allowed here (a container without CAP_SYS_ADMIN?)"
        }
        return nil
    }()

    /// Whether a test that needs them runs: always under CI, where it must not be skipped.
    public static var shouldRun: Bool { isCI || unavailable == nil }

    /// What a skipped test says.
    public static var skipReason: String { unavailable ?? "network namespaces are available" }

    public struct Unavailable: Error, CustomStringConvertible {
        public var description: String
        public init(_ description: String) { self.description = description }
    }

    static let isCI = ProcessInfo.processInfo.environment["CI"].map { !$0.isEmpty } ?? false

    private static func executable(_ name: String) -> String? {
        ["/usr/sbin", "/sbin", "/usr/bin", "/bin"].map { $0 + "/" + name }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}
