import Foundation
import NotifyCore
import Synchronization

/// A scripted BackendAPI: records every call and answers from a queue of canned results
/// per route (success when the queue is empty). Calls can be held until released, to
/// model a slow backend.
final class FakeBackend: BackendAPI {
    enum Call: Equatable, Sendable {
        case create(handle: String)
        case upsert(id: String, handle: String, tags: [String])
        case delete(id: String)
        case send(pns: String, toTag: String, body: String)
        case check
    }

    fileprivate struct State {
        var calls: [Call] = []
        /// The `Idempotency-Key` of each send, in order.
        var sendKeys: [String?] = []
        var createAnswers: [BackendCallError] = []
        var upsertAnswers: [BackendCallError] = []
        var deleteAnswers: [BackendCallError] = []
        var checkAnswers: [BackendCallError] = []
        /// The tutorial's rule: a request is refused (403) unless password == user.
        var passwordMustBeUser = false
        /// Answers for sends in order; nil is a success.
        var sendAnswers: [BackendCallError?] = []
        var holdNext: Set<String> = []
        var held: CheckedContinuation<Void, Never>?
        var alwaysFail: BackendCallError?
        var nextId = 1
        var users: [String] = []
    }

    private let state = Mutex(State())
    /// Whether it answers `probe`: a reachability probe connects while nothing fails everything.
    let probes: Bool
    private let probeCount = Mutex(0)

    init(probing: Bool = false) {
        probes = probing
    }

    func probe(_ backend: String, tls: Bool) async -> Bool {
        probeCount.withLock { $0 += 1 }
        return state.withLock { $0.alwaysFail == nil }
    }

    var probesMade: Int { probeCount.withLock { $0 } }

    func checkCredentials(account: BackendAccount) async -> Result<Void, BackendCallError> {
        await Task.yield()
        return state.withLock { state in
            state.calls.append(.check)
            state.users.append(account.user)
            if let error = state.alwaysFail { return .failure(error) }
            if let refusal = state.refusal(of: account) { return .failure(refusal) }
            if !state.checkAnswers.isEmpty { return .failure(state.checkAnswers.removeFirst()) }
            return .success(())
        }
    }

    var calls: [Call] { state.withLock { $0.calls } }
    var sendKeys: [String?] { state.withLock { $0.sendKeys } }
    /// The calls but the logins' own checks.
    var registrationCalls: [Call] { calls.filter { $0 != .check } }
    var users: [String] { state.withLock { $0.users } }

    func failNextCreate(_ error: BackendCallError) { state.withLock { $0.createAnswers.append(error) } }
    func failNextUpsert(_ error: BackendCallError) { state.withLock { $0.upsertAnswers.append(error) } }
    func failNextDelete(_ error: BackendCallError) { state.withLock { $0.deleteAnswers.append(error) } }
    func failNextCheck(_ error: BackendCallError) { state.withLock { $0.checkAnswers.append(error) } }
    /// From now on every call is refused with 403 unless its password equals its user.
    func refuseWrongPasswords() { state.withLock { $0.passwordMustBeUser = true } }
    /// Every call fails with `error` until set back to nil (an outage).
    func failEverything(_ error: BackendCallError?) { state.withLock { $0.alwaysFail = error } }
    /// The next sends answer these, in order (nil: success).
    func answerNextSends(_ answers: [BackendCallError?]) { state.withLock { $0.sendAnswers += answers } }

    /// The next call of `route` ("upsert", "delete" or "send") waits until `release`: a call in flight.
    func holdNext(_ route: String) { state.withLock { _ = $0.holdNext.insert(route) } }
    /// True while a held call waits.
    var isHolding: Bool { state.withLock { $0.held != nil } }
    func release() {
        let held = state.withLock { state in
            defer { state.held = nil }
            return state.held
        }
        held?.resume()
    }

    private func holdIfAsked(_ route: String) async {
        guard state.withLock({ $0.holdNext.remove(route) != nil }) else { return }
        await withCheckedContinuation { continuation in
            state.withLock { $0.held = continuation }
        }
    }

    func createRegistrationId(handle: String, account: BackendAccount) async -> Result<String, BackendCallError> {
        await Task.yield()
        return state.withLock { state in
            state.calls.append(.create(handle: handle))
            state.users.append(account.user)
            if let error = state.alwaysFail { return .failure(error) }
            if let refusal = state.refusal(of: account) { return .failure(refusal) }
            if !state.createAnswers.isEmpty { return .failure(state.createAnswers.removeFirst()) }
            defer { state.nextId += 1 }
            return .success("id-\(state.nextId)")
        }
    }

    func upsertRegistration(id: String, platform: String, handle: String, tags: [String], account: BackendAccount) async -> Result<Void, BackendCallError> {
        await Task.yield()
        await holdIfAsked("upsert")
        return state.withLock { state in
            state.calls.append(.upsert(id: id, handle: handle, tags: tags))
            state.users.append(account.user)
            if let error = state.alwaysFail { return .failure(error) }
            if let refusal = state.refusal(of: account) { return .failure(refusal) }
            if !state.upsertAnswers.isEmpty { return .failure(state.upsertAnswers.removeFirst()) }
            return .success(())
        }
    }

    func deleteRegistration(id: String, account: BackendAccount) async -> Result<Void, BackendCallError> {
        await Task.yield()
        await holdIfAsked("delete")
        return state.withLock { state in
            state.calls.append(.delete(id: id))
            if let error = state.alwaysFail { return .failure(error) }
            if let refusal = state.refusal(of: account) { return .failure(refusal) }
            if !state.deleteAnswers.isEmpty { return .failure(state.deleteAnswers.removeFirst()) }
            return .success(())
        }
    }

    func sendNotification(pns: String, toTag: String, body: String, account: BackendAccount, idempotencyKey: String?) async -> Result<Void, BackendCallError> {
        await holdIfAsked("send")
        return state.withLock { state in
            state.calls.append(.send(pns: pns, toTag: toTag, body: body))
            state.sendKeys.append(idempotencyKey)
            state.users.append(account.user)
            if let error = state.alwaysFail { return .failure(error) }
            if let refusal = state.refusal(of: account) { return .failure(refusal) }
            if !state.sendAnswers.isEmpty, let error = state.sendAnswers.removeFirst() { return .failure(error) }
            return .success(())
        }
    }
}

private extension FakeBackend.State {
    func refusal(of account: BackendAccount) -> BackendCallError? {
        passwordMustBeUser && account.password != account.user ? .status(403, retryAfter: nil, body: "") : nil
    }
}
