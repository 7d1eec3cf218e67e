import Foundation
import NotifyTestSupport
import Synchronization
import Testing
@testable import NotifyCore
import NotifySystem

/// The group that starts and stops notifyd's parts: its orders, a stop once, nothing
/// started once a stop began, and a stop that hangs held to the deadline.
struct ServiceGroupTests {
    typealias Gate = TrackedTasksTests.Gate

    /// What the services did, in the order they did it.
    final class Journal: Sendable {
        private let lines = Mutex<[String]>([])
        func note(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
        func count(_ line: String) -> Int { all.filter { $0 == line }.count }
    }

    /// A service that notes its start and its stop; either may wait at a gate first, and
    /// its stop may wait for a gate that never opens until it is cancelled.
    final class Part: Service {
        let name: String
        let journal: Journal
        let startGate: Gate?
        let stopGate: Gate?
        let stopHangs: Bool

        init(_ name: String, _ journal: Journal, startGate: Gate? = nil, stopGate: Gate? = nil, stopHangs: Bool = false) {
            (self.name, self.journal, self.startGate, self.stopGate, self.stopHangs) = (name, journal, startGate, stopGate, stopHangs)
        }

        func start() async {
            journal.note("start \(name)")
            await startGate?.wait()
            journal.note("started \(name)")
        }

        func shutdown() async {
            journal.note("stop \(name)")
            await stopGate?.wait()
            if stopHangs {
                let never = Gate()
                await withTaskCancellationHandler { await never.wait() } onCancel: { never.open() }
                journal.note("cancelled \(name)")
            }
            journal.note("stopped \(name)")
        }
    }

    @Test func startsInItsOrderAndStopsInTheOther() async {
        let journal = Journal()
        let a = Part("a", journal), b = Part("b", journal), c = Part("c", journal)
        let group = ServiceGroup(startOrder: [a, b, c], stopOrder: [b, c, a])
        await group.start()
        await group.shutdown()
        #expect(journal.all == ["start a", "started a", "start b", "started b", "start c", "started c",
                                "stop b", "stopped b", "stop c", "stopped c", "stop a", "stopped a"])
    }

    /// However often and from wherever it is asked to stop, each part stops once; a
    /// second stop returns only once the first has ended, and a start after a stop starts
    /// nothing.
    @Test func stopsOnce() async {
        let journal = Journal(), gate = Gate()
        let a = Part("a", journal, stopGate: gate), b = Part("b", journal)
        let group = ServiceGroup(startOrder: [a, b], stopOrder: [a, b])
        await group.start()
        let first = Task { await group.shutdown() }
        #expect(await eventually { journal.all.contains("stop a") })
        let second = Task {
            await group.shutdown()
            journal.note("second stop returned")
        }
        gate.open()
        await first.value
        await second.value
        await group.shutdown()
        await group.start()
        #expect(journal.count("stop a") == 1 && journal.count("stop b") == 1)
        #expect(journal.count("start a") == 1 && journal.count("start b") == 1)
        #expect(journal.all.last == "second stop returned", "\(journal.all)")
    }

    /// A stop that comes while the group starts waits for the part starting to have
    /// started, stops it, and no part after it starts at all (nor is stopped).
    @Test func startsNothingOnceAStopBegan() async {
        let journal = Journal(), gate = Gate()
        let a = Part("a", journal, startGate: gate), b = Part("b", journal)
        let group = ServiceGroup(startOrder: [a, b], stopOrder: [b, a])
        let start = Task { await group.start() }
        #expect(await eventually { journal.all.contains("start a") })
        let stop = Task { await group.shutdown() }
        #expect(await eventually { group.isStopping })
        gate.open()
        await start.value
        await stop.value
        #expect(journal.all == ["start a", "started a", "stop a", "stopped a"])
    }

    /// A part whose stop waits on something that never comes is cancelled at the
    /// deadline, and the parts after it are stopped.
    @Test func aStopThatHangsIsCutShortAtTheDeadline() async {
        let journal = Journal()
        let a = Part("a", journal, stopHangs: true), b = Part("b", journal)
        let group = ServiceGroup(startOrder: [a, b], stopOrder: [a, b], deadline: .milliseconds(100))
        await group.start()
        let stopped = Atomic<Bool>(false)
        Task {
            await group.shutdown()
            stopped.store(true, ordering: .relaxed)
        }
        #expect(await eventually { stopped.load(ordering: .relaxed) }, "the stop waited past the deadline")
        #expect(journal.all.suffix(5) == ["stop a", "cancelled a", "stopped a", "stop b", "stopped b"])
    }

    /// Work that ends first is not cut short: its deadline's action never runs.
    @Test func aBoundedWaitThatEndsInTimeIsLeftAlone() async {
        let cutShort = Atomic<Bool>(false)
        await ShutdownDeadline.bound(by: .seconds(3600)) {} atDeadline: { cutShort.store(true, ordering: .relaxed) }
        let wasCutShort = cutShort.load(ordering: .relaxed)
        #expect(!wasCutShort)
    }

    /// At the deadline, what the work waits on is cancelled, and the wait returns once the
    /// work has.
    @Test func aBoundedWaitIsCutShortAtItsDeadline() async {
        let gate = Gate(), workEnded = Atomic<Bool>(false)
        await ShutdownDeadline.bound(by: .milliseconds(50)) {
            await gate.wait()
            workEnded.store(true, ordering: .relaxed)
        } atDeadline: { gate.open() }
        let ended = workEnded.load(ordering: .relaxed)
        #expect(ended, "returned before the work did")
    }

    /// A caller cancelled (the deadline of a stop around it passed) cuts the work short at
    /// once, not at its own deadline: a part's stop inside the group's is not left waiting.
    @Test func aCancelledCallerCutsTheWorkShortAtOnce() async {
        let gate = Gate(), started = Gate(), ended = Atomic<Bool>(false)
        let waiting = Task {
            await ShutdownDeadline.bound(by: .seconds(3600)) {
                started.open()
                await gate.wait()
            } atDeadline: { gate.open() }
            ended.store(true, ordering: .relaxed)
        }
        await started.wait()
        waiting.cancel()
        #expect(await eventually { ended.load(ordering: .relaxed) }, "the work was not cut short")
        gate.open()
        await waiting.value
    }
}

