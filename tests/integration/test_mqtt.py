# SPDX-License-Identifier: MIT
"""The MQTT bridge against Debian's real mosquitto broker: retained
tuner states, events, commands with replies (and refusals), the last
will after SIGKILL, and a broker restart (persistence keeps the retained
states, the daemon reconnects).  Clients are Debian's python3-paho-mqtt;
every wait is for a message, never a sleep."""
import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import unittest

from harness import ApiBoxTest, free_port, wait_for

try:
    import paho.mqtt.client as mqtt
except ImportError:
    # pyenv's interpreter does not see the packages apt installed.
    sys.path.append("/usr/lib/python3/dist-packages")
    try:
        import paho.mqtt.client as mqtt
    except ImportError:
        mqtt = None

MOSQUITTO = "/usr/sbin/mosquitto"
# Skipped without them (a failure under CI=true: it_runner.py).
HAVE_BROKER = mqtt is not None and os.path.exists(MOSQUITTO) and \
    shutil.which("openssl") and shutil.which("mosquitto_passwd")
BOX = "box-mqtt"
BASE = "tunerd/" + BOX
DVBT_474 = {"delivery_system": "DVBT", "frequency": 474000000,
            "bandwidth": 8000000}
WAIT = 30.0


class Broker:
    """mosquitto on a free loopback port, its persistence in workdir."""

    def __init__(self, workdir, listener_extra=""):
        self.dir = workdir
        self.port = free_port()
        self.conf = os.path.join(workdir, "mosquitto.conf")
        # Run as root, mosquitto drops to its own user unless told to
        # stay: it must write its persistence file in workdir.
        user = pwd.getpwuid(os.geteuid()).pw_name
        with open(self.conf, "w") as f:
            f.write("user %s\n" % user)
            f.write("listener %d 127.0.0.1\n"
                    "allow_anonymous true\n"
                    "persistence true\n"
                    "persistence_location %s/\n"
                    "log_dest file %s/mosquitto.log\n"
                    "log_type all\n" % (self.port, workdir, workdir))
            f.write(listener_extra)
        self.proc = None
        self.start()

    def _accepting(self):
        try:
            socket.create_connection(("127.0.0.1", self.port), 1).close()
            return True
        except OSError:
            return False

    def start(self):
        self.proc = subprocess.Popen([MOSQUITTO, "-c", self.conf],
                                     stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        wait_for(self._accepting, what="mosquitto accepting")

    def stop(self):
        """SIGTERM: mosquitto writes its persistence file and exits."""
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)


class Client:
    """A paho client that keeps every message it receives; wait() blocks
    on a condition until one matches."""

    def __init__(self, port, subs, client_id="", clean=True, tls=None,
                 login=None):
        self.msgs = []
        self.cond = threading.Condition()
        self.c = mqtt.Client(client_id=client_id, clean_session=clean)
        if tls:
            self.c.tls_set(ca_certs=tls)
        if login:
            self.c.username_pw_set(*login)
        self.c.on_message = self._on_message
        self.c.on_subscribe = self._on_subscribe
        self.c.on_connect = self._on_connect
        self.subs = subs
        self.subscribed = None
        self.connected = None
        # The broker's certificate names localhost.
        self.c.connect("localhost" if tls else "127.0.0.1", port,
                       keepalive=30)
        self.c.loop_start()
        with self.cond:
            self.cond.wait_for(lambda: self.connected is not None, WAIT)
            if subs:
                self.subscribed = False
                _, mid = self.c.subscribe([(s, 1) for s in subs])
                self.cond.wait_for(lambda: self.subscribed, WAIT)
        assert self.connected == 0, "broker refused the test client"

    def _on_connect(self, c, userdata, flags, rc):
        with self.cond:
            self.connected = rc
            self.cond.notify_all()

    def _on_subscribe(self, c, userdata, mid, granted):
        with self.cond:
            self.subscribed = True
            self.cond.notify_all()

    def _on_message(self, c, userdata, m):
        with self.cond:
            self.msgs.append((m.topic, m.payload, m.retain))
            self.cond.notify_all()

    def wait(self, pred, what, timeout=WAIT, start=0):
        """The first message from index start on with pred(topic,
        payload, retain) true; returns (index, topic, payload, retain)."""
        found = []

        def match():
            for i in range(start, len(self.msgs)):
                if pred(*self.msgs[i]):
                    found.append((i,) + self.msgs[i])
                    return True
            return False

        with self.cond:
            if not self.cond.wait_for(match, timeout):
                raise AssertionError("no MQTT message: %s; got %r" %
                                     (what, self.msgs[-20:]))
        return found[0]

    def publish(self, topic, payload):
        if not isinstance(payload, (bytes, str)):
            payload = json.dumps(payload)
        self.c.publish(topic, payload, qos=1).wait_for_publish()

    def close(self):
        self.c.disconnect()
        self.c.loop_stop()


