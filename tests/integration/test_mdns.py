# SPDX-License-Identifier: MIT
"""DNS-SD: a daemon with "mdns" on advertises _tunerd._tcp with its TXT
records through a real avahi-daemon, on a private LAN (avahi_ns.py);
`tunerctl --discover ls` finds it and lists its tuners; a second box of
the same name is renamed, not lost; the service comes back after
avahi-daemon restarts."""
import json
import os
import unittest

from avahi_ns import AvahiLan, missing_tools
from harness import BIN, Box, BoxTest, Daemon, free_port, wait_for

NAME = "studio-3"
TOKEN = "mdns-test-viewer"


class Mdns(BoxTest):
    def setUp(self):
        missing = missing_tools()
        if missing or os.geteuid() != 0:
            self.skipTest("needs root and %s" % (", ".join(missing) or
                                                 "namespaces"))
        super().setUp()

    def start_daemon(self, wait=True):
        if not hasattr(self, "lan"):
            self.lan = AvahiLan(self.box.dir, "mdns")
            self.addCleanup(self.lan.close)
        port = free_port()
        config = os.path.join(self.box.dir, "tunerd-%d.json"
                              % len(self.daemons))
        with open(config, "w") as f:
            json.dump({"name": NAME, "mdns": {"enabled": True},
                       "tokens": [{"name": "v", "token": TOKEN,
                                   "role": "viewer"}]}, f)
        d = Daemon(self.box, name=str(len(self.daemons)),
                   extra=["--listen", "0.0.0.0:%d" % port,
                          "--config", config],
                   plugin_dirs=self.plugin_dirs, prefix=self.lan.prefix,
                   env=self.lan.env)
        d.port = port
        self.daemons.append(d)
        if wait:
            wait_for(self.box.all_bound, what="every tuner bound")
        return d

    def discover(self):
        r = self.lan.run([os.path.join(BIN, "tunerctl"), "--discover",
                          "--timeout", "5", "--token", TOKEN, "--json", "ls"])
        if r.returncode:
            self.last_error = r.stderr
            return []
        return json.loads(r.stdout)

    def boxes_seen(self, want):
        """Wait until discovery lists want {box: tuner count}."""
        seen = {}

        def match():
            seen.clear()
            for t in self.discover():
                seen[t["box"]] = seen.get(t["box"], 0) + 1
            return seen == want
        self.last_error = ""
        try:
            wait_for(match, timeout=30, what="discovery listing %s" % want)
        except AssertionError as e:
            raise AssertionError("%s; saw %s; %s"
                                 % (e, seen, self.last_error)) from None

    def test_discovered_with_its_tuners(self):
        self.boxes_seen({NAME: 4})
        rows = self.discover()
        self.assertEqual(sorted(t["id"] for t in rows), [1, 2, 3, 4])
        self.assertEqual({t["chip"]["plugin"] for t in rows},
                         {"mt2060", "qt1010", "xc3028"})

    def test_txt_records(self):
        def record():
            r = self.lan.run(["avahi-browse", "-r", "-t", "-p",
                              "_tunerd._tcp"])
            for line in r.stdout.splitlines():
                f = line.split(";")
                if f[0] == "=" and f[3] == NAME and "tuners=4" in line:
                    return f
            return None
        wait_for(record, timeout=30, what="the resolved service")
        f = record()
        self.assertEqual(f[7], self.lan.addr)
        self.assertEqual(int(f[8]), self.daemon.port)
        txt = f[9]
        for want in ('"txtvers=1"', '"name=%s"' % NAME, '"api=/api/v1"',
                     '"tuners=4"'):
            self.assertIn(want, txt)
        self.assertRegex(txt, r'"version=\d+\.\d+')

    def test_same_name_renamed(self):
        self.boxes_seen({NAME: 4})
        # a second box of the same name (a box serves one daemon)
        first = self.box
        self.box = Box(os.path.join(self.dir, "second"), tuners="qt1010")
        try:
            self.start_daemon()
            self.boxes_seen({NAME: 4, NAME + " #2": 1})
        finally:
            self.daemons.pop().stop()
            self.box.stop()
            self.box = first

    def test_back_after_avahi_restart(self):
        self.boxes_seen({NAME: 4})
        self.lan.stop_avahi()
        self.lan.start_avahi()
        self.boxes_seen({NAME: 4})
        self.assertIsNone(self.daemon.proc.poll(), "the daemon kept running")


class NoAvahi(BoxTest):
    """Without avahi-daemon, a daemon with mdns on still serves."""

    def test_daemon_serves_without_avahi(self):
        from harness import http_request
        port = free_port()
        config = os.path.join(self.box.dir, "mdns.json")
        with open(config, "w") as f:
            json.dump({"mdns": {"enabled": True}}, f)
        env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS="unix:path=" +
                   os.path.join(self.box.dir, "no-bus"))
        d = Daemon(self.box, name="noavahi", env=env,
                   extra=["--listen", "127.0.0.1:%d" % port,
                          "--config", config])
        self.daemons.append(d)

        def up():
            try:
                return http_request(port, "GET", "/api/v1/box",
                                    timeout=2).status == 200
            except OSError:
                return False
        wait_for(up, what="the API without Avahi")
        self.assertIn("mdns", d.logtext())


if __name__ == "__main__":
    unittest.main()
