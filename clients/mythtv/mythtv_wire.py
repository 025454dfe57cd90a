# SPDX-License-Identifier: MIT
"""The three wire formats of MythTV's External Recorder protocol.

The backend writes one command a line on our stdin and reads the replies
on our stderr.  Each line is answered in the format it came in, so a
backend that falls back from version 3 to 2 or 1 in the middle of the
handshake is understood whatever it sends next:

- v1: a bare command (`TuneChannel:5`); reply `OK:<msg>`, `WARN:...`,
  `ERR:...`.
- v2: `<serial>:<command>`; reply `<serial>:OK:<msg>`.
- v3: a JSON object `{"command":..., "serial":N[, "value":...]}`; reply
  `{"command":..., "serial":N, "status":"OK", "message":...}`.

The very first `APIVersion?` always comes bare and is answered `OK:3`
raw.  Out-of-band status lines (an error found while streaming) take the
format of the version the backend selected with `APIVersion:<n>`.
"""
import json
import re

API_VERSION = 3
MAX_LINE = 64 * 1024  # a command line longer than this is refused
_V2 = re.compile(r"^(\d{1,10}):(.*)$", re.S)


class Request:
    """One command line: its format (1, 2 or 3), serial, command name,
    value (the text after the first ':' in v1/v2, "value" in v3) and, in
    v3, every field of the object."""

    def __init__(self, version, command, value=None, serial=None,
                 fields=None):
        self.version, self.command, self.value = version, command, value
        self.serial, self.fields = serial, fields or {}

    def __repr__(self):
        return "<Request v%d %r %r>" % (self.version, self.command,
                                        self.value)


def parse(line):
    """The Request of a line (bytes or str, without its newline), or
    raises ValueError with a reason fit for an ERR reply."""
    if isinstance(line, bytes):
        line = line.decode("utf-8", "replace")
    line = line.strip()
    if not line:
        raise ValueError("empty command")
    if line.startswith("{"):
        try:
            obj = json.loads(line)
        except ValueError as e:
            raise ValueError("bad JSON: %s" % e) from None
        if not isinstance(obj, dict) or \
                not isinstance(obj.get("command"), str):
            raise ValueError("a JSON command needs a \"command\" string")
        value = obj.get("value")
        return Request(3, obj["command"].strip(),
                       None if value is None else str(value),
                       obj.get("serial"), obj)
    m = _V2.match(line)
    if m:
        command, value = _split_value(m.group(2))
        return Request(2, command, value, int(m.group(1)))
    command, value = _split_value(line)
    return Request(1, command, value)


def _split_value(text):
    """("TuneChannel", "5") from "TuneChannel:5"; a query ending in '?'
    keeps its '?' and has no value."""
    if ":" in text:
        command, value = text.split(":", 1)
        return command.strip(), value.strip()
    return text.strip(), None


def reply(request, status, message=""):
    """The reply line (str, no newline) to request.  status is "OK",
    "WARN" or "ERR" (upper case: the backend compares exactly)."""
    message = _one_line(message)
    if request.version == 3:
        return json.dumps({"command": request.command,
                           "serial": request.serial, "status": status,
                           "message": message}, separators=(",", ":"))
    text = status + (":" + message if message else "")
    if request.version == 2:
        return "%d:%s" % (request.serial, text)
    return text


def status_line(api_version, status, message):
    """An out-of-band line: status "ERR", "WARN" or "DAMAGE".  v3 has no
    serial, so the backend never takes it for the reply it waits for."""
    message = _one_line(message)
    if api_version >= 3:
        return json.dumps({"command": "STATUS", "status": status,
                           "message": message}, separators=(",", ":"))
    text = "STATUS:%s:%s" % (status, message)
    return "0:" + text if api_version == 2 else text


def _one_line(text):
    return " ".join(str(text).split())
