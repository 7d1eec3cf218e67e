#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol

/// What `status` shows of the registrar: its own part, published with each change to the
/// device, the machine or the login check (`StatusPart`), joined with the login and the
/// password source's runs, which the account keeper holds under its locks.
extension Registrar {
    /// The registrar's part of `status`: a function of the three values it is made from,
    /// each of which publishes it anew when set.
    public struct StatusShown: Equatable, Sendable {
        var device: DeviceState
        var registration: RegistrationStatus
        /// A registration step or a login check is under way: a password command running
        /// meanwhile is what it waits for.
        var busy: Bool

        init(device: DeviceState, machine: RegistrationMachine, checkTask: Task<Void, Never>?) {
            self.device = device
            registration = machine.status
            busy = machine.isBusy || checkTask != nil
        }
    }

    /// The part as the registrar's state gives it now.
    var statusMadeAfresh: StatusShown { StatusShown(device: device, machine: machine, checkTask: checkTask) }

    func publishStatus() {
        statusShown.publish(statusMadeAfresh)
    }

    /// Whether the part `status` reads is the one the state gives: false only if a change
    /// to what it is made from did not publish it (checked by the tests' daemons).
    public func statusShownIsCurrent() -> Bool {
        statusShown.current == statusMadeAfresh
    }

    /// What `status` shows, read without a hop onto the registrar.
    public nonisolated func snapshot() -> Snapshot {
        let shown = statusShown.current
        var registration = shown.registration
        // What a step in flight waits for: the password command before the backend.
        let waitingSince = shown.busy ? accounts.passwordRunningSince : nil
        if let waitingSince {
            registration.message = "waiting for the password command (\(Int(Date().timeIntervalSince(waitingSince))) s)"
        }
        let credentials = accounts.activeLogin
        // Nobody logged in: the configured backend, as for a login naming none.
        let backend = credentials.flatMap(accounts.backend(of:)) ?? settings[\.backend]
        return Snapshot(device: shown.device, user: credentials?.user, backend: backend,
                        registration: registration, passwordProblem: accounts.passwordProblem,
                        passwordInKeyring: credentials?.keyringItem != nil, strandedLogin: accounts.strandedLogin)
    }
}
