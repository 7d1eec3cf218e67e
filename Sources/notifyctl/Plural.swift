/// "1 attempt", "3 attempts": counts that read well.
enum Plural {
    static func count(_ number: Int, _ noun: String) -> String {
        "\(number) \(noun)\(number == 1 ? "" : "s")"
    }
}
