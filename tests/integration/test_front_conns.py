# SPDX-License-Identifier: MIT
"""One connection cap across HTTP and WebSocket (protocol/API.md:
connections <= 256 total): WebSocket streams and kept-alive HTTP
connections share it, the one past it is refused with a 503, and the
count goes back down exactly as they close (neither counted twice nor
forgotten)."""
import http.client
import unittest

from events_util import ws_connect
from harness import ApiBoxTest, wait_for

CAP = 256


def keep_alive(port):
    """A kept-alive HTTP connection that was served once: (conn, status)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/api/v1/box")
    r = conn.getresponse()
    r.read()
    return conn, r.status


class ConnectionCap(ApiBoxTest):
    def open_mix(self, n_ws, n_http):
        """n_ws streams and n_http kept-alive connections, all served."""
        ws = [ws_connect(self.port, "types=none.none") for _ in range(n_ws)]
        self.addCleanup(lambda: [w.close() for w in ws])
        conns = []
        self.addCleanup(lambda: [c.close() for c in conns])
        for _ in range(n_http):
            conn, status = keep_alive(self.port)
            conns.append(conn)
            self.assertEqual(status, 200)
        return ws, conns

    def refused(self):
        conn, status = keep_alive(self.port)
        conn.close()
        return status == 503

    def full_cap_served(self):
        """CAP connections all served: the count is back to zero."""
        conns = []
        try:
            for _ in range(CAP):
                conn, status = keep_alive(self.port)
                conns.append(conn)
                if status != 200:
                    return False
            return self.refused()
        finally:
            for c in conns:
                c.close()

    def test_websocket_and_http_share_one_cap(self):
        ws, conns = self.open_mix(CAP // 2, CAP // 2)
        self.assertTrue(self.refused())
        # a stream that ends frees its slot
        ws.pop().close()
        wait_for(lambda: not self.refused(), what="a slot freed")
        for w in ws:
            w.close()
        for c in conns:
            c.close()
        # every slot comes back, and only those
        wait_for(self.full_cap_served, timeout=30,
                 what="exactly %d connections served again" % CAP)


if __name__ == "__main__":
    unittest.main()
