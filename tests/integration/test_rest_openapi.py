# SPDX-License-Identifier: MIT
"""The answers of the REST API and the events match protocol/openapi.yaml.

Needs PyYAML and jsonschema (Debian: python3-yaml, python3-jsonschema;
scripts/deps.sh test installs them).  Without them the tests are skipped,
which fails the run under CI=true (it_runner.py).

OpenAPI 3.0 schemas are JSON Schema draft 4 with a few changes; the
conversion below covers those the spec uses: `nullable`, and $refs into
components, which are inlined so that any jsonschema version validates
the result without a resolver."""
import copy
import os
import re
import sys
import unittest

from events_util import EventsFromNow, ws_connect, ws_next
from harness import ApiBoxTest

try:
    import jsonschema
    import yaml
except ImportError:
    # An interpreter outside Debian's (pyenv, venv) does not see the
    # packages apt installed.
    sys.path.append("/usr/lib/python3/dist-packages")
    try:
        import jsonschema
        import yaml
    except ImportError:
        jsonschema = yaml = None

SPEC = os.path.join(os.path.dirname(__file__), "..", "..", "protocol",
                    "openapi.yaml")
DVBT_474 = {"delivery_system": "DVBT", "frequency": 474000000,
            "bandwidth": 8000000}
# Keywords OpenAPI adds that JSON Schema does not know (annotations only).
OAS_ONLY = ("example", "discriminator", "xml", "externalDocs", "deprecated",
            "readOnly", "writeOnly")


