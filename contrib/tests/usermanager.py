"""A real systemd user manager for a throwaway account, and the dev backend, for the checks
that run notifyd as a user gets it (contrib/tests/user-manager, contrib/tests/debian-package).
Root on Linux only; Python 3 standard library only."""
import grp
import json
import os
import pwd
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request

MANAGER = "/usr/lib/systemd/systemd"


def wait_until(condition, seconds=20, interval=0.05):
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(interval)
    return True


def user_processes(uid):
    pids = []
    for pid in os.listdir("/proc"):
        try:
            if pid.isdigit() and os.stat(f"/proc/{pid}").st_uid == uid:
                pids.append(int(pid))
        except FileNotFoundError:
            pass
    return pids


def notifyd_processes(uid):
    """(pid, executable) of every notifyd the user runs."""
    found = []
    for pid in user_processes(uid):
        try:
            with open(f"/proc/{pid}/comm") as comm:
                if comm.read().strip() == "notifyd":
                    found.append((pid, os.readlink(f"/proc/{pid}/exe")))
        except (FileNotFoundError, ProcessLookupError):
            pass
    return found


def readable_by_all(top):
    for directory, _, files in os.walk(top):
        os.chmod(directory, 0o755)
        for name in files:
            path = os.path.join(directory, name)
            os.chmod(path, os.stat(path).st_mode | 0o444)


def free_user_id():
    """A uid and gid that no account, process, home or runtime directory uses."""
    for uid in range(61000, 61500):
        try:
            pwd.getpwuid(uid)
            continue
        except KeyError:
            pass
        try:
            grp.getgrgid(uid)
            continue
        except KeyError:
            pass
        if os.path.exists(f"/run/user/{uid}") or os.path.exists(f"/home/notifyd-test-{uid}") or user_processes(uid):
            continue
        return uid
    sys.exit("no free user id in 61000-61499 for a throwaway account")


def cgroup_roots():
    """The cgroup hierarchies a systemd manager places itself in: the unified (v2) one
    and, on a hybrid system, the named v1 `systemd` one, each with this process's group."""
    mounts = {}
    with open("/proc/self/mountinfo") as mountinfo:
        for line in mountinfo:
            fields = line.split()
            separator = fields.index("-")
            kind, options = fields[separator + 1], fields[separator + 3]
            if kind == "cgroup2":
                mounts["unified"] = fields[4]
            elif kind == "cgroup" and "name=systemd" in options.split(","):
                mounts["systemd"] = fields[4]
    groups = {}
    with open("/proc/self/cgroup") as cgroup:
        for line in cgroup:
            number, controllers, path = line.rstrip("\n").split(":", 2)
            if number == "0" and "unified" in mounts:
                groups["unified"] = path
            elif controllers == "name=systemd" and "systemd" in mounts:
                groups["systemd"] = path
    return [os.path.join(mounts[name], groups[name].lstrip("/")) for name in groups]


