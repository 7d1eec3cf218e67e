#!/usr/bin/env python3
"""Measures what notifyd promises: commands answer in a few milliseconds, the daemon
costs nothing while idle, and sends go out fast. Prints figures, each next to a
baseline measured the same way in the same run, so a noisy machine shows in both.

    swift build -c release && benchmarks/bench.py [--runs N] [--idle SECONDS]

Everything runs on a temporary socket against the bundled dev backend on loopback.
"""
import argparse, json, os, re, shutil, socket, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def bin_dir():
    out = subprocess.run(["swift", "build", "-c", "release", "--show-bin-path"], cwd=ROOT, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def timed(argv, runs, env=None):
    """Wall time of `argv` run `runs` times, in milliseconds."""
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def summary(samples):
    samples = sorted(samples)
    return statistics.median(samples), samples[int(len(samples) * 0.95) - 1]


def proc_stat(pid):
    """CPU time (ms) of a process so far, and context switches (wake-ups) per thread."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    cpu_ms = (int(fields[11]) + int(fields[12])) * 1000 / ticks
    switches = {}
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            for line in open(f"/proc/{pid}/task/{task}/status"):
                if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                    switches[task] = switches.get(task, 0) + int(line.split()[1])
        except FileNotFoundError:
            pass  # the thread ended while being read
    return cpu_ms, switches


def wakeups(before, after):
    """Wake-ups between two samples, counting threads that existed at the start (a thread
    started since counts from zero)."""
    return sum(count - before.get(task, 0) for task, count in after.items())


def rss_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1])
    return 0


def request(path, lines):
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(path)
        s.sendall("".join(json.dumps(line) + "\n" for line in lines).encode())
        reader = s.makefile("r")
        return [json.loads(reader.readline()) for _ in lines]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--idle", type=float, default=10.0)
    parser.add_argument("--sends", type=int, default=500)
    args = parser.parse_args()

    bins = bin_dir()
    notifyd, notifyctl, devbackend = (os.path.join(bins, name) for name in ("notifyd", "notifyctl", "notify-devbackend"))
    for path in (notifyd, notifyctl, devbackend):
        if not os.access(path, os.X_OK):
            sys.exit(f"{path} is missing: run `swift build -c release` first")

    work = tempfile.mkdtemp(prefix="notifyd-bench.")
    sock = os.path.join(work, "notifyd.sock")
    processes = []
    try:
        backend = subprocess.Popen([devbackend, "--port", "0", "--quiet"], stdout=subprocess.PIPE, text=True)
        processes.append(backend)
        url = re.search(r"http://\S+", backend.stdout.readline()).group(0)
        daemon = subprocess.Popen([notifyd, "--socket", sock, "--state-dir", os.path.join(work, "state"), "--backend", url, "--log-level", "error"])
        processes.append(daemon)
        while not os.path.exists(sock):
            time.sleep(0.01)
        env = dict(os.environ, NOTIFYD_SOCKET=sock)
        subprocess.run([notifyctl, "login", "--password-stdin", "alice"], input="alice", text=True, env=env, stdout=subprocess.DEVNULL, check=False)
        subprocess.run([notifyctl, "set-token", "ABCDEF0123"], env=env, stdout=subprocess.DEVNULL, check=True)

        print(f"notifyd benchmarks ({args.runs} runs each; medians, p95 in brackets)")
        print()
        baseline = summary(timed(["/bin/true"], args.runs))
        print(f"  /bin/true (process start baseline)     {baseline[0]:6.2f} ms  [{baseline[1]:6.2f}]")
        for command in (["ping"], ["status"], ["outbox"]):
            median, p95 = summary(timed([notifyctl] + command, args.runs, env))
            print(f"  notifyctl {' '.join(command):<28} {median:6.2f} ms  [{p95:6.2f}]   {median / baseline[0]:4.1f}x /bin/true")
        if shutil.which("socat"):
            median, p95 = summary(timed(["sh", "-c", f"echo '{{\"cmd\":\"ping\"}}' | socat - UNIX-CONNECT:{sock}"], args.runs))
            print(f"  socat one-liner ping (sh + socat)      {median:6.2f} ms  [{p95:6.2f}]")

        round_trips = []
        for _ in range(args.runs):
            start = time.perf_counter()
            request(sock, [{"cmd": "ping"}])
            round_trips.append((time.perf_counter() - start) * 1000)
        median, p95 = summary(round_trips)
        print(f"  socket round trip, connect + ping      {median:6.3f} ms  [{p95:6.3f}]")

        print()
        start = time.perf_counter()
        lines = [{"id": i, "cmd": "send", "to": f"user{i % 20}", "message": f"message {i}"} for i in range(args.sends)]
        replies = request(sock, lines)
        elapsed = time.perf_counter() - start
        delivered = sum(1 for reply in replies for d in reply.get("result", {}).get("deliveries", []) if d["state"] == "delivered")
        print(f"  {args.sends} sends pipelined on one connection: {elapsed * 1000:7.1f} ms, {args.sends / elapsed:6.0f}/s, {delivered} delivered")

        print()
        time.sleep(2)  # let the send burst's connections and threads wind down
        cpu_before, switches_before = proc_stat(daemon.pid)
        time.sleep(args.idle)
        cpu_after, switches_after = proc_stat(daemon.pid)
        print(f"  idle for {args.idle:.0f} s: {cpu_after - cpu_before:.0f} ms CPU, {wakeups(switches_before, switches_after)} wake-ups (all threads)")
        print(f"    (baseline: libdispatch's thread-pool monitor on Linux wakes once a second, {args.idle:.0f} in all)")
        print(f"  notifyd resident memory: {rss_kib(daemon.pid) / 1024:.1f} MiB")
        usage = subprocess.run(["sh", "-c", f'/usr/bin/time -f %M {notifyctl} status >/dev/null'], env=env, capture_output=True, text=True) if os.path.exists("/usr/bin/time") else None
        if usage and usage.stderr.strip().isdigit():
            print(f"  notifyctl status peak memory: {int(usage.stderr.strip()) / 1024:.1f} MiB")
    finally:
        for process in reversed(processes):
            process.terminate()
            process.wait(timeout=10)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
