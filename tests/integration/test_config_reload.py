# SPDX-License-Identifier: MIT
"""SIGHUP re-reads the --config file: a valid file's tokens and name
apply at once and no connection drops; an invalid file is refused with a
log line and the running configuration stays."""
import json
import os
import signal
import unittest

from events_util import ws_connect, ws_next
from harness import ApiBoxTest, wait_for

OLD, NEW = "old-token-0123456", "new-token-89abcdef"


def tokens(secret, name="box-before"):
    return {"name": name,
            "tokens": [{"name": "ops", "token": secret,
                        "role": "operator"}]}


class Reload(ApiBoxTest):
    config = tokens(OLD)

    def write_config(self, text):
        path = os.path.join(self.dir, "tunerd.json")
        with open(path + ".new", "w") as f:
            f.write(text)
        os.rename(path + ".new", path)

    def status(self, token):
        return self.api("GET", "/api/v1/tuners", token=token).status

    def test_new_tokens_apply_and_streams_stay(self):
        ws = ws_connect(self.port, "types=none.none", token=OLD)
        self.addCleanup(ws.close)
        self.assertEqual(self.status(OLD), 200)
        self.assertEqual(self.status(NEW), 401)

        self.write_config(json.dumps(tokens(NEW, "box-after")))
        self.daemon.proc.send_signal(signal.SIGHUP)
        wait_for(lambda: self.status(NEW) == 200,
                 what="the new token accepted")
        self.assertEqual(self.status(OLD), 401)
        self.assertIsNone(self.daemon.proc.poll())
        self.assertEqual(self.api("GET", "/api/v1/box", token=NEW)
                         .json["name"], "box-after")
        # the stream opened with the old token is still served
        ws.send(json.dumps({"id": "r1", "op": "status", "tuner": 1}))
        reply = ws_next(ws, lambda m: m.get("id") == "r1")
        self.assertTrue(reply["ok"], reply)
        self.assertIn("reloaded", self.daemon.logtext())

    def test_invalid_file_keeps_the_old_tokens(self):
        for broken in ('{"tokens": [', '{"tokens": [{"name": "x"}]}'):
            with self.subTest(broken=broken):
                refused = self.daemon.logtext().count("reload refused")
                self.write_config(broken)
                self.daemon.proc.send_signal(signal.SIGHUP)
                wait_for(lambda: self.daemon.logtext()
                         .count("reload refused") > refused,
                         what="the reload refused in the log")
                self.assertIsNone(self.daemon.proc.poll())
                self.assertEqual(self.status(OLD), 200)


if __name__ == "__main__":
    unittest.main()
