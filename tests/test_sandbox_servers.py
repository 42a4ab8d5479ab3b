"""One waiting sandbox serves a worker's programs, each in new namespaces: nothing of one program reaches the next.

Every check runs a real program that reports what it can see or do, and first shows, in the program that
leaves something behind, that what it left was really there for itself: the next program's "nothing" could fail.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import threading
import uuid
from pathlib import Path

import pytest
from sandbox_helpers import descendants, requires_namespaces, settle, waiting_servers, with_marker

from rewardsmith import get_reward
from rewardsmith.core.errors import RewardConfigError
from rewardsmith.sandbox import Limits, LocalBackend, Program, SandboxError, forget_detection
from rewardsmith.sandbox.launch import close_sandboxes, release_uid, take_uid
from rewardsmith.sandbox.servers import serves

pytestmark = [requires_namespaces, pytest.mark.xdist_group("sandbox")]

MARK = f"rsleft{uuid.uuid4().hex[:8]}"
KEY = int(uuid.uuid4().hex[:6], 16)  # a SysV IPC key of this run
LIMITS = Limits(timeout=10)

LEAVE = f"""
import ctypes, os, sys
for folder in ("/work", "/tmp", "/dev/shm"):
    with open(f"{{folder}}/{MARK}", "w") as file:
        file.write("left")
libc = ctypes.CDLL(None, use_errno=True)
libc.mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
shm = libc.shmget({KEY}, 4096, 0o1000 | 0o666)
queue = libc.mq_open(b"/{MARK}", os.O_CREAT | os.O_RDWR, 0o600, None)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(120)", "{MARK}"])
    os._exit(0)
os.wait()
for _ in range(500):  # until the background process has started (at most 5 s)
    seen = [name for name in os.listdir("/proc") if name.isdigit()
            and "{MARK}" in open(f"/proc/{{name}}/cmdline").read()]
    if seen:
        break
    __import__("time").sleep(0.01)
seen = [name for name in os.listdir("/proc") if name.isdigit()
        and "{MARK}" in open(f"/proc/{{name}}/cmdline").read()]
files = [folder for folder in ("/work", "/tmp", "/dev/shm") if os.path.exists(f"{{folder}}/{MARK}")]
print(files, libc.shmget({KEY}, 0, 0) >= 0, queue >= 0, len(seen))
print(libc.shmctl(shm, 11, None), libc.mlock(ctypes.create_string_buffer(4096), 4096))  # 11: SHM_LOCK
"""

LOOK = f"""
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int]
seen = [name for name in os.listdir("/proc") if name.isdigit()
        and "{MARK}" in open(f"/proc/{{name}}/cmdline").read()]
