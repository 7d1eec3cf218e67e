"""What the contrib/tests checks print: one "ok" or "FAILED" line per check, "skipped" for
one that cannot run here (a failure under CI, which installs what it needs), and the
failures, for the count the script exits with."""
import os

failures = []


def check(condition, message):
    print(("ok      " if condition else "FAILED  ") + message, flush=True)
    if not condition:
        failures.append(message)
    return condition


def skipped(message):
    if os.environ.get("CI"):
        check(False, f"{message} (CI installs it)")
    else:
        print(f"skipped {message}", flush=True)
