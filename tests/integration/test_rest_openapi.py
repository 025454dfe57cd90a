# SPDX-License-Identifier: MIT
"""The answers of the REST API match protocol/openapi.yaml.

Needs PyYAML and openapi-schema-validator; skipped when they are missing
(every other test uses the standard library only)."""
import os
import unittest

from events_util import ws_collect, ws_connect
from harness import ApiBoxTest

try:
    import yaml
    from openapi_schema_validator import OAS30Validator
    from openapi_spec_validator import validate as validate_spec
except ImportError:  # pragma: no cover
    yaml = None

SPEC = os.path.join(os.path.dirname(__file__), "..", "..", "protocol",
                    "openapi.yaml")
DVBT_474 = {"delivery_system": "DVBT", "frequency": 474000000,
            "bandwidth": 8000000}


@unittest.skipIf(yaml is None, "PyYAML / openapi-schema-validator missing")
class MatchesTheSpec(ApiBoxTest):
    @classmethod
    def setUpClass(cls):
        with open(SPEC) as f:
            cls.spec = yaml.safe_load(f)

    def check(self, obj, name):
        schema = {"$ref": "#/components/schemas/" + name,
                  "components": self.spec["components"]}
        OAS30Validator(schema).validate(obj)

    def test_the_spec_is_valid(self):
        validate_spec(self.spec)

    def test_answers(self):
        self.check(self.api("GET", "/api/v1/box").json, "Box")
        for t in self.api("GET", "/api/v1/tuners").json["tuners"]:
            self.check(t, "Tuner")
        r = self.api("POST", "/api/v1/tuners/1/tune",
                     dict(DVBT_474, wait_lock_ms=500))
        self.check(r.json, "TuneResult")
        self.check(self.api("GET", "/api/v1/tuners/1").json, "Tuner")
        self.check(self.api("GET", "/api/v1/tuners/1/status").json,
                   "Status")
        self.check(self.api("POST", "/api/v1/tuners/1/sleep").json,
                   "PowerResult")
        lease = self.api("POST", "/api/v1/tuners/2/lease",
                         {"holder": "x"}).json
        self.check(lease, "Lease")
        self.check(self.api("GET", "/api/v1/tuners/2").json, "Tuner")
        for p in self.api("GET", "/api/v1/plugins").json["plugins"]:
            self.check(p, "Plugin")
        self.assertOk(self.box.tune(3, "DVBT", 490000000, 8000000))
        self.check(self.api("GET", "/api/v1/tuners/3").json, "Tuner")
        for bad in (self.api("GET", "/api/v1/x"),
                    self.api("POST", "/api/v1/tuners/2/tune",
                             {"delivery_system": "DVBT", "frequency": 1}),
                    self.api("POST", "/api/v1/tuners/2/lease",
                             {"holder": "y"}),
                    self.api("DELETE", "/api/v1/box")):
            self.check(bad.json, "Error")

    def test_events(self):
        """Every event of a daemon's run so far is an Event: the envelope,
        and params, status, result in the REST shapes."""
        self.assertOk(self.box.tune(1, "DVBT", 474000000, 8000000))
        self.api("POST", "/api/v1/tuners/2/tune", DVBT_474)
        self.api("POST", "/api/v1/tuners/3/tune",
                 {"delivery_system": "ANALOG_TV", "frequency": 175250000,
                  "standard": "PAL-BG"})
        self.api("POST", "/api/v1/tuners/2/sleep")
        lease = self.api("POST", "/api/v1/tuners/4/lease",
                         {"holder": "x"}).json
        self.api("DELETE", "/api/v1/tuners/4/lease",
                 headers={"X-Tunerd-Lease": lease["lease_id"]})
        ws = ws_connect(self.port, "since=0")
        self.addCleanup(ws.close)
        events = ws_collect(ws, 1.0)
        types = {e["type"] for e in events}
        for t in ("stub.connected", "plugin.load", "tuner.attach",
                  "tuner.tune_started", "tuner.tune", "tuner.lock",
                  "tuner.sleep", "lease.acquired", "lease.released"):
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
