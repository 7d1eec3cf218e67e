#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NotifyProtocol

/// Writing to stdout/stderr and reading secrets, without Foundation.
///
/// Most of what notifyctl prints came over the socket, from notifyd or from whatever else
/// listens there, and from the backend before that. Each line made of such text is kept to
/// one line where it is made (`PrintableText.line`); what is printed here has every other
/// control character escaped besides, so no escape sequence reaches the terminal.
enum Terminal {
    static func out(_ text: String) {
        write(1, PrintableText.lines(text) + "\n")
    }

    static func error(_ text: String) {
        write(2, "notifyctl: " + PrintableText.lines(text) + "\n")
    }

    static func write(_ fd: Int32, _ text: String) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { systemWrite(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += written
        }
    }

    /// Everything on standard input (for `--password-stdin` and `send -`).
    static func readStandardInput() -> [UInt8] {
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(0, $0.baseAddress!, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            result.append(contentsOf: chunk[..<count])
        }
        return result
    }

    /// Prompts on the controlling terminal with echo off. Nil when there is no terminal.
    static func readSecret(prompt: String) -> String? {
        let fd = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var original = termios()
        guard tcgetattr(fd, &original) == 0 else { return nil }
        var silent = original
        silent.c_lflag &= ~tcflag_t(ECHO)
        savedTerminal = (fd, original)
        // Ctrl-C at the prompt must not leave the terminal without echo.
        signal(SIGINT) { _ in
            if let (fd, original) = savedTerminal {
                var restore = original
                tcsetattr(fd, TCSAFLUSH, &restore)
            }
            _exit(130)
        }
        // Echo goes off before the prompt shows, so that a password typed the moment it
        // appears is neither echoed nor flushed: TCSAFLUSH discards only what was typed ahead
        // of the prompt, as getpass and readpassphrase do.
        tcsetattr(fd, TCSAFLUSH, &silent)
        write(fd, prompt)
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while read(fd, &byte, 1) == 1, byte != 0x0A, byte != 0x0D {
            line.append(byte)
        }
        tcsetattr(fd, TCSAFLUSH, &original)
        savedTerminal = nil
        signal(SIGINT, SIG_DFL)
        write(fd, "\n")
        return String(decoding: line, as: UTF8.self)
    }
}

// The terminal settings to restore if the user interrupts the password prompt. Unsafe is
// fine: notifyctl is single-threaded while prompting and the handler only reads it.
nonisolated(unsafe) private var savedTerminal: (Int32, termios)?

// Inside `Terminal`, `write` names the static method; this reaches the system call.
private func systemWrite(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    write(fd, bytes, count)
}
