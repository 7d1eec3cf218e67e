#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol
import NotifySystem

/// The registration logic as a pure value: events go in (inputs changed, a timer fired, a
/// backend call ended) and actions come out (call the backend, wake me at, persist).
/// No I/O and no clock of its own, so tests drive it step by step with any `now`.
///
/// One backend call is in flight at most. Changes that arrive meanwhile only update the
/// inputs; when the call ends, the machine looks at the latest inputs, so a burst of
/// changes costs one or two passes, never one per change.
public struct RegistrationMachine: Sendable {
    public private(set) var inputs: RegistrationInputs
    public private(set) var record: RegistrationRecord
    public internal(set) var policy: RegistrationPolicy

    /// Raised by every change a caller may wait on; `settledGeneration` catches up when the
    /// outcome for that change is known (success, or a failure and what happens next).
    public private(set) var generation = 0
    public private(set) var settledGeneration = 0
    public private(set) var lastDeletion: (generation: Int, outcome: DeletionOutcome)?

    public internal(set) var failures = 0
    public private(set) var lastAttemptAt: Date?
    public internal(set) var retryAt: Date?
    public internal(set) var lastReason: String?
    /// The end of a wait the backend asked for (`Retry-After`): unlike our own backoff, a
    /// newer change does not cut it short; the latest inputs go out once it is over.
    var backendWaitUntil: Date?
    /// The wait after the last failure is our own backoff, which an answer from the backend
    /// to another request ends (`backendWorks`); once per failure, so that a registration
    /// that fails again at once waits its backoff out.
    var recoverableWait = false
    var waitCutShort = false
    /// How the wait after the last failure was drawn, so that a shorter `retry_min` or
    /// `retry_max` can shorten it (`changePolicy`): its backoff's draw of jitter, or nil
    /// for a wait for the network, which the longest backoff bounds; and its reason, to
    /// say again with the new cap.
    var lastFailure: (at: Date, retryAfter: Double?, unit: Double?, watched: Bool, reason: String)?
    /// The last attempt found no route to the backend: the retry waits for the network to
    /// change, and the backoff did not grow.
    var offlineWait = false
    /// Since when attempts have found no route to the backend; kept while the next one is
    /// waited for or under way, cleared by any other outcome.
    public internal(set) var offlineSince: Date?

    struct InFlight: Sendable {
        var step: RegistrationStep
        var generation: Int
        var account: AccountReference?
    }
    private var inFlight: InFlight?
    /// A pass may replace a dead id once; a second "gone" backs off instead of looping.
    private var recreatedInPass = false
    private var forceNext = false
    /// A `register` not yet through: it is retried with the backoff even while the last
    /// registration is fresh, until it succeeds or is refused for good.
    private var forcedPassUnfinished = false
    /// While set, a change-triggered pass waits for the inputs to settle (see `policy.debounce`).
    private var quietUntil: Date?
    private var firstUnsentChangeAt: Date?
    private var deletionRequested: Int?
    var random: SplitMix64

    public init(inputs: RegistrationInputs, record: RegistrationRecord, policy: RegistrationPolicy, seed: UInt64 = 0x6E6F_7469_6679) {
        self.inputs = inputs
        self.record = record
        self.policy = policy
        self.random = SplitMix64(seed: seed)
    }

    public var isBusy: Bool { inFlight != nil }

    /// True while a retry waits for the end of a backoff a working backend may cut short,
    /// or for the network.
    public var waitsOnBackend: Bool { (recoverableWait || offlineWait) && retryAt != nil }

    // MARK: Events

    /// First look after start: registers when the last success is older than the refresh interval.
    public mutating func start(now: Date) -> [RegistrationAction] {
        reconcile(now: now)
    }

    public mutating func update(_ newInputs: RegistrationInputs, now: Date) -> [RegistrationAction] {
        guard newInputs != inputs else { return [] }
        inputs = newInputs
        // Registering again: the deletion an `unregister` still waited for is not wanted.
        if inputs.enabled { record.deletionWanted = nil }
        generation += 1
        // A newer change replaces a pending retry, but not a wait the backend asked for.
        retryAt = backendWait(now: now)
        if policy.debounce > 0 {
            let first = firstUnsentChangeAt ?? now
            firstUnsentChangeAt = first
            quietUntil = min(now.addingTimeInterval(policy.debounce), first.addingTimeInterval(policy.maximumDebounce))
        }
        return reconcile(now: now)
    }

    /// `register`: go to the backend now, fresh or not, refused before or not.
    public mutating func forceRegister(now: Date) -> [RegistrationAction] {
        generation += 1
        inputs.enabled = true
        record.deletionWanted = nil
        forceNext = true
        forcedPassUnfinished = true
        retryAt = nil
        backendWaitUntil = nil
        quietUntil = nil
        return reconcile(now: now)
    }

