# SPDX-License-Identifier: MIT
"""The shipped nginx configuration (docs/nginx-tunerd.conf) in front of a
daemon, with Debian's nginx and a throw-away certificate: REST, SSE and
WebSocket through TLS, and X-Forwarded-For believed only from the proxy
listed in trusted_proxies."""
import os
import re
import shutil
import signal
import ssl
import subprocess
import unittest
import http.client
import json

from events_util import PATH
from harness import ApiBoxTest, free_port, http_request, wait_for

import websocket

HERE = os.path.dirname(os.path.abspath(__file__))
SHIPPED = os.path.join(HERE, "..", "..", "docs", "nginx-tunerd.conf")
TOKEN = "proxy-test-token-1"
DVBT_474 = {"delivery_system": "DVBT", "frequency": 474000000,
            "bandwidth": 8000000}


def nginx_binary():
    return shutil.which("nginx") or (
        "/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)


def site_config(text, daemon_port, tls_port, cert, key):
    """The shipped server block, pointed at this test's ports and
    certificate; everything else as shipped."""
    text = text.replace("server 127.0.0.1:8080;",
                        "server 127.0.0.1:%d;" % daemon_port)
    text = re.sub(r"\n\s*listen \[::\]:443 ssl;", "", text)
    text = text.replace("listen 443 ssl;",
                        "listen 127.0.0.1:%d ssl;" % tls_port)
    text = text.replace("/etc/tunerd/tls/tunerd.crt", cert)
    text = text.replace("/etc/tunerd/tls/tunerd.key", key)
    return text


class Nginx(ApiBoxTest):
    config = {"tokens": [{"name": "ops", "token": TOKEN,
                          "role": "operator"}],
              "trusted_proxies": ["127.0.0.1/32"]}

    def setUp(self):
        super().setUp()
        binary = nginx_binary()
        if not binary:
            self.skipTest("nginx is not installed (scripts/deps.sh test)")
        self.start_nginx(binary)

    def start_nginx(self, binary):
        ngx = os.path.join(self.dir, "nginx")
        os.makedirs(ngx)
        cert, key = (os.path.join(ngx, n) for n in ("t.crt", "t.key"))
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048",
                        "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                        "-keyout", key, "-out", cert],
                       check=True, capture_output=True, timeout=60)
        self.tls_port = free_port()
        with open(SHIPPED) as f:
            site = site_config(f.read(), self.port, self.tls_port, cert, key)
        conf = os.path.join(ngx, "nginx.conf")
        with open(conf, "w") as f:
            f.write("pid %s/nginx.pid;\nerror_log %s/error.log;\n"
                    "events {}\nhttp {\naccess_log %s/access.log;\n"
                    "client_body_temp_path %s;\nproxy_temp_path %s;\n"
                    "%s\n}\n" % (ngx, ngx, ngx, ngx, ngx, site))
        self.nginx = subprocess.Popen(
            [binary, "-p", ngx, "-c", conf, "-g", "daemon off;"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.addCleanup(self.stop_nginx)
        wait_for(self.tls_up, what="nginx listening")

    def stop_nginx(self):
        self.nginx.send_signal(signal.SIGQUIT)
        try:
            self.nginx.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.nginx.kill()
            self.nginx.wait()
        self.nginx.stderr.close()

    def tls_up(self):
        if self.nginx.poll() is not None:
            raise AssertionError("nginx exited: %s"
                                 % self.nginx.stderr.read().decode())
        try:
            self.https("GET", "/api/v1/box")
            return True
        except OSError:
            return False

    def https(self, method, path, body=None, headers=None, token=TOKEN):
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        conn = http.client.HTTPSConnection("127.0.0.1", self.tls_port,
                                           context=ctx, timeout=15)
        hdrs = dict(headers or {})
        if token:
            hdrs["Authorization"] = "Bearer " + token
        if body is not None:
            body = json.dumps(body)
            hdrs["Content-Type"] = "application/json"
        conn.request(method, path, body=body, headers=hdrs)
        return conn

    def https_json(self, *args, **kw):
        conn = self.https(*args, **kw)
        try:
            r = conn.getresponse()
            return r.status, json.loads(r.read() or b"null")
        finally:
            conn.close()

    def test_rest(self):
        status, body = self.https_json("GET", "/api/v1/tuners")
        self.assertEqual(status, 200)
        self.assertTrue(body["tuners"])
        status, body = self.https_json("POST", "/api/v1/tuners/1/tune",
                                       body=DVBT_474)
        self.assertEqual(status, 200, body)
        status, body = self.https_json("GET", "/api/v1/tuners",
                                       token="wrong-token-123")
        self.assertEqual(status, 401)
        self.assertEqual(body["error"]["code"], "unauthorized")

    def test_sse(self):
        conn = self.https("GET", "%s?types=tuner.tune&access_token=%s"
                          % (PATH, TOKEN), token=None,
                          headers={"Accept": "text/event-stream"})
        self.addCleanup(conn.close)
        r = conn.getresponse()
        self.assertEqual(r.status, 200)
        self.assertEqual(r.getheader("content-type"), "text/event-stream")
        status, _ = self.https_json("POST", "/api/v1/tuners/2/tune",
                                    body=DVBT_474)
        self.assertEqual(status, 200)
        event = None
        while event is None:
            line = r.readline()
            self.assertTrue(line, "the stream ended")
            if line.startswith(b"data: "):
                event = json.loads(line[6:])
        self.assertEqual(event["tuner"], 2)

    def test_websocket(self):
        ws = websocket.create_connection(
            "wss://127.0.0.1:%d%s?types=tuner.tune" % (self.tls_port, PATH),
            subprotocols=["tunerd.v1", "bearer." + TOKEN],
            sslopt={"cert_reqs": ssl.CERT_NONE}, timeout=15)
        self.addCleanup(ws.close)
        self.assertEqual(ws.getstatus(), 101)
        status, _ = self.https_json("POST", "/api/v1/tuners/3/tune",
                                    body=DVBT_474)
        self.assertEqual(status, 200)
        while True:
            msg = json.loads(ws.recv())
            if msg.get("type") == "tuner.tune":
                break
        self.assertEqual(msg["tuner"], 3)


class NginxForwards(Nginx):
    """No tokens: through the proxy, the loopback rule sees the address
    nginx forwards, in the plain and in the streaming location alike.
    The test client and nginx share 127.0.0.1, a trusted proxy address,
    so an address the client puts in front is the one left over."""
    config = {"trusted_proxies": ["127.0.0.1/32"]}

    def test_rest(self):
        status, _ = self.https_json("GET", "/api/v1/tuners", token=None)
        self.assertEqual(status, 200)
        status, body = self.https_json(
            "GET", "/api/v1/tuners", token=None,
            headers={"X-Forwarded-For": "203.0.113.9"})
        self.assertEqual(status, 403, body)

    def test_sse(self):
        conn = self.https("GET", PATH, token=None,
                          headers={"X-Forwarded-For": "203.0.113.9"})
        self.addCleanup(conn.close)
        self.assertEqual(conn.getresponse().status, 403)

    def test_websocket(self):
        url = "wss://127.0.0.1:%d%s" % (self.tls_port, PATH)
        opts = {"subprotocols": ["tunerd.v1"], "timeout": 15,
                "sslopt": {"cert_reqs": ssl.CERT_NONE}}
        ws = websocket.create_connection(url, **opts)
        ws.close()
        with self.assertRaises(websocket.WebSocketBadStatusException) as cm:
            websocket.create_connection(
                url, header=["X-Forwarded-For: 203.0.113.9"], **opts)
        self.assertEqual(cm.exception.status_code, 403)


class Forwarded(ApiBoxTest):
    """No tokens: the loopback rule decides, on the client's address."""
    config = {"trusted_proxies": ["127.0.0.1/32"]}

    def get(self, headers, source=None):
        return http_request(self.port, "GET", "/api/v1/tuners",
                            headers=headers, source=source)

    def test_trusted_proxy_forwards_the_client(self):
        self.assertEqual(self.get({}).status, 200)
        self.assertEqual(
            self.get({"X-Forwarded-For": "127.0.0.5"}).status, 200)
        r = self.get({"X-Forwarded-For": "203.0.113.9"})
        self.assertError(r, 403, "forbidden")
        # the nearest hop counts: what a client put in front is not
        self.assertEqual(self.get(
            {"X-Forwarded-For": "203.0.113.9, 127.0.0.7"}).status, 200)
        r = self.get({"X-Forwarded-For": "127.0.0.7, 203.0.113.9"})
        self.assertError(r, 403, "forbidden")

    def test_untrusted_peer_is_not_believed(self):
        # 127.0.0.2 is loopback but not a listed proxy: a forwarded
        # address from it makes the client unknown, never loopback
        self.assertEqual(self.get({}, source="127.0.0.2").status, 200)
        r = self.get({"X-Forwarded-For": "127.0.0.1"}, source="127.0.0.2")
        self.assertError(r, 403, "forbidden")


if __name__ == "__main__":
    unittest.main()