def pointer(spec, ref):
    """The object a local $ref ("#/a/b") names; KeyError if none."""
    if not ref.startswith("#/"):
        raise KeyError("not a local $ref: " + ref)
    node = spec
    for part in ref[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def to_json_schema(spec, node, depth=0):
    """node (an OpenAPI 3.0 schema) as a JSON Schema draft 4 schema."""
    if depth > 32:
        raise ValueError("the schema's $refs nest too deep (a cycle?)")
    if isinstance(node, list):
        return [to_json_schema(spec, x, depth) for x in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        return to_json_schema(spec, pointer(spec, node["$ref"]), depth + 1)
    out = {}
    for key, value in node.items():
        if key in OAS_ONLY or key == "nullable":
            continue
        if key in ("properties", "patternProperties", "definitions"):
            out[key] = {k: to_json_schema(spec, v, depth)
                        for k, v in value.items()}
        else:
            out[key] = to_json_schema(spec, value, depth)
    if node.get("nullable") is True:
        if "type" in out:
            types = out["type"] if isinstance(out["type"], list) \
                else [out["type"]]
            out["type"] = types + ["null"]
        if "enum" in out and None not in out["enum"]:
            out["enum"] = out["enum"] + [None]
    return out


def all_refs(node):
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            yield node["$ref"]
        for v in node.values():
            yield from all_refs(v)
    elif isinstance(node, list):
        for v in node:
            yield from all_refs(v)


def path_template(spec, path):
    """The spec's path template that a concrete path matches."""
    path = path.split("?")[0]
    for template in spec["paths"]:
        rx = "^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+",
                          re.escape(template)) + "$"
        if template != "/{file}" and re.match(rx, path):
            return template
    return None


@unittest.skipIf(yaml is None, "PyYAML or jsonschema missing "
                 "(scripts/deps.sh test installs them)")
class MatchesTheSpec(ApiBoxTest):
    @classmethod
    def setUpClass(cls):
        with open(SPEC) as f:
            cls.spec = yaml.safe_load(f)

    def validate(self, obj, schema, what):
        converted = to_json_schema(self.spec, schema)
        errors = sorted(jsonschema.Draft4Validator(converted)
                        .iter_errors(obj), key=lambda e: list(e.path))
        if errors:
            self.fail("%s does not match the spec: %s at %s\n%r" %
                      (what, errors[0].message, list(errors[0].path), obj))

    def check(self, obj, name):
        """obj is a components/schemas/<name>."""
        self.validate(obj, {"$ref": "#/components/schemas/" + name}, name)

    def call(self, method, path, body=None, **kw):
        """A request whose answer must be what the spec says this path,
        method and status answer: the status is listed, and a JSON body
        matches its schema."""
        r = self.api(method, path, body, **kw)
        template = path_template(self.spec, path)
        what = "%s %s -> %d" % (method, path, r.status)
        if template is None:
            self.assertEqual(r.status, 404, what)
            self.check(r.json, "Error")
            return r
        op = self.spec["paths"][template].get(method.lower())
        if op is None:
            self.assertEqual(r.status, 405, what)
            self.check(r.json, "Error")
            return r
        answer = op["responses"].get(str(r.status))
        self.assertIsNotNone(answer, what + ": status not in the spec")
        if "$ref" in answer:
            answer = pointer(self.spec, answer["$ref"])
        if "content" not in answer:
            self.assertEqual(r.body, b"", what + ": the spec has no body")
            return r
        schema = answer["content"].get("application/json", {}) \
            .get("schema")
        self.assertIsNotNone(schema, what + ": no JSON answer in the spec")
        self.assertIsNotNone(r.json, what + ": the body is not JSON")
        self.validate(r.json, schema, what)
        return r

    def test_the_spec_is_consistent(self):
        """Every $ref resolves and every schema is a valid JSON Schema
        once converted."""
        for ref in set(all_refs(self.spec)):
            with self.subTest(ref=ref):
                pointer(self.spec, ref)
        for name, schema in self.spec["components"]["schemas"].items():
            with self.subTest(schema=name):
                jsonschema.Draft4Validator.check_schema(
                    to_json_schema(self.spec, schema))

    def test_the_check_can_fail(self):
        """The converted schemas reject what the spec rejects: a missing
        required field, a wrong type, null where null is not allowed."""
        good = self.call("GET", "/api/v1/tuners/1").json
        bad = [dict(good, id="1"), dict(good, state=None)]
        del_id = copy.deepcopy(good)
        del del_id["id"]
        bad.append(del_id)
        for obj in bad:
            with self.assertRaises(AssertionError):
                self.check(obj, "Tuner")
        with self.assertRaises(AssertionError):
            self.check({"error": {"code": 3}}, "Error")

    def test_answers(self):
        self.call("GET", "/api/v1/box")
        self.call("GET", "/api/v1/tuners")
        r = self.call("POST", "/api/v1/tuners/1/tune",
                      dict(DVBT_474, wait_lock_ms=500))
        self.assertEqual(r.status, 200, r)
        self.call("GET", "/api/v1/tuners/1")
        self.assertEqual(self.call("GET", "/api/v1/tuners/1/status").status,
                         200)
        self.call("GET", "/api/v1/tuners/1/status?max_age_ms=2000")
        self.assertEqual(self.call("POST", "/api/v1/tuners/1/sleep").status,
                         200)
        self.call("POST", "/api/v1/tuners/1/init")
        lease = self.call("POST", "/api/v1/tuners/2/lease", {"holder": "x"})
        self.assertEqual(lease.status, 201, lease)
        self.call("GET", "/api/v1/tuners/2")
        self.call("GET", "/api/v1/plugins")
        self.assertOk(self.box.tune(3, "DVBT", 490000000, 8000000))
        self.call("GET", "/api/v1/tuners/3")
        errors = [
            self.call("GET", "/api/v1/x"),
            self.call("GET", "/api/v1/tuners/99"),
            self.call("POST", "/api/v1/tuners/2/tune",
                      {"delivery_system": "DVBT", "frequency": 1}),
            self.call("POST", "/api/v1/tuners/2/tune", "{not json"),
            self.call("POST", "/api/v1/tuners/2/lease", {"holder": "y"}),
            self.call("DELETE", "/api/v1/box"),
        ]
        for r in errors:
            self.assertGreaterEqual(r.status, 400, r)
        self.call("DELETE", "/api/v1/tuners/2/lease",
                  headers={"X-Tunerd-Lease": lease.json["lease_id"]})

    def test_history_answers(self):
        """The history after a tune: points with every field (null ones
        too), lock and tune marks; its errors."""
        from harness import wait_for
        r = self.call("POST", "/api/v1/tuners/1/tune", DVBT_474)
        self.assertEqual(r.status, 200, r)

        def marked():
            a = self.call("GET", "/api/v1/tuners/1/history?step=1000").json
            return a if a["points"] and len(a["marks"]) >= 2 else None
        a = wait_for(marked, timeout=30, step=0.2, what="points and marks")
        self.assertEqual({m["type"] for m in a["marks"]},
                         {"tuner.tune", "tuner.lock"})
        self.call("GET", "/api/v1/tuners/1/history?step=60000&fields=cnr")
        for q in ("?fields=x", "?step=1", "?from=x"):
            r = self.call("GET", "/api/v1/tuners/1/history" + q)
            self.assertEqual(r.status, 400, r)
        self.assertEqual(
            self.call("GET", "/api/v1/tuners/99/history").status, 404)

    def test_channel_answers(self):
        """Scans, the channel list (JSON), tunes by channel and their
        errors."""
        ev = EventsFromNow(self, "types=scan.done")
        r = self.call("POST", "/api/v1/tuners/1/scan",
                      {"frequencies": [474000000, 482000000]})
        self.assertEqual(r.status, 202, r)
        ev.wait("scan.done", scan=r.json["scan"]["id"])
        self.assertEqual(self.call("GET", "/api/v1/tuners/1/scan").status,
                         200)
        channel = {"name": "Test One", "lcn": 1, "service_id": 1,
                   "transport_stream_id": 1, "network_id": 1, "type": "tv",
                   "params": DVBT_474}
        self.assertEqual(self.call("PUT", "/api/v1/channels",
                                   {"channels": [channel]}).status, 200)
        self.assertEqual(self.call("GET", "/api/v1/channels").json,
                         {"channels": [channel]})
        r = self.call("POST", "/api/v1/tuners/2/tune", {"lcn": 1})
        self.assertEqual(r.json["channel"], channel)
        errors = [
            self.call("POST", "/api/v1/tuners/2/tune", {"channel": "x"}),
            self.call("POST", "/api/v1/tuners/2/scan", {"band": "x"}),
            self.call("DELETE", "/api/v1/tuners/2/scan"),
            self.call("GET", "/api/v1/tuners/2/scan"),
            self.call("PUT", "/api/v1/channels", {"channels": [{}]}),
            self.call("GET", "/api/v1/channels?format=x"),
        ]
        for r in errors:
            self.assertGreaterEqual(r.status, 400, r)

    def test_events(self):
        """Every event of a daemon's run so far is an Event: the envelope,
        and params, status, result in the REST shapes."""
        self.assertOk(self.box.tune(1, "DVBT", 474000000, 8000000))
        self.api("POST", "/api/v1/tuners/2/tune", DVBT_474)
        self.api("POST", "/api/v1/tuners/3/tune",
                 {"delivery_system": "ANALOG_TV", "frequency": 175250000,
                  "standard": "PAL-BG"})
        self.api("POST", "/api/v1/tuners/2/sleep")
        ev = EventsFromNow(self, "types=scan.done")
        scan = self.api("POST", "/api/v1/tuners/3/scan",
                        {"frequencies": [474000000, 482000000]}).json
        ev.wait("scan.done", scan=scan["scan"]["id"])
        lease = self.api("POST", "/api/v1/tuners/4/lease",
                         {"holder": "x"}).json
        self.api("DELETE", "/api/v1/tuners/4/lease",
                 headers={"X-Tunerd-Lease": lease["lease_id"]})
        last = self.api("GET", "/api/v1/box").json["events"]["next_seq"] - 1
        ws = ws_connect(self.port, "since=0")
        self.addCleanup(ws.close)
        events = [ws_next(ws, lambda m: "seq" in m)]
        while events[-1]["seq"] < last:
            events.append(ws_next(ws, lambda m: "seq" in m))
        types = {e["type"] for e in events}
        for t in ("stub.connected", "plugin.load", "tuner.attach",
                  "tuner.tune_started", "tuner.tune", "tuner.lock",
                  "tuner.sleep", "lease.acquired", "lease.released",
                  "scan.progress", "scan.done"):
            self.assertIn(t, types)
        for e in events:
            with self.subTest(type=e["type"], seq=e["seq"]):
                self.check(e, "Event")
                if e["type"] in ("tuner.tune", "tuner.tune_started"):
                    self.check(e["params"], "Params")
                if e["type"] in ("tuner.tune", "tuner.lock") and \
                        e["status"] is not None:
                    self.check(e["status"], "Status")


if __name__ == "__main__":
    unittest.main()
