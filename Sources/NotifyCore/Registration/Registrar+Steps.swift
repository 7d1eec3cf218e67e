#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol

/// The backend calls the machine asks for, made with the login in force (or on trial),
/// and what their results tell the machine and the login being checked.
extension Registrar {
    func perform(_ step: RegistrationStep) {
        let credentials = trial ?? credentials
        let backendText = step.backend
        let url = URL(string: backendText)
        if let credentials, url != nil {
            logger.info(Self.describe(step, user: credentials.user))
            stepRevision = credentials.revision
        }
        let backend = self.backend
        let settings = self.settings
        let accounts = self.accounts
        // A task of its own, kept in `stepTask`: the request outlives this call, which the
        // machine made in a turn, and shutdown waits for it (bounded) or cancels it. A step
        // that cannot be sent is told from it too, after this turn, as a request's result
        // is: `finished` takes a turn.
        stepTask = Task {
            guard let credentials else {
                // Logged out while the step was being decided; tell the machine nothing was sent.
                await self.finished(step, .failed(.transient(retryAfter: nil, reason: "not logged in")), with: nil)
                return
            }
            guard let url else {
                await self.finished(step, .failed(.rejected(status: 0, detail: "invalid backend URL \(backendText)")), with: credentials)
                return
            }
            var account: BackendAccount
            do {
                // The step's backend: a registration is deleted where it was made, and only
                // with a login made there, for its API.
                guard credentials.api == step.api else {
                    throw CoreError.loginForAnotherAPI(user: credentials.user, api: credentials.api, inForce: step.api)
                }
                account = try await accounts.backendAccount(credentials, at: backendText)
                account.baseURL = url
            } catch {
                self.logger.error("\(error)")
                await self.finished(step, .failed(.transient(retryAfter: nil, reason: "\(error)")), with: credentials)
                return
            }
            var result: StepResult
            switch step {
            case .createId(let handle, _, let api):
                // Back at a backend whose registration is still waiting to be deleted: that one.
                if let id = await self.retired?.reclaim(backend: backendText, api: api) {
                    result = .created(id: id)
                    break
                }
                switch await backend.createRegistrationId(handle: handle, account: account) {
                case .success(let id):
                    await self.retired?.inUse(id: id, backend: backendText)
                    result = .created(id: id)
                case .failure(let error): result = .failed(self.classify(error, route: .create, backend: backendText, api: api))
                }
            case .upsert(let id, let target):
                guard let platform = Self.platformName(target.platform, api: target.api, android: settings[\.androidName]) else {
                    result = .failed(.rejected(status: 0, detail: "the backend service registers apns and Android (fcmv1) devices only, not \(target.platform); "
                                               + "set the token with --platform apns or fcmv1"))
                    break
                }
                let outcome = await backend.upsertRegistration(id: id, platform: platform, handle: target.handle, tags: target.tags, account: account)
                result = self.stepResult(outcome, route: .upsert, backend: backendText, api: target.api)
                if target.api == .installations, target.platform.isAndroid, case .failed(.transient(let retryAfter, let reason)) = result,
                   case .failure(.status(422, _, _)) = outcome {
                    result = .failed(.transient(retryAfter: retryAfter, reason: reason + InstallationRoutes.androidNameHint(settings[\.androidName])))
                }
            case .delete(let id, _, let api):
                result = self.stepResult(await backend.deleteRegistration(id: id, account: account), route: .delete, backend: backendText, api: api)
            }
            await self.finished(step, result, with: credentials)
        }
    }

    func finished(_ step: RegistrationStep, _ result: StepResult, with used: Credentials?) async {
        await turns.begin()
        defer { turns.end() }
        stepTask = nil
        stepRevision = nil
        switch result {
        case .done, .created: recovery?.backendAnswered(step.backend)
        case .failed: break
        }
        let checking = used.flatMap { used in trial?.revision == used.revision ? trial : nil }
        let verdict = checking.flatMap { judge(result, user: $0.user) }
        // A login on trial that the backend refused is reported as such, not as a stop.
        if case .refused = verdict {} else { log(step, result) }
        if case .failed(.unauthorized) = result { await accounts.passwordRefused() }
        // Decided while the step still counts as in flight: no check request of the login
        // starts meanwhile, and the machine goes on with the login that is then in force.
        if let checking, let verdict { await decide(checking, verdict) }
        await apply(machine.stepFinished(result, now: clock.now()))
        if case .failed(.unreachable) = result { recovery?.watchForReturn(of: step.backend) }
    }

    nonisolated func stepResult(_ outcome: Result<Void, BackendCallError>, route: BackendFailure.Route, backend: String, api: BackendDialect) -> StepResult {
        switch outcome {
        case .success: .done
        case .failure(let error): .failed(classify(error, route: route, backend: backend, api: api))
        }
    }

    /// The platform's name at the backend: Android under `android_name`, at the backend
    /// service too, which knows Apple's and Google's only (nil for others).
    static func platformName(_ platform: Platform, api: BackendDialect, android: Platform) -> String? {
        switch api {
        case .registrations: platform.backendName(android: android)
        case .installations: InstallationRoutes.platformName(platform, android: android)
        }
    }

    func error(for failure: BackendFailure) -> CoreError {
        switch failure {
        case .unauthorized(let status): .unauthorized(user: credentials?.user ?? "?", status: status)
        case .transient(_, let reason): .backendUnavailable(reason)
        case .unreachable(let reason, _), .offline(let reason): .backendUnavailable(BackendFailure.unreachableText(reason))
        case .rejected(let status, let detail): .backendRejected(status: status, detail: detail)
        case .gone: .backendUnavailable("the registration was already gone")
        }
    }
}
