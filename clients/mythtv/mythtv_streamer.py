# SPDX-License-Identifier: MIT
"""The transport stream from a tuner to the backend, on stdout.

A reader thread keeps reading the box's stream into a bounded buffer
whatever the backend does: the box drops a reader that falls 2 MiB
behind, and the backend pauses us (XOFF) while it is busy.  What the
backend may take goes out in whole 188-byte packets only, so stdout
stays aligned whenever the stream stops:

- XON/XOFF: a writer thread writes while the backend said XON.
- Poll: each SendBytes writes up to one block at once.

A buffer that overflows (the backend stalled for seconds) loses its
oldest packets and reports it once as damage, as a receiver with a
full queue would.
"""
import logging
import os
import threading

PACKET = 188
READ_SIZE = 64 * PACKET
MAX_BUFFER = 16 * 1024 * 1024

log = logging.getLogger("tunerd-mythtv")


class Streamer:
    """source: the file-like stream (read(n), close()).  on_end(reason)
    is called once when the stream ends without stop(): the box closed
    it or it failed.  on_damage(reason) when packets were dropped."""

    def __init__(self, source, out_fd, poll_mode, block_size, on_end,
                 on_damage):
        self.source, self.out_fd = source, out_fd
        self.poll_mode, self.block_size = poll_mode, block_size
        self.on_end, self.on_damage = on_end, on_damage
        self.buffer = bytearray()
        self.cond = threading.Condition()
        self.xon = False
        self.stopping = False
        self.written = self.dropped = 0
        self.stalled = False
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.writer = None
        if not poll_mode:
            self.writer = threading.Thread(target=self._write_loop,
                                           daemon=True)

    def start(self):
        self.reader.start()
        if self.writer:
            self.writer.start()

    def set_xon(self, on):
        with self.cond:
            self.xon = on
            self.cond.notify_all()

    def _read(self):
        reason = None
        try:
            while not self.stopping:
                chunk = self.source.read(READ_SIZE)
                if not chunk:
                    reason = "the box ended the stream"
                    break
                self._append(chunk)
        except Exception as e:  # any failure of the source ends it
            if not self.stopping:
                reason = "the stream failed: %s" % e
        if reason and not self.stopping:
            log.warning("stream: %s", reason)
            self.on_end(reason)

    def _append(self, chunk):
        report = False
        with self.cond:
            self.buffer += chunk
            over = len(self.buffer) - MAX_BUFFER
            if over > 0:
                dropped = (over + PACKET - 1) // PACKET * PACKET
                del self.buffer[:dropped]
                self.dropped += dropped
                # one line per stall, not one per chunk
                report, self.stalled = not self.stalled, True
            elif len(self.buffer) < MAX_BUFFER // 2:
                self.stalled = False
            self.cond.notify_all()
        if report:
            self.on_damage("the backend stopped reading: the stream's "
                           "oldest packets are dropped (%d bytes so far)"
                           % self.dropped)

    def _take(self, limit):
        """Whole packets from the buffer, at most limit bytes (the
        caller holds cond)."""
        n = min(len(self.buffer), max(limit, PACKET)) // PACKET * PACKET
        data = bytes(self.buffer[:n])
        del self.buffer[:n]
        return data

    def _write(self, data):
        view = memoryview(data)
        while view:
            n = os.write(self.out_fd, view)
            view = view[n:]
        self.written += len(data)

    def _write_loop(self):
        try:
            while True:
                with self.cond:
                    while not self.stopping and \
                            (not self.xon or len(self.buffer) < PACKET):
                        self.cond.wait()
                    if self.stopping:
                        return
                    data = self._take(self.block_size)
                self._write(data)
        except OSError as e:  # the backend closed our stdout
            log.warning("stdout: %s", e)
            self.stopping = True

    def send_bytes(self):
        """Poll mode: one block of whole packets now (maybe none yet)."""
        with self.cond:
            data = self._take(self.block_size)
        if data:
            self._write(data)
        return len(data)

    def stop(self):
        """Stops reading and writing; a write under way finishes its
        packets.  Returns the bytes written to stdout."""
        with self.cond:
            self.stopping = True
            self.cond.notify_all()
        try:
            self.source.close()
        except Exception as e:
            log.debug("closing the stream: %s", e)
        if self.writer and self.writer is not threading.current_thread():
            self.writer.join(10)
        if self.reader is not threading.current_thread():
            # a read blocked on a stream without data ends with the
            # source's own timeout; the thread is a daemon meanwhile
            self.reader.join(2)
        return self.written
