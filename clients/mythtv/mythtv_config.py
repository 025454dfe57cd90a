# SPDX-License-Identifier: MIT
"""The recorder's configuration file, JSON or INI (chosen by the first
character: '{' is JSON).

JSON:
    {"boxes": [{"url": "http://attic:8080", "token": "..."}],
     "holder": "mythtv", "priority": {"recording": 500, "livetv": 100},
     "lease_ttl_s": 15, "lock_timeout_ms": 10000, "tune_wait_ms": 2000,
     "flow_control": "xon" | "poll", "whole_multiplex": false,
     "log_file": "/var/log/mythtv/tunerd-recorder.log"}
(a box may have a "name" for messages; else its host:port)

INI: a [recorder] section with the same keys (priorities as
priority_recording and priority_livetv) and one [box NAME] section per
box with url and token.

Only "boxes" is required; a mistake stops the start with a message that
names the key.
"""
import configparser
import json

DEFAULTS = {"holder": "mythtv", "priority_recording": 500,
            "priority_livetv": 100, "lease_ttl_s": 15,
            "lock_timeout_ms": 10000, "tune_wait_ms": 2000,
            "flow_control": "xon", "whole_multiplex": False,
            "log_file": None}
_INTS = {"priority_recording": (0, 1000), "priority_livetv": (0, 1000),
         "lease_ttl_s": (3, 3600), "lock_timeout_ms": (1000, 600000),
         "tune_wait_ms": (0, 10000)}


class ConfigError(Exception):
    pass


class Config:
    """The settings, with boxes as [{"name", "url", "token"}]."""

    def __init__(self, settings, boxes):
        self.__dict__.update(settings)
        self.boxes = boxes


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read(1 << 20)
    except OSError as e:
        raise ConfigError("cannot read %s: %s" % (path, e.strerror)) from None
    if text.lstrip().startswith("{"):
        settings, boxes = _from_json(text)
    else:
        settings, boxes = _from_ini(text)
    return _checked(settings, boxes)


def _from_json(text):
    try:
        obj = json.loads(text)
    except ValueError as e:
        raise ConfigError("bad JSON: %s" % e) from None
    settings = {k: v for k, v in obj.items()
                if k not in ("boxes", "priority")}
    prio = obj.get("priority", {})
    if not isinstance(prio, dict):
        raise ConfigError("priority: an object with recording and livetv")
    for kind in ("recording", "livetv"):
        if kind in prio:
            settings["priority_" + kind] = prio[kind]
    boxes = obj.get("boxes")
    if not isinstance(boxes, list) or \
            not all(isinstance(b, dict) for b in boxes):
        raise ConfigError("boxes: a list of {\"url\", \"token\"} objects")
    return settings, boxes


def _from_ini(text):
    ini = configparser.ConfigParser(interpolation=None)
    try:
        ini.read_string(text)
    except configparser.Error as e:
        raise ConfigError("bad INI: %s" % e) from None
    settings = dict(ini["recorder"]) if ini.has_section("recorder") else {}
    boxes = []
    for section in ini.sections():
        if section.startswith("box"):
            box = dict(ini[section])
            box.setdefault("name", section[3:].strip() or None)
            boxes.append(box)
    return settings, boxes


def _checked(settings, boxes):
    unknown = set(settings) - set(DEFAULTS)
    if unknown:
        raise ConfigError("unknown key: %s" % sorted(unknown)[0])
    out = dict(DEFAULTS, **settings)
    for key, (low, high) in _INTS.items():
        try:
            out[key] = int(out[key])
        except (TypeError, ValueError):
            raise ConfigError("%s: a whole number" % key) from None
        if not low <= out[key] <= high:
            raise ConfigError("%s: %d..%d" % (key, low, high))
    if out["flow_control"] not in ("xon", "poll"):
        raise ConfigError("flow_control: \"xon\" or \"poll\"")
    if isinstance(out["whole_multiplex"], str):
        out["whole_multiplex"] = out["whole_multiplex"].lower() in (
            "1", "yes", "true", "on")
    holder = out["holder"]
    if not isinstance(holder, str) or not 0 < len(holder) <= 48:
        raise ConfigError("holder: a name of 1..48 characters")
    if not boxes:
        raise ConfigError("boxes: at least one box with a url")
    checked = []
    for i, box in enumerate(boxes):
        url = box.get("url")
        if not isinstance(url, str) or \
                not url.startswith(("http://", "https://")):
            raise ConfigError("box %d: url must be http(s)://HOST:PORT" % i)
        name = box.get("name") or url.split("://", 1)[1].rstrip("/")
        checked.append({"name": name, "url": url,
                        "token": box.get("token") or None})
    return Config(out, checked)
