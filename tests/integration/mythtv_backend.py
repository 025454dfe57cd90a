# SPDX-License-Identifier: MIT
"""The MythTV backend's side of the External Recorder protocol, played
line by line against a recorder process, as the backend's
ExternalStreamHandler does: the handshake with its fallbacks, a timeout
on every command (out-of-band STATUS lines skipped while waiting, and
kept), TuneStatus? polled until the tune is no longer in progress,
XON/XOFF or SendBytes flow control.  What the recorder writes on stdout
is captured to a file, with its PCR clock followed as it comes."""
import json
import os
import queue
import subprocess
import threading
import time

PACKET = 188


def packet_pcr(pkt):
    """The PCR of a packet in seconds, or None."""
    if not pkt[3] & 0x20 or pkt[4] < 7 or not pkt[5] & 0x10:
        return None
    base = (pkt[6] << 25) | (pkt[7] << 17) | (pkt[8] << 9) | \
        (pkt[9] << 1) | (pkt[10] >> 7)
    return base / 90000.0


class Capture:
    """stdout of the recorder into a file; counts bytes and the span of
    PCR time seen, and wakes waiters as data comes."""

    def __init__(self, pipe, path):
        self.pipe, self.path = pipe, path
        self.bytes = 0
        self.first_pcr = self.last_pcr = None
        self.eof = False
        self.cond = threading.Condition()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        rest = b""
        with open(self.path, "wb") as out:
            while True:
                chunk = os.read(self.pipe.fileno(), 1 << 16)
                if not chunk:
                    break
                out.write(chunk)
                data = rest + chunk
                whole = len(data) // PACKET * PACKET
                first = last = None
                for i in range(0, whole, PACKET):
                    pcr = packet_pcr(data[i:i + 11])
                    if pcr is not None:
                        first = pcr if first is None else first
                        last = pcr
                rest = data[whole:]
                with self.cond:
                    self.bytes += len(chunk)
                    if first is not None and self.first_pcr is None:
                        self.first_pcr = first
                    if last is not None:
                        self.last_pcr = last
                    self.cond.notify_all()
        with self.cond:
            self.eof = True
            self.cond.notify_all()

    def pcr_span(self):
        if self.first_pcr is None or self.last_pcr is None:
            return 0.0
        return self.last_pcr - self.first_pcr

    def wait(self, pred, timeout, what):
        end = time.monotonic() + timeout
        with self.cond:
            while not pred():
                left = end - time.monotonic()
                if left <= 0:
                    raise AssertionError("timed out waiting for " + what)
                self.cond.wait(left)


