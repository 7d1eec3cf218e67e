import Foundation

/// Polls `condition` every few milliseconds until it holds or `seconds` pass, for effects
/// that happen on other tasks, threads or processes. A bound, not a timing assertion: a
/// condition that never holds fails the test after `seconds`, however fast the machine.
public func eventually(_ seconds: Double = 10, _ condition: () async -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return await condition()
}
