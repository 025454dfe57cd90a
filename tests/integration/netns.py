# SPDX-License-Identifier: MIT
"""Network namespaces for the tests that need a real link: DNS-SD
(multicast) and the HDHomeRun clients (broadcast discovery on the fixed
port 65001).  A veth pair either joins the namespace to the test's own
(host_link: the host end gets an address, so a daemon outside answers the
clients inside), or has both ends inside (a LAN of its own).  veth, not a
dummy interface: some kernels have no dummy driver, every kernel that
runs containers has veth.  Needs root; named after the test process, and
removed by close()."""
import os
import shutil
import subprocess


def ip(*args, check=True):
    return subprocess.run(["ip"] + list(args), capture_output=True,
                          text=True, check=check, timeout=30)


def can_netns():
    return os.geteuid() == 0 and shutil.which("ip") is not None


class Netns:
    """Namespace <tag><pid>.  host_link: veth <name>h (10.<net>.S.1/24)
    outside and <name>n (.2) inside; else <name>n (.1) and its peer both
    inside.  S comes from the process id."""

    def __init__(self, tag, host_link, net=87):
        pid = os.getpid()
        self.name = "%s%d" % (tag, pid)
        subnet = pid % 250 + 1
        self.host_if, self.ns_if = self.name + "h", self.name + "n"
        self.host_link = host_link
        self.host_ip = "10.%d.%d.1" % (net, subnet)
        self.client_ip = "10.%d.%d.2" % (net, subnet)
        self.addr = self.client_ip if host_link else self.host_ip
        self.close()
        ip("netns", "add", self.name)
        try:
            self._link()
        except subprocess.CalledProcessError as e:
            self.close()
            raise AssertionError("netns setup: %s" % e.stderr)

    def _link(self):
        ip("link", "add", self.host_if, "type", "veth", "peer", "name",
           self.ns_if)
        ip("link", "set", self.ns_if, "netns", self.name)
        if self.host_link:
            ip("addr", "add", self.host_ip + "/24", "dev", self.host_if)
            ip("link", "set", self.host_if, "up")
        else:
            ip("link", "set", self.host_if, "netns", self.name)
            self.run_ip("link", "set", self.host_if, "up")
        self.run_ip("addr", "add", self.addr + "/24", "dev", self.ns_if)
        self.run_ip("link", "set", self.ns_if, "multicast", "on")
        self.run_ip("link", "set", self.ns_if, "up")
        self.run_ip("link", "set", "lo", "up")

    @property
    def prefix(self):
        """The command prefix that runs a program in the namespace."""
        return ["ip", "netns", "exec", self.name]

    def run_ip(self, *args):
        return ip("netns", "exec", self.name, "ip", *args)

    def cmd(self, *args):
        return self.prefix + list(args)

    def run(self, *args, timeout=60, check=True, env=None):
        return subprocess.run(self.cmd(*args), capture_output=True,
                              text=True, timeout=timeout, check=check,
                              env=env)

    def close(self):
        ip("link", "del", self.host_if, check=False)
        ip("netns", "del", self.name, check=False)
