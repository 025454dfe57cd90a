# SPDX-License-Identifier: MIT
"""A private LAN for DNS-SD tests: a network namespace with a dummy,
multicast-capable interface (a veth pair, netns.py), its own D-Bus system
bus and its own avahi-daemon, so the tests never touch the host's network
or Avahi (AvahiLan).  NsAvahi is the bus and avahi-daemon alone, for a
namespace made elsewhere (scripts/fleet.py).
Needs root (ip netns, mount) and Debian's dbus and avahi-daemon."""
import os
import shutil
import signal
import subprocess

from harness import wait_for
from netns import Netns

BUS_CONF = """<!DOCTYPE busconfig PUBLIC
 "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=%s</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
"""

AVAHI_CONF = """[server]
use-ipv4=yes
use-ipv6=no
allow-interfaces=%s
%senable-dbus=yes
ratelimit-interval-usec=0
[wide-area]
enable-wide-area=no
[publish]
publish-workstation=no
publish-hinfo=no
[reflector]
[rlimits]
"""


def missing_tools():
    """The programs a private LAN needs that are not installed."""
    need = ("ip", "unshare", "dbus-daemon", "avahi-daemon", "avahi-browse")
    return [p for p in need if not shutil.which(p) and
            not os.path.exists("/usr/sbin/" + p)]


class NsAvahi:
    """A D-Bus system bus and avahi-daemon for network namespace NS (which
    exists), answering on interface IFACE; their files in DIRPATH.  The
    fleet (scripts/fleet.py) runs one per namespace, the DNS-SD test one on
    its private LAN (AvahiLan)."""

    def __init__(self, dirpath, ns, iface, host_name=None, wait=True):
        self.dir, self.ns, self.iface = dirpath, ns, iface
        self.host_name = host_name
        os.makedirs(self.dir, exist_ok=True)
        self.bus = os.path.join(self.dir, "bus.sock")
        self.env = dict(os.environ,
                        DBUS_SYSTEM_BUS_ADDRESS="unix:path=" + self.bus)
        self.procs = {}
        self.avahi_log = None
        try:
            self._start_bus()
            self.start_avahi(wait)
        except BaseException:
            self.close()
            raise

    @property
    def prefix(self):
        """The command prefix that runs a program in this namespace."""
        return ["ip", "netns", "exec", self.ns]

    def _start_bus(self):
        conf = os.path.join(self.dir, "bus.conf")
        with open(conf, "w") as f:
            f.write(BUS_CONF % self.bus)
        self.procs["dbus"] = subprocess.Popen(
            self.prefix + ["dbus-daemon", "--config-file", conf, "--nofork"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for(lambda: os.path.exists(self.bus), what="the D-Bus socket")

    def start_avahi(self, wait=True):
        """(Re)start avahi-daemon; its pid file and socket go to a tmpfs of
        its own mount namespace, so it never meets the host's.  Without
        wait, wait_avahi() waits for it to answer."""
        conf = os.path.join(self.dir, "avahi.conf")
        with open(conf, "w") as f:
            # Namespaces share the host name: without one of its own, every
            # avahi-daemon on a shared LAN would fight for the same name.
            name = "host-name=%s\n" % self.host_name if self.host_name else ""
            f.write(AVAHI_CONF % (self.iface, name))
        self.avahi_log = open(os.path.join(self.dir, "avahi.log"), "a")
        script = ("mkdir -p /run/avahi-daemon && "
                  "mount -t tmpfs tmpfs /run/avahi-daemon && "
                  "exec avahi-daemon --no-drop-root --no-chroot "
                  "--no-rlimits -f " + conf)
        self.procs["avahi"] = subprocess.Popen(
            self.prefix + ["unshare", "-m", "sh", "-c", script],
            env=self.env, stdout=self.avahi_log, stderr=subprocess.STDOUT)
        if wait:
            self.wait_avahi()

    def wait_avahi(self, timeout=20):
        wait_for(self._avahi_running, timeout=timeout, what="avahi-daemon")

    def _avahi_running(self):
        if self.procs["avahi"].poll() is not None:
            raise AssertionError("avahi-daemon exited: see " +
                                 self.avahi_log.name)
        r = self.run(["avahi-browse", "-t", "-p", "-k", "_none._tcp"])
        return r.returncode == 0

    def stop_avahi(self):
        p = self.procs.pop("avahi", None)
        if p and p.poll() is None:
            p.send_signal(signal.SIGTERM)
            p.wait(10)
        if self.avahi_log:
            self.avahi_log.close()

    def run(self, args, timeout=30):
        """Run a program in this namespace, with its bus; a
        CompletedProcess."""
        return subprocess.run(self.prefix + list(args), env=self.env,
                              capture_output=True, text=True,
                              timeout=timeout)

    def close(self):
        self.stop_avahi()
        for p in self.procs.values():
            if p.poll() is None:
                p.kill()
                p.wait(10)


class AvahiLan(NsAvahi):
    """A namespace with a veth pair inside (netns.py), a bus and Avahi."""

    def __init__(self, workdir, tag):
        dirpath = os.path.join(workdir, "avahi-" + tag)
        os.makedirs(dirpath)
        self.netns = Netns("t" + tag[:5], host_link=False, net=231)
        self.addr = self.netns.addr
        super().__init__(dirpath, self.netns.name, self.netns.ns_if)

    def close(self):
        super().close()
        self.netns.close()
