#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol

/// Every login is checked by the backend before it replaces the one in force. While it is
/// checked it is the registrar's `trial`, saved nowhere:
///
/// - with a device token and registration on, the next registration pass uses it (a
///   registration the device needs anyway, forced when nothing changed);
/// - otherwise, or when no pass will come (registration turned off meanwhile, a pass that
///   gave up without an answer about the credentials), a request of its own checks it.
///
/// A refused login is dropped. One that cannot be checked because the backend cannot be
/// reached is saved only when nobody is logged in (it replaces nothing, and the first
/// request checks it); otherwise it is dropped too and the login in force stays.
extension Registrar {
    /// `password` may be nil when it comes from a command or a systemd credential. The new
    /// credentials replace the login in force only once the backend accepted them (see
    /// the type's comment); `loginOutcome` tells the verdict. Without `backend`, the
    /// login in force keeps its backend: a re-login needs no `--backend` again.
    public func login(user: String, password: String?, backend: String?) async throws(CoreError) -> PendingLogin {
        try Credentials.validateUser(user)
        let external = accounts.passwordSource != .stored
        let password = password ?? ""
        if password.isEmpty && !external {
            throw .invalidArgument("no \(settings[\.backendAPI].secretName) given (and no password_command or systemd credential is configured)")
        }
        try PasswordText.checkGiven(password, named: settings[\.backendAPI].secretName)
        let chosen = try backend.map { (url: String) throws(CoreError) in try BackendURL.validate(url, allowInsecureHTTP: settings[\.allowInsecureHTTP]) }
            ?? credentials?.backend
        guard let shown = chosen ?? settings[\.backend] else { throw .noBackend }
        // An external password is never stored: it is fetched when needed.
        let candidate = Credentials(user: user, password: external ? "" : password, backend: chosen, origin: BackendURL.origin(shown),
                                    api: settings[\.backendAPI])
        await accounts.loginStarted()
        await turns.begin()
        defer { turns.end() }
        if let earlier = trial { loginVerdicts[earlier.revision] = .superseded(user: earlier.user) }
        trial = candidate
        logger.notice("checking the credentials of \(user) at \(shown)")
        var actions = machine.update(inputs, now: clock.now())
        // A pass with the new credentials checks them, even when nothing else changed; with
        // no token or registration off, none comes and a request of its own checks them.
        let passStarts = actions.contains { if case .perform = $0 { true } else { false } }
        if device.token != nil, device.enabled, !passStarts {
            actions += machine.forceRegister(now: clock.now())
        }
        await apply(actions)
        return PendingLogin(user: user, revision: candidate.revision, generation: machine.generation)
    }

    /// Waits (bounded) for the verdict on a login: the registration outcome when the
    /// credentials were saved, an error when they were not.
    public func loginOutcome(_ pending: PendingLogin, timeout: Double?) async throws(CoreError) -> RegistrationOutcome {
        await changesSaved()
        if loginVerdicts[pending.revision] == nil, let timeout, timeout > 0 {
            _ = await wait(for: .login(revision: pending.revision), timeout: timeout)
        }
        let generation = loginGenerations.removeValue(forKey: pending.revision) ?? pending.generation
        let verdict = loginVerdicts.removeValue(forKey: pending.revision)
        let kept = passwordsKept.removeValue(forKey: pending.revision)
        switch verdict {
        case .refused(let user, let status):
            throw .loginRefused(user: user, status: status, previous: credentials?.user, secret: settings[\.backendAPI].secretName)
        case .uncheckable(let user, let reason):
            throw .loginUnchecked(user: user, reason: reason, previous: credentials?.user, secret: settings[\.backendAPI].secretName)
        case .notSaved(let error):
            throw error
        case .superseded(let user):
            throw .loginSuperseded(user: user)
        case .accepted, .unchecked:
            var outcome = await waitForOutcome(generation: generation, timeout: timeout)
            if outcome.registration.state == .noToken {
                outcome.registration.message = if case .unchecked(let reason) = verdict {
                    "the credentials could not be checked (\(reason)), so they are checked at the first request; no device token yet (`notifyctl set-token TOKEN`)"
                } else {
                    "no device token yet: notifyd registers once one is set (`notifyctl set-token TOKEN`)"
                }
                outcome.settled = true
            }
            outcome.passwordKept = kept
            return outcome
        case nil:
            // Still being checked: the login is not in force, and must not be reported as if it were.
            throw .loginPending(user: pending.user, previous: credentials?.user)
        }
    }

    enum LoginVerdict: Equatable {
        case accepted
        /// Saved without a check: nobody was logged in and the backend could not be reached.
        /// `reason` is said with the login: an unreachable backend is not the only cause (a
        /// libcurl too old to load fails every request the same way).
        case unchecked(reason: String)
        /// Not saved: the backend could not be reached while another login was in force.
        case uncheckable(user: String, reason: String)
        case refused(user: String, status: Int)
        case notSaved(CoreError)
        case superseded(user: String)

        var isSaved: Bool {
            switch self {
            case .accepted, .unchecked: true
            case .uncheckable, .refused, .notSaved, .superseded: false
            }
        }
    }

    /// What a registration step made with the login on trial says of it; nil while its
    /// pass goes on (a new id is made, or a dead one replaced).
    func judge(_ result: StepResult, user: String) -> LoginVerdict? {
        switch result {
        case .created, .failed(.gone): nil
        // Another kind of backend, or a request never sent (status 0): nothing was checked.
        case .failed(.rejected(let status, let detail)) where status == 0 || BackendFailure.namesOtherAPI(detail):
            .notSaved(.backendRejected(status: status, detail: detail))
        // The backend looked at the request itself only after the credentials passed.
        case .done, .failed(.rejected): .accepted
        case .failed(.unauthorized(let status)): .refused(user: user, status: status)
        // Transient, unreachable or offline: worded as for any other request.
        case .failed(let failure): unreachableVerdict(user: user, reason: error(for: failure).description)
        }
    }

