import DevBackend
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Block SIGINT and SIGTERM before any thread exists, so every thread inherits the
// mask and the signals wait for the sigwait() below instead of killing the process.
var stopSignals = sigset_t()
sigemptyset(&stopSignals)
sigaddset(&stopSignals, SIGINT)
sigaddset(&stopSignals, SIGTERM)
pthread_sigmask(SIG_BLOCK, &stopSignals, nil)
// A client hanging up mid-response must not kill the backend.
signal(SIGPIPE, SIG_IGN)

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("notify-devbackend: \(message)\n".utf8))
    exit(status)
}

let command: DevBackend.Command
do {
    command = try DevBackend.parseArguments(Array(CommandLine.arguments.dropFirst()))
} catch {
    fail("\(error.message)\nTry 'notify-devbackend --help'.", status: 2)
}

switch command {
case .help:
    ConsoleOutput.line(DevBackend.usage)
case .version:
    ConsoleOutput.line("notify-devbackend \(DevBackend.version)")
case .run(let options):
    let backend = DevBackendServer(options: options)
    let port: Int
    do {
        port = try backend.start()
    } catch {
        fail("\(error)", status: 1)
    }
    ConsoleOutput.line("notify-devbackend listening on http://\(options.host):\(port)")
    var received: Int32 = 0
    while sigwait(&stopSignals, &received) != 0 {}
    backend.stop()
}
exit(0)