class Backend:
    """A recorder process driven as the backend drives it.  api_max is
    the newest API version this backend speaks (an older backend: 2)."""

    def __init__(self, argv, ts_path, env=None, api_max=3):
        self.api_max = api_max
        self.version = 1  # until the handshake chose one
        self.serial = 0
        self.statuses = []  # out-of-band lines, as read
        self.lines = []  # every line on stderr, as read
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=env)
        self.replies = queue.Queue()
        self.capture = Capture(self.proc.stdout, ts_path)
        self.stderr_thread = threading.Thread(target=self._stderr,
                                              daemon=True)
        self.stderr_thread.start()

    def _stderr(self):
        for raw in self.proc.stderr:
            self.replies.put(raw.decode("utf-8", "replace").rstrip("\n"))
        self.replies.put(None)

    # ---- one command ---------------------------------------------------
    def _send(self, text):
        self.proc.stdin.write(text.encode() + b"\n")
        self.proc.stdin.flush()

    def _next_line(self, end):
        left = end - time.monotonic()
        if left <= 0:
            return None
        try:
            line = self.replies.get(timeout=left)
        except queue.Empty:
            return None
        if line is not None:
            self.lines.append(line)
        return line

    def command(self, cmd, timeout=5.0, fields=None):
        """(ok, "STATUS:message") as the backend's ProcessCommand sees
        it; (False, "") when no reply came within timeout."""
        if self.version == 3:
            return self._json(cmd, timeout, fields or {})
        if self.version == 2:
            self.serial += 1
            self._send("%d:%s" % (self.serial, cmd))
        else:
            self._send(cmd)
        end = time.monotonic() + timeout
        while True:
            line = self._next_line(end)
            if line is None:
                return False, ""
            text = line
            if self.version == 2:
                serial, _, text = line.partition(":")
                if not serial.isdigit():
                    return False, line
                if not text.startswith("STATUS") and \
                        int(serial) >= self.serial:
                    return text.startswith("OK"), text
            if text.startswith("STATUS"):
                self.statuses.append(text)
                continue
            return text.startswith("OK"), text

    def _json(self, cmd, timeout, fields):
        name, _, value = cmd.partition(":")
        self.serial += 1
        msg = dict(fields, command=name, serial=self.serial)
        if value:
            msg["value"] = value
        self._send(json.dumps(msg, separators=(",", ":")))
        end = time.monotonic() + timeout
        while True:
            line = self._next_line(end)
            if line is None:
                return False, ""
            obj = json.loads(line)
            if "serial" not in obj:
                if obj.get("command") == "STATUS":
                    self.statuses.append("STATUS:%s:%s" % (
                        obj["status"], obj["message"]))
                continue
            if obj["serial"] >= self.serial:
                status = obj["status"]
                return status == "OK", "%s:%s" % (status, obj["message"])

    # ---- what the backend does with them -------------------------------
    def handshake(self, block_size=100 * PACKET):
        """APIVersion? (raw), then APIVersion:<n> in the chosen format,
        falling back to 2 then 1 as the backend does; the capability
        queries.  Returns the replies by command."""
        for attempt in (self.version, 2):
            self.version = attempt
            ok, result = self.command("APIVersion?", timeout=10)
            if ok:
                self.version = min(int(result.split(":")[1]), self.api_max)
                self.command("APIVersion:%d" % self.version)
                break
        else:
            self.version = 1
        caps = {}
        for cmd in ("Version?", "Description?", "HasTuner?",
                    "HasPictureAttributes?", "FlowControl?",
                    "BlockSize:%d" % block_size, "LockTimeout?"):
            if cmd == "Description?" and self.version < 2:
                continue
            caps[cmd.split(":")[0]] = self.command(cmd, timeout=10)
        self.poll_mode = caps["FlowControl?"][1].startswith("OK:Poll")
        return caps

    def tune(self, channum, recordid=0, timeout=30.0):
        """TuneChannel, then TuneStatus? until it is not InProgress: the
        last (ok, result) and the TuneChannel reply."""
        if self.version == 3:
            first = self.command("TuneChannel", fields={
                "channum": channum, "inputid": 1, "sourceid": 1,
                "recordid": recordid, "chanid": 1001, "freqid": "",
                "atsc_major": 0, "atsc_minor": 0, "mplexid": 0})
        else:
            first = self.command("TuneChannel:%s" % channum)
        end = time.monotonic() + timeout
        stop = threading.Event()
        while time.monotonic() < end:
            ok, result = self.command("TuneStatus?")
            if not (ok and result.startswith("OK:InProgress")):
                return (ok, result), first
            stop.wait(0.1)  # the backend's own polling period
        raise AssertionError("TuneStatus? still InProgress after %.0f s"
                             % timeout)

    def next_status(self, timeout):
        """The next out-of-band line, read while asking IsOpen? as the
        backend's periodic checks do."""
        end = time.monotonic() + timeout
        while not self.statuses:
            if time.monotonic() > end:
                raise AssertionError("no STATUS line within %.0f s"
                                     % timeout)
            line = self._next_line(min(end, time.monotonic() + 0.5))
            if line is None:
                continue
            if self.version == 3:
                obj = json.loads(line)
                if obj.get("command") == "STATUS":
                    self.statuses.append("STATUS:%s:%s" % (
                        obj["status"], obj["message"]))
            elif "STATUS" in line:
                self.statuses.append(line.split(":", 1)[1]
                                     if self.version == 2 else line)
        return self.statuses.pop(0)

    def close(self, timeout=15.0):
        """CloseRecorder, then the process must exit by itself."""
        ok, result = self.command("CloseRecorder", timeout=10)
        self.proc.stdin.close()
        code = self.proc.wait(timeout)
        self.capture.wait(lambda: self.capture.eof, 10, "stdout closed")
        self.stderr_thread.join(5)
        return ok, result, code

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                f.close()
            except OSError:
                pass
