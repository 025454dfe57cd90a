#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""tunerd-mythtv-recorder: a MythTV External Recorder on tunerd boxes.

    tunerd-mythtv-recorder --config /etc/mythtv/tunerd-recorder.conf \
        [--log FILE] [--quiet] [--inputid N]

The backend writes commands on stdin and reads the replies on stderr
(mythtv_wire.py has the formats); stdout carries the transport stream
and nothing else.  Diagnostics go to --log FILE (or the config's
log_file), else to syslog: never to stdout or stderr.
"""
import argparse
import logging
import logging.handlers
import os
import signal
import sys
import threading

import mythtv_config
import mythtv_wire
from mythtv_streamer import PACKET, Streamer
from mythtv_tuning import Tuning, channum

from tunerd import Box, errors

VERSION = "tunerd-mythtv-recorder 1.0"
log = logging.getLogger("tunerd-mythtv")


def dbm_percent(value):
    """A signal level in dBm as MythTV's 0..100: -90 dBm (no picture) is
    0, -30 dBm (a strong aerial) 100, linear between."""
    return max(0, min(100, round((value + 90.0) * 100.0 / 60.0)))


class Recorder:
    """One backend's recorder: the protocol state (API version, block
    size, channel cursor), the tuner (mythtv_tuning.Tuning) and the
    stream (mythtv_streamer.Streamer).  Commands come from the main
    thread; the lease and the stream report from their own threads, so
    lines on stderr go out under a lock."""

    def __init__(self, cfg, holder, reply_file, ts_fd):
        self.cfg = cfg
        self.boxes = [(b["name"], Box(b["url"], token=b["token"]))
                      for b in cfg.boxes]
        self.tuning = Tuning(cfg, self.boxes, holder, self._lease_lost)
        self.reply_file, self.ts_fd = reply_file, ts_fd
        self.reply_lock = threading.Lock()
        self.api_version = 1
        self.block_size = 1024 * PACKET
        self.streamer = None
        self.channels, self.next_channel = None, 0
        self.closed = False

    # ---- the lines on stderr ------------------------------------------
    def send(self, line):
        with self.reply_lock:
            self.reply_file.write(line + "\n")
            self.reply_file.flush()

    def out_of_band(self, status, message):
        log.warning("STATUS %s: %s", status, message)
        self.send(mythtv_wire.status_line(self.api_version, status, message))

    def _lease_lost(self, reason):
        """The tuner was taken away (pre-empted, expired): the stream
        stops at a packet boundary and the backend hears of it."""
        self._stop_stream()
        self.out_of_band("ERR", reason)

    def _stream_ended(self, reason):
        self._stop_stream()
        self.out_of_band("ERR", reason)

    def _damaged(self, reason):
        self.out_of_band("DAMAGE", reason)

    # ---- commands ------------------------------------------------------
    def handle(self, line):
        try:
            req = mythtv_wire.parse(line)
        except ValueError as e:
            log.warning("bad command %r: %s", line[:200], e)
            self.send("ERR:%s" % e)
            return
        if req.command == "APIVersion?":
            # the first line of the handshake, answered raw in v1
            self.send(mythtv_wire.reply(req, "OK",
                                        str(mythtv_wire.API_VERSION)))
            return
        handler = COMMANDS.get(req.command)
        if handler is None:
            status, message = "ERR", "Unknown command: %s" % req.command
        else:
            try:
                status, message = handler(self, req)
            except errors.TunerdError as e:
                status, message = "ERR", "%s: %s" % (e.code, e.message)
        log.info("%s %s -> %s:%s", req.command, req.value or "", status,
                 message)
        self.send(mythtv_wire.reply(req, status, message))

    def api_version_cmd(self, req):
        try:
            version = int(req.value)
        except (TypeError, ValueError):
            return "ERR", "APIVersion needs a number"
        if not 1 <= version <= mythtv_wire.API_VERSION:
            return "ERR", "API versions 1 to %d" % mythtv_wire.API_VERSION
        self.api_version = version
        return "OK", str(version)

    def block_size_cmd(self, req):
        try:
            size = int(req.value)
        except (TypeError, ValueError):
            return "ERR", "BlockSize needs a number of bytes"
        self.block_size = max(PACKET, min(size, 16 * 1024 * 1024))
        if self.streamer:
            self.streamer.block_size = self.block_size
        return "OK", ""

    def tune_channel(self, req):
        wanted = req.fields.get("channum") or req.value
        if wanted is None or not str(wanted).strip():
            return "ERR", "TuneChannel needs a channel number or name"
        # v3 names the recording; live TV and v1/v2 tunes have none, and
        # an unknown kind is treated as a recording (never lost cheaply)
        recid = req.fields.get("recordid")
        recording = req.version < 3 or bool(recid)
        self._stop_stream()
        if not self.tuning.start(str(wanted), recording):
            return "ERR", "a tune is already in progress"
        return "OK", "InProgress"

    def tune_status(self, req):
        state, reason = self.tuning.state, self.tuning.reason
        if state == "tuning":
            return "OK", "InProgress"
        if state == "tuned":
            return "OK", "Tuned"
        if state == "idle":
            return "WARN", "No tune requested"
        return "ERR", reason

    def has_lock(self, req):
        st = self.tuning.status()
        locked = bool(st and (st.get("fe_status") or {}).get("lock"))
        return "OK", "Yes" if locked else "No"

    def signal_strength(self, req):
        st = self.tuning.status()
        strength = (st or {}).get("signal_strength")
        if not strength:
            return "OK", "0"
        if strength.get("unit") == "%":
            return "OK", str(max(0, min(100, round(strength["value"]))))
        return "OK", str(dbm_percent(strength["value"]))

    def start_streaming(self, req):
        if self.streamer:
            return "OK", "Already streaming"
        t = self.tuning
        if t.state != "tuned":
            return "ERR", "not tuned (%s)" % (t.reason or t.state)
        service = None if self.cfg.whole_multiplex else \
            t.channel.get("service_id")
        source = t.tuner.stream(service=service, lease=t.lease)
        self.streamer = Streamer(source, self.ts_fd,
                                 self.cfg.flow_control == "poll",
                                 self.block_size, self._stream_ended,
                                 self._damaged)
        self.streamer.start()
        return "OK", "Streaming"

    def _stop_stream(self):
        streamer, self.streamer = self.streamer, None
        if streamer:
            n = streamer.stop()
            log.info("stream stopped after %d bytes", n)

    def stop_streaming(self, req):
        self._stop_stream()
        return "OK", "Stopped"

    def flow(self, req):
        if self.streamer:
            self.streamer.set_xon(req.command == "XON")
        return "OK", ""

    def send_bytes(self, req):
        if not self.streamer:
            return "WARN", "Not streaming"
        try:
            return "OK", str(self.streamer.send_bytes())
        except OSError as e:  # the backend closed our stdout
            return "ERR", "stdout: %s" % e.strerror

    def load_channels(self, req):
        merged, seen = [], set()
        for _, box in self.boxes:
            for ch in box.channels():
                if channum(ch) not in seen:
                    seen.add(channum(ch))
                    merged.append(ch)
        self.channels, self.next_channel = merged, 0
        return "OK", str(len(merged))

    def channel_entry(self, req):
        if self.channels is None or req.command == "FirstChannel":
            if self.channels is None:
                self.load_channels(req)
            self.next_channel = 0
        if self.next_channel >= len(self.channels):
            return "OK", "DONE"
        ch = self.channels[self.next_channel]
        self.next_channel += 1
        # the backend splits the answer at commas
        name = ch["name"].replace(",", " ")
        return "OK", "%s,%s,%s," % (channum(ch).replace(",", " "), name, name)

    def close_recorder(self, req):
        self._stop_stream()
        self.tuning.wait(self.cfg.tune_wait_ms / 1000.0 + 15)
        self.tuning.release()
        self.closed = True
        return "OK", "Terminating"


def _const(status, message):
    return lambda rec, req: (status, message)


COMMANDS = {
    "APIVersion": Recorder.api_version_cmd,
    "Version?": _const("OK", VERSION),
    "Description?": lambda rec, req: ("OK", rec.tuning.describe()),
    "HasTuner?": _const("OK", "Yes"),
    "HasPictureAttributes?": _const("OK", "No"),
    "FlowControl?": lambda rec, req: (
        "OK", "Poll" if rec.cfg.flow_control == "poll" else "XON/XOFF"),
    "BlockSize": Recorder.block_size_cmd,
    "LockTimeout?": lambda rec, req: ("OK", str(rec.cfg.lock_timeout_ms)),
    "TuneChannel": Recorder.tune_channel,
    "TuneStatus?": Recorder.tune_status,
    "HasLock?": Recorder.has_lock,
    "SignalStrengthPercent?": Recorder.signal_strength,
    "IsOpen?": _const("OK", "Open"),
    "StartStreaming": Recorder.start_streaming,
    "StopStreaming": Recorder.stop_streaming,
    "XON": Recorder.flow,
    "XOFF": Recorder.flow,
    "SendBytes": Recorder.send_bytes,
    "LoadChannels": Recorder.load_channels,
    "FirstChannel": Recorder.channel_entry,
    "NextChannel": Recorder.channel_entry,
    "CloseRecorder": Recorder.close_recorder,
}


def setup_logging(path):
    root = logging.getLogger()
    root.setLevel(logging.INFO)
    if path:
        handler = logging.FileHandler(path)
        handler.setFormatter(logging.Formatter(
            "%(asctime)s %(process)d %(levelname)s %(message)s"))
    elif os.path.exists("/dev/log"):
        handler = logging.handlers.SysLogHandler(address="/dev/log")
        handler.setFormatter(logging.Formatter(
            "tunerd-mythtv-recorder[%(process)d]: %(message)s"))
    else:
        handler = logging.NullHandler()  # never stdout or stderr
    root.addHandler(handler)


def claim_stdio():
    """(reply file, TS fd): private copies of stderr and stdout, with fds
    2 and 1 pointed at /dev/null, so that nothing else (a traceback, a
    library's message, a stray print) ever lands in the protocol or in
    the stream."""
    replies = os.fdopen(os.dup(2), "w", encoding="utf-8", buffering=1)
    ts_fd = os.dup(1)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    os.close(null)
    logging.captureWarnings(True)
    threading.excepthook = lambda a: log.error(
        "thread %s: %r", a.thread.name if a.thread else "?", a.exc_value,
        exc_info=(a.exc_type, a.exc_value, a.exc_traceback))
    return replies, ts_fd


def parse_args(argv):
    p = argparse.ArgumentParser(prog="tunerd-mythtv-recorder")
    p.add_argument("--config", required=True, help="JSON or INI file")
    p.add_argument("--log", help="diagnostics to this file, not syslog")
    p.add_argument("--quiet", action="store_true",
                   help="(added by the backend; accepted)")
    p.add_argument("--inputid", type=int,
                   help="the backend's input: part of the lease holder")
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    try:
        cfg = mythtv_config.load(args.config)
    except mythtv_config.ConfigError as e:
        # before the handshake the backend only logs what it reads here
        sys.stderr.write("ERR:config %s: %s\n" % (args.config, e))
        return 2
    setup_logging(args.log or cfg.log_file)
    holder = cfg.holder
    if args.inputid is not None:
        holder = "%s-input%d" % (holder, args.inputid)
    replies, ts_fd = claim_stdio()
    rec = Recorder(cfg, holder, replies, ts_fd)
    log.info("started as %s, %d boxes", holder, len(cfg.boxes))
    # SIGTERM (the backend's kill when CloseRecorder fails) still
    # releases the lease rather than leaving it to expire
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))
    code = 0
    try:
        serve(rec, sys.stdin.buffer)
    except Exception:  # stderr is the backend's: the log says why
        log.exception("recorder failed")
        code = 1
    finally:
        rec.close_recorder(None)
        log.info("exit %d", code)
    return code


def serve(rec, stdin):
    """Answers the backend's commands until CloseRecorder or EOF."""
    while not rec.closed:
        line = stdin.readline(mythtv_wire.MAX_LINE)
        if not line:
            log.info("stdin closed: the backend has gone")
            return
        rec.handle(line.decode("utf-8", "replace").rstrip("\r\n"))


if __name__ == "__main__":
    sys.exit(main())
