#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NotifyProtocol
import NotifySocket

/// The clients waiting in a socket the service manager handed over, when notifyd cannot
/// start after all (a config file it cannot use).
///
/// Under socket activation a connection nobody accepts stays queued, and systemd starts
/// the service again for it as soon as the last start failed: one command became five
/// failed starts within a second, systemd's start limit, and notifyd.socket failed with
/// it. Answering each waiting client with the reason empties the queue, so that each
/// command costs one start and learns what to fix.
public enum PendingClients {
    /// Accepts every connection already waiting on `listener` (without waiting for more),
    /// and answers those of this user (or root) with `error`; other users' are closed
    /// unanswered, as the server does.
    public static func refuse(listener: Int32, with error: WireError) {
        let reply = Reply.failure(nil, error)
        let ownUID = currentUID()
        var ready = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
        while poll(&ready, 1, 0) > 0 && ready.revents & Int16(POLLIN) != 0 {
            let fd = acceptClosingOnExec(listener)
            guard fd >= 0 else { return }
            UnixSocket.prepareAcceptedSocket(fd)
            if let peer = UnixSocket.peerUID(fd), TrustedUser.includes(peer, own: ownUID) {
                // The request is read first, so the connection ends in an orderly close:
                // one closed with unread bytes is reset.
                var scratch = [UInt8](repeating: 0, count: 4096)
                while recv(fd, &scratch, scratch.count, Int32(MSG_DONTWAIT)) > 0 {}
                _ = reply.withUnsafeBytes { send(fd, $0.baseAddress!, $0.count, sendFlags | Int32(MSG_DONTWAIT)) }
            }
            close(fd)
        }
    }
}
