/// A login made while a device token is set is a trial: the next registration pass uses
/// it, and it is saved only once the backend did not refuse it.
extension Registrar {
    /// How a step made with the login being checked decides it; nil while its pass goes on.
    func judge(_ result: StepResult, user: String) -> LoginVerdict? {
        switch result {
        case .created, .failed(.gone): nil
        case .done, .failed(.rejected): .accepted
        case .failed(.unauthorized(let status)): .refused(user: user, status: status)
        case .failed(.transient): .unchecked
        }
    }

    /// Saves the checked (or uncheckable) login and makes it the one in force.
    func commitTrial(_ candidate: Credentials, _ verdict: LoginVerdict) async {
        do {
            try await accounts.commit(candidate, checked: verdict == .accepted)
        } catch {
            logger.error("\(error.description); the login of \(candidate.user) was not saved")
            if trial?.revision == candidate.revision {
                trial = nil
                await apply(machine.update(inputs, now: clock.now()))
            }
            loginVerdicts[candidate.revision] = .notSaved(error)
            releaseWaiters()
            return
        }
        credentials = candidate
        if trial?.revision == candidate.revision { trial = nil }
        loginVerdicts[candidate.revision] = verdict
        logger.notice("logged in as \(candidate.user)\(verdict == .accepted ? "" : " (the credentials could not be checked yet)")")
        await apply(machine.update(inputs, now: clock.now()))
        await onAccountChange()
    }

    /// A login waits for a registration pass; when none will come (the registration was
    /// turned off meanwhile), it is saved unchecked rather than left hanging.
    func saveTrialIfNothingWillCheckIt() {
        guard let candidate = trial, !trialCommitting, !machine.isBusy, machine.settledGeneration >= machine.generation else { return }
        trialCommitting = true
        Task {
            // After the turn this was decided in.
            await self.turns.begin()
            defer { self.turns.end() }
            await self.commitTrial(candidate, .unchecked)
            self.trialCommitting = false
        }
    }
}
