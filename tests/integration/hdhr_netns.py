# SPDX-License-Identifier: MIT
"""A network namespace joined to the test's own by a veth pair, for the
HDHomeRun clients: libhdhomerun discovers by broadcast and always uses
port 65001, so the daemon answers on the host side of the pair and the
clients run inside the namespace (`ip netns exec`).  Needs root; each
namespace is named after the test process, and removed at the end."""
import json
import os
import unittest

import netns
from harness import ApiBoxTest
from netns import can_netns

HDHR_PORT = 65001
# Two multiplexes with their services (from kmod/sim/env's London file):
# few carriers keep the scan short.
HDHR_ENV = """\
DVBT    490000000  8000000  -52.5  28.5  "PSB1 BBC A (C23)"
  MUX      tsid=4164 onid=9018 nid=12293 modulation=QAM64 fec=2/3 guard=1/32 fft=8k network=London
  SERVICE  4164  1    tv      256  1024  1025  "BBC ONE Lon"
  SERVICE  4287  2    tv      257  1040  1041  "BBC TWO"
DVBT    514000000  8000000  -54.0  27.0  "PSB2 D3&4 (C26)"
  MUX      tsid=8199 onid=9018 nid=12293 modulation=QAM64 fec=2/3 guard=1/32 fft=8k network=London
  SERVICE  8261  3    tv      256  1024  1025  "ITV1"
  SERVICE  8384  4    tv      257  1040  1041  "Channel 4"
"""


class Netns(netns.Netns):
    """The clients' namespace, joined to the test's by a veth pair."""

    def __init__(self):
        super().__init__("thd", host_link=True)


@unittest.skipUnless(can_netns(), "needs root and iproute2 (ip netns)")
class HdhrTest(ApiBoxTest):
    """A box, a daemon with the HDHomeRun face on the host end of a veth
    pair, and a namespace for the clients."""

    env_text = HDHR_ENV
    lockkey_ttl_s = 30
    target_timeout_s = 30

    def setUp(self):
        self.ns = Netns()
        self.addCleanup(self.ns.close)
        self.config = {"hdhomerun": {
            "enabled": True, "allow": ["10.87.0.0/16", "127.0.0.0/8"],
            "discovery": [self.ns.host_if],
            "lockkey_ttl_s": self.lockkey_ttl_s,
            "target_timeout_s": self.target_timeout_s}}
        super().setUp()

    def config_cmd(self, *args, timeout=60, check=True):
        """hdhomerun_config inside the namespace, against the box."""
        return self.ns.run("hdhomerun_config", self.ns.host_ip, *args,
                           timeout=timeout, check=check)

    def device_id(self):
        with open(os.path.join(self.box.dir, "state",
                               "hdhomerun.json")) as f:
            return json.load(f)["device_id"]
