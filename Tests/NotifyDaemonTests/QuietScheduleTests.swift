@testable import NotifyDaemon
import Testing

/// When the tidying after a burst runs: each task once, its own wait after the last
/// activity, none while idle. Times are given, not measured, so these checks are exact.
@Suite struct QuietScheduleTests {
    static let trim = QuietSchedule.Task(after: 2, run: {})
    static let rest = QuietSchedule.Task(after: 30, run: {})

    @Test func nothingIsDueBeforeAnyActivity() {
        var schedule = QuietSchedule([Self.trim, Self.rest])
        #expect(schedule.nextDue == nil)
        #expect(!schedule.firstStillDue)
        #expect(schedule.due(at: 1_000).isEmpty)
    }

    @Test func eachTaskRunsOnceAtItsOwnTimeThenNothingUntilMoreActivity() {
        // Given longest first, run shortest first.
        var schedule = QuietSchedule([Self.rest, Self.trim])
        schedule.activity(at: 100)
        #expect(schedule.firstStillDue)
        #expect(schedule.nextDue == 102)
        #expect(schedule.due(at: 101.999).isEmpty)
        #expect(schedule.due(at: 102).map(\.after) == [2])
        #expect(!schedule.firstStillDue, "activity now must be reported, to run the trim again")
        #expect(schedule.nextDue == 130)
        #expect(schedule.due(at: 129.999).isEmpty)
        #expect(schedule.due(at: 130).map(\.after) == [30])
        #expect(schedule.nextDue == nil)
        #expect(schedule.due(at: 10_000).isEmpty)
    }

    @Test func activityStartsTheCountAgain() {
        var schedule = QuietSchedule([Self.trim, Self.rest])
        schedule.activity(at: 100)
        #expect(schedule.due(at: 102).count == 1)
        schedule.activity(at: 110)
        #expect(schedule.firstStillDue)
        #expect(schedule.nextDue == 112)
        #expect(schedule.due(at: 131).map(\.after) == [2], "the rest counts from the latest activity")
        #expect(schedule.due(at: 140).map(\.after) == [30])
    }

    @Test func aLateWakeUpRunsEverythingDueInOrder() {
        var schedule = QuietSchedule([Self.rest, Self.trim])
        schedule.activity(at: 0)
        #expect(schedule.due(at: 50).map(\.after) == [2, 30])
        #expect(schedule.due(at: 60).isEmpty)
    }

    @Test func withNoTasksNothingIsEverDue() {
        var schedule = QuietSchedule([])
        schedule.activity(at: 0)
        #expect(schedule.nextDue == nil)
        #expect(!schedule.firstStillDue)
        #expect(schedule.due(at: 100).isEmpty)
    }
}
