import NotifyCore
@testable import NotifyDaemon
import Testing
import NotifySystem

/// How the kernel's messages become few reports: a burst is waited out (never longer than
/// `longest` after its first message), a random spread is added, and nothing is pending,
/// so no timer is set, while nothing happens. Times are seconds, given by the test.
struct NetworkBurstTests {
    @Test func aBurstOfMessagesIsOneReportOnceTheyStop() throws {
        var burst = NetworkBurst()
        var random = SplitMix64(seed: 1)
        #expect(burst.deadline == nil, "idle: no timer")
        for step in 0..<5 { burst.note(step == 2 ? .up : .down, now: 10 + Double(step) * 0.05, using: &random) }
        let deadline = try #require(burst.deadline)
        #expect(deadline >= 10.2 + burst.quiet && deadline <= 10.2 + burst.quiet + burst.spread.upperBound)
        #expect(burst.end(now: deadline - 0.001) == nil)
        #expect(burst.end(now: deadline) == NetworkBurst.Ending(report: .up, readRoutes: true))
        #expect(burst.deadline == nil)
        #expect(burst.end(now: deadline + 10) == nil, "reported once")
    }

    /// A stream that never stops is still reported, `longest` after it began.
    @Test func aBurstEndsAtTheLatestItsLongestAfterItsFirstMessage() {
        var burst = NetworkBurst()
        var random = SplitMix64(seed: 2)
        var now = 0.0
        var ending: NetworkBurst.Ending?
        while ending == nil && now < 10 {
            burst.note(.up, now: now, using: &random)
            now += 0.01
            ending = burst.end(now: now)
        }
        #expect(ending?.report == .up)
        #expect(now <= burst.longest + burst.spread.upperBound + 0.01)
        // Within 2 s of the first message, whatever comes: the report, then a retry.
        #expect(burst.longest + burst.spread.upperBound <= 1.5)
    }

    /// Laptops that wake on one network do not reach the backend in the same millisecond.
    @Test func theSpreadDiffersFromOneMachineToTheNext() {
        var delays: [Double] = []
        for seed in 1...50 {
            var burst = NetworkBurst()
            var random = SplitMix64(seed: UInt64(seed))
            burst.note(.up, now: 0, using: &random)
            delays.append(burst.deadline! - burst.quiet)
        }
        #expect(delays.allSatisfy { NetworkBurst().spread.contains($0) })
        let spread = delays.max()! - delays.min()!
        #expect(spread > NetworkBurst().spread.upperBound / 2, "50 machines within \(spread) s of each other")
    }

    @Test func somethingThatWentAwayReadsTheRoutesAndSaysSo() {
        var burst = NetworkBurst()
        var random = SplitMix64(seed: 3)
        burst.note(.down, now: 0, using: &random)
        #expect(burst.end(now: 5) == NetworkBurst.Ending(report: .down, readRoutes: true))
        burst.note(.down, now: 10, using: &random)
        burst.note(.up, now: 10, using: &random)
        #expect(burst.end(now: 15) == NetworkBurst.Ending(report: .up, readRoutes: true), "what came back is what counts")
    }

    @Test func aWakeFromSleepOutweighsTheRest() {
        var burst = NetworkBurst()
        var random = SplitMix64(seed: 4)
        burst.note(.up, now: 0, using: &random)
        burst.note(.clockSet, now: 0, using: &random)
        burst.note(.resumed(slept: 600), now: 0, using: &random)
        burst.note(.up, now: 0, using: &random)
        burst.note(.resumed(slept: 5), now: 0, using: &random)
        #expect(burst.end(now: 5) == NetworkBurst.Ending(report: .resumed(slept: 600), readRoutes: true))

        burst.note(.clockSet, now: 10, using: &random)
        #expect(burst.end(now: 15) == NetworkBurst.Ending(report: .clockSet, readRoutes: false), "the clock alone: the routes did not change")
    }

    @Test func aWakeFromSleepIsTheGrowthOfBootTimeOverMonotonicTime() {
        var watch = SleepWatch()
        #expect(watch.look(boot: 100, monotonic: 90) == nil, "the first look only measures")
        #expect(watch.look(boot: 200, monotonic: 190) == nil, "awake: both clocks moved alike")
        #expect(watch.look(boot: 201.5, monotonic: 190.2) == nil, "1.3 s apart: below the threshold")
        let slept = watch.look(boot: 3901.5, monotonic: 290.2)
        #expect(slept == 3600)
        #expect(watch.look(boot: 3911.5, monotonic: 300.2) == nil, "measured from the last look")
    }
}