@unittest.skipUnless(HAVE_BROKER, "needs mosquitto, mosquitto-clients, "
                     "python3-paho-mqtt and openssl (scripts/deps.sh test)")
class MqttTest(ApiBoxTest):
    """A broker (started first: the daemon's config names its port), a
    box and a daemon bridged to the broker."""

    mqtt_extra = {}
    client_kw = {}

    def broker_setup(self):
        return ""

    def setUp(self):
        self.broker_dir = tempfile.mkdtemp(prefix="tunerd-mqtt-")
        self.broker = Broker(self.broker_dir, self.broker_setup())
        self.clients = []
        self.config = {"name": BOX, "mqtt": dict({
            "enabled": True, "host": "127.0.0.1", "port": self.broker.port,
            "client_id": "it-box", "keepalive_s": 5,
            "state_interval_ms": 200, "role": "operator"},
            **self.mqtt_extra)}
        super().setUp()
        self.ids = [t["id"] for t in
                    self.api("GET", "/api/v1/tuners").json["tuners"]]
        # The bridge subscribes to its commands at connect, before it
        # publishes the states: once a state is here, commands are heard.
        ready = self.client([BASE + "/tuner/+/state"])
        ready.wait(lambda t, p, r: True, "the bridge's first state")

    def tearDown(self):
        for c in self.clients:
            c.close()
        try:
            super().tearDown()
        finally:
            self.broker.stop()
            shutil.rmtree(self.broker_dir, ignore_errors=True)

    def client(self, subs, **kw):
        c = Client(self.broker.port, subs, **dict(self.client_kw, **kw))
        self.clients.append(c)
        return c

    def wait_states(self, c, retained=None, start=0, pred=None):
        """A state message of every tuner; {id: state}."""
        seen = {}
        for tid in self.ids:
            topic = "%s/tuner/%d/state" % (BASE, tid)
            _, _, p, _ = c.wait(
                lambda t, p, r: t == topic and
                (retained is None or r == retained) and
                (pred is None or pred(json.loads(p))),
                "state of tuner %d" % tid, start=start)
            seen[tid] = json.loads(p)
        return seen

    def command(self, c, tuner, body, reply_to="it/replies"):
        if isinstance(body, dict) and reply_to:
            body = dict(body, reply_to=reply_to)
        start = len(c.msgs)
        c.publish("%s/tuner/%d/cmd" % (BASE, tuner), body)
        topic = reply_to or "%s/tuner/%d/reply" % (BASE, tuner)
        rid = body.get("request_id") if isinstance(body, dict) else None
        _, _, p, _ = c.wait(
            lambda t, p, r: t == topic and
            json.loads(p).get("request_id") == rid,
            "reply %r" % rid, start=start)
        return json.loads(p)


