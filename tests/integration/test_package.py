# SPDX-License-Identifier: MIT
"""The .deb, as an operator gets it: built by CPack in a tree of its own
(prefix /usr, no tests), checked by lintian (no errors), installed by
dpkg into an empty root (its postinst included, chrootless), and run
from there: every program's --version, the daemon with the example
configuration, its plugins and dashboard at their installed defaults;
and the systemd unit through systemd-analyze verify."""
import gzip
import os
import re
import shutil
import signal
import stat
import subprocess
import tempfile
import unittest

from harness import free_port, http_request, wait_for

SOURCE = os.environ.get("TUNERD_SOURCE_DIR", "../..")
PKG_BUILD = os.environ.get("TUNERD_PACKAGE_BUILD", "build/package-build")
PROGRAMS = ("tunerd", "tunerctl", "tunerd-simbox", "tunerd-simctl",
            "tunerd-mkfw-xc3028", "tunerd-mythtv-recorder")


def project_version():
    with open(os.path.join(SOURCE, "CMakeLists.txt")) as f:
        return re.search(r"project\(tunerd VERSION ([0-9.]+)",
                         f.read()).group(1)


def run(args, **kw):
    p = subprocess.run(args, capture_output=True, text=True, **kw)
    if p.returncode:
        raise AssertionError("%s: exit %d\n%s%s" % (
            " ".join(args), p.returncode, p.stdout[-3000:], p.stderr[-3000:]))
    return p


def debian_build_flags():
    """What Debian builds its packages with (dpkg-buildflags), with every
    hardening feature: fortify, stack protector, relro and bindnow."""
    env = dict(os.environ, DEB_BUILD_MAINT_OPTIONS="hardening=+all")
    return {name: run(["dpkg-buildflags", "--get", name], cwd=SOURCE,
                      env=env).stdout.strip()
            for name in ("CPPFLAGS", "CFLAGS", "LDFLAGS")}


def as_root(args):
    """dpkg wants root; fakeroot stands in for it elsewhere."""
    return args if os.geteuid() == 0 else ["fakeroot"] + args