files = [folder for folder in ("/work", "/tmp", "/dev/shm") if os.path.exists(f"{{folder}}/{MARK}")]
print(files, libc.shmget({KEY}, 0, 0) >= 0, libc.mq_open(b"/{MARK}", os.O_RDWR) >= 0, len(seen))
"""

POWERS = """
import ctypes, json, os
status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines())
libc = ctypes.CDLL(None, use_errno=True)
print(json.dumps({
    "caps": [status[name].strip() for name in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")],
    "no_new_privs": status["NoNewPrivs"].strip(),
    "mount": libc.mount(b"tmpfs", b"/work", b"tmpfs", 0, None),
    "unshare": libc.unshare(0x00020000),
    "pids": sorted(int(name) for name in os.listdir("/proc") if name.isdigit()),
    "me": os.getpid(),
    "writable_root": os.access("/", os.W_OK),
}))
"""


IN_FLIGHT = f"""
import fcntl, os, pty, socket
master, follower = pty.openpty()
os.write(master, b"{MARK}-pty\\n")
lock = open("/usr/bin/env", "rb")
fcntl.flock(lock, fcntl.LOCK_EX)
named = socket.socket(socket.AF_UNIX)
named.bind(b"\\0{MARK}")
named.listen()
tcp = socket.socket()
tcp.bind(("127.0.0.1", 8080))
tcp.listen()
a, b = socket.socketpair()
fds = [a.fileno(), b.fileno(), master, follower, lock.fileno(), named.fileno(), tcp.fileno()]
socket.send_fds(a, [b"x"], fds)  # a cycle: the sockets hold themselves and the rest, once nothing else does
unix = [line.split()[-1] for line in open("/proc/net/unix").read().splitlines()[1:]]
print(sorted(os.listdir("/dev/pts")), "@{MARK}" in unix)
"""

SEES_IN_FLIGHT = f"""
import fcntl, os, socket
unix = [line.split()[-1] for line in open("/proc/net/unix").read().splitlines()[1:]]
with open("/usr/bin/env", "rb") as file:
    try:
        fcntl.flock(file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        locked = False
    except OSError:
        locked = True
try:
    socket.socket().bind(("127.0.0.1", 8080))
    port_taken = False
except OSError:
    port_taken = True
print(sorted(os.listdir("/dev/pts")), "@{MARK}" in unix, locked, port_taken)
"""

TRAFFIC = """
import socket
for i in range(5):
    listener = socket.socket()
    listener.bind((f"127.66.{i}.1", 4242))
    listener.listen()
    client = socket.socket()
    client.bind((f"127.77.{i}.9", 5000 + i))
    client.connect(listener.getsockname())
    accepted, _ = listener.accept()
    client.close()
    accepted.close()
udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for _ in range(123):
    udp.sendto(b"x", ("127.0.0.1", 9))
"""

COUNTERS = """
tcp = [line.split()[3] for line in open("/proc/net/tcp").read().splitlines()[1:]]
lines = [line.split() for line in open("/proc/net/snmp").read().splitlines() if line.startswith("Udp:")]
udp = dict(zip(lines[0][1:], lines[1][1:]))
print(tcp.count("06"), udp["OutDatagrams"], udp["NoPorts"])  # 06: TIME_WAIT
"""


def _servers() -> set[int]:
    """The bubblewrap processes of this process's waiting servers."""
    found = descendants()
    return {pid for pid in waiting_servers(found) if found[pid] == "bwrap"}


@pytest.fixture
def backend():
    close_sandboxes()
    yield LocalBackend(isolation="require")
    close_sandboxes()


def _run(backend: LocalBackend, source: str, inputs: tuple[str, ...] = ("",), limits: Limits = LIMITS, stop=None):
    return backend.run(Program(source), list(inputs), limits, stop=stop)


def test_nothing_a_program_leaves_reaches_the_next_program_on_the_same_server(backend):
    left = _run(backend, LEAVE).runs[0]
    assert left.ok, left.stderr
    # all of it was there, for the program, but a POSIX queue: RLIMIT_MSGQUEUE is 0, as RLIMIT_MEMLOCK (what
    # the IPC namespace's deferred end would otherwise leave charged to the uid for the next program)
    assert left.stdout == "['/work', '/tmp', '/dev/shm'] True False 1\n-1 -1\n"
    server = _servers()
    assert len(server) == 1
    assert not settle(lambda: with_marker(MARK)), "the program's background process outlived it"
    seen = _run(backend, LOOK).runs[0]
    assert seen.ok, seen.stderr
    assert seen.stdout == "[] False False 0\n"  # no file, no SysV segment, no POSIX queue, no process
    assert _servers() == server  # the same server ran both


def test_a_program_holds_no_capability_and_sees_only_its_own_processes(backend):
    run = _run(backend, POWERS).runs[0]
    assert run.ok, run.stderr
    seen = json.loads(run.stdout)
    assert seen["caps"] == ["0000000000000000"] * 5 and seen["no_new_privs"] == "1"
    assert seen["mount"] == -1 and seen["unshare"] == -1 and not seen["writable_root"]
    assert seen["me"] in seen["pids"] and 1 in seen["pids"] and len(seen["pids"]) <= 3  # the runner, the program


def test_a_program_that_times_out_is_ended_and_the_server_goes_on(backend):
    _run(backend, "print(1)")
    server = _servers()
    looping = (
        f"import subprocess, sys\nsubprocess.Popen([sys.executable, '-c', 'while 1: pass', '{MARK}'])\nwhile 1: pass"
    )
    run = _run(backend, looping, limits=Limits(timeout=1)).runs[0]
    assert run.status == "timeout"
    assert not settle(lambda: with_marker(MARK)), "a process of the program that timed out is still running"
    assert _run(backend, "print(2)").runs[0].stdout == "2\n"
    assert _servers() == server


def test_a_run_stopped_at_its_first_failure_ends_there_and_the_server_goes_on(backend):
    _run(backend, "print(1)")
    server = _servers()
    program = "import time\nx = input()\nprint(x)\ntime.sleep(60 if x == 'c' else 0)"
    stopped = _run(backend, program, ("a", "b", "c"), stop=lambda index, run: run.stdout == "b\n")
    assert [r.status for r in stopped.runs] == ["ok", "ok", "not_run"]
    assert _run(backend, "print(3)").runs[0].stdout == "3\n"
    assert _servers() == server


def test_a_server_that_died_waiting_is_replaced(backend):
    _run(backend, "print(1)")
    (server,) = _servers()
    os.kill(server, 9)
    assert _run(backend, "print(2)").runs[0].stdout == "2\n"  # by a new server, or a sandbox of its own
    assert _run(backend, "print(3)").runs[0].stdout == "3\n"
    assert _servers() and _servers() != {server}  # a new server


def test_with_reuse_off_each_program_gets_a_sandbox_started_for_it():
    close_sandboxes()
    per_program = LocalBackend(isolation="require", reuse=False, prestart=0)
    assert _run(per_program, LEAVE).runs[0].ok
    assert _run(per_program, LOOK).runs[0].stdout == "[] False False 0\n"
    assert not _servers()


def test_what_a_program_puts_in_flight_does_not_reach_the_next_program(backend):
    left = _run(backend, IN_FLIGHT).runs[0]
    assert left.ok, left.stderr
    assert left.stdout == "['0', 'ptmx'] True\n"  # its terminal and its named socket, there for it
    seen = _run(backend, SEES_IN_FLIGHT).runs[0]
    assert seen.ok, seen.stderr
    assert seen.stdout == "['ptmx'] False False False\n"  # no terminal, no socket name, no lock, no port


def test_a_programs_network_traffic_leaves_no_trace_for_the_next_program(backend):
    assert _run(backend, TRAFFIC).runs[0].ok
    assert _run(backend, TRAFFIC + COUNTERS).runs[0].stdout == "5 123 123\n"  # what one program's traffic shows
    seen = _run(backend, COUNTERS).runs[0]
    assert seen.stdout == "0 0 0\n"  # no TIME_WAIT entry, no datagram counted


def test_a_program_cannot_interrupt_its_runner_or_make_its_job_run_twice(backend):
    _run(backend, "print(1)")
    server = _servers()
    source = "import os, signal\nos.kill(1, signal.SIGINT)\nprint(open('/proc/1/cmdline').read().count('serve'))"
    run = _run(backend, source).runs[0]
    assert run.ok and run.stdout == "1\n", (run.stdout, run.stderr)  # ran once, on the server, the runner unmoved
    assert _servers() == server and serves(backend.isolation_info())


@pytest.mark.parametrize("bad", ["yes", 1, None])
def test_a_bad_reuse_setting_is_a_config_error(bad):
    with pytest.raises(RewardConfigError, match="reuse must be true or false"):
        get_reward("code_tests", backend_settings={"reuse": bad})


REFUSED = """
import ctypes, platform, socket
libc = ctypes.CDLL(None, use_errno=True)
add_key = {"x86_64": 248, "aarch64": 217}[platform.machine()]
seen = []
for call, args in ((add_key, (b"user", b"rewardsmith-left", b"x", 1, -4)), (425, (8, bytes(120)))):
    seen.append((libc.syscall(call, *args), ctypes.get_errno()))  # a key for the user keyring; an io_uring
for family in (socket.AF_UNIX, socket.AF_INET, socket.AF_INET6, 40):  # 40: AF_VSOCK
    try:
        socket.socket(family, socket.SOCK_STREAM).close()
        seen.append("ok")
    except OSError as exc:
        seen.append(exc.errno)
print(seen, len(socket.if_nameindex()))
"""


@pytest.mark.parametrize("reuse", [True, False])
def test_interfaces_no_namespace_separates_are_refused(reuse):
    run = _run(LocalBackend(isolation="require", reuse=reuse, prestart=0), REFUSED).runs[0]
    assert run.ok, run.stderr
    # ENOSYS for keyrings and io_uring; the usual socket families work (netlink too), AF_VSOCK: EAFNOSUPPORT
    assert run.stdout == "[(-1, 38), (-1, 38), 'ok', 'ok', 'ok', 97] 1\n"


def test_a_forked_child_neither_uses_nor_stops_its_parents_server(backend):
    _run(backend, "print(1)")
    server = _servers()
    pid = os.fork()
    if pid == 0:  # a forked child (a data loader's worker, say) that scores and then exits normally
        ok = False
        try:
            ok = _run(backend, "print(2)").runs[0].stdout == "2\n"
            close_sandboxes()
        finally:
            os._exit(0 if ok else 1)
    assert os.waitpid(pid, 0)[1] == 0
    assert _servers() == server  # the parent's server was not stopped by the child, and still serves
    assert _run(backend, "print(3)").runs[0].stdout == "3\n"


def test_what_a_program_the_host_stopped_had_put_in_flight_does_not_reach_the_next_program(backend):
    source = "import sys\nif input() == 'a':\n" + "".join(f"    {line}\n" for line in IN_FLIGHT.splitlines())
    source += "else:\n    import time\n    time.sleep(60)\n"
    stopped = _run(backend, source, ("a", "b"), stop=lambda index, run: index == 0)  # the host ends the job
    assert [r.status for r in stopped.runs] == ["ok", "not_run"]
    assert stopped.runs[0].stdout == "['0', 'ptmx'] True\n"
    seen = _run(backend, SEES_IN_FLIGHT).runs[0]
    assert seen.stdout == "['ptmx'] False False False\n"


REFUSES_CAPABILITIES = 'case "$*" in *--cap-add*) exit 1;; esac\n'  # as a setuid bubblewrap does
DROPS_CAPABILITIES = """n=$#; drop=0
while [ $n -gt 0 ]; do
  a=$1; shift; n=$((n - 1))
  if [ $drop = 1 ]; then drop=0; elif [ "$a" = --cap-add ]; then drop=1; else set -- "$@" "$a"; fi
done
"""  # the server starts, and no job's namespaces can be set up


@pytest.mark.parametrize("script", [REFUSES_CAPABILITIES, DROPS_CAPABILITIES], ids=["refused", "dropped"])
def test_where_no_server_can_serve_each_program_gets_a_sandbox_started_for_it(script):
    """Every program still runs, and after three failed servers in a row the process stops trying."""
    close_sandboxes()  # the servers this process started earlier
    folder = Path(tempfile.mkdtemp(prefix="rewardsmith-bwrap-"))
    folder.chmod(0o755)  # the sandbox's uid runs what is in it
    wrapper = folder / "bwrap"
    wrapper.write_text(f'#!/bin/sh\n{script}exec {shutil.which("bwrap")} "$@"\n')
    wrapper.chmod(0o755)
    forget_detection()
    try:
        backend = LocalBackend(isolation="require", bwrap=str(wrapper))
        iso = backend.isolation_info()
        for number in range(4):
            assert _run(backend, f"print({number})").runs[0].stdout == f"{number}\n"
            assert serves(iso) == (number < 2)
        assert not _servers()
    finally:
        forget_detection()
        shutil.rmtree(folder)


HOG = f"""
import ctypes, sys, time
libc = ctypes.CDLL(None, use_errno=True)
held = [libc.inotify_init() for _ in range(100000)]
print(sum(fd >= 0 for fd in held), flush=True)  # every instance the uid may have
open("/proc/self/comm", "w").write("{MARK[:15]}")  # now the host can see it holds them
time.sleep(120)  # until the test ends it
"""

INOTIFY = """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
print(libc.inotify_init() >= 0, ctypes.get_errno())
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="sandboxes get a uid of their own only when run as root")
def test_programs_side_by_side_share_no_per_uid_budget(backend):
    hog = threading.Thread(target=lambda: _run(LocalBackend(isolation="require"), HOG, limits=Limits(timeout=120)))
    hog.start()
    try:
        assert settle(lambda: not with_marker(MARK[:15]), seconds=60) is False, "the first program never started"
        assert _run(backend, INOTIFY).runs[0].stdout == "True 0\n"  # its own uid: its own inotify instances
    finally:
        for pid in with_marker(MARK[:15]):  # the first program holds its instances until ended here
            with contextlib.suppress(OSError):
                os.kill(pid, 9)
        hog.join()


LOCALHOST = """
import socket
server = socket.create_server(("localhost", 0))
with socket.create_connection(("localhost", server.getsockname()[1])) as client:
    client.sendall(b"hi")
    print(server.accept()[0].recv(2).decode(), socket.gethostbyname(socket.gethostname()))
"""


@pytest.mark.parametrize("reuse", [True, False])
def test_localhost_and_the_sandboxs_own_name_resolve_to_the_loopback_interface(reuse):
    run = _run(LocalBackend(isolation="require", reuse=reuse, prestart=0), LOCALHOST).runs[0]
    assert run.ok, run.stderr
    assert run.stdout == "hi 127.0.1.1\n"


def test_no_two_sandboxes_of_a_process_hold_the_same_uid_at_once():
    held: list[int] = []
    try:
        with pytest.raises(SandboxError, match="sandboxes at once in one process"):
            while len(held) < 10_000:
                held.append(take_uid())
        assert len(set(held)) == len(held) and max(held) < 2**31
        release_uid(held[0])
        assert take_uid() == held[0]  # given back, then taken again: never while its sandbox lives
    finally:
        for uid in held:
            release_uid(uid)
