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
    }

    private struct State {
        var calls: [Call] = []
        var createAnswers: [BackendCallError] = []
        var upsertAnswers: [BackendCallError] = []
        var deleteAnswers: [BackendCallError] = []
        var alwaysFail: BackendCallError?
        var nextId = 1
        var users: [String] = []
    }

    private let state = Mutex(State())

    var calls: [Call] { state.withLock { $0.calls } }
    var users: [String] { state.withLock { $0.users } }

    func failNextCreate(_ error: BackendCallError) { state.withLock { $0.createAnswers.append(error) } }
    func failNextUpsert(_ error: BackendCallError) { state.withLock { $0.upsertAnswers.append(error) } }
    func failNextDelete(_ error: BackendCallError) { state.withLock { $0.deleteAnswers.append(error) } }
    /// Every call fails with `error` until set back to nil (an outage).
    func failEverything(_ error: BackendCallError?) { state.withLock { $0.alwaysFail = error } }

    func createRegistrationId(handle: String, account: BackendAccount) async -> Result<String, BackendCallError> {
        await Task.yield()
        return state.withLock { state in
            state.calls.append(.create(handle: handle))
            state.users.append(account.user)
            if let error = state.alwaysFail { return .failure(error) }
            if !state.createAnswers.isEmpty { return .failure(state.createAnswers.removeFirst()) }
            defer { state.nextId += 1 }
            return .success("id-\(state.nextId)")
        }
    }

    func upsertRegistration(id: String, platform: String, handle: String, tags: [String], account: BackendAccount) async -> Result<Void, BackendCallError> {
        await Task.yield()
        return state.withLock { state in
            state.calls.append(.upsert(id: id, handle: handle, tags: tags))
            state.users.append(account.user)
            if let error = state.alwaysFail { return .failure(error) }
            if !state.upsertAnswers.isEmpty { return .failure(state.upsertAnswers.removeFirst()) }
            return .success(())
        }
    }

    func deleteRegistration(id: String, account: BackendAccount) async -> Result<Void, BackendCallError> {
        await Task.yield()
        return state.withLock { state in
            state.calls.append(.delete(id: id))
            if let error = state.alwaysFail { return .failure(error) }
            if !state.deleteAnswers.isEmpty { return .failure(state.deleteAnswers.removeFirst()) }
            return .success(())
        }
    }

    func sendNotification(pns: String, toTag: String, body: String, account: BackendAccount) async -> Result<Void, BackendCallError> {
        state.withLock { state in
            state.calls.append(.send(pns: pns, toTag: toTag, body: body))
            if let error = state.alwaysFail { return .failure(error) }
            return .success(())
        }
    }
}