class Package(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        for tool in ("dpkg-deb", "dpkg-shlibdeps", "dpkg-buildflags", "lintian",
                     "systemd-analyze", "cpack"):
            if not shutil.which(tool):
                raise unittest.SkipTest(tool + " missing (scripts/deps.sh "
                                        "test)")
        flags = debian_build_flags()
        run(["cmake", "-S", SOURCE, "-B", PKG_BUILD,
             "-DCMAKE_INSTALL_PREFIX=/usr", "-DTUNERD_TESTS=OFF",
             "-DTUNERD_WERROR=ON", "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
             "-DCMAKE_C_FLAGS=" + flags["CPPFLAGS"] + " " + flags["CFLAGS"],
             "-DCMAKE_EXE_LINKER_FLAGS=" + flags["LDFLAGS"],
             "-DCMAKE_MODULE_LINKER_FLAGS=" + flags["LDFLAGS"]])
        run(["cmake", "--build", PKG_BUILD, "-j2"])
        for old in os.listdir(PKG_BUILD):
            if old.endswith(".deb"):
                os.unlink(os.path.join(PKG_BUILD, old))
        run(["cpack", "-G", "DEB"], cwd=PKG_BUILD)
        debs = [f for f in os.listdir(PKG_BUILD) if f.endswith(".deb")]
        assert len(debs) == 1, debs
        cls.deb = os.path.join(PKG_BUILD, debs[0])
        cls.version = project_version()
        cls.root = tempfile.mkdtemp(prefix="tunerd-root-")
        cls.install()

    @classmethod
    def install(cls):
        """dpkg --root into an empty root: its own database, no
        dependencies there (the host's libraries run the programs), the
        postinst run outside a chroot with DPKG_ROOT set."""
        admin = os.path.join(cls.root, "var/lib/dpkg")
        for d in ("info", "updates", "triggers"):
            os.makedirs(os.path.join(admin, d))
        open(os.path.join(admin, "status"), "w").close()
        run(as_root(["dpkg", "--root=" + cls.root, "--force-depends",
                     "--force-script-chrootless", "--install", cls.deb]))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.root, ignore_errors=True)

    def path(self, rel):
        return os.path.join(self.root, rel.lstrip("/"))

    def test_lintian_has_no_errors_or_warnings(self):
        p = subprocess.run(["lintian", "--no-tag-display-limit", self.deb],
                           capture_output=True, text=True)
        tags = [line for line in p.stdout.splitlines()
                if re.match(r"^[EWIPX]: ", line)]
        print("lintian:", *tags, sep="\n  ")
        self.assertEqual([t for t in tags if t[:3] in ("E: ", "W: ")], [],
                         p.stdout + p.stderr)

    def test_dependencies_from_shlibdeps(self):
        depends = run(["dpkg-deb", "-f", self.deb, "Depends"]).stdout
        for lib in ("libc6", "libjansson4", "libmicrohttpd", "libuv1",
                    "libwslay1", "libssl3", "libsystemd0", "libcurl",
                    "libavahi-client3", "libmosquitto1", "libhdhomerun4",
                    "python3-requests"):
            self.assertIn(lib, depends)

    def test_every_program_says_its_version(self):
        for prog in PROGRAMS:
            p = run([self.path("/usr/bin/" + prog), "--version"])
            self.assertEqual(p.stdout, "%s %s\n" % (prog, self.version))

    def test_layout_and_postinst(self):
        for rel in ("/etc/tunerd/tunerd.json",
                    "/lib/systemd/system/tunerd.service",
                    "/lib/udev/rules.d/99-tuner-stub.rules",
                    "/usr/lib/sysusers.d/tunerd.conf",
                    "/usr/share/tunerd/web/index.html",
                    "/usr/src/tunerd-%s/dkms.conf" % self.version,
                    "/usr/src/tunerd-%s/protocol/tuner_stub.h" % self.version,
                    "/usr/share/doc/tunerd/copyright"):
            self.assertTrue(os.path.isfile(self.path(rel)), rel)
        for page in ("man8/tunerd.8", "man5/tunerd.json.5",
                     "man1/tunerctl.1", "man1/tunerd-simbox.1",
                     "man1/tunerd-mythtv-recorder.1"):
            with gzip.open(self.path("/usr/share/man/%s.gz" % page)) as f:
                self.assertIn(b".SH OPTIONS" if "json" not in page
                              else b".SH DESCRIPTION", f.read())
        with open(self.path("/usr/src/tunerd-%s/dkms.conf"
                            % self.version)) as f:
            dkms = f.read()
        self.assertIn('PACKAGE_NAME="tunerd"', dkms)
        self.assertIn('PACKAGE_VERSION="%s"' % self.version, dkms)
        # postinst: the system user, and the tokens' file for it only.
        with open(self.path("/etc/group")) as f:
            gid = [int(line.split(":")[2]) for line in f
                   if line.startswith("tunerd:")]
        self.assertEqual(len(gid), 1)
        st = os.stat(self.path("/etc/tunerd/tunerd.json"))
        self.assertEqual(stat.S_IMODE(st.st_mode), 0o640)
        if os.geteuid() == 0:  # under fakeroot the chgrp is pretended
            self.assertEqual(st.st_gid, gid[0])
        conffiles = run(["dpkg-query", "--admindir=" +
                         self.path("/var/lib/dpkg"), "-W",
                         "-f=${Conffiles}", "tunerd"]).stdout
        self.assertIn("/etc/tunerd/tunerd.json", conffiles)

    def test_daemon_defaults_are_the_installed_paths(self):
        """Plugins and dashboard where the package put them, compiled
        in: --help names them, and they are there in the root."""
        usage = run([self.path("/usr/bin/tunerd"), "--help"]).stdout
        plugins = re.search(r"default (\S+/tunerd/plugins)", usage).group(1)
        web = re.search(r"served from (\S+) when", usage).group(1)
        self.assertEqual(web, "/usr/share/tunerd/web")
        self.assertTrue(os.path.isfile(self.path(plugins + "/mt2060.so")))
        self.assertTrue(os.path.isfile(self.path(web + "/index.html")))

    def test_installed_daemon_runs_the_example_config(self):
        work = tempfile.mkdtemp(prefix="tunerd-pkg-")
        self.addCleanup(shutil.rmtree, work, True)
        plugins = run(["sh", "-c", "echo %s/usr/lib/*/tunerd/plugins"
                       % self.root]).stdout.strip()
        port = free_port()
        log = open(os.path.join(work, "tunerd.log"), "w")
        self.addCleanup(log.close)
        proc = subprocess.Popen(
            [self.path("/usr/bin/tunerd"),
             "--stub", "sim:" + os.path.join(work, "none.sock"),
             "--config", self.path("/etc/tunerd/tunerd.json"),
             "--plugin-dir", plugins,
             "--web-root", self.path("/usr/share/tunerd/web"),
             "--state-dir", os.path.join(work, "state"),
             "--listen", "127.0.0.1:%d" % port],
            stdout=log, stderr=log)
        self.addCleanup(lambda: proc.poll() is None and proc.kill())

        def box():
            try:
                return http_request(port, "GET", "/api/v1/box", timeout=2)
            except OSError:
                return None
        reply = wait_for(box, what="the installed daemon's API")
        self.assertEqual(reply.status, 200, reply)
        self.assertEqual(reply.json["version"], self.version)
        page = http_request(port, "GET", "/")
        self.assertEqual(page.status, 200)
        self.assertIn(b"<html", page.body.lower())
        proc.send_signal(signal.SIGTERM)
        self.assertEqual(proc.wait(20), 0)

    def test_unit_verifies(self):
        """systemd-analyze verify works offline on a unit file.  It
        checks that ExecStart's program exists on this machine, so the
        copy points into the root; its Documentation= man pages are
        looked up in the root's (MANPATH).  Warnings fail it too."""
        work = tempfile.mkdtemp(prefix="tunerd-unit-")
        self.addCleanup(shutil.rmtree, work, True)
        with open(self.path("/lib/systemd/system/tunerd.service")) as f:
            unit = f.read()
        self.assertIn("ExecStart=/usr/bin/tunerd ", unit)
        with open(os.path.join(work, "tunerd.service"), "w") as f:
            f.write(unit.replace("=/usr/bin/tunerd ",
                                 "=%s " % self.path("/usr/bin/tunerd")))
        p = subprocess.run(
            ["systemd-analyze", "verify",
             os.path.join(work, "tunerd.service")],
            capture_output=True, text=True,
            env=dict(os.environ, MANPATH=self.path("/usr/share/man"),
                     SYSTEMD_LOG_LEVEL="notice"))
        self.assertEqual((p.returncode, p.stdout + p.stderr), (0, ""))
        for key in ("Type=notify", "WatchdogSec=", "ExecReload=/bin/kill "
                    "-HUP $MAINPID", "StateDirectory=tunerd",
                    "RuntimeDirectory=tunerd", "ProtectSystem=strict",
                    "NoNewPrivileges=yes", "DeviceAllow=/dev/tuner rw"):
            self.assertIn(key, unit)


if __name__ == "__main__":
    unittest.main()
