/// The ordered fault rules and their remaining counts.
struct FaultList: Sendable {
    private(set) var rules: [DevBackend.FaultRule] = []

    mutating func add(_ rule: DevBackend.FaultRule) {
        // A rule for zero requests would never apply; keeping it would only confuse.
        if rule.count == 0 { return }
        rules.append(rule)
    }

    mutating func clear() {
        rules.removeAll()
    }

    /// The first rule covering `route`, with one use consumed; a rule whose count
    /// runs out is removed.
    mutating func take(for route: DevBackend.Route) -> DevBackend.FaultRule? {
        guard let index = rules.firstIndex(where: { $0.route.covers(route) }) else { return nil }
        let rule = rules[index]
        if let count = rule.count {
            if count <= 1 {
                rules.remove(at: index)
            } else {
                rules[index].count = count - 1
            }
        }
        return rule
    }
}
