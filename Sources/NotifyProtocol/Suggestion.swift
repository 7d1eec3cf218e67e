/// "did you mean `set-token`?" for a mistyped command, option or setting: notifyctl's
/// command line and notifyd's config keys.
public enum Suggestion {
    /// The candidate closest to `word`, if it is close enough to be a typo of it.
    public static func nearest(_ word: String, among candidates: [String]) -> String? {
        let limit = max(1, min(3, word.count / 3))
        let scored = candidates.map { ($0, distance(Array(word), Array($0))) }.filter { $0.1 <= limit }
        return scored.min { $0.1 < $1.1 }?.0
    }

    /// "; did you mean `x`?" or nothing.
    public static func hint(_ word: String, among candidates: [String]) -> String {
        nearest(word, among: candidates).map { "; did you mean `\($0)`?" } ?? ""
    }

    /// Edits (insert, delete, replace, swap two neighbours) from `a` to `b`.
    public static func distance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[a.count][b.count]
    }
}