class MqttBridge(MqttTest):
    def test_retained_state_and_events(self):
        c = self.client([BASE + "/#"])
        c.wait(lambda t, p, r: t == BASE + "/status" and p == b"online",
               "status online")
        states = self.wait_states(c)
        for tid, s in states.items():
            self.assertEqual(s["id"], tid)
            for key in ("state", "params", "status", "lease", "chip"):
                self.assertIn(key, s)
        # A REST tune: its event, and the tuner's state changes.
        mark = len(c.msgs)
        r = self.api("POST", "/api/v1/tuners/1/tune",
                     dict(DVBT_474, wait_lock_ms=2000))
        self.assertEqual(r.status, 200, r)
        _, _, p, _ = c.wait(lambda t, p, r: t == BASE + "/events/tuner.tune",
                            "tuner.tune event", start=mark)
        ev = json.loads(p)
        self.assertEqual((ev["box"], ev["tuner"], ev["params"]),
                         (BOX, 1, DVBT_474))
        _, _, p, _ = c.wait(
            lambda t, p, r: t == BASE + "/tuner/1/state" and
            json.loads(p)["params"] == DVBT_474 and
            json.loads(p)["status"] and
            json.loads(p)["status"]["fe_status"]["lock"],
            "locked state of tuner 1", start=mark)
        st = json.loads(p)["status"]
        self.assertEqual(st["signal_strength"]["unit"], "dBm")
        self.assertEqual(st["cnr"]["unit"], "dB")
        # A new subscriber gets every state retained.
        late = self.client([BASE + "/tuner/+/state"])
        got = self.wait_states(late, retained=True)
        self.assertEqual(got[1]["params"], DVBT_474)

    def test_commands(self):
        c = self.client(["it/replies", BASE + "/tuner/+/reply",
                         BASE + "/events/#"])
        c.wait(lambda t, p, r: True, "anything")  # the daemon is there
        mark = len(c.msgs)
        rep = self.command(c, 1, {"request_id": "r1", "op": "tune",
                                  "params": DVBT_474,
                                  "wait_lock_ms": 2000})
        self.assertTrue(rep["ok"], rep)
        self.assertEqual(rep["result"]["params"], DVBT_474)
        self.assertTrue(rep["result"]["locked"], rep)
        _, _, p, _ = c.wait(
            lambda t, p, r: t == BASE + "/events/tuner.tune" and
            json.loads(p)["tuner"] == 1, "the command's tune", start=mark)
        self.assertEqual(json.loads(p)["by"], "mqtt:it-box")
        self.assertEqual(json.loads(p)["origin"], "api")
        rep = self.command(c, 1, {"request_id": 2, "op": "sleep"})
        self.assertTrue(rep["ok"], rep)

        # Refusals: each with the API's error object.
        rep = self.command(c, 1, b"{not json", reply_to=None)
        self.assertEqual(rep["error"]["code"], "bad_request", rep)
        self.assertFalse(rep["ok"])
        rep = self.command(c, 1, {"request_id": "r3", "op": "explode"})
        self.assertEqual(rep["error"]["code"], "bad_request", rep)
        rep = self.command(c, 1, {"request_id": "r4", "op": "tune",
                                  "params": dict(DVBT_474, frequency=5)})
        self.assertFalse(rep["ok"])
        self.assertIn(rep["error"]["code"],
                      ("bad_request", "unsupported_params"))
        rep = self.command(c, 99, {"request_id": "r5", "op": "init"})
        self.assertEqual(rep["error"]["code"], "not_found", rep)
        rep = self.command(c, 1, {"request_id": "r6", "op": "init",
                                  "reply_to": BASE + "/tuner/1/state"},
                           reply_to=None)
        self.assertEqual(rep["error"]["code"], "bad_request", rep)
        rep = self.command(c, 1, "x" * 20000, reply_to=None)
        self.assertEqual(rep["error"]["code"], "body_too_large", rep)

        # A leased tuner: refused without the lease, done with it.
        r = self.api("POST", "/api/v1/tuners/2/lease",
                     {"holder": "alice", "ttl_s": 60})
        self.assertEqual(r.status, 201, r)
        lease = r.json["lease_id"]
        rep = self.command(c, 2, {"request_id": "r7", "op": "tune",
                                  "params": DVBT_474})
        self.assertEqual(rep["error"]["code"], "lease_conflict", rep)
        rep = self.command(c, 2, {"request_id": "r8", "op": "tune",
                                  "params": DVBT_474, "lease": lease})
        self.assertTrue(rep["ok"], rep)

    def test_will_after_sigkill(self):
        c = self.client([BASE + "/status"])
        i, _, _, _ = c.wait(lambda t, p, r: p == b"online", "online")
        self.daemon.kill(signal.SIGKILL)
        c.wait(lambda t, p, r: p == b"offline", "the will", start=i + 1)
        late = self.client([BASE + "/status"])
        late.wait(lambda t, p, r: p == b"offline" and r, "retained offline")

    def test_broker_restart(self):
        # A persistent session: what the daemon publishes while this
        # client is away is kept for it, through the restart too.
        watch = Client(self.broker.port, [BASE + "/status",
                                          BASE + "/tuner/+/state"],
                       client_id="it-watch", clean=False)
        watch.wait(lambda t, p, r: p == b"online", "online")
        self.wait_states(watch)
        watch.close()
        # The daemon is stopped across the restart, so what the broker
        # holds after it can only come from its persistence file.
        self.daemon.proc.send_signal(signal.SIGSTOP)
        try:
            self.broker.stop()
            self.broker.start()
            fresh = self.client([BASE + "/tuner/+/state"])
            self.wait_states(fresh, retained=True)
        finally:
            self.daemon.proc.send_signal(signal.SIGCONT)
        # The daemon reconnected: a live "online", then its states again.
        watch = self.client([], client_id="it-watch", clean=False)
        i, _, _, _ = watch.wait(lambda t, p, r: p == b"online" and not r,
                                "online after the restart")
        self.wait_states(watch, retained=False, start=i + 1)
        c = self.client(["it/replies"])
        rep = self.command(c, 3, {"request_id": "after", "op": "init"})
        self.assertTrue(rep["ok"], rep)


    def test_broker_down_then_up(self):
        """The daemon keeps trying while the broker is down, and comes
        back by itself once it is up."""
        watch = Client(self.broker.port, [BASE + "/status"],
                       client_id="it-watch", clean=False)
        watch.wait(lambda t, p, r: p == b"online", "online")
        watch.close()
        self.broker.stop()
        refused = "mqtt: connect to 127.0.0.1:%d" % self.broker.port
        wait_for(lambda: refused in self.daemon.logtext(),
                 what="a refused reconnect")
        self.broker.start()
        watch = self.client([], client_id="it-watch", clean=False)
        watch.wait(lambda t, p, r: p == b"online" and not r,
                   "online once the broker is up")
        self.assertIn("lost", self.daemon.logtext())

    def test_offline_at_stop(self):
        c = self.client([BASE + "/status"])
        i, _, _, _ = c.wait(lambda t, p, r: p == b"online", "online")
        self.daemon.kill(signal.SIGTERM)
        self.assertEqual(self.daemon.proc.returncode, 0)
        c.wait(lambda t, p, r: p == b"offline", "offline", start=i + 1)
        self.assertIn("mqtt: bridge to 127.0.0.1:%d" % self.broker.port,
                      self.daemon.logtext())
        self.assertNotIn("lost", self.daemon.logtext())
        # Said by the daemon (a DISCONNECT), not by its will.
        log = os.path.join(self.broker_dir, "mosquitto.log")
        wait_for(lambda: "Client it-box disconnected." in open(log).read(),
                 what="the broker logging a clean disconnect")


