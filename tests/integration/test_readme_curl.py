# SPDX-License-Identifier: MIT
"""The top README's curl recipes (the "Network API" sections up to
"Many boxes") run as written against a live box: the config file of
"Tokens and roles", its tokens, `http://box:8080` pointed at the test
daemon.  Each request must answer 2xx; endless ones (streams, events) are
cut after a second once their 200 came.  The lease id the take answers
is the `L` of the lines after it.  Only the test's own steps are added:
a whole-band scan is cancelled at once (it would take a minute), and the
next recipe waits for the given-frequencies scan to end (its events)."""
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from events_util import EventsFromNow
from harness import ApiBoxTest
from test_stream_ts import ENV_FILE

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
FIRST, LAST = "## Network API (REST)", "### Many boxes: tunerctl"


def readme_blocks():
    """The indented code blocks of the README's API sections, each a list
    of commands (continuation lines joined)."""
    with open(os.path.join(ROOT, "README.md")) as f:
        text = f.read()
    text = text[text.index(FIRST):text.index(LAST)]
    blocks, cur = [], []
    for line in text.splitlines():
        if line.startswith("    "):
            cur.append(line[4:])
        elif line.strip() == "" and cur:
            cur.append("")
        elif cur:
            blocks.append(cur)
            cur = []
    if cur:
        blocks.append(cur)
    out = []
    for b in blocks:
        cmds, acc = [], ""
        for line in b:
            acc += line.rstrip()
            if acc.endswith("\\"):
                acc = acc[:-1] + " "
                continue
            if acc.strip():
                cmds.append(acc.strip())
            acc = ""
        out.append(cmds)
    return out


def readme_config():
    for cmds in readme_blocks():
        if cmds and cmds[0] == "{":
            return json.loads("\n".join(cmds))
    raise AssertionError("no config file in the README")


def recipes():
    """(variable assignments, curl commands) in README order."""
    out = []
    for cmds in readme_blocks():
        for c in cmds:
            if c.startswith("curl ") or re.match(r"^[THL]=", c):
                out.append(c)
    return out


class ReadmeCurl(ApiBoxTest):
    with open(ENV_FILE) as f:
        env_text = f.read()
    box_extra = ("--no-card",)
    config = readme_config()

    def setUp(self):
        super().setUp()
        self.cwd = tempfile.mkdtemp(prefix="tunerd-curl-")
        self.addCleanup(shutil.rmtree, self.cwd, True)
        if not shutil.which("curl"):
            self.skipTest("curl is not installed (scripts/deps.sh test)")

    def run_curl(self, cmd, shell_vars):
        url = "http://127.0.0.1:%d" % self.port
        cmd = cmd.replace("http://box:8080", url)
        endless = " -N " in cmd or "/stream" in cmd
        opts = "-sS -w '\\n%{http_code}' " + ("--max-time 1 " if endless
                                               else "")
        if " -o " not in cmd and endless:
            opts += "-o /dev/null "
        cmd = "curl " + opts + cmd[len("curl "):]
        p = subprocess.run(["bash", "-c", cmd], capture_output=True,
                           env=dict(os.environ, **shell_vars), cwd=self.cwd,
                           timeout=60)
        body, _, code = p.stdout.rpartition(b"\n")
        self.assertIn(p.returncode, (0, 28) if endless else (0,),
                      (cmd, p.stderr))
        self.assertTrue(code.isdigit() and 200 <= int(code) < 300,
                        (cmd, code, body[:500]))
        return body

    def test_recipes(self):
        shell_vars = {}
        ran = []
        scan_events = None
        for c in recipes():
            m = re.match(r"^([THL])=(.*)$", c)
            if m:
                if m.group(1) == "L":
                    continue  # the id the take answered, kept below
                value = m.group(2).strip('"')
                shell_vars[m.group(1)] = value.replace(
                    "$T", shell_vars.get("T", ""))
                continue
            if scan_events and "/scan" not in c:
                scan_events.wait("scan.done", timeout=60)
                scan_events = None
            if '"frequencies"' in c and "/scan" in c:
                scan_events = EventsFromNow(self, "types=scan.done",
                                            token=shell_vars["T"])
            body = self.run_curl(c, shell_vars)
            ran.append(c)
            if '"holder"' in c and "/lease" in c:
                shell_vars["L"] = json.loads(body)["lease_id"]
            if '"band"' in c and "/scan" in c:
                r = self.api("DELETE", "/api/v1/tuners/1/scan",
                             token=shell_vars["T"])
                self.assertEqual(r.status, 200, r)
        # every section's recipes ran
        self.assertGreaterEqual(len(ran), 25)
        for what in ("/lease", "/stream", "/scan", "/channels", "/events",
                     "/plugins", "format=dvbv5", '"channel"'):
            self.assertTrue(any(what in c for c in ran), what)
        self.assertTrue(os.path.getsize(os.path.join(self.cwd, "mux.ts")))
        with open(os.path.join(self.cwd, "channels.conf")) as f:
            self.assertIn("[BBC ONE Lon]", f.read())


if __name__ == "__main__":
    unittest.main()
