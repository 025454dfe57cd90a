# SPDX-License-Identifier: MIT
"""clients/mythtv's line formats and configuration file on their own (no
processes): each version's request and reply, the out-of-band STATUS
lines the backend's CheckForError recognises, and configuration errors
that name their key."""
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "clients", "mythtv"))
import mythtv_config  # noqa: E402
import mythtv_wire  # noqa: E402


class Wire(unittest.TestCase):
    def test_three_formats_answered_in_kind(self):
        v1 = mythtv_wire.parse("TuneChannel:5")
        self.assertEqual((v1.version, v1.command, v1.value),
                         (1, "TuneChannel", "5"))
        self.assertEqual(mythtv_wire.reply(v1, "OK", "InProgress"),
                         "OK:InProgress")
        v2 = mythtv_wire.parse(b"17:TuneStatus?")
        self.assertEqual((v2.version, v2.serial, v2.command, v2.value),
                         (2, 17, "TuneStatus?", None))
        self.assertEqual(mythtv_wire.reply(v2, "ERR", "no\nlock"),
                         "17:ERR:no lock")
        v3 = mythtv_wire.parse('{"command":"TuneChannel","serial":9,'
                               '"channum":"1","recordid":4165}')
        self.assertEqual((v3.version, v3.serial, v3.fields["channum"]),
                         (3, 9, "1"))
        self.assertEqual(json.loads(mythtv_wire.reply(v3, "OK", "Tuned")),
                         {"command": "TuneChannel", "serial": 9,
                          "status": "OK", "message": "Tuned"})
        self.assertEqual(mythtv_wire.reply(mythtv_wire.parse("Version?"),
                                           "OK"), "OK")

    def test_bad_lines(self):
        for line in ("", "   ", "{not json", '{"serial":1}',
                     '{"command":5}'):
            with self.subTest(line=line), self.assertRaises(ValueError):
                mythtv_wire.parse(line)

    def test_status_lines(self):
        self.assertEqual(mythtv_wire.status_line(1, "ERR", "lost"),
                         "STATUS:ERR:lost")
        self.assertEqual(mythtv_wire.status_line(2, "DAMAGE", "x"),
                         "0:STATUS:DAMAGE:x")
        obj = json.loads(mythtv_wire.status_line(3, "ERR", "lost"))
        self.assertEqual(obj, {"command": "STATUS", "status": "ERR",
                               "message": "lost"})
        self.assertNotIn("serial", obj)  # never taken for a reply


class Config(unittest.TestCase):
    def load(self, text):
        fd, path = tempfile.mkstemp()
        self.addCleanup(os.unlink, path)
        with os.fdopen(fd, "w") as f:
            f.write(text)
        return mythtv_config.load(path)

    def test_json_and_ini_agree(self):
        j = self.load(json.dumps({
            "boxes": [{"url": "http://a:8080", "token": "t"}],
            "priority": {"recording": 700}, "flow_control": "poll"}))
        i = self.load("[recorder]\npriority_recording = 700\n"
                      "flow_control = poll\n[box a]\n"
                      "url = http://a:8080\ntoken = t\n")
        for cfg in (j, i):
            self.assertEqual((cfg.priority_recording, cfg.priority_livetv,
                              cfg.flow_control, cfg.boxes[0]["url"],
                              cfg.boxes[0]["token"]),
                             (700, 100, "poll", "http://a:8080", "t"))

    def test_errors_name_the_key(self):
        box = {"boxes": [{"url": "http://a:8080"}]}
        for obj, key in (({}, "boxes"),
                         ({"boxes": [{"url": "ftp://a"}]}, "url"),
                         (dict(box, lease_ttl_s=1), "lease_ttl_s"),
                         (dict(box, flow_control="rts"), "flow_control"),
                         (dict(box, colour="red"), "colour"),
                         (dict(box, priority={"recording": "x"}),
                          "priority_recording")):
            with self.subTest(key=key):
                with self.assertRaises(mythtv_config.ConfigError) as e:
                    self.load(json.dumps(obj))
                self.assertIn(key, str(e.exception))
        with self.assertRaises(mythtv_config.ConfigError):
            self.load("{broken")
        with self.assertRaises(mythtv_config.ConfigError):
            mythtv_config.load("/nonexistent/recorder.conf")


if __name__ == "__main__":
    unittest.main()