class MqttInflight(MqttTest):
    """max_inflight: a command past it is refused at once."""

    mqtt_extra = {"max_inflight": 1}
    power_up_wait = True

    def test_inflight_bound(self):
        c = self.client(["it/replies"])
        self.assertOk(self.box.call({"op": "fault", "client": 2,
                                     "hang": True}))
        try:
            # The first waits on the hung chip; the second, right behind
            # it on the same topic, finds it still waiting.
            c.publish(BASE + "/tuner/2/cmd", {
                "request_id": "a", "op": "init", "reply_to": "it/replies"})
            rep = self.command(c, 2, {"request_id": "b", "op": "init"})
            self.assertEqual(rep["error"]["code"], "too_many_requests",
                             rep)
        finally:
            self.assertOk(self.box.call({"op": "fault", "client": 2,
                                         "hang": False}))
        _, _, p, _ = c.wait(lambda t, p, r: json.loads(p)["request_id"] ==
                            "a", "the first command's reply")
        self.assertFalse(json.loads(p)["ok"])


class MqttViewer(MqttTest):
    """The role the configuration grants the bridge is what its commands
    may do: a viewer bridge publishes but may not tune."""

    mqtt_extra = {"role": "viewer"}

    def test_viewer_refused(self):
        c = self.client(["it/replies"])
        rep = self.command(c, 1, {"request_id": "v", "op": "tune",
                                  "params": DVBT_474})
        self.assertEqual(rep["error"]["code"], "forbidden", rep)


def make_tls(workdir):
    """A throw-away CA and a certificate for localhost signed by it."""
    def run(*args):
        subprocess.run(["openssl"] + list(args), check=True, cwd=workdir,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
          "-nodes"]
    run("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem",
        "-days", "2", "-subj", "/CN=tunerd test CA")
    run("req", *ec, "-keyout", "server.key", "-out", "server.csr",
        "-subj", "/CN=localhost")
    with open(os.path.join(workdir, "san.ext"), "w") as f:
        f.write("subjectAltName=DNS:localhost\n")
    run("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey",
        "ca.key", "-CAcreateserial", "-out", "server.pem", "-days", "2",
        "-extfile", "san.ext")
    return os.path.join(workdir, "ca.pem")


PASSWORD = "pw-for-the-broker-only"


class MqttTls(MqttTest):
    """TLS (the broker's certificate checked against a CA file, its host
    name too) and a username/password the broker requires."""

    def broker_setup(self):
        self.ca = make_tls(self.broker_dir)
        pw = os.path.join(self.broker_dir, "passwords")
        open(pw, "w").close()
        for user, secret in (("box", PASSWORD), ("watcher", "watch-pw")):
            subprocess.run(["mosquitto_passwd", "-b", pw, user, secret],
                           check=True)
        os.chmod(pw, 0o600)
        self.mqtt_extra = {
            "host": "localhost", "username": "box", "password": PASSWORD,
            "tls": {"ca_file": self.ca}}
        self.client_kw = {"tls": self.ca, "login": ("watcher", "watch-pw")}
        d = self.broker_dir
        return ("allow_anonymous false\npassword_file %s/passwords\n"
                "cafile %s/ca.pem\ncertfile %s/server.pem\n"
                "keyfile %s/server.key\n" % (d, d, d, d))

    def test_tls_and_login(self):
        c = self.client([BASE + "/#", "it/replies"])
        c.wait(lambda t, p, r: t == BASE + "/status" and p == b"online",
               "online over TLS")
        self.wait_states(c)
        rep = self.command(c, 1, {"request_id": "tls", "op": "init"})
        self.assertTrue(rep["ok"], rep)
        self.assertIn("(TLS)", self.daemon.logtext())
        self.assertNotIn(PASSWORD, self.daemon.logtext())


if __name__ == "__main__":
    unittest.main()
