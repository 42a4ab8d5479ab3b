"""Real attacks, each run as a completion scored by ``code_tests`` in the bubblewrap sandbox.

Each attack program is written so that it passes its test exactly when the
attack works (it prints the secret it found, the file it wrote, the number of
processes it forked...): a score of 0 shows it was contained. After each, the
process table holds nothing the program started and no sandbox, and a normal
program still scores 1.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from sandbox_helpers import block, requires_namespaces, sandboxes_below_me, settle, stdio, with_marker

from rewardsmith import get_reward

pytestmark = [requires_namespaces, pytest.mark.xdist_group("sandbox")]

ROOT = Path(__file__).resolve().parents[1]
MARKER = f"rsattack{uuid.uuid4().hex[:8]}"
SECRET = f"secret-{uuid.uuid4().hex}"
GOOD = block("print(sum(map(int, input().split())))")


@pytest.fixture(scope="module")
def reward():
    os.environ["RS_ATTACK_SECRET"] = SECRET  # set before the worker processes start: they inherit it
    r = get_reward("code_tests", workers=2, test_timeout=2.0, backend_settings={"prestart": False})
    yield r
    r.close()
    os.environ.pop("RS_ATTACK_SECRET", None)


def _contained(reward, program: str, tests: str, *, seconds: float = 60.0) -> list:
    """Score the attack and a good program; the attack is stopped (a hang guard: unchecked, each runs far longer)."""
    started = time.monotonic()
    results = reward.explain(completions=[block(program), GOOD], tests=[tests, stdio("3\n", "1 2\n")])
    elapsed = time.monotonic() - started
    assert [r.score for r in results] == [0.0, 1.0], [r.reason for r in results]
    assert elapsed < seconds, f"the attack took {elapsed:.1f}s"
    assert not settle(lambda: with_marker(MARKER)), "processes the program started are still running"
    assert not settle(sandboxes_below_me), f"sandboxes left: {sandboxes_below_me()}"
    return results


class _Token(BaseHTTPRequestHandler):
    def do_GET(self):
        data = SECRET.encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def test_network_is_unreachable(reward):
    server = ThreadingHTTPServer(("0.0.0.0", 0), _Token)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        port = server.server_address[1]
        hosts = ["127.0.0.1", _own_address()]
        program = (
            "import sys, urllib.request\n"
            "for host in sys.stdin.read().split():\n"
            "    try:\n"
            "        print(urllib.request.urlopen(f'http://{host}/', timeout=3).read().decode())\n"
            "        break\n"
            "    except Exception as exc:\n"
            "        print(type(exc).__name__, file=sys.stderr)\n"
        )
        with urllib_check(port):
            results = _contained(reward, program, stdio(SECRET, " ".join(f"{h}:{port}" for h in hosts)))
        assert "URLError" in results[0].reason or "OSError" in results[0].reason or "line" in results[0].reason
    finally:
        server.shutdown()
        server.server_close()


def _own_address() -> str:
    """This machine's address on its main interface (no packet is sent)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.255.255.255", 1))
            return probe.getsockname()[0]
        except OSError:
            return socket.gethostbyname(socket.gethostname())


class urllib_check:
    """Checks that the token server itself answers from this process (so its silence in the sandbox means something)."""

    def __init__(self, port: int) -> None:
        self.port = port

    def __enter__(self):
        import urllib.request

        assert urllib.request.urlopen(f"http://127.0.0.1:{self.port}/", timeout=5).read().decode() == SECRET

    def __exit__(self, *exc):
        return False


def test_writes_outside_the_working_directory_do_not_land(reward, tmp_path):
    tmp_path.chmod(0o777)  # writable by anyone, the sandbox's uid included, were it visible
    targets = [tmp_path / "pwned", ROOT / "pwned", Path.home() / "pwned", Path("/usr/pwned"), Path("/pwned")]
    program = (
        "import sys\n"
        "for path in sys.stdin.read().split():\n"
        "    try:\n"
        "        open(path, 'w').write('pwned')\n"
        "        print('written')\n"
        "        break\n"
        "    except OSError as exc:\n"
        "        print(path, type(exc).__name__, file=sys.stderr)\n"
    )
    _contained(reward, program, stdio("written", " ".join(map(str, targets))))
    assert not any(t.exists() for t in targets)


