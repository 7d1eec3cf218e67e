#!/usr/bin/env python3
"""Measures what waiting on a backend costs notifyd in CPU: a backend that accepts
connections and never answers (every request waits its whole request_timeout on a fresh
connection), and a backend that answers slowly on a connection already open.

    contrib/build-release.sh && contrib/benchmarks/hung-backend.py [--seconds S] [--bin DIR]

A benchmark, not a test: the figures depend on the machine. Waiting should cost
nothing; see contrib/docs/benchmarks.md for what it costs today and why.
"""
import argparse, json, os, re, shutil, subprocess, sys, tempfile, time, urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_ms(pid):
    """User and system CPU of a process so far, in milliseconds."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / TICKS


def add_fault(url, rule):
    body = json.dumps(rule).encode()
    urllib.request.urlopen(urllib.request.Request(url + "/_dev/faults", data=body, method="POST"), timeout=5).read()


def cpu_over(pid, seconds):
    before = cpu_ms(pid)
    time.sleep(seconds)
    return cpu_ms(pid) - before


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--bin", help="directory with notifyd, notifyctl and notify-devbackend (default: .build/stripped, from contrib/build-release.sh)")
    args = parser.parse_args()

    bins = args.bin or os.path.join(ROOT, ".build", "stripped")
    notifyd, notifyctl, devbackend = (os.path.join(bins, name) for name in ("notifyd", "notifyctl", "notify-devbackend"))
    for path in (notifyd, notifyctl, devbackend):
        if not os.access(path, os.X_OK):
            sys.exit(f"{path} is missing: build first")

    work = tempfile.mkdtemp(prefix="notifyd-hung.")
    processes = []
    try:
        backend = subprocess.Popen([devbackend, "--port", "0", "--quiet"], stdout=subprocess.PIPE, text=True)
        processes.append(backend)
        url = re.search(r"http://\S+", backend.stdout.readline()).group(0)

        def start_daemon(name, timeout):
            sock = os.path.join(work, name + ".sock")
            daemon = subprocess.Popen([notifyd, "--socket", sock, "--state-dir", os.path.join(work, name), "--backend", url,
                                       "--request-timeout", timeout, "--retry-min", "1s", "--retry-max", "2s", "--log-level", "error"])
            processes.append(daemon)
            while not os.path.exists(sock):
                time.sleep(0.01)
            env = dict(os.environ, NOTIFYD_SOCKET=sock)
            subprocess.run([notifyctl, "login", "--password-stdin", "alice"], input="alice", text=True, env=env, stdout=subprocess.DEVNULL, check=False)
            return daemon, env

        # A slow answer on a connection kept open by an earlier request.
        daemon, env = start_daemon("slow", "30s")
        subprocess.run([notifyctl, "set-token", "ABCDEF0123"], env=env, stdout=subprocess.DEVNULL, check=False)
        add_fault(url, {"route": "send", "delay": args.seconds + 3, "count": 1})
        sender = subprocess.Popen([notifyctl, "send", "--to", "bob", "slow"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1)
        slow = cpu_over(daemon.pid, args.seconds)
        sender.wait(timeout=60)

        # A backend that accepts and never answers: every attempt is a fresh connection.
        add_fault(url, {"route": "any", "delay": 3600})
        daemon, env = start_daemon("hung", "5s")
        subprocess.run([notifyctl, "set-token", "--no-wait", "ABCDEF0123"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        time.sleep(1)
        hung = cpu_over(daemon.pid, args.seconds)

        print(f"notifyd CPU while waiting on the backend, over {args.seconds:.0f} s")
        print(f"  slow answer on a reused connection:        {slow:7.0f} ms CPU ({slow / args.seconds / 10:5.1f}% of a core)")
        print(f"  hung backend, fresh connection per attempt: {hung:7.0f} ms CPU ({hung / args.seconds / 10:5.1f}% of a core)")
    finally:
        for process in reversed(processes):
            process.terminate()
            process.wait(timeout=10)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