    /// `unregister`: stop registering and delete the registration at the backend. With
    /// `untilDone`, a deletion that fails for a reason that may pass (the backend down,
    /// throttling, no network) is retried with the backoff, across restarts, until it goes
    /// through, is refused for good, or registering is turned on again; without (`logout`,
    /// which changes nothing when it cannot delete), its failure is the answer.
    public mutating func requestDeletion(now: Date, untilDone: Bool = true) -> [RegistrationAction] {
        generation += 1
        inputs.enabled = false
        retryAt = backendWait(now: now)
        deletionRequested = generation
        guard untilDone, record.deletionWanted == nil else { return reconcile(now: now) }
        record.deletionWanted = now
        return [.persist] + reconcile(now: now)
    }

    public mutating func wake(now: Date) -> [RegistrationAction] {
        reconcile(now: now)
    }

    public mutating func stepFinished(_ result: StepResult, now: Date) -> [RegistrationAction] {
        guard let finished = inFlight else { return [] }
        inFlight = nil
        switch (finished.step, result) {
        case (.createId(_, let backend, let api), .created(let id)):
            record.id = id
            record.idBackend = backend
            record.idAPI = api
            if api == .installations { record.installation = (id, backend) }
            // Carry on with the same pass: upsert the latest inputs under the new id.
            return [.persist] + continuePass(now: now)

        case (.upsert(_, let target), .done):
            record.registered = target
            record.registeredAt = now
            record.learn(target.platform, at: target.backend, refused: nil)
            record.rejected = nil
            record.rejectedReason = nil
            failures = 0
            lastFailure = nil
            retryAt = nil
            backendWaitUntil = nil
            recoverableWait = false
            waitCutShort = false
            lastReason = nil
            forcedPassUnfinished = false
            settle(finished.generation)
            return [.persist] + reconcile(now: now)

        case (.upsert, .failed(.gone)):
            // The hub forgot the id. Never retry with it: drop it, and make a new one once.
            record.forgetId()
            if !recreatedInPass {
                recreatedInPass = true
                return [.persist] + continuePass(now: now)
            }
            return [.persist] + backOff(finished, reason: "the backend lost the new registration id as well", retryAfter: nil, now: now)

        case (.delete(let id, _, _), .done), (.delete(let id, _, _), .failed(.gone)):
            record.forgetId()
            record.deletionWanted = nil
            failures = 0
            lastReason = nil
            lastDeletion = (finished.generation, .deleted(id: id))
            settle(finished.generation)
            return [.persist] + reconcile(now: now)

        case (.delete(let id, _, _), .failed(let failure)) where record.deletionWanted != nil && !inputs.enabled:
            lastDeletion = (finished.generation, .retrying(id: id, failure))
            if let retry = retryLater(finished, after: failure, now: now) { return retry }
            // Refused: said to whoever waits, and shown by `status`.
            lastDeletion = (finished.generation, .failed(failure))
            switch failure {
            case .unauthorized:
                // Not these credentials (a login being checked, say): the deletion waits for
                // credentials the backend takes, and goes on with them.
                if let account = finished.account { record.refusedRevision = account.revision }
            default:
                record.deletionWanted = nil
            }
            settle(finished.generation)
            return [.persist] + reconcile(now: now)

        case (.delete, .failed(let failure)):
            lastDeletion = (finished.generation, .failed(failure))
            if case .unauthorized = failure, let account = finished.account {
                record.refusedRevision = account.revision
            }
            settle(finished.generation)
            return [.persist] + reconcile(now: now)

        case (_, .failed(.unauthorized)):
            record.refusedRevision = finished.account?.revision
            forcedPassUnfinished = false
            settle(finished.generation)
            return [.persist, .cancelWake] + reconcile(now: now)

        case (_, .failed(.rejected(let status, let detail))):
            if case .upsert(_, let target) = finished.step {
                record.rejected = target
                if RefusedPlatform.proves(status: status, platform: target.platform) { record.learn(target.platform, at: target.backend, refused: detail) }
            } else if let target = inputs.target {
                record.rejected = target
            }
            record.rejectedReason = "HTTP \(status)" + (detail.isEmpty ? "" : ": \(detail)")
            forcedPassUnfinished = false
            settle(finished.generation)
            return [.persist, .cancelWake] + reconcile(now: now)

        case (_, .failed(let failure)):
            return retryLater(finished, after: failure, now: now) ?? misbehaving(finished, now: now)

        default:
            return misbehaving(finished, now: now)
        }
    }

    /// After a failure that may pass (no network, an outage, throttling): the wait for the
    /// network, or the backoff. Nil for a refusal, which waiting does not change.
    private mutating func retryLater(_ finished: InFlight, after failure: BackendFailure, now: Date) -> [RegistrationAction]? {
        switch failure {
        case .offline(let reason): waitForNetwork(finished, reason: reason, now: now)
        case .transient(let retryAfter, let reason): backOff(finished, reason: reason, retryAfter: retryAfter, now: now)
        case .unreachable(let reason, _): backOff(finished, reason: reason, retryAfter: nil, watched: true, now: now)
        case .gone, .unauthorized, .rejected: nil
        }
    }

