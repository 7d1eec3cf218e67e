"""The Debian package's life on a machine where users run notifyd, under real systemd user
managers (contrib/tests/debian-package runs it as root):

  - install: notifyd.socket is enabled for every user (a link in /etc/systemd/user) and
    listens in a session already running and in one started afterwards, neither of
    whose users ran `systemctl --user enable`; a user who masks it opts out;
  - a login, a registration and a send through the installed units;
  - an upgrade to a rebuilt package while messages are queued: the running notifyd is
    restarted on the new file, and every queued message is delivered once;
  - remove: no notifyd runs, no socket file is left, no enablement link dangles, and the
    user's state stays; purge: the package's records go, the user's state still stays.

The machine must not have notifyd installed already: the check installs and purges its
own, and leaves nothing behind.
"""
import json
import os
import subprocess
import time
import urllib.request

from checks import check, skipped
from usermanager import Backend, UserManager, free_user_id, notifyd_processes, wait_until

GLOBAL_LINK = "/etc/systemd/user/sockets.target.wants/notifyd.socket"
HELPER_STATE = "/var/lib/systemd/deb-systemd-user-helper-enabled"
POLICY = "/usr/sbin/policy-rc.d"


def installed():
    status = subprocess.run(["dpkg-query", "--show", "--showformat=${Status}", "notifyd"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
    return status.split()[-1:] not in ([], ["not-installed"])


def dpkg(*arguments):
    command = ["dpkg", *arguments]
    if os.path.exists(POLICY):
        # A container's policy-rc.d forbids every service action (Docker's does), which
        # the maintainer scripts obey; here they run as on a machine without one.
        command = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
                   f"mount --bind /bin/true {POLICY} && exec \"$@\"", "sh", *command]
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300,
                            env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
    print(f"  # dpkg {' '.join(arguments)}  [exit {result.returncode}]")
    for line in result.stdout.splitlines():
        print(f"    {line}")
    return result


def run_life(first, second, devbackend, work):
    """`first` and `second` are two builds of the package, `second` the higher version."""
    if os.geteuid() != 0 or not os.path.exists("/usr/lib/systemd/systemd") or not os.path.exists("/usr/bin/setpriv"):
        skipped("the package's life under user managers: needs root, systemd and util-linux")
        return
    if installed() or os.path.lexists(GLOBAL_LINK):
        skipped("the package's life under user managers: notifyd is installed on this machine, and the check installs its own")
        return
    managers = []
    backend = None
    try:
        backend = Backend(os.path.dirname(devbackend), work)
        before = UserManager(free_user_id(), work)
        managers.append(before)
        if not check(before.start(), "a user manager runs (a session open before the installation)"):
            return
        life(first, second, backend, managers, work)
    finally:
        if installed():
            dpkg("--purge", "notifyd")
        for manager in managers:
            manager.stop()
        if backend is not None:
            backend.stop()


def life(first, second, backend, managers, work):
    before = managers[0]

    def ctl(*arguments, **keywords):
        return before.run(["notifyctl", *arguments], **keywords)

    def unit_state(manager, unit, field="ActiveState"):
        return manager.run(["systemctl", "--user", "show", f"--property={field}", "--value", unit], quiet=True).stdout.strip()

    socket = os.path.join(before.runtime, "notifyd", "notifyd.sock")
    if not check(dpkg("--install", first).returncode == 0, f"dpkg --install {os.path.basename(first)}"):
        return
    check(os.path.islink(GLOBAL_LINK) and os.readlink(GLOBAL_LINK) == "/usr/lib/systemd/user/notifyd.socket",
          f"notifyd.socket is enabled for every user: {GLOBAL_LINK}")
    check(unit_state(before, "notifyd.socket") == "active" and os.path.exists(socket),
          "in the session already running, notifyd.socket listens, its user having run no command")

    after = UserManager(free_user_id(), work)
    managers.append(after)
    if check(after.start(), "a session opened after the installation"):
        check(unit_state(after, "notifyd.socket") == "active", "has notifyd.socket listening at its start")
        masked = after.run(["systemctl", "--user", "mask", "--now", "notifyd.socket"])
        check(masked.returncode == 0 and unit_state(after, "notifyd.socket") == "inactive"
              and not os.path.exists(os.path.join(after.runtime, "notifyd", "notifyd.sock")),
              "`systemctl --user mask --now notifyd.socket` opts its user out")

    # A login, a registration and a send through the units the package installed.
    before.write(".config/notifyd/config", f"backend = {backend.url}\nretry_min = 1s\nretry_max = 2s\n")
    check(ctl("login", "--password-stdin", "alice", stdin="alice\n").returncode == 0, "notifyctl login (notifyd started by the socket)")
    check(ctl("set-token", "ABCDEF0123").returncode == 0, "notifyctl set-token registers")
    pushes = len(backend.pushes())
    check(ctl("send", "--to", "alice", "--wait", "before the upgrade").returncode == 0 and len(backend.pushes()) == pushes + 1,
          "notifyctl send --wait is delivered")

    # Messages queued while the backend fails them, then the upgrade.
    old = notifyd_processes(before.uid)
    fault = urllib.request.Request(backend.url + "/_dev/faults", data=json.dumps({"route": "send", "status": 503}).encode(),
                                   method="POST", headers={"Content-Type": "application/json"})
    urllib.request.urlopen(fault, timeout=10).close()
    queued = [f"queued across the upgrade {number}" for number in range(1, 4)]
    for text in queued:
        ctl("send", "--to", "alice", text, quiet=True)
    status = ctl("status", "--json", quiet=True)
    waiting = json.loads(status.stdout).get("outbox", {}).get("waiting", -1) if status.stdout.startswith("{") else -1
    check(waiting == len(queued), f"{len(queued)} messages are queued before the upgrade: {waiting}")
    if not check(dpkg("--install", second).returncode == 0, f"dpkg --install {os.path.basename(second)} (the upgrade)"):
        return
    new = notifyd_processes(before.uid)
    installed_file = os.stat("/usr/bin/notifyd")
    runs_new = [pid for pid, executable in new if executable == "/usr/bin/notifyd"
                and os.stat(f"/proc/{pid}/exe").st_ino == installed_file.st_ino]
    check(len(old) == 1 and len(new) == 1 and old[0][0] != new[0][0] and runs_new,
          f"the running notifyd was restarted on the new file: before {old}, after {new}")
    urllib.request.urlopen(urllib.request.Request(backend.url + "/_dev/faults", method="DELETE"), timeout=10).close()
    delivered = lambda: [push.get("displayedText") for push in backend.pushes()[pushes + 1:]]
    wait_until(lambda: len(delivered()) >= len(queued), 60)
    # Time for a duplicate to show, had one been sent.
    time.sleep(3)
    check(sorted(delivered()) == [f"From alice: {text}" for text in queued], f"after the upgrade, every queued message is delivered once: {delivered()}")

    # Removal.
    state = os.path.join(before.home, ".local", "state", "notifyd")
    if not check(dpkg("--remove", "notifyd").returncode == 0, "dpkg --remove notifyd"):
        return
    check(not notifyd_processes(before.uid), "after the removal, no notifyd runs")
    check(not os.path.exists(socket), f"no socket file is left at {socket}")
    check(not os.path.lexists(GLOBAL_LINK), f"no enablement link is left at {GLOBAL_LINK}")
    check(unit_state(before, "notifyd.socket", "LoadState") == "not-found", "the user manager no longer knows notifyd.socket")
    check(os.path.isfile(os.path.join(state, "credentials.json")), f"the user's state stays ({state})")
    if not check(dpkg("--purge", "notifyd").returncode == 0, "dpkg --purge notifyd"):
        return
    records = os.listdir(HELPER_STATE) if os.path.isdir(HELPER_STATE) else []
    check(not installed() and not any(name.startswith("notifyd") for name in records),
          "after the purge, dpkg and deb-systemd-helper keep no record of notifyd")
    check(os.path.isfile(os.path.join(state, "credentials.json")), "and the user's state still stays, as Debian policy has it")
