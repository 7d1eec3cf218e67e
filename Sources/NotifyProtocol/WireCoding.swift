/// The one place that decides how protocol values look on the wire: compact JSON,
/// ISO 8601 dates, keys exactly as the types name them (snake_case by CodingKeys).
/// Foundation's coders set so are in NotifyCoding (`WireCoding.encoder()`), which notifyctl
/// does without: it reads and writes with `JSONValueDecoder` and `JSONValueEncoder`.
public enum WireCoding {
    /// Longest request line the daemon accepts, newline excluded. Large enough for any
    /// message the backends can carry (a WNS toast tops out at 5 KB) with room for
    /// escaping; small enough that a runaway client cannot make the daemon buffer much.
    public static let maximumLineLength = 256 * 1024
}
