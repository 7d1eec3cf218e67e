import Testing
@testable import NotifyCore
import NotifySystem

struct BackoffTests {
    private let backoff = Backoff(initial: 10, multiplier: 3, maximum: 1000)

    @Test func defaultsFollowTheAzureShape() {
        let standard = Backoff()
        #expect(standard.initial == 5)
        #expect(standard.multiplier == 4)
        #expect(standard.maximum == 300)
        #expect(standard.ceiling == 1800)
    }

    @Test func growsByTheMultiplier() {
        #expect(backoff.delay(failures: 1, retryAfter: nil, unit: 0) == 5)
        #expect(backoff.delay(failures: 2, retryAfter: nil, unit: 0) == 15)
        #expect(backoff.delay(failures: 3, retryAfter: nil, unit: 0) == 45)
        #expect(backoff.delay(failures: 4, retryAfter: nil, unit: 0) == 135)
    }

    @Test func zeroFailuresIsTreatedAsTheFirst() {
        #expect(backoff.delay(failures: 0, retryAfter: nil, unit: 0) == 5)
        #expect(backoff.delay(failures: -3, retryAfter: nil, unit: 0.5) == 7.5)
    }

    @Test func cappedAtTheMaximum() {
        #expect(backoff.delay(failures: 6, retryAfter: nil, unit: 0) == 500)
        #expect(backoff.delay(failures: 50, retryAfter: nil, unit: 0.5) == 750)
        let huge = backoff.delay(failures: 10_000, retryAfter: nil, unit: 0.999)
        #expect(huge.isFinite)
        #expect(huge <= 1000)
        #expect(huge >= 500)
    }

    @Test func jitterStaysBetweenHalfAndAllOfTheStep() {
        var random = SplitMix64(seed: 42)
        for failures in 1...8 {
            let step = min(1000, 10 * pow3(failures - 1))
            for _ in 0..<200 {
                let delay = backoff.delay(failures: failures, retryAfter: nil, unit: random.nextUnit())
                #expect(delay >= step * 0.5, "failures \(failures)")
                #expect(delay <= step, "failures \(failures)")
            }
        }
    }

    @Test func jitterIsLinearInTheUnit() {
        #expect(backoff.delay(failures: 2, retryAfter: nil, unit: 0.5) == 22.5)
        #expect(backoff.delay(failures: 2, retryAfter: nil, unit: 0.25) == 18.75)
    }

    @Test func aLongerRetryAfterIsHonouredExactly() {
        #expect(backoff.delay(failures: 1, retryAfter: 42, unit: 0.7) == 42)
        #expect(backoff.delay(failures: 3, retryAfter: 600, unit: 0.3) == 600)
    }

    /// `Retry-After: 0` (or a date in the past) answered every time made a retry storm.
    @Test func aShorterRetryAfterNeverCutsTheBackoff() {
        #expect(backoff.delay(failures: 1, retryAfter: 0, unit: 0) == 5)
        #expect(backoff.delay(failures: 3, retryAfter: 0, unit: 0.3) == 90 * 0.65)
        #expect(backoff.delay(failures: 9, retryAfter: 1, unit: 0) == 500)
    }

    /// A `Retry-After` is honoured past `retry_max`, up to 30 min or `retry_max` when longer.
    @Test func retryAfterIsCappedAtTheCeilingAndTheCapIsWorded() {
        #expect(backoff.delay(failures: 1, retryAfter: 1500, unit: 0) == 1500)
        #expect(backoff.delay(failures: 1, retryAfter: 7 * 86400, unit: 0) == 1800)
        #expect(backoff.delay(failures: 1, retryAfter: .infinity, unit: 0) == 1800)
        #expect(Backoff(maximum: 7200).delay(failures: 1, retryAfter: 1e9, unit: 0) == 7200)
        #expect(backoff.retryAfterNote(7 * 86400) == "the backend asked to wait 604800 s, capped at the larger of retry_max and 30 min (1800 s)")
        #expect(backoff.retryAfterNote(.infinity) == "the backend asked to wait practically forever, capped at the larger of retry_max and 30 min (1800 s)")
        #expect(backoff.retryAfterNote(1800) == nil)
        #expect(backoff.retryAfterNote(1500) == nil)
        #expect(backoff.retryAfterNote(nil) == nil)
    }

