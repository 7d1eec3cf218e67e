"""The README's "Set it up" block, run line by line as a new user runs it, under a
real systemd user manager of a throwaway user (contrib/tests/user-manager runs it): the
backend URL is the dev backend's, install.sh takes the release build instead of building,
and the password is typed at the login prompt, in a pseudo-terminal. It passes when every
line exits 0 and the message reaches the backend.
"""
import fcntl
import os
import pty
import re
import select
import subprocess
import termios
import time

from checks import check
from usermanager import UserManager, free_user_id

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PLACEHOLDER = "https://your-backend.example"


def setup_block():
    with open(os.path.join(ROOT, "README.md")) as readme:
        text = readme.read()
    found = re.search(r"<!-- setup:[^\n]*-->\n```sh\n(.*?)```", text, re.S)
    return [line.split("  #")[0].strip() for line in found.group(1).splitlines()] if found else []


def typed_at_prompt(manager, command, password, timeout=60):
    """Runs `command` as the user in a pseudo-terminal, typing `password` at the prompt."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(["sh", "-c", command], user=manager.uid, group=manager.uid, extra_groups=[], env=manager.environment,
                               cwd=manager.home, stdin=follower, stdout=follower, stderr=follower, start_new_session=True,
                               # The terminal /dev/tty opens, as at a login: the prompt reads there.
                               preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0))
    os.close(follower)
    output, typed, deadline = b"", False, time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(leader, 4096)
            except OSError:
                break
            if not chunk:
                break
            output += chunk
            if not typed and b"Password for" in output:
                os.write(leader, password.encode() + b"\n")
                typed = True
        elif process.poll() is not None:
            break
    os.close(leader)
    return process.wait(timeout=10), output.decode("utf-8", "replace")


def run(work, bins, backend):
    lines = setup_block()
    if not check(len(lines) >= 5 and lines[0].startswith("contrib/install.sh"), f"README.md has its setup block: {lines}"):
        return
    manager = UserManager(free_user_id(), work)
    try:
        if not check(manager.start(), "a user manager for the README's setup block"):
            return
        pushes = len(backend.pushes())
        for line in lines:
            command = line.replace(PLACEHOLDER, backend.url)
            command = command.replace("contrib/install.sh", f"sh {work}/contrib/install.sh --build-dir {bins}", 1)
            # install.sh put notifyctl in ~/.local/bin, which a new login's PATH has.
            command = command.replace("notifyctl ", f"{manager.home}/.local/bin/notifyctl ")
            if " login " in command:
                status, output = typed_at_prompt(manager, command, "alice")
            else:
                result = manager.run(["sh", "-c", command], quiet=True)
                status, output = result.returncode, result.stdout
            if not check(status == 0, f"README setup: `{line}` exits 0"):
                print("    " + output.strip().replace("\n", "\n    "))
                return
            if line.startswith("notifyctl reload"):
                # This reload starts notifyd, which reads the file as it starts: the answer
                # must say that the backend is in effect, not only "nothing changed".
                check("in effect besides the defaults: backend" in output, f"README setup: `{line}` says the backend is in effect: {output.strip()}")
        check(len(backend.pushes()) == pushes + 1, "README setup: the message reached the backend")
        manager.run(["sh", f"{work}/contrib/install.sh", "--uninstall"], quiet=True)
    finally:
        manager.stop()