    /// What the check request of `checkByItself` says of a login. Only a 2xx accepts it:
    /// a 404 to a route every AppBackend has says the URL is wrong, not that the password is right.
    func judge(check result: Result<Void, BackendCallError>, user: String, api: BackendDialect) -> LoginVerdict {
        switch result {
        case .success: return .accepted
        case .failure(let error):
            let failure = BackendFailure.classify(error, route: .create, api: api)
            switch failure {
            case .unauthorized(let status): return .refused(user: user, status: status)
            case .transient, .unreachable, .offline: return unreachableVerdict(user: user, reason: self.error(for: failure).description)
            case .rejected(let status, let detail):
                return .notSaved(.backendRejected(status: status, detail: detail.isEmpty
                    ? "the login could not be checked; is the backend URL right?" : detail))
            case .gone(let status):
                return .notSaved(.backendRejected(status: status, detail: "the login could not be checked; is the backend URL right?"))
            }
        }
    }

    private func unreachableVerdict(user: String, reason: String) -> LoginVerdict {
        credentials == nil ? .unchecked(reason: reason) : .uncheckable(user: user, reason: reason)
    }

    /// Ends the trial of `candidate` with `verdict`, once: a second verdict (a pass and a
    /// check request both answered) or one for a login replaced meanwhile changes nothing.
    func decide(_ candidate: Credentials, _ verdict: LoginVerdict) async {
        guard trial?.revision == candidate.revision, !trialCommitting else { return }
        guard verdict.isSaved else {
            trial = nil
            loginVerdicts[candidate.revision] = verdict
            switch verdict {
            case .refused(_, let status):
                logger.warning("the backend refused the login of \(candidate.user) (HTTP \(status)); it was not saved")
            case .uncheckable(_, let reason):
                logger.warning("the login of \(candidate.user) could not be checked (\(reason)); it was not saved")
            case .notSaved(let error):
                logger.warning("the login of \(candidate.user) was not saved: \(error.description)")
            default: break
            }
            // Back to the login in force before the machine looks at its inputs again.
            await apply(machine.update(inputs, now: clock.now()))
            return
        }
        trialCommitting = true
        defer { trialCommitting = false }
        do {
            passwordsKept[candidate.revision] = try await accounts.commit(candidate, checked: verdict == .accepted)
        } catch {
            logger.error("\(error.description); the login of \(candidate.user) was not saved")
            if trial?.revision == candidate.revision { trial = nil }
            loginVerdicts[candidate.revision] = .notSaved(error)
            await apply(machine.update(inputs, now: clock.now()))
            return
        }
        if trial?.revision == candidate.revision { trial = nil }
        if case .unchecked(let reason) = verdict {
            logger.notice("logged in as \(candidate.user), unchecked: \(reason); the credentials are checked at the first request")
        } else {
            logger.notice("logged in as \(candidate.user)")
        }
        // A login brings registration back on (after an `unregister`, say).
        await setRegistration(enabled: true)
        loginVerdicts[candidate.revision] = verdict
        loginGenerations[candidate.revision] = machine.generation
        releaseWaiters()
        await onAccountChange()
    }

    /// Starts the check request of the login on trial when no registration pass will
    /// check it: nothing to register, registration off, or a pass that ended without an
    /// answer about the credentials.
    func checkTrialIfNoPassWill() {
        guard let candidate = trial, checkTask == nil, !trialCommitting, !machine.isBusy,
              machine.settledGeneration >= machine.generation else { return }
        checkByItself(candidate)
    }

    /// `POST /api/register` without a handle: the tutorial's controller then only reserves
    /// a registration id, and touches no registration. Every AppBackend authenticates it.
    /// At the backend service, the DELETE of an installation id no device has.
    private func checkByItself(_ candidate: Credentials) {
        let place = accounts.backend(of: candidate) ?? "?"
        logger.info(candidate.api == .installations
            ? "no registration pass will check them: deleting at \(place) an installation id no device has, with the API key given for \(candidate.user)"
            : "no registration pass will check them: asking \(place) for a registration id as \(candidate.user)")
        let accounts = self.accounts, backend = self.backend
        // A task of its own, kept in `checkTask`: the check outlives this call, and a newer
        // login or logout cancels it; its verdict comes back through the actor.
        checkTask = Task {
            let verdict: LoginVerdict
            do throws(CoreError) {
                let account = try await accounts.backendAccount(candidate)
                verdict = self.judge(check: await backend.checkCredentials(account: account), user: candidate.user, api: candidate.api)
            } catch {
                verdict = self.unreachableVerdict(user: candidate.user, reason: error.description)
            }
            await self.checkEnded(candidate, verdict)
        }
    }

    private func checkEnded(_ candidate: Credentials, _ verdict: LoginVerdict) async {
        await turns.begin()
        defer { turns.end() }
        checkTask = nil
        if verdict == .accepted, let backend = accounts.backend(of: candidate) { recovery?.backendAnswered(backend) }
        if case .refused = verdict { await accounts.passwordRefused() }
        await decide(candidate, verdict)
        // A later login that arrived while this check ran waited for it: its own now.
        checkTrialIfNoPassWill()
    }
}