    /// A wait the reachability probe watches may grow to the ceiling; others stop at `retry_max`.
    @Test func aWatchedWaitGrowsToTheCeiling() {
        #expect(backoff.delay(failures: 20, retryAfter: nil, unit: 1) == 1000)
        #expect(backoff.delay(failures: 20, retryAfter: nil, unit: 1, watched: true) == 1800)
        #expect(backoff.delay(failures: 2, retryAfter: nil, unit: 1, watched: true) == 30, "below the caps, the same step")
        #expect(Backoff(maximum: 7200).delay(failures: 20, retryAfter: nil, unit: 1, watched: true) == 7200)
    }

    @Test func negativeRetryAfterFallsBackToBackoff() {
        #expect(backoff.delay(failures: 2, retryAfter: -5, unit: 0) == 15)
    }

    private func pow3(_ exponent: Int) -> Double {
        (0..<exponent).reduce(1.0) { value, _ in value * 3 }
    }
}

struct SplitMix64Tests {
    @Test func sameSeedSameSequence() {
        var first = SplitMix64(seed: 0xDEAD_BEEF)
        var second = SplitMix64(seed: 0xDEAD_BEEF)
        let a = (0..<20).map { _ in first.next() }
        let b = (0..<20).map { _ in second.next() }
        #expect(a == b)
        #expect(Set(a).count == 20)
    }

    @Test func differentSeedsDiffer() {
        var first = SplitMix64(seed: 1)
        var second = SplitMix64(seed: 2)
        #expect((0..<5).map { _ in first.next() } != (0..<5).map { _ in second.next() })
    }

    @Test func matchesTheReferenceSplitMix64() {
        // Reference outputs of Vigna's splitmix64.c.
        var zero = SplitMix64(seed: 0)
        #expect(zero.next() == 0xE220_A839_7B1D_CDAF)
        #expect(zero.next() == 0x6E78_9E6A_A1B9_65F4)
        var seeded = SplitMix64(seed: 1_234_567)
        #expect(seeded.next() == 6_457_827_717_110_365_317)
        #expect(seeded.next() == 3_203_168_211_198_807_973)
        #expect(seeded.next() == 9_817_491_932_198_370_423)
    }

    @Test func valueSemanticsReplayFromACopy() {
        var original = SplitMix64(seed: 7)
        _ = original.next()
        var copy = original
        #expect(original.next() == copy.next())
        #expect(original == copy)
    }

    @Test func nextUnitIsInTheHalfOpenUnitInterval() {
        var random = SplitMix64(seed: 99)
        var smallest = 1.0
        var largest = 0.0
        for _ in 0..<10_000 {
            let unit = random.nextUnit()
            #expect(unit >= 0)
            #expect(unit < 1)
            smallest = min(smallest, unit)
            largest = max(largest, unit)
        }
        #expect(smallest < 0.01)
        #expect(largest > 0.99)
    }

    @Test func nextUnitUsesTheTop53Bits() {
        var random = SplitMix64(seed: 0)
        #expect(random.nextUnit() == Double(UInt64(0xE220_A839_7B1D_CDAF) >> 11) / 9_007_199_254_740_992)
    }

    @Test func worksAsARandomNumberGenerator() {
        var first = SplitMix64(seed: 5)
        var second = SplitMix64(seed: 5)
        let a = (0..<10).map { _ in Int.random(in: 0..<1000, using: &first) }
        let b = (0..<10).map { _ in Int.random(in: 0..<1000, using: &second) }
        #expect(a == b)
        #expect(a.allSatisfy { (0..<1000).contains($0) })
    }
}
