/// A count of bytes as people read it: "256 MiB", "1.5 KiB", "80 bytes".
public enum ByteText {
    public static func describe(_ bytes: Int) -> String {
        let units: [(Int, String)] = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")]
        for (size, name) in units where bytes >= size {
            let whole = bytes / size
            let tenths = (bytes % size) * 10 / size
            return tenths == 0 ? "\(whole) \(name)" : "\(whole).\(tenths) \(name)"
        }
        return exact(bytes)
    }

    /// Every byte counted, whatever the size: "1 byte", "1500 bytes".
    public static func exact(_ bytes: Int) -> String {
        bytes == 1 ? "1 byte" : "\(bytes) bytes"
    }
}
