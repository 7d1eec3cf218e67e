"""The password in a real Secret Service, for contrib/tests/user-manager: GNOME Keyring in
the throwaway user's D-Bus session, unlocked from a test password, and notifyd sandboxed
by its unit:

  - `notifyctl login` keeps the password in the keyring (password_store's default, auto)
    and says so; credentials.json, and every file under the state directory, hold no
    password; no process's command line or environment does;
  - a restarted notifyd reads it back and sends;
  - a locked keyring is a state `status` names, not a prompt: a message waits, and goes
    out by itself once the keyring is unlocked;
  - `notifyctl logout` removes the item.
"""
import os
import re
import shutil
import time

from checks import check, skipped
from usermanager import wait_until

USER = "kim"
PASSWORD = "keyring-Secret-9c41e"
UNLOCK = "test-keyring-unlock"
LOGIN_COLLECTION = "/org/freedesktop/secrets/collection/login"


def processes_holding(secret):
    """Every process whose command line or environment holds `secret`."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        for part in ("cmdline", "environ"):
            try:
                with open(f"/proc/{pid}/{part}", "rb") as handle:
                    if secret.encode() in handle.read():
                        found.append(f"{pid} ({part})")
            except OSError:
                pass
    return found


def files_holding(secret, top):
    found = []
    for directory, _, names in os.walk(top):
        for name in names:
            with open(os.path.join(directory, name), "rb") as handle:
                if secret.encode() in handle.read():
                    found.append(os.path.join(directory, name))
    return found


def run(manager, ctl, systemctl, configure, backend):
    if not shutil.which("gnome-keyring-daemon") or not shutil.which("secret-tool"):
        skipped("the keyring: needs gnome-keyring and secret-tool (Debian packages gnome-keyring, libsecret-tools)")
        return
    if systemctl("is-enabled", "dbus.socket", quiet=True).returncode != 0:
        skipped("the keyring: no user D-Bus here (Debian package dbus-user-session)")
        return

    def unlocked_daemon(replace):
        flags = "--replace --unlock" if replace else "--unlock"
        manager.run(["sh", "-c", f"printf %s {UNLOCK} | gnome-keyring-daemon {flags} --components=secrets >/dev/null"], quiet=True)
        return wait_until(lambda: manager.run(["busctl", "--user", "get-property", "org.freedesktop.secrets", LOGIN_COLLECTION,
                                                "org.freedesktop.Secret.Collection", "Locked"], quiet=True).stdout.strip() == "b false", 20)

    if not check(unlocked_daemon(False), "GNOME Keyring runs in the user's session, its login keyring unlocked"):
        return
    state = os.path.join(manager.home, ".local", "state", "notifyd")
    configure("retry_min = 1s\nretry_max = 2s\n")
    systemctl("restart", "notifyd.service")
    login = ctl("login", "--password-stdin", USER, stdin=PASSWORD + "\n")
    check(login.returncode == 0 and "The password is kept in the keyring" in login.stdout,
          "notifyctl login keeps the password in the keyring, and says so")
    lookup = manager.run(["secret-tool", "search", "--all", "service", "notifyd", "user", USER], quiet=True)
    check(f"secret = {PASSWORD}" in lookup.stdout, "the keyring holds it (secret-tool search)")
    with open(os.path.join(state, "credentials.json")) as credentials:
        text = credentials.read()
    check('"keyring_item"' in text and '"password"' not in text, "credentials.json names the keyring item, and holds no password")
    check(not files_holding(PASSWORD, state), f"no file under {state} holds the password: {files_holding(PASSWORD, state)}")
    check(not processes_holding(PASSWORD), f"no process's command line or environment holds it: {processes_holding(PASSWORD)}")

    systemctl("restart", "notifyd.service")
    pushes = len(backend.pushes())
    sent = ctl("send", "--to", USER, "--wait", "with the password read back from the keyring")
    check(sent.returncode == 0 and len(backend.pushes()) == pushes + 1, "a restarted notifyd reads it from the keyring and sends")

    # Locked: no prompt, a state in status, and the message waits for the unlock.
    manager.run(["busctl", "--user", "call", "org.freedesktop.secrets", "/org/freedesktop/secrets", "org.freedesktop.Secret.Service",
                 "Lock", "ao", "1", LOGIN_COLLECTION], quiet=True)
    systemctl("restart", "notifyd.service")
    pushes = len(backend.pushes())
    ctl("send", "--to", USER, "while the keyring is locked", quiet=True)
    locked = wait_until(lambda: re.search(r"^password: .*is locked", ctl("status", quiet=True).stdout, re.M), 20)
    if not check(locked, "with the keyring locked, status says so"):
        ctl("status")
    time.sleep(2)
    check(len(backend.pushes()) == pushes, "and the message waits")
    check(unlocked_daemon(True), "the keyring is unlocked again")
    check(wait_until(lambda: len(backend.pushes()) == pushes + 1, 30), "and the message goes out by itself")

    logout = ctl("logout")
    after = manager.run(["secret-tool", "lookup", "service", "notifyd", "user", USER], quiet=True)
    check(logout.returncode == 0 and after.returncode != 0 and not after.stdout, "notifyctl logout removes it from the keyring")