def test_parent_environment_secrets_do_not_reach_the_program(reward):
    assert os.environ["RS_ATTACK_SECRET"] == SECRET
    program = (
        "import os\n"
        "found = [v for v in os.environ.values() if v.startswith('secret-')]\n"
        "for pid in [p for p in os.listdir('/proc') if p.isdigit()] + ['self', '1']:\n"
        "    for part in ('environ', 'cmdline'):\n"
        "        try:\n"
        "            data = open(f'/proc/{pid}/{part}', 'rb').read().decode(errors='replace')\n"
        "        except OSError:\n"
        "            continue\n"
        "        found += [w.split('=')[-1] for w in data.split('\\0') if 'secret-' in w]\n"
        "print(found[0] if found else 'nothing')\n"
    )
    results = _contained(reward, program, stdio(SECRET))
    assert "nothing" in results[0].reason


def test_fork_bomb_hits_the_process_limit(reward):
    program = (
        "import os\n"
        "n = 0\n"
        "try:\n"
        "    while n < 5000:\n"
        "        if os.fork() == 0:\n"
        f"            os.execv('/bin/sleep', ['{MARKER}', '600'])\n"
        "        n += 1\n"
        "except OSError:\n"
        "    pass\n"
        "print('forked', n)\n"
    )
    results = _contained(reward, program, stdio("forked 5000"))
    assert "got 'forked 5000'" not in results[0].reason and "got 'forked" in results[0].reason


def test_ten_gigabytes_are_refused_at_once(reward):
    results = _contained(reward, "data = bytearray(10 * 2**30)\nprint('allocated')", stdio("allocated"))
    assert "MemoryError" in results[0].reason  # refused by the address-space limit, not allocated and then killed


def test_memory_touched_bit_by_bit_stops_at_the_limit(reward):
    program = "chunks = []\nfor _ in range(10 * 1024):\n    chunks.append(bytearray(2**20))\nprint('allocated')"
    _contained(reward, program, stdio("allocated"))


def test_an_endless_loop_is_killed_at_the_timeout(reward):
    results = _contained(reward, "while True:\n    pass\nprint('done')", stdio("done"))
    assert "timed out" in results[0].reason and results[0].metrics["timeouts"] == 1


def test_a_gigabyte_of_output_is_cut_off(reward):
    program = "import sys\nchunk = 'x' * (1 << 20)\nfor _ in range(1024):\n    sys.stdout.write(chunk)\nprint('end')"
    results = _contained(reward, program, stdio("end"))
    assert "more output than allowed" in results[0].reason


def test_children_of_a_sleeping_parent_are_killed(reward):
    program = (
        "import os, time\n"
        "for _ in range(3):\n"
        "    if os.fork() == 0:\n"
        f"        os.execv('/bin/sleep', ['{MARKER}', '600'])\n"
        "time.sleep(600)\n"
        "print('done')\n"
    )
    _contained(reward, program, stdio("done"))


def test_killing_its_parent_does_not_work(reward):
    program = (
        "import os, signal, time\n"
        "for target in (os.getppid(), 1):\n"
        "    for sig in (signal.SIGKILL, signal.SIGTERM, signal.SIGSTOP):\n"
        "        try:\n"
        "            os.kill(target, sig)\n"
        "        except OSError:\n"
        "            pass\n"
        "time.sleep(0.2)\n"
        "try:\n"
        "    os.kill(1, 0)\n"
        "    print('parent alive')\n"
        "except OSError:\n"
        "    print('parent dead')\n"
    )
    results = _contained(reward, program, stdio("parent dead"))
    assert "parent alive" in results[0].reason


def test_a_daemon_does_not_outlive_its_sample(reward):
    program = (
        "import os\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        f"        os.execv('/bin/sleep', ['{MARKER}', '600'])\n"
        "    os._exit(0)\n"
        "os.wait()\n"
        "print('daemon started')\n"
    )
    _contained(reward, program, stdio("the daemon must not count"))


