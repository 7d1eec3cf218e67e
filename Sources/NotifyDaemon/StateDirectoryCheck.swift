import NotifyCore

/// What must hold of the state directory before notifyd reads or writes anything in it.
/// Run by `main` before the daemon is made (which reads the state and the credentials),
/// and again by `Daemon.start` once the directory exists.
public enum StateDirectoryCheck {
    public static func run(_ directory: String) throws(DaemonError) {
        do {
            // Starting would overwrite them with what this notifyd knows of them.
            try StateStore(directory: directory).refuseNewerFormat()
            try CredentialStore(directory: directory).refuseNewerFormat()
            try OutboxStore(stateDirectory: directory).refuseNewerFormat()
        } catch {
            throw .configuration(error.description)
        }
    }
}