class UserManager:
    """`systemd --user` for a throwaway uid, started by hand as pam_systemd would."""

    def __init__(self, uid, work):
        self.uid = uid
        self.home = f"/home/notifyd-test-{uid}"
        self.runtime = f"/run/user/{uid}"
        self.created = []
        self.cgroups = []
        self.process = None
        self.log = open(os.path.join(work, "manager.log"), "w")
        self.name = f"notifyd-test-{uid}"
        # An account, not just a uid: dbus-daemon, like much else, refuses a user the
        # password database does not know.
        for command in (["groupadd", "--gid", str(uid), self.name],
                        ["useradd", "--no-create-home", "--uid", str(uid), "--gid", str(uid), "--home-dir", self.home,
                         "--shell", "/bin/sh", "--comment", "contrib/tests/user-manager", self.name]):
            # Quiet unless it fails: useradd warns about ids beyond its usual ranges.
            made = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if made.returncode != 0:
                sys.exit(f"cannot make a throwaway account: {' '.join(command)}: {made.stdout.strip()}")
        for directory in ("/home", "/run/user"):
            if not os.path.isdir(directory):
                os.makedirs(directory, mode=0o755)
                self.created.append(directory)
        for directory in (self.home, self.runtime):
            os.mkdir(directory, 0o700)
            os.chown(directory, uid, uid)
            self.created.append(directory)
        self.environment = {
            "HOME": self.home, "USER": self.name, "LOGNAME": self.name,
            "XDG_RUNTIME_DIR": self.runtime, "PATH": "/usr/local/bin:/usr/bin:/bin",
            "DBUS_SESSION_BUS_ADDRESS": f"unix:path={self.runtime}/bus", "LANG": "C.UTF-8",
        }

    def start(self):
        booted = os.path.isdir("/run/systemd/system")
        for root in cgroup_roots():
            group = os.path.join(root, f"notifyd-user-manager-{self.uid}")
            os.mkdir(group)
            os.chown(group, self.uid, self.uid)
            for name in ("cgroup.procs", "cgroup.subtree_control", "cgroup.threads", "tasks"):
                if os.path.exists(os.path.join(group, name)):
                    os.chown(os.path.join(group, name), self.uid, self.uid)
            self.cgroups.append(group)
        # The manager moves itself into an `init.scope` below the group it starts in: it
        # must start in a group of its own, never in one other processes share.
        script = 'for group in $CGROUPS; do echo $$ > "$group/cgroup.procs"; done\n'
        if not booted:
            # What a machine booted with systemd has, in a mount namespace of the
            # manager's own: /run/systemd/system (without it systemd refuses to run a
            # user instance), /run/systemd/unit-root (where it builds a service's
            # sandbox, made by the system manager), and /run as a mount point (else a
            # sandbox gets an empty /run of its own, without $XDG_RUNTIME_DIR).
            script += ("mount --bind /run /run && mount -t tmpfs -o mode=0755 tmpfs /run/systemd"
                       " && mkdir /run/systemd/system /run/systemd/unit-root\n")
        script += 'exec setpriv --reuid="$UID_" --regid="$UID_" --clear-groups env -i "$@"\n'
        command = ["sh", "-c", script, "sh"] + [f"{k}={v}" for k, v in self.environment.items()] + [MANAGER, "--user"]
        if not booted:
            command = ["unshare", "--mount", "--propagation", "private"] + command
        environment = {"CGROUPS": " ".join(self.cgroups), "UID_": str(self.uid), "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
        self.process = subprocess.Popen(command, env=environment, stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        # Not `is-system-running`: outside the namespace the machine still looks unbooted.
        ready = wait_until(lambda: self.run(["systemctl", "--user", "is-active", "default.target"], quiet=True).stdout.strip() == "active", 30)
        return ready

    def run(self, arguments, quiet=False, stdin=None, extra_environment=None, timeout=60):
        environment = dict(self.environment, **(extra_environment or {}))
        result = subprocess.run(arguments, user=self.uid, group=self.uid, extra_groups=[], env=environment, cwd=self.home,
                                input=stdin, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
        if not quiet:
            print(f"  $ {' '.join(arguments)}  [exit {result.returncode}]")
            for line in result.stdout.splitlines():
                print(f"    {line}")
        return result

    def write(self, relative, text, mode=0o600):
        """A file in the user's home, owned by the user, parents included."""
        path = os.path.join(self.home, relative)
        directory = os.path.dirname(path)
        parts = os.path.relpath(directory, self.home).split(os.sep)
        for index in range(len(parts)):
            partial = os.path.join(self.home, *parts[: index + 1])
            if not os.path.isdir(partial):
                os.mkdir(partial, 0o700)
                os.chown(partial, self.uid, self.uid)
        with open(path, "w") as handle:
            handle.write(text)
        os.chmod(path, mode)
        os.chown(path, self.uid, self.uid)
        return path

    def stop(self):
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        # Whatever the manager left running in its groups (nothing, normally).
        for group in self.cgroups:
            for directory, _, _ in sorted(os.walk(group), key=lambda entry: -len(entry[0])):
                procs = os.path.join(directory, "cgroup.procs")
                if os.path.exists(procs):
                    with open(procs) as handle:
                        for pid in handle.read().split():
                            try:
                                os.kill(int(pid), signal.SIGKILL)
                            except ProcessLookupError:
                                pass
        for group in self.cgroups:
            for directory, _, _ in sorted(os.walk(group), key=lambda entry: -len(entry[0])):
                wait_until(lambda: try_rmdir(directory), 5)
        for path in reversed(self.created):
            shutil.rmtree(path, ignore_errors=True)
        subprocess.run(["userdel", self.name], check=False)
        subprocess.run(["groupdel", self.name], stderr=subprocess.DEVNULL, check=False)
        self.log.close()


def try_rmdir(path):
    try:
        os.rmdir(path)
        return True
    except FileNotFoundError:
        return True
    except OSError:
        return False


class Backend:
    """notify-devbackend on a loopback port, and, for TLS, socat in front of it with a
    certificate from a test CA."""

    def __init__(self, bins, work, accounts=None):
        """`accounts`: users with a password of their own (user: password)."""
        self.processes = []
        arguments = [os.path.join(bins, "notify-devbackend"), "--port", "0", "--quiet"]
        if accounts:
            path = os.path.join(work, "backend-accounts")
            with open(path, "w") as file:
                file.write("".join(f"{user}:{password}\n" for user, password in accounts.items()))
            arguments += ["--accounts", path]
        backend = subprocess.Popen(arguments, stdout=subprocess.PIPE, text=True)
        self.processes.append(backend)
        self.url = re.search(r"http://\S+", backend.stdout.readline()).group(0)
        self.tls_url = None
        self.certificates = None

    def start_tls(self, work, directory):
        """Returns False when openssl or socat is missing."""
        if not shutil.which("openssl") or not shutil.which("socat"):
            return False
        # Not below /tmp: the sandbox's /tmp is a private one, where a bind mount's
        # source would not be found.
        self.certificates = directory
        os.mkdir(self.certificates, 0o755)
        key, certificate = os.path.join(work, "tls-key.pem"), os.path.join(self.certificates, "notifyd-test-ca.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                        "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key, "-out", certificate],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        # What update-ca-certificates makes: the bundle, and the hashed name.
        shutil.copy(certificate, os.path.join(self.certificates, "ca-certificates.crt"))
        digest = subprocess.run(["openssl", "x509", "-hash", "-noout", "-in", certificate], stdout=subprocess.PIPE, text=True, check=True).stdout.strip()
        os.symlink("notifyd-test-ca.pem", os.path.join(self.certificates, f"{digest}.0"))
        port = re.search(r":(\d+)", self.url.split("//")[1]).group(1)
        proxy = subprocess.Popen(["socat", f"OPENSSL-LISTEN:0,bind=127.0.0.1,reuseaddr,fork,cert={certificate},key={key},verify=0",
                                  f"TCP:127.0.0.1:{port}"], stderr=subprocess.DEVNULL)
        self.processes.append(proxy)
        listening = []
        wait_until(lambda: listening.extend(listening_ports(proxy.pid)) or listening, 10)
        if listening:
            self.tls_url = f"https://127.0.0.1:{listening[0]}"
        return self.tls_url is not None

    def pushes(self):
        with urllib.request.urlopen(self.url + "/_dev/state", timeout=10) as reply:
            return json.load(reply).get("pushes", [])

    def stop(self):
        for process in self.processes:
            process.kill()
            process.wait()


def listening_ports(pid):
    """The TCP ports a process listens on, from its descriptors and /proc/net/tcp."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        target = os.readlink(f"/proc/{pid}/fd/{fd}")
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    ports = []
    with open("/proc/net/tcp") as table:
        for line in table.readlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:
                ports.append(int(fields[1].split(":")[1], 16))
    return ports
