import Synchronization
import Testing

/// Every `DaemonFixture` a test starts is stopped, and the stop awaited, when the test
/// ends, whether it returned or threw: no daemon or temporary directory outlives it.
/// Fixtures stop in reverse order of creation, so one sharing another's backend stops first.
struct StopsFixtures: SuiteTrait, TestTrait, TestScoping {
    var isRecursive: Bool { true }

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        let started = StartedFixtures()
        do {
            try await StartedFixtures.$current.withValue(started) { try await function() }
        } catch {
            await started.stopAll()
            throw error
        }
        await started.stopAll()
    }
}

extension Trait where Self == StopsFixtures {
    /// Stop every fixture the test started once it ends.
    static var stopsFixtures: StopsFixtures { StopsFixtures() }
}

/// The fixtures started within one test.
final class StartedFixtures: Sendable {
    @TaskLocal static var current: StartedFixtures?

    private let fixtures = Mutex<[DaemonFixture]>([])

    func add(_ fixture: DaemonFixture) { fixtures.withLock { $0.append(fixture) } }

    /// Outside a test marked `.stopsFixtures` there is nobody to stop a fixture.
    static func forNewFixture() throws -> StartedFixtures {
        guard let current else { throw Unscoped() }
        return current
    }

    struct Unscoped: Error, CustomStringConvertible {
        var description: String { "a DaemonFixture needs its suite or test marked .stopsFixtures" }
    }

    func stopAll() async {
        let started = fixtures.withLock { list in
            defer { list.removeAll() }
            return list
        }
        for fixture in started.reversed() { await fixture.stop() }
    }
}
