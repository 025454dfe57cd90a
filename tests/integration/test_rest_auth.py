# SPDX-License-Identifier: MIT
"""Tokens, roles and the loopback rule of the network API."""
import os
import unittest

from harness import (ApiBoxTest, global_ipv4, http_request, start_refused,
                     wait_for)

DVBT_474 = {"delivery_system": "DVBT", "frequency": 474000000,
            "bandwidth": 8000000}

TOKENS = {"viewer": "view-token-0123", "operator": "oper-token-4567",
          "admin": "admin-token-89ab"}


class TokensAndRoles(ApiBoxTest):
    config = {"name": "box-under-test", "status_interval_ms": 500,
              "tokens": [{"name": "tv", "token": TOKENS["viewer"],
                          "role": "viewer"},
                         {"name": "ops", "token": TOKENS["operator"],
                          "role": "operator"},
                         {"name": "root", "token": TOKENS["admin"],
                          "role": "admin"}]}

    def test_401_without_or_with_a_wrong_token(self):
        for token in (None, "nope-nope-nope", TOKENS["viewer"] + "x",
                      TOKENS["viewer"][:-1]):
            with self.subTest(token=token):
                r = self.api("GET", "/api/v1/tuners", token=token)
                self.assertError(r, 401, "unauthorized")
                self.assertEqual(r.headers["www-authenticate"],
                                 'Bearer realm="tunerd"')
        r = self.api("GET", "/api/v1/box",
                     headers={"Authorization": "Basic dXNlcjpwYXNz"})
        self.assertError(r, 401, "unauthorized")

    def test_roles(self):
        v, o, a = TOKENS["viewer"], TOKENS["operator"], TOKENS["admin"]
        self.assertEqual(self.api("GET", "/api/v1/box", token=v).json
                         ["name"], "box-under-test")
        self.assertEqual(self.api("GET", "/api/v1/tuners/1/status",
                                  token=v).status, 200)
        e = self.assertError(self.api("POST", "/api/v1/tuners/1/tune",
                                      DVBT_474, token=v),
                             403, "forbidden")
        self.assertEqual(e["details"]["required_role"], "operator")
        self.assertEqual(e["details"]["role"], "viewer")
        self.assertError(self.api("POST", "/api/v1/tuners/1/lease",
                                  {"holder": "x"}, token=v),
                         403, "forbidden")
        self.assertError(self.api("GET", "/api/v1/plugins", token=v), 403,
                         "forbidden")

        r = self.api("POST", "/api/v1/tuners/1/tune", DVBT_474, token=o)
        self.assertEqual(r.status, 200, r)
        t = self.api("GET", "/api/v1/tuners/1", token=o).json
        self.assertEqual(t["last_change"]["by"], "ops")
        e = self.assertError(self.api("GET", "/api/v1/plugins", token=o),
                             403, "forbidden")
        self.assertEqual(e["details"]["required_role"], "admin")
        # how a client (the dashboard) learns its role
        self.assertEqual(e["details"]["role"], "operator")

        self.assertEqual(self.api("GET", "/api/v1/plugins", token=a).status,
                         200)
        self.assertEqual(self.api("POST", "/api/v1/tuners/2/sleep",
                                  token=a).status, 200)

    def test_tokens_never_logged(self):
        for token in TOKENS.values():
            self.api("GET", "/api/v1/box", token=token)
        self.api("GET", "/api/v1/box", token="wrong-token-zzz")
        log = self.daemon.logtext()
        for token in list(TOKENS.values()) + ["wrong-token-zzz"]:
            self.assertNotIn(token, log)


class NoTokensLoopbackOnly(ApiBoxTest):
    listen_host = "0.0.0.0"

    def test_loopback_is_admin(self):
        self.assertEqual(self.api("GET", "/api/v1/plugins").status, 200)
        r = self.api("POST", "/api/v1/tuners/1/tune", DVBT_474)
        self.assertEqual(r.status, 200, r)

    def test_other_peers_are_refused(self):
        addr = global_ipv4()
        if not addr:
            self.skipTest("this machine has no non-loopback IPv4 address")
        # connecting to our own global address makes it the peer address
        r = http_request(self.port, "GET", "/api/v1/box", host=addr,
                         source=addr)
        self.assertEqual(r.status, 403, r)
        self.assertEqual(r.json, {"error": {
            "code": "forbidden",
            "message": "no tokens configured: only loopback clients are "
                       "allowed; add tokens to the config file"}})
        r = http_request(self.port, "POST", "/api/v1/tuners/1/tune",
                         body=DVBT_474, host=addr, source=addr)
        self.assertEqual(r.status, 403, r)


class BadConfig(ApiBoxTest):
    def start_daemon(self, wait=True):
        return None

    def test_daemon_refuses_a_broken_config(self):
        for text, needle in (('{"tokens":[{"name":"a","token":"abcdefgh",'
                              '"role":"king"}]}', "role"),
                             ('{"tokens": [', "line"),
                             ('{"tokenz": []}', "tokenz")):
            with self.subTest(needle=needle):
                path = os.path.join(self.dir, "bad.json")
                with open(path, "w") as f:
                    f.write(text)
                rc, log = start_refused(self.box, path)
                self.assertNotEqual(rc, 0)
                self.assertIn(needle, log)
                self.assertNotIn("abcdefgh", log)


if __name__ == "__main__":
    unittest.main()