def test_files_a_sample_leaves_do_not_reach_the_next(reward, tmp_path):
    tamper = (
        "import os\n"
        "for path in ('/work/shared.txt', '/tmp/shared.txt', '/dev/shm/shared.txt', os.path.expanduser('~/x.txt')):\n"
        "    try:\n"
        "        open(path, 'w').write('tampered')\n"
        "    except OSError:\n"
        "        pass\n"
        "print('left files behind')\n"
    )
    look = (
        "import os\n"
        "paths = ('/work/shared.txt', '/tmp/shared.txt', '/dev/shm/shared.txt', os.path.expanduser('~/x.txt'))\n"
        "print('found' if any(os.path.exists(p) for p in paths) else 'clean')\n"
    )
    first = reward(completions=[block(tamper)] * 2, tests=[stdio("left files behind")] * 2)
    assert first == [1.0, 1.0]  # it could write in its own sandbox
    _contained(reward, look, stdio("found"))


def test_no_new_user_namespace_no_tracing_the_runner_no_mounts(reward):
    program = (
        "import ctypes, os\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "gained = []\n"
        "if libc.unshare(0x10000000) == 0:  # CLONE_NEWUSER: root inside a namespace of its own\n"
        "    gained.append('user namespace')\n"
        "if libc.ptrace(16, 1, None, None) == 0:  # PTRACE_ATTACH to the runner\n"
        "    gained.append('ptrace')\n"
        "if libc.mount(b'none', b'/work', b'tmpfs', 0, None) == 0:\n"
        "    gained.append('mount')\n"
        "print(' '.join(gained) or 'nothing')\n"
    )
    results = _contained(reward, program, stdio("user namespace ptrace mount"))
    assert "got 'nothing'" in results[0].reason


def test_the_host_files_are_not_there(reward):
    paths = ["/root", "/home", "/var", "/etc/passwd", "/etc/ld.so.conf", "/etc/hostname", str(ROOT), str(Path.home())]
    program = (
        "import os, sys\n"
        "found = [p for p in sys.stdin.read().split() if os.path.exists(p)]\n"
        "print('found', *found) if found else print(','.join(sorted(os.listdir('/etc'))))\n"
    )
    results = _contained(reward, program, stdio("found", " ".join(paths)))
    assert "got 'alternatives,hosts,ld.so.cache,localtime'" in results[0].reason, results[0].reason  # hosts: ours


def test_the_disk_is_small(reward):
    program = (
        "import os\n"
        "sizes = [os.statvfs(p).f_blocks * os.statvfs(p).f_frsize >> 20 for p in ('/work', '/tmp', '/dev/shm')]\n"
        "try:\n"
        "    for i in range(8):  # 8 files of 48 MB (each under the file size limit): more than /work holds\n"
        "        with open(f'/work/f{i}', 'wb') as f:\n"
        "            f.write(bytes(48 << 20))\n"
        "    full = 'no'\n"
        "except OSError as exc:\n"
        "    full = type(exc).__name__\n"
        "print('sizes', *sizes, 'full', full)\n"
    )
    results = _contained(reward, program, stdio("sizes 99999 99999 99999 full no"))
    got = results[0].reason.split("got '")[1].split("'")[0].split()
    assert [int(n) for n in got[1:4]] == [256, 256, 64] and got[5] == "OSError", results[0].reason


def test_the_attacks_counted_no_sandbox_failures(reward):
    results = reward.explain(completions=[GOOD] * 4, tests=[stdio("3\n", "1 2\n")] * 4)
    assert [r.score for r in results] == [1.0] * 4
    assert reward.stats["errors"] == 0, reward.stats
    assert json.loads(json.dumps(results[0].metrics)) == {"passed": 1, "total": 1, "timeouts": 0, "compile_error": 0}


def test_the_process_table_check_sees_a_leftover():
    import subprocess

    process = subprocess.Popen([MARKER, "600"], executable="/bin/sleep")
    try:
        assert settle(lambda: with_marker(MARKER) != [process.pid]) is False  # once it has started
    finally:
        process.kill()
        process.wait()
    assert not with_marker(MARKER)
