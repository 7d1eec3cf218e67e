#!/usr/bin/env python3
"""Talk to notifyd over its Unix socket, with nothing but the Python standard library.

    notifyd_client.py status
    notifyd_client.py set-tags '{"tags": ["news", "weather"]}'
    notifyd_client.py --json '{"cmd": "set-token", "token": "...", "platform": "fcmv1"}'
    notifyd_client.py watch

The protocol is one JSON object per line in each direction: a request names its command
in "cmd" (and may carry an "id" that the reply repeats); the reply has "ok" and either
"result" or "error": {"code", "message"}. After "watch", the connection also carries
events, {"event": ...}, one per line.

Prints the reply as JSON and exits 0 when it says ok, 1 when it does not, 2 on a usage
error and 3 when notifyd cannot be reached (the exit codes of notifyctl).
"""

import argparse
import json
import os
import signal
import socket
import sys

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_UNREACHABLE = 0, 1, 2, 3


def socket_path(flag=None, environ=os.environ):
    """The socket path, resolved in notifyd's order."""
    if flag:
        return flag
    if environ.get("NOTIFYD_SOCKET"):
        return environ["NOTIFYD_SOCKET"]
    runtime = environ.get("XDG_RUNTIME_DIR", "")
    if runtime.startswith("/"):
        return os.path.join(runtime, "notifyd", "notifyd.sock")
    temporary = environ.get("TMPDIR", "/tmp")
    if not temporary.startswith("/"):
        temporary = "/tmp"
    return os.path.join(temporary, "notifyd-%d" % os.getuid(), "notifyd.sock")


def build_request(arguments):
    """The request object from `COMMAND [PARAMETERS-JSON]` or `--json OBJECT`."""
    if arguments.json is not None:
        if arguments.command:
            raise ValueError("give either --json or a command, not both")
        request = json.loads(arguments.json)
        if not isinstance(request, dict) or "cmd" not in request:
            raise ValueError('--json takes an object with a "cmd", like {"cmd":"ping"}')
        request.setdefault("id", 1)
        return request
    if not arguments.command:
        raise ValueError("no command given")
    command, *rest = arguments.command
    request = {}
    if len(rest) > 1:
        raise ValueError("give the parameters as one JSON object")
    if rest:
        parameters = json.loads(rest[0])
        if not isinstance(parameters, dict):
            raise ValueError("the parameters must be a JSON object, like '{\"tags\":[\"a\"]}'")
        request.update(parameters)
    request["id"] = request.get("id", 1)
    request["cmd"] = command
    return request


class Connection:
    """One connection to notifyd, read line by line."""

    def __init__(self, path, timeout):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        try:
            self.sock.connect(path)
        except OSError:
            self.sock.close()
            raise
        self.buffer = b""

    def send(self, request):
        self.sock.sendall(json.dumps(request, separators=(",", ":")).encode() + b"\n")

    def lines(self):
        """Each line from notifyd, decoded, until it closes the connection."""
        while True:
            while b"\n" in self.buffer:
                line, self.buffer = self.buffer.split(b"\n", 1)
                if line.strip():
                    yield json.loads(line)
            chunk = self.sock.recv(65536)
            if not chunk:
                return
            self.buffer += chunk

    def close(self):
        self.sock.close()


def reply_to(connection, request):
    """The reply to `request`: the first line that is not an event."""
    for message in connection.lines():
        if "event" in message and "ok" not in message:
            continue
        return message
    raise ConnectionError("notifyd closed the connection without replying")


def print_json(value):
    print(json.dumps(value, ensure_ascii=False), flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Send one command to notifyd and print its reply as JSON.",
        epilog="Examples: %(prog)s ping; %(prog)s set-tags '{\"tags\":[\"a\"]}'; "
        "%(prog)s --json '{\"cmd\":\"status\"}'; %(prog)s watch",
    )
    parser.add_argument("--socket", metavar="PATH", help="notifyd's socket (default: as notifyd resolves it)")
    parser.add_argument("--json", metavar="OBJECT", help='the whole request as a JSON object, like {"cmd":"ping"}')
    parser.add_argument(
        "--timeout", type=float, default=60.0, metavar="SECONDS",
        help="how long to wait for the reply (default 60; watch waits for ever)",
    )
    parser.add_argument("command", nargs="*", help="COMMAND [PARAMETERS as a JSON object]")
    arguments = parser.parse_args(argv)

    try:
        request = build_request(arguments)
    except ValueError as error:  # json.JSONDecodeError is a ValueError too
        parser.print_usage(sys.stderr)
        print("%s: %s" % (parser.prog, error), file=sys.stderr)
        return EXIT_USAGE

    path = socket_path(arguments.socket)
    watching = request["cmd"] == "watch"
    if watching:
        # Interrupting ends the stream, even when started with SIGINT ignored (as a
        # shell does for `&` jobs) or blocked (as by a parent's worker thread).
        signal.signal(signal.SIGINT, signal.default_int_handler)
        if hasattr(signal, "pthread_sigmask"):
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    try:
        connection = Connection(path, None if watching else arguments.timeout)
    except OSError as error:
        print(
            "%s: cannot reach notifyd at %s: %s\n"
            "Start it with `systemctl --user start notifyd.socket`, or run `notifyd &`."
            % (parser.prog, path, error.strerror or error),
            file=sys.stderr,
        )
        return EXIT_UNREACHABLE

    try:
        connection.send(request)
        reply = reply_to(connection, request)
        print_json(reply)
        if not reply.get("ok"):
            return EXIT_FAILED
        if watching:
            for event in connection.lines():
                print_json(event)
            print("%s: notifyd closed the connection" % parser.prog, file=sys.stderr)
            return EXIT_FAILED
        return EXIT_OK
    except KeyboardInterrupt:
        return EXIT_OK if watching else EXIT_FAILED
    except (OSError, ValueError) as error:
        print("%s: %s" % (parser.prog, error), file=sys.stderr)
        return EXIT_FAILED
    finally:
        connection.close()


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:
        # `notifyd_client.py watch | head` closed our output: not an error.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(EXIT_OK)
