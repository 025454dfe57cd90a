#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A simulated fleet on one machine (run through scripts/fleet.sh).

N boxes, each in its own network namespace with its own address on a
bridge (in a namespace of its own, the "lan"), each running the simulated
box and tunerd with DNS-SD and the MQTT bridge on, with a D-Bus system bus
and avahi-daemon of its own (tests/integration/avahi_ns.py).  An "ops"
namespace on the same bridge runs the mosquitto broker every box publishes
to, the Prometheus server that scrapes every box, and an avahi-daemon to
browse with.  A veth into the bridge gives the host an address on the LAN,
so every URL printed works from the host.  Everything is removed at exit:
processes, namespaces, the run directory.  Needs root."""
import argparse
import json
import os
import re
import secrets
import select
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "tests", "integration"))
from avahi_ns import NsAvahi, missing_tools  # noqa: E402
from harness import wait_for  # noqa: E402
import netns  # noqa: E402

MOSQUITTO = "/usr/sbin/mosquitto"
PROMETHEUS = "/usr/bin/prometheus"
RF_ENV = os.path.join(TOP, "kmod", "sim", "env", "uk-crystal-palace.env")
API_PORT, BROKER_PORT, PROM_PORT = 8080, 1883, 9090


class FleetError(Exception):
    pass


class Stop(BaseException):
    """Raised by the SIGINT/SIGTERM handler: unwinds into the cleanup."""


def ip(*args, check=True):
    """ip(8); a failure is a FleetError with its message."""
    r = netns.ip(*args, check=False)
    if check and r.returncode:
        raise FleetError("ip %s: %s" % (" ".join(args), r.stderr.strip()))
    return r


def tail(path, lines=15):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return ""


class Fleet:
    def __init__(self, opt):
        self.opt = opt
        self.dir = os.path.join(opt.run_dir, "work")
        shutil.rmtree(self.dir, ignore_errors=True)  # a --keep run's
        os.makedirs(self.dir)
        self.net = opt.net
        self.lan = opt.tag + "-lan"
        self.ops = opt.tag + "-ops"
        self.host_if = opt.tag + "-h"
        self.namespaces, self.procs, self.avahis = [], [], []
        self.deadline = time.monotonic() + opt.timeout
        self.viewer = "fleet-viewer-" + secrets.token_hex(6)
        self.operator = "fleet-operator-" + secrets.token_hex(6)
        self.boxes = [{"name": "box-%02d" % i, "ns": "%s-b%02d" % (opt.tag, i),
                       "addr": "%s.%d" % (self.net, 10 + i)}
                      for i in range(1, opt.boxes + 1)]

    # --- waiting, with the overall start deadline and dead processes
    def wait(self, pred, what, watch=()):
        def check():
            for name, p, log in watch:
                if p.poll() is not None:
                    raise FleetError("%s exited (status %s) while waiting for "
                                     "%s; %s:\n%s" % (name, p.returncode, what,
                                                      log, tail(log)))
            return pred()
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise FleetError("start took longer than --timeout %ds (at %s)"
                             % (self.opt.timeout, what))
        try:
            return wait_for(check, timeout=left, step=0.05, what=what)
        except AssertionError as e:
            raise FleetError("%s (--timeout %ds)" % (e, self.opt.timeout))

    def spawn(self, name, ns, argv, env=None):
        """A process in namespace ns, its output in NAME.log."""
        log = os.path.join(self.dir, name + ".log")
        with open(log, "w") as f:
            # Its own session: Ctrl-C reaches this script, which stops the
            # processes in order, not every process at once.
            p = subprocess.Popen(["ip", "netns", "exec", ns] + argv, env=env,
                                 stdout=f, stderr=subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL,
                                 start_new_session=True)
        rec = (name, p, log)
        self.procs.append(rec)
        return rec

    # --- the network
    def check_net_free(self):
        prefix = self.net + "."
        addrs = ip("-4", "-o", "addr", "show").stdout
        if re.search(r"inet %s\d+/" % re.escape(prefix), addrs) or \
                ip("-4", "route", "show", self.net + ".0/24").stdout.strip():
            raise FleetError("%s.0/24 is in use on this host: choose another "
                             "with --net" % self.net)
        mine = [n.split()[0] for n in
                ip("netns", "list").stdout.splitlines()
                if n.startswith(self.opt.tag + "-")]
        if mine:
            raise FleetError("namespaces %s exist (a fleet of tag %s runs, or "
                             "was killed: scripts/fleet.sh --stop --tag %s)"
                             % (", ".join(mine), self.opt.tag, self.opt.tag))

    def add_ns(self, ns):
        ip("netns", "add", ns)
        self.namespaces.append(ns)
        ip("-n", ns, "link", "set", "lo", "up")

    def make_lan(self):
        self.add_ns(self.lan)
        ip("-n", self.lan, "link", "add", "br0", "type", "bridge")
        ip("-n", self.lan, "link", "set", "br0", "up")
        ip("link", "add", self.host_if, "type", "veth", "peer", "name",
           "host", "netns", self.lan)
        self.bridge_port("host")
        ip("addr", "add", self.net + ".1/24", "dev", self.host_if)
        ip("link", "set", self.host_if, "up")

    def bridge_port(self, port):
        ip("-n", self.lan, "link", "set", port, "master", "br0")
        ip("-n", self.lan, "link", "set", port, "up")

    def join(self, ns, addr, port):
        """Namespace ns on the LAN: eth0 at addr, its peer port on br0."""
        self.add_ns(ns)
        ip("-n", self.lan, "link", "add", port, "type", "veth", "peer",
           "name", "eth0", "netns", ns)
        self.bridge_port(port)
        ip("-n", ns, "link", "set", "eth0", "multicast", "on")
        ip("-n", ns, "addr", "add", addr + "/24", "dev", "eth0")
        ip("-n", ns, "link", "set", "eth0", "up")

    # --- the services
    def start_avahis(self):
        for ns, name in [(self.ops, "ops")] + [(b["ns"], b["name"])
                                               for b in self.boxes]:
            self.avahis.append(NsAvahi(os.path.join(self.dir, "avahi-" + name),
                                       ns, "eth0", host_name=name, wait=False))
        for a in self.avahis:
            left = max(1.0, self.deadline - time.monotonic())
            try:
                a.wait_avahi(timeout=left)
            except AssertionError as e:
                raise FleetError("avahi-daemon in %s: %s; %s" %
                                 (a.ns, e, tail(a.avahi_log.name)))

    def start_broker(self):
        conf = os.path.join(self.dir, "mosquitto.conf")
        with open(conf, "w") as f:
            # Run as root, mosquitto would drop to its own user.
            f.write("user root\nlistener %d 0.0.0.0\nallow_anonymous true\n"
                    "persistence false\n" % BROKER_PORT)
        rec = self.spawn("mosquitto", self.ops, [MOSQUITTO, "-c", conf])
        self.wait(lambda: self.accepting(self.net + ".2", BROKER_PORT),
                  "the broker accepting", [rec])

    def start_prometheus(self):
        conf = os.path.join(self.dir, "prometheus.yml")
        targets = "".join(
            "      - targets: ['%s:%d']\n        labels: {fleet_box: %s}\n"
            % (b["addr"], API_PORT, b["name"]) for b in self.boxes)
        with open(conf, "w") as f:
            f.write("global:\n  scrape_interval: %s\n  scrape_timeout: %s\n"
                    "scrape_configs:\n  - job_name: tunerd\n"
                    "    authorization:\n      credentials: %s\n"
                    "    static_configs:\n%s"
                    % (self.opt.scrape_interval, self.opt.scrape_interval,
                       self.viewer, targets))
        rec = self.spawn("prometheus", self.ops, [
            PROMETHEUS, "--config.file=" + conf,
            "--storage.tsdb.path=" + os.path.join(self.dir, "prometheus"),
            "--web.listen-address=0.0.0.0:%d" % PROM_PORT])
        url = "http://%s.2:%d/-/ready" % (self.net, PROM_PORT)
        self.wait(lambda: self.http_ok(url), "Prometheus ready", [rec])

    def box_config(self, box):
        return {"name": box["name"],
                "tokens": [{"name": "viewer", "token": self.viewer,
                            "role": "viewer"},
                           {"name": "operator", "token": self.operator,
                            "role": "operator"}],
                "mdns": {"enabled": True, "name": box["name"]},
                "mqtt": {"enabled": True, "host": self.net + ".2",
                         "port": BROKER_PORT, "client_id": box["name"],
                         "keepalive_s": 10, "state_interval_ms": 500}}

    def start_box(self, box, fw):
        d = os.path.join(self.dir, box["name"])
        os.makedirs(d)
        sock = os.path.join(d, "sim.sock")
        box["app_socket"] = os.path.join(d, "app.sock")
        box["simbox"] = self.spawn(box["name"] + "-simbox", box["ns"], [
            os.path.join(self.opt.bin, "tunerd-simbox"), "--socket", sock,
            "--app-socket", box["app_socket"], "--tuners", self.opt.tuners,
            "--env", RF_ENV, "--firmware", fw, "--no-card"])
        self.wait(lambda: os.path.exists(box["app_socket"]),
                  box["name"] + "'s simulated box", [box["simbox"]])
        config = os.path.join(d, "tunerd.json")
        with open(config, "w") as f:
            json.dump(self.box_config(box), f, indent=1)
        env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS="unix:path=" +
                   os.path.join(self.dir, "avahi-" + box["name"], "bus.sock"))
        box["tunerd"] = self.spawn(box["name"] + "-tunerd", box["ns"], [
            os.path.join(self.opt.bin, "tunerd"), "--stub", "sim:" + sock,
            "--plugin-dir", self.opt.plugins, "--firmware-dir",
            os.path.dirname(fw), "--state-dir", os.path.join(d, "state"),
            "--web-root", os.path.join(TOP, "web"),
            "--listen", "0.0.0.0:%d" % API_PORT, "--config", config], env)

    def wait_boxes(self):
        for b in self.boxes:
            url = "http://%s:%d/api/v1/box" % (b["addr"], API_PORT)
            self.wait(lambda: self.http_ok(url, self.viewer),
                      b["name"] + "'s API", [b["simbox"], b["tunerd"]])

    def accepting(self, host, port):
        try:
            socket.create_connection((host, port), 1).close()
            return True
        except OSError:
            return False

    def http_ok(self, url, token=None):
        req = urllib.request.Request(url)
        if token:
            req.add_header("Authorization", "Bearer " + token)
        try:
            with urllib.request.urlopen(req, timeout=2) as r:
                return r.status == 200
        except OSError:
            return False

    def start(self):
        missing = missing_tools() + [p for p in (MOSQUITTO, PROMETHEUS)
                                     if not os.path.exists(p)]
        if missing:
            raise FleetError("missing %s (scripts/deps.sh fleet)"
                             % ", ".join(missing))
        self.check_net_free()
        fw = os.path.join(self.dir, "fw", "xc3028-v27.fw")
        os.makedirs(os.path.dirname(fw))
        subprocess.run([os.path.join(self.opt.bin, "tunerd-mkfw-xc3028"), fw],
                       check=True, capture_output=True, timeout=30)
        self.make_lan()
        self.join(self.ops, self.net + ".2", "ops")
        for i, b in enumerate(self.boxes, 1):
            self.join(b["ns"], b["addr"], "b%02d" % i)
        self.start_avahis()
        self.start_broker()
        self.start_prometheus()
        for b in self.boxes:
            self.start_box(b, fw)
        self.wait_boxes()

    def describe(self):
        """fleet.json: what the fleet runs and where (tests read it)."""
        return {"net": self.net + ".0/24", "host_address": self.net + ".1",
                "lan_namespace": self.lan, "ops_namespace": self.ops,
                "ops_bus": self.avahis[0].bus,
                "broker": "%s.2:%d" % (self.net, BROKER_PORT),
                "prometheus": "http://%s.2:%d/" % (self.net, PROM_PORT),
                "tokens": {"viewer": self.viewer, "operator": self.operator},
                "boxes": [{"name": b["name"], "namespace": b["ns"],
                           "url": "http://%s:%d/" % (b["addr"], API_PORT)}
                          for b in self.boxes]}

    def summary(self):
        d = self.describe()
        rows = "".join("  %-8s %s\n" % (b["name"], b["url"])
                       for b in d["boxes"])
        tunerctl = os.path.join(self.opt.bin, "tunerctl")
        return (
            "tunerd fleet is up: %d boxes on %s (bridge br0 in namespace %s; "
            "this host is %s on %s)\n%s"
            "  tokens:     viewer %s  operator %s\n"
            "  Prometheus: %s\n"
            "  broker:     mqtt://%s   mosquitto_sub -h %s.2 -t 'tunerd/#' -v\n"
            "  discover:   ip netns exec %s env DBUS_SYSTEM_BUS_ADDRESS=unix:"
            "path=%s %s --discover --token %s ls\n"
            "  in a box:   ip netns exec %s-b01 sh\n"
            "  logs:       %s\n"
            % (len(self.boxes), d["net"], self.lan, d["host_address"],
               self.host_if, rows, self.viewer, self.operator,
               d["prometheus"], d["broker"], self.net, self.ops, d["ops_bus"],
               tunerctl, self.viewer, self.opt.tag, self.dir))

    def stop(self):
        """Daemons first (they withdraw their services and leave the broker
        cleanly), then the simulated boxes, the servers, the buses."""
        daemons = [r for r in self.procs if r[0].endswith("-tunerd")]
        for group in (daemons, [r for r in self.procs if r not in daemons]):
            for _, p, _ in group:
                if p.poll() is None:
                    p.terminate()
            for _, p, _ in group:
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait(10)
        for a in self.avahis:
            a.close()
        for ns in reversed(self.namespaces):
            ip("netns", "del", ns, check=False)


def parse_args(argv):
    run = os.environ.get("XDG_RUNTIME_DIR") or "/tmp"
    ap = argparse.ArgumentParser(
        prog="fleet.sh", description="Start a simulated fleet of tunerd "
        "boxes with a broker, Prometheus and DNS-SD on a private LAN.")
    ap.add_argument("--boxes", type=int, default=8, help="boxes (1..200)")
    ap.add_argument("--tuners", default="mt2060,qt1010,xc3028,mt2060",
                    help="each box's chips (the simulated box's --tuners)")
    ap.add_argument("--net", default="10.77.0",
                    help="the LAN's /24 as A.B.C (default 10.77.0)")
    ap.add_argument("--tag", default="tfleet",
                    help="namespace and interface prefix (default tfleet)")
    ap.add_argument("--run-dir", help="pid, logs and fleet.json (default "
                    "$XDG_RUNTIME_DIR or /tmp, then tunerd-fleet-TAG)")
    ap.add_argument("--timeout", type=int, default=120,
                    help="seconds the whole start may take")
    ap.add_argument("--scrape-interval", default="5s",
                    help="Prometheus' scrape interval (default 5s)")
    ap.add_argument("--detach", action="store_true",
                    help="return once up; scripts/fleet.sh --stop ends it")
    ap.add_argument("--stop", action="store_true",
                    help="stop the detached fleet of this tag")
    ap.add_argument("--keep", action="store_true",
                    help="keep the run directory (logs) at exit")
    ap.add_argument("--bin", default=os.environ.get(
        "TUNERD_BIN", os.path.join(TOP, "build", "bin")),
        help="built programs (default $TUNERD_BIN, else build/bin)")
    ap.add_argument("--plugins", default=os.environ.get(
        "TUNERD_PLUGINS", os.path.join(TOP, "build", "plugins")),
        help="chip plugins (default $TUNERD_PLUGINS, else build/plugins)")
    opt = ap.parse_args(argv)
    if not re.fullmatch(r"[a-z][a-z0-9]{0,9}", opt.tag):
        ap.error("--tag: 1..10 lower-case letters and digits")
    if not 1 <= opt.boxes <= 200:
        ap.error("--boxes: 1..200")
    if not re.fullmatch(r"(\d{1,3})\.(\d{1,3})\.(\d{1,3})", opt.net) or \
            max(int(x) for x in opt.net.split(".")) > 255:
        ap.error("--net: three octets, as 10.77.0")
    opt.run_dir = os.path.abspath(opt.run_dir or os.path.join(
        run, "tunerd-fleet-" + opt.tag))
    return opt


def pid_alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False


def running_pid(opt):
    try:
        with open(os.path.join(opt.run_dir, "fleet.pid")) as f:
            pid = int(f.read())
    except (OSError, ValueError):
        return None
    return pid if pid_alive(pid) else None


def stop_detached(opt):
    """SIGTERM to the fleet of this tag; it cleans up, we wait for it.
    Without one running, namespaces a killed fleet left are removed."""
    pid = running_pid(opt)
    if pid:
        os.kill(pid, signal.SIGTERM)
        try:
            wait_for(lambda: not pid_alive(pid), timeout=60, step=0.1,
                     what="the fleet (pid %d) to stop" % pid)
        except AssertionError as e:
            print("fleet.sh: %s" % e, file=sys.stderr)
            return 1
        print("fleet %s stopped" % opt.tag)
        return 0
    left = [n.split()[0] for n in ip("netns", "list").stdout.splitlines()
            if n.startswith(opt.tag + "-")]
    for ns in left:
        for pid in ip("netns", "pids", ns, check=False).stdout.split():
            os.kill(int(pid), signal.SIGKILL)
        ip("netns", "del", ns, check=False)
    shutil.rmtree(opt.run_dir, ignore_errors=True)
    print("no fleet %s running%s" % (opt.tag, "; removed " + ", ".join(left)
                                     if left else ""))
    return 0


def on_signal(signum, frame):
    raise Stop()


def serve(opt, ready):
    """Start the fleet, call ready(summary), run until a signal; clean up.
    Returns the exit status."""
    os.makedirs(opt.run_dir, exist_ok=True)
    pidfile = os.path.join(opt.run_dir, "fleet.pid")
    with open(pidfile, "w") as f:
        f.write("%d\n" % os.getpid())
    fleet, status, up = None, 0, False
    try:
        fleet = Fleet(opt)
        fleet.start()
        with open(os.path.join(opt.run_dir, "fleet.json"), "w") as f:
            json.dump(fleet.describe(), f, indent=1)
        up = True
        ready(fleet.summary())
        watch_until_signal(fleet)
    except Stop:
        pass
    except (FleetError, RuntimeError, OSError,
            subprocess.SubprocessError) as e:
        if up:
            print("fleet.sh: %s" % e, file=sys.stderr)
        else:
            ready(None, "fleet.sh: cannot start: %s%s" % (
                e, "" if opt.keep else "\n(--keep keeps the run directory)"))
        status = 1
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if fleet:
            fleet.stop()
        if opt.keep:
            os.unlink(pidfile)
        else:
            shutil.rmtree(opt.run_dir, ignore_errors=True)
    return status


def watch_until_signal(fleet):
    """Report a process of the fleet that exits; wait for the signal."""
    reported = set()
    while True:
        for name, p, log in fleet.procs:
            if p.poll() is not None and name not in reported:
                reported.add(name)
                print("fleet.sh: %s exited (status %s); %s:\n%s"
                      % (name, p.returncode, log, tail(log)), flush=True)
        # A check a second, not a synchronisation: the signal ends it.
        time.sleep(1.0)


def detach(opt):
    """Fork a session leader that runs the fleet; return once it is up
    (or failed), with its summary."""
    if running_pid(opt):
        print("fleet.sh: a fleet of tag %s runs (scripts/fleet.sh --stop)"
              % opt.tag, file=sys.stderr)
        return 1
    r, w = os.pipe()
    if os.fork():
        os.close(w)
        text = b""
        end = time.monotonic() + opt.timeout + 60
        while time.monotonic() < end:
            if select.select([r], [], [], end - time.monotonic())[0]:
                chunk = os.read(r, 65536)
                if not chunk:
                    break
                text += chunk
        ok = text.startswith(b"ok\n")
        out = sys.stdout if ok else sys.stderr
        out.write(text[3:].decode() or "fleet.sh: no answer from the fleet\n")
        return 0 if ok else 1
    os.close(r)
    os.setsid()
    os.makedirs(opt.run_dir, exist_ok=True)
    log = os.open(os.path.join(opt.run_dir, "fleet.log"),
                  os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(log, 1)
    os.dup2(log, 2)

    def ready(summary, error=None):
        os.write(w, (b"ok\n" + summary.encode()) if summary else
                 (b"no\n" + error.encode() + b"\n"))
        os.close(w)
    os._exit(serve(opt, ready))


def main(argv):
    opt = parse_args(argv)
    if os.geteuid() != 0:
        print("fleet.sh: needs root (network namespaces)", file=sys.stderr)
        return 1
    if opt.stop:
        return stop_detached(opt)
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    if opt.detach:
        return detach(opt)
    if running_pid(opt):
        print("fleet.sh: a fleet of tag %s runs (scripts/fleet.sh --stop)"
              % opt.tag, file=sys.stderr)
        return 1

    def ready(summary, error=None):
        if summary:
            print(summary + "Ctrl-C stops the fleet.", flush=True)
        else:
            print(error, file=sys.stderr)
    return serve(opt, ready)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
