import Foundation

/// Polls `condition` every few milliseconds until it holds or `seconds` pass, for effects
/// that happen on other tasks, threads or processes. A bound, not a timing assertion: a
/// condition that never holds fails the test after `seconds`, however fast the machine.
/// 30 by default: a test process sharing two cores with other suites, or traced, has been
/// seen to make no progress at all for 7 s and more; only a failing test waits that long.
public func eventually(_ seconds: Double = 30, _ condition: () async -> Bool) async -> Bool {
    await eventually(progressing: { 0 }, stalledFor: seconds, condition)
}

/// `eventually` for work that goes on step by step (a burst delivered one message after
/// another): gives up only once `progress` has not moved for `seconds`. How long the whole
/// takes depends on the machine; a stall is what the test is after.
public func eventually(progressing progress: () async -> Int, stalledFor seconds: Double = 30, _ condition: () async -> Bool) async -> Bool {
    var last = await progress()
    var deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
        let now = await progress()
        if now != last {
            last = now
            deadline = Date().addingTimeInterval(seconds)
        }
    }
    return await condition()
}