    /// A result that does not fit the step (`.created` for an upsert, `gone` for a new id):
    /// the backend is taken as misbehaving, and tried again later.
    private mutating func misbehaving(_ finished: InFlight, now: Date) -> [RegistrationAction] {
        backOff(finished, reason: "unexpected answer from the backend", retryAfter: nil, now: now)
    }

    // MARK: Deciding

    mutating func reconcile(now: Date) -> [RegistrationAction] {
        let actions = decide(now: now)
        // Offline ends with the attempts: once none is waited for or under way, whatever
        // else ended them (a success, a refusal, a logout).
        if inFlight == nil && retryAt == nil && quietUntil == nil { offlineSince = nil }
        return actions
    }

    private mutating func decide(now: Date) -> [RegistrationAction] {
        guard inFlight == nil else { return [] }

        if let requested = deletionRequested {
            deletionRequested = nil
            guard let id = record.id, let backend = record.idBackend ?? inputs.backend, inputs.account != nil else {
                record.deletionWanted = nil
                record.registered = nil
                record.registeredAt = nil
                lastDeletion = (requested, .deleted(id: nil))
                settle(generation)
                return [.persist, .cancelWake]
            }
            return begin(.delete(id: id, backend: backend, api: record.idAPI), now: now)
        }

        // An `unregister` not through yet: tried again once its wait is over, while the id
        // is at the backend in use and someone is logged in there. Otherwise `retired`
        // deletes it, with a login made where it was made.
        if !inputs.enabled, record.deletionWanted != nil, let id = record.id, let backend = record.idBackend ?? inputs.backend {
            guard let current = inputs.backend, record.idBackend == nil || record.idIsAt(current, inputs.api), let account = inputs.account else {
                record.deletionWanted = nil
                retryAt = nil
                settle(generation)
                return retireRecordedId() + [.cancelWake]
            }
            // Refused with these credentials: the next login goes on with it.
            if record.refusedRevision == account.revision {
                settle(generation)
                return [.cancelWake]
            }
            if let retryAt, now < retryAt {
                settle(generation)
                return [.wake(at: retryAt)]
            }
            retryAt = nil
            return begin(.delete(id: id, backend: backend, api: record.idAPI), now: now)
        }

        // The backend moved to another origin or API, where nobody is logged in: the
        // registration left at the old one is deleted there, not left to push to this device.
        if inputs.account == nil, let backend = inputs.backend, record.id != nil, record.idBackend != nil, !record.idIsAt(backend, inputs.api) {
            settle(generation)
            return retireRecordedId() + [.cancelWake]
        }
        guard let target = inputs.target, let account = inputs.account else {
            forceNext = false
            forcedPassUnfinished = false
            settle(generation)
            return [.cancelWake]
        }
        if !forceNext {
            if record.refusedRevision == account.revision || record.rejected == target {
                settle(generation)
                return [.cancelWake]
            }
            if !forcedPassUnfinished, record.registered == target, let registeredAt = record.registeredAt {
                let due = registeredAt.addingTimeInterval(policy.refreshInterval)
                if now < due {
                    settle(generation)
                    return [.wake(at: due)]
                }
            }
            if let retryAt, now < retryAt {
                settle(generation)
                return [.wake(at: retryAt)]
            }
            if let quietUntil, now < quietUntil {
                return [.wake(at: quietUntil)]
            }
        }
        quietUntil = nil
        firstUnsentChangeAt = nil
        forceNext = false
        recreatedInPass = false
        retryAt = nil
        return continuePass(now: now)
    }

    /// The next call of a registration pass, for the latest inputs. An id made at another
    /// backend is retired: deleted there, not left for that backend to push to.
    private mutating func continuePass(now: Date) -> [RegistrationAction] {
        guard let target = inputs.target else { return reconcile(now: now) }
        if let id = record.id, record.idIsAt(target.backend, target.api) {
            return begin(.upsert(id: id, target: target), now: now)
        }
        let retired = retireRecordedId()
        // Back at an installations backend: the id chosen for it before, which the device keeps.
        if target.api == .installations, let kept = record.installation, kept.backend == target.backend {
            (record.id, record.idBackend, record.idAPI) = (kept.id, kept.backend, .installations)
            return retired + [.persist] + begin(.upsert(id: kept.id, target: target), now: now)
        }
        return retired + begin(.createId(handle: target.handle, backend: target.backend, api: target.api), now: now)
    }

    /// Hands the id made at another backend over for deletion there, and forgets it here.
    private mutating func retireRecordedId() -> [RegistrationAction] {
        guard let id = record.id, let backend = record.idBackend else { return [] }
        let retired: [RegistrationAction] = [.retire(id: id, backend: backend, user: record.registered?.user, api: record.idAPI), .persist]
        record.forgetId()
        return retired
    }

    private mutating func begin(_ step: RegistrationStep, now: Date) -> [RegistrationAction] {
        inFlight = InFlight(step: step, generation: generation, account: inputs.account)
        offlineWait = false
        lastAttemptAt = now
        return [.cancelWake, .perform(step)]
    }

    mutating func settle(_ generation: Int) {
        settledGeneration = max(settledGeneration, generation)
    }
}
