#!/usr/bin/env python3
"""What misbehaving local clients cost notifyd: the inputs that used to stall, flood or
crash it, each with the figure a well-behaved client sees meanwhile. Prints a table; it
is not a test (the suite holds the guarantees), it shows their price.

    contrib/benchmarks/socket_abuse.py [--bin DIR]    (DIR: where notifyd is; default: the release build)

notifyd runs on a temporary socket with no backend; nothing leaves the machine.
"""
import argparse, os, socket, statistics, subprocess, sys, tempfile, threading, time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PING = b'{"cmd":"ping"}\n'


def default_bin():
    out = subprocess.run(["swift", "build", "-c", "release", "--show-bin-path"], cwd=ROOT, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def status_of(pid, key):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


def cpu_ms(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def connect(path, timeout=30):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(timeout)
    s.connect(path)
    return s


def ping_ms(path):
    """One ping on a fresh connection: wall milliseconds, or None when unanswered in 30 s."""
    start = time.perf_counter()
    try:
        with connect(path) as s:
            s.sendall(PING)
            if not s.recv(4096):
                return None
    except OSError:
        return None
    return (time.perf_counter() - start) * 1000


def pings(path, count=50):
    samples = [ping_ms(path) for _ in range(count)]
    answered = [s for s in samples if s is not None]
    if not answered:
        return "no answer"
    return f"median {statistics.median(answered):.2f} ms, max {max(answered):.1f} ms, {len(answered)}/{count} answered"


def flooder(path, lines, stop):
    """Writes `lines` status requests and never reads; returns how many it got out."""
    s = connect(path)
    s.settimeout(0.5)
    chunk = b'{"cmd":"status"}\n' * 1000
    sent = 0
    try:
        while sent < lines and not stop.is_set():
            try:
                s.sendall(chunk)
                sent += 1000
            except socket.timeout:
                pass  # notifyd stopped reading us: backpressure
    except OSError:
        pass  # closed by notifyd
    return s, sent


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", help="directory holding notifyd")
    args = parser.parse_args()
    notifyd = os.path.join(args.bin or default_bin(), "notifyd")
    work = tempfile.mkdtemp(prefix="nd-abuse-")
    path = os.path.join(work, "s")
    daemon = subprocess.Popen([notifyd, "--socket", path, "--state-dir", os.path.join(work, "state"), "--log-level", "warning"],
                              stderr=open(os.path.join(work, "log"), "w"))
    try:
        for _ in range(500):
            if os.path.exists(path):
                break
            time.sleep(0.01)
        pid = daemon.pid
        rows = []
        rss0 = status_of(pid, "VmRSS")
        rows.append(("quiet", pings(path), f"RSS {rss0 / 1024:.1f} MiB, {status_of(pid, 'Threads')} threads"))

        stop = threading.Event()
        results = []
        threads = [threading.Thread(target=lambda: results.append(flooder(path, 200_000, stop))) for _ in range(2)]
        for t in threads:
            t.start()
        time.sleep(1)
        during = pings(path)
        rss = status_of(pid, "VmRSS")
        stop.set()
        for t in threads:
            t.join()
        rows.append(("2 clients writing 200,000 status lines, never reading", during,
                     f"RSS {rss / 1024:.1f} MiB; they got {sorted(r[1] for r in results)} lines out before notifyd paused them"))
        for s, _ in results:
            s.close()

        for depth in (512, 513, 514):
            with connect(path) as s:
                s.sendall(b"[" * depth + b"\n")
                reply = s.recv(4096)
            alive = daemon.poll() is None
            rows.append((f"one line of {depth} '['", pings(path, 5), f"answered: {b'malformed_request' in reply}, notifyd alive: {alive}"))

        before = cpu_ms(pid)
        with connect(path) as s:
            s.sendall(b'{"cmd":"ping","id":' + b"[" * 500 + b"1" + b"]" * 500 + b"}\n")
            s.recv(4096)
        rows.append(("a 1 KB line nested 500 deep", "", f"{cpu_ms(pid) - before:.0f} ms of CPU"))

        before = cpu_ms(pid)
        with connect(path) as s:
            s.sendall(b"\n" * (1 << 20) + PING)
            s.recv(4096)
        rows.append(("1 MiB of blank lines, then a ping", pings(path, 5), f"{cpu_ms(pid) - before:.0f} ms of CPU"))

        idle = []
        for _ in range(1000):
            s = connect(path)
            idle.append(s)
        time.sleep(0.5)
        threads_open, rss_open = status_of(pid, "Threads"), status_of(pid, "VmRSS")
        during = pings(path)
        for s in idle:
            s.close()
        time.sleep(1)
        rows.append(("1,000 idle connections open", during,
                     f"{threads_open} threads, RSS {rss_open / 1024:.1f} MiB; after closing: RSS {status_of(pid, 'VmRSS') / 1024:.1f} MiB, {len(os.listdir(f'/proc/{pid}/fd'))} fds"))

        daemon.terminate()
        start = time.perf_counter()
        code = daemon.wait(timeout=30)
        rows.append(("SIGTERM after all that", "", f"exit {code} in {(time.perf_counter() - start) * 1000:.0f} ms"))

        width = max(len(r[0]) for r in rows)
        print("client behaviour".ljust(width), "|", "a well-behaved ping meanwhile".ljust(45), "| cost to notifyd")
        print("-" * width, "|", "-" * 45, "|", "-" * 15)
        for name, ping, cost in rows:
            print(f"{name:<{width}} | {ping:<45} | {cost}")
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    sys.exit(main())
