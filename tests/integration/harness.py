# SPDX-License-Identifier: MIT
"""Processes for integration tests: a simulated box, daemons, and a client
for the box's app socket (what a DVB or V4L application on the box does).

Paths of the built programs come from the environment ctest sets:
TUNERD_BIN (bin dir), TUNERD_PLUGINS, TUNERD_TEST_PLUGINS.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import unittest

BIN = os.environ.get("TUNERD_BIN", "build/bin")
PLUGINS = os.environ.get("TUNERD_PLUGINS", "build/plugins")
TEST_PLUGINS = os.environ.get("TUNERD_TEST_PLUGINS", "build/test-plugins")

# A small RF environment the tests reason about.
TEST_ENV = """\
# system freq bandwidth level_dBm cnr_dB label
DVBT   474000000 8000000 -50.0 30.0 "MUX A"
DVBT2  490000000 8000000 -55.0 28.0 "MUX B"
DVBT   506000000 8000000 -88.0  4.0 "weak"
RADIO   88800000  200000 -45.0 40.0 "FM"
"""


def wait_for(pred, timeout=10.0, step=0.02, what="condition"):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = pred()
        if value:
            return value
        time.sleep(step)
    raise AssertionError("timed out waiting for " + what)


class Box:
    """A tunerd-simbox process with its sockets in a private directory."""

    def __init__(self, workdir, tuners="mt2060,qt1010,xc3028,mt2060",
                 deadline_ms=3000, i2c_khz=0, settle=0.0, extra=(),
                 env_text=TEST_ENV):
        self.dir = workdir
        self.sock = os.path.join(workdir, "sim.sock")
        self.app = os.path.join(workdir, "app.sock")
        self.env = os.path.join(workdir, "test.env")
        self.fw_dir = os.path.join(workdir, "fw")
        self.trace = os.path.join(workdir, "i2c.trace")
        os.makedirs(self.fw_dir, exist_ok=True)
        self.firmware = os.path.join(self.fw_dir, "xc3028-v27.fw")
        with open(self.env, "w") as f:
            f.write(env_text)
        if not os.path.exists(self.firmware):
            subprocess.run([os.path.join(BIN, "tunerd-mkfw-xc3028"),
                            self.firmware], check=True)
        self.args = [os.path.join(BIN, "tunerd-simbox"),
                     "--socket", self.sock, "--app-socket", self.app,
                     "--tuners", tuners, "--env", self.env,
                     "--firmware", self.firmware, "--i2c-khz", str(i2c_khz),
                     "--settle-scale", str(settle),
                     "--deadline-ms", str(deadline_ms),
                     "--trace", self.trace, *extra]
        self.log = open(os.path.join(workdir, "box.log"), "w")
        self.proc = subprocess.Popen(self.args, stdout=self.log,
                                     stderr=subprocess.STDOUT)
        wait_for(self._accepting, what="box app socket accepting")

    def _accepting(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(self.app)
            return True
        except OSError:
            return False
        finally:
            s.close()

    def call(self, req, timeout=15.0):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(timeout)
        s.connect(self.app)
        s.sendall(json.dumps(req).encode() + b"\n")
        buf = b""
        while not buf.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
        s.close()
        return json.loads(buf)

    def tune(self, client, system, freq, bandwidth=0, **kw):
        req = {"op": "set_params", "client": client,
               "delivery_system": system, "frequency": freq,
               "bandwidth": bandwidth}
        req.update(kw)
        return self.call(req)

    def status(self, client):
        return self.call({"op": "get_status", "client": client})

    def tuners(self):
        return self.call({"op": "list"})["tuners"]

    def all_bound(self):
        t = self.tuners()
        return t if t and all(x.get("bound") for x in t) else None

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def state_dir_args(box, extra=()):
    """--state-dir in the box's directory unless extra names one: tests run
    as root must never share the default /var/lib/tunerd, and the daemons
    of one box share it as the daemons of one machine would."""
    if "--state-dir" in extra:
        return []
    return ["--state-dir", os.path.join(box.dir, "state")]


class Daemon:
    """A tunerd process on a box."""

    def __init__(self, box, extra=(), plugin_dirs=(PLUGINS,), name="log",
                 prefix=(), env=None):
        """prefix: a command the daemon runs under (ip netns exec NS);
        env: its environment (None: the test's)."""
        args = list(prefix) + [
            os.path.join(BIN, "tunerd"), "--stub", "sim:" + box.sock,
            "--firmware-dir", box.fw_dir]
        for d in plugin_dirs:
            args += ["--plugin-dir", d]
        args += state_dir_args(box, extra)
        args += list(extra)
        self.logpath = os.path.join(box.dir, "tunerd-%s.txt" % name)
        self.log = open(self.logpath, "w")
        self.proc = subprocess.Popen(args, stdout=self.log,
                                     stderr=subprocess.STDOUT, env=env)

    def logtext(self):
        with open(self.logpath) as f:
            return f.read()

    def kill(self, sig=signal.SIGKILL):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(10)

    def stop(self):
        self.kill(signal.SIGTERM)
        self.log.close()


class TsSource:
    """tsgen.py serving the transport streams of a box's tuners on
    BOX_SOCKET.ts<N>, as the simulated box's stream sockets do."""

    def __init__(self, box, tuners="1,2,3,4", rate_mbps=24.0, silent=False):
        here = os.path.dirname(os.path.abspath(__file__))
        self.proc = subprocess.Popen(
            ["python3", os.path.join(here, "tsgen.py"), "--socket", box.sock,
             "--tuners", tuners, "--rate-mbps", str(rate_mbps)] +
            (["--silent"] if silent else []),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        line = self.proc.stdout.readline()
        if line.strip() != b"ready":
            self.stop()
            raise AssertionError("tsgen did not start: %r" % line)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdin.close()
        self.proc.stdout.close()


class BoxTest(unittest.TestCase):
    """One box and one daemon per test, torn down whatever happens."""

    tuners = "mt2060,qt1010,xc3028,mt2060"
    deadline_ms = 3000
    box_extra = ()
    env_text = TEST_ENV
    daemon_extra = ()
    plugin_dirs = (PLUGINS,)

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="tunerd-it-")
        self.box = Box(self.dir, tuners=self.tuners,
                       deadline_ms=self.deadline_ms, extra=self.box_extra,
                       env_text=self.env_text)
        self.daemons = []
        try:
            self.daemon = self.start_daemon()
        except BaseException:
            # tearDown() does not run after a failed setUp(): the box and
            # any daemon would outlive the test (and hold its ports)
            self.tearDown()
            raise

    def start_daemon(self, wait=True):
        d = Daemon(self.box, extra=self.daemon_extra,
                   plugin_dirs=self.plugin_dirs,
                   name=str(len(self.daemons)))
        self.daemons.append(d)
        if wait:
            wait_for(self.box.all_bound, what="every tuner bound")
        return d

    def tearDown(self):
        for d in self.daemons:
            d.stop()
        self.box.stop()
        if getattr(self, "_outcome", None) and self._failed():
            print("kept for inspection:", self.dir)
        else:
            shutil.rmtree(self.dir, ignore_errors=True)

    def _failed(self):
        result = self._outcome.result
        return any(t is self for t, _ in result.failures + result.errors)

    def assertOk(self, reply):
        self.assertTrue(reply.get("ok"), reply)
        return reply


# ---- the network API (REST) ------------------------------------------------

import http.client  # noqa: E402


def free_port(host="127.0.0.1"):
    """A TCP port nobody listens on right now (bound, read, released)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(family, socket.SOCK_STREAM)
    s.bind((host, 0))
    port = s.getsockname()[1]
    s.close()
    return port


def global_ipv4():
    """An IPv4 address of this machine that is not loopback, or None."""
    try:
        out = subprocess.run(["ip", "-o", "-4", "addr", "show", "scope",
                              "global"], capture_output=True, text=True,
                             timeout=5).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    for line in out.splitlines():
        parts = line.split()
        if "inet" in parts:
            return parts[parts.index("inet") + 1].split("/")[0]
    return None


def _server_side(port, peer_port):
    """(unread bytes, bytes received) of the server's side of the
    loopback TCP connection from peer_port to port, or None (ss -ti)."""
    out = subprocess.run(
        ["ss", "-tinH", "state", "established",
         "( sport = :%d and dport = :%d )" % (port, peer_port)],
        capture_output=True, text=True, timeout=10).stdout.split()
    if not out or "bytes_received:" not in " ".join(out):
        return (int(out[0]), 0) if out else None
    received = [int(f.split(":")[1]) for f in out
                if f.startswith("bytes_received:")][0]
    return int(out[0]), received


def read_to_close(sock):
    """Everything the server sends until it closes the connection (a reset
    counts as a close)."""
    chunks = []
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def start_refused(box, config_path=None, extra=(), state=True, env=None):
    """Run a daemon on box (with config_path, extra arguments, env added
    to the environment; a --state-dir of the box's when state) that must
    refuse to start; its exit status and everything it logged (stdout +
    stderr)."""
    args = [os.path.join(BIN, "tunerd"), "--stub", "sim:" + box.sock,
            "--plugin-dir", PLUGINS, "--listen",
            "127.0.0.1:%d" % free_port()]
    if config_path:
        args += ["--config", config_path]
    args += (state_dir_args(box, extra) if state else []) + list(extra)
    p = subprocess.run(args, capture_output=True, text=True, timeout=20,
                       env=dict(os.environ, **(env or {})))
    return p.returncode, p.stdout + p.stderr


def wait_server_read(sock, port, sent, timeout=10.0):
    """Until the server (listening on port) has received and read the
    sent bytes sock sent it: for requests that get no answer until
    something else happens (a hung chip).  The daemon's loop parses what
    it reads at once, so a request it read is a request it holds."""
    peer_port = sock.getsockname()[1]
    wait_for(lambda: _server_side(port, peer_port) == (0, sent),
             timeout=timeout, step=0.005,
             what="the server reading the request")


class Reply:
    """One HTTP answer: status, headers (lower-case names), body, JSON."""

    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.body = body
        try:
            self.json = json.loads(body) if body else None
        except ValueError:
            self.json = None

    @property
    def error(self):
        return (self.json or {}).get("error", {})

    def __repr__(self):
        return "<%d %r>" % (self.status, self.body[:300])


def http_request(port, method, path, body=None, headers=None,
                 host="127.0.0.1", timeout=15.0, source=None):
    """One request on a new connection.  body: a dict/list (sent as JSON),
    bytes/str (sent as is) or None."""
    hdrs = dict(headers or {})
    if isinstance(body, (dict, list)):
        body = json.dumps(body)
        hdrs.setdefault("Content-Type", "application/json")
    if isinstance(body, str):
        body = body.encode()
    conn = http.client.HTTPConnection(
        host, port, timeout=timeout,
        source_address=(source, 0) if source else None)
    try:
        conn.request(method, path, body=body, headers=hdrs)
        r = conn.getresponse()
        data = r.read()
        return Reply(r.status, {k.lower(): v for k, v in r.getheaders()},
                     data)
    finally:
        conn.close()


class ApiBoxTest(BoxTest):
    """A box and a daemon serving the network API on a free port.

    config: a dict written as the --config file (None: no file).
    listen_host: the address the daemon binds.
    """

    config = None
    listen_host = "127.0.0.1"
    web_root = None
    # Wait for every ready tuner's power-up init before the test: for
    # tests that set a hang fault (the init would meet it instead).
    power_up_wait = False

    def start_daemon(self, wait=True):
        self.port = free_port(self.listen_host)
        extra = list(self.daemon_extra)
        extra += ["--listen", "%s:%d" % (self.listen_host, self.port)]
        if self.config is not None:
            path = os.path.join(self.dir, "tunerd.json")
            with open(path, "w") as f:
                json.dump(self.config, f)
            extra += ["--config", path]
        if self.web_root is not None:
            extra += ["--web-root", self.web_root]
        d = Daemon(self.box, extra=extra, plugin_dirs=self.plugin_dirs,
                   name=str(len(self.daemons)))
        self.daemons.append(d)
        if wait:
            wait_for(self.box.all_bound, what="every tuner bound")
            wait_for(self._api_up, what="the network API")
            if self.power_up_wait:
                self._wait_powered_up()
        return d

    def _wait_powered_up(self, timeout=20.0):
        """Every ready tuner's worker has powered its chip up (the
        tuner.init of origin restore after the probe), so that a fault a
        test sets next meets the test's own command, not that init."""
        from events_util import SseStream
        r = http_request(self.port, "GET", "/api/v1/tuners",
                         headers=self._powered_up_headers(), timeout=10)
        if r.status != 200 or not r.json:
            return  # a test of refusals: nothing to wait for
        want = {t["id"] for t in r.json.get("tuners", [])
                if t.get("state") == "ready"}
        if not want:
            return
        sse = SseStream(self.port, "types=tuner.init&since=0",
                        headers=self._powered_up_headers(), timeout=timeout)
        try:
            if sse.status != 200:
                return
            while want:
                m = sse.next(timeout=timeout)
                if m.get("event") == "tuner.init" and \
                        m["data"].get("origin") == "restore":
                    want.discard(m["data"].get("tuner"))
        finally:
            sse.close()

    def _powered_up_headers(self):
        tokens = (self.config or {}).get("tokens") or []
        return ({"Authorization": "Bearer " + tokens[0]["token"]}
                if tokens else {})

    SANITIZER_MARKS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer",
                       "runtime error:")

    def tearDown(self):
        # stop the daemons first: a sanitizer reports at exit
        for d in self.daemons:
            d.kill(signal.SIGTERM)
        reports = []
        for d in self.daemons:
            text = d.logtext()
            for m in self.SANITIZER_MARKS:
                if m in text:
                    at = text.index(m)
                    reports.append(text[max(0, at - 200):at + 3000])
                    break
        super().tearDown()
        self.assertEqual(reports, [], "sanitizer reports in the daemon log")

    def _api_up(self):
        try:
            http_request(self.port, "GET", "/api/v1/box", timeout=2)
            return True
        except OSError:
            return False

    def api(self, method, path, body=None, headers=None, token=None,
            **kw):
        hdrs = dict(headers or {})
        if token:
            hdrs["Authorization"] = "Bearer " + token
        host = kw.pop("host", "127.0.0.1")
        return http_request(self.port, method, path, body=body,
                            headers=hdrs, host=host, **kw)

    def assertError(self, reply, status, code):
        self.assertEqual(reply.status, status, reply)
        self.assertEqual(reply.headers.get("content-type"),
                         "application/json", reply)
        self.assertEqual(reply.error.get("code"), code, reply)
        self.assertTrue(reply.error.get("message"), reply)
        return reply.error
