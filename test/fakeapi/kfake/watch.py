"""Watch streams: chunked JSON lines fed from a resource's event window.

Semantics follow the apiserver watch cache: initial ADDED events for
resourceVersion "" or "0" (and for sendInitialEvents=true, closed by a
BOOKMARK carrying the k8s.io/initial-events-end annotation), replay after
resourceVersion N, 410 Expired in-stream when N left the window, selector
transitions turned into ADDED/DELETED, periodic bookmarks, timeoutSeconds.
"""

import collections
import random
import select
import ssl
import time

from . import blast as blastmod
from . import jsonutil
from . import selection
from . import status
from . import store as storemod
from . import tables

# Events written in one chunk at most (a real server flushes when its queue
# is empty, which also batches a burst).
_BATCH_BYTES = 256 * 1024


class WatchSpec:
    """What one watch request asked for."""

    def __init__(self, rt, namespace, name, label_pred, field_terms, media, table_version,
                 include_object, rv, send_initial_events, bookmarks, timeout):
        self.rt = rt
        self.namespace = namespace
        self.name = name
        self.label_pred = label_pred
        self.field_terms = field_terms
        self.media = media                  # 'json', 'table' or 'partial'
        self.table_version = table_version
        self.include_object = include_object
        self.rv = rv
        self.send_initial_events = send_initial_events
        self.bookmarks = bookmarks
        self.timeout = timeout

    def matches(self, obj):
        if self.namespace is not None and obj.ns != self.namespace:
            return False
        if self.name is not None and obj.name != self.name:
            return False
        if self.label_pred is not None and not self.label_pred(obj.labels):
            return False
        if self.field_terms is not None and \
                not selection.fields_match(self.field_terms, obj.fields):
            return False
        return True


def default_timeout(control):
    if control.watch_timeout is not None:
        return control.watch_timeout
    # [minRequestTimeout, 2*minRequestTimeout) with the default 1800s.
    return 1800 + random.random() * 1800


def client_gone(handler):
    """True when the client of handler closed its end (checked without blocking)."""
    sock = handler.connection
    try:
        r, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    if not r:
        return False
    old = sock.gettimeout()
    try:
        sock.settimeout(0)
        sock.recv(1)
        return True     # EOF, or bytes nobody should send on a watch connection
    except (ssl.SSLWantReadError, BlockingIOError, InterruptedError):
        return False
    except (OSError, ssl.SSLError):
        return True
    finally:
        try:
            sock.settimeout(old)
        except OSError:
            pass


class Streamer:
    def __init__(self, handler, app, spec):
        self.h = handler
        self.app = app
        self.store = app.store
        self.spec = spec
        self.headers_sent = False
        self.first_object = True
        self.truncate, self.invalid_json = app.control.take_watch_faults()
        self.blast_seen = 0

    def _take(self, rs, last):
        """Events after last and the next benchmark blast, if any (under the
        store lock): events older than the blast go first."""
        evs = self.store.events_after(self.spec.rt, last)
        pend = blastmod.pending(rs, self.blast_seen)
        if pend is None:
            return evs, None
        before = [e for e in evs if e.rv <= pend.base_rv]
        if before:
            return before, None
        return [], pend

    # --- encoding ----------------------------------------------------------

    def _object_bytes(self, obj, raw, rv):
        spec = self.spec
        rt = spec.rt
        if spec.media == 'table':
            headers = self.first_object
            self.first_object = False
            return tables.table(rt, [obj], rv, include=spec.include_object, headers=headers,
                                api_version=spec.table_version)
        if spec.media == 'partial':
            return tables.partial_metadata(obj, spec.table_version)
        return rt.full_bytes(raw)

    def event_line(self, typ, obj, raw=None, rv=None):
        if raw is None:
            raw = obj.raw
        if rv is None:
            rv = obj.rv
        return b'{"type":"' + typ.encode() + b'","object":' + \
            self._object_bytes(obj, raw, rv) + b'}\n'

    def bookmark_line(self, rv, end=False):
        spec = self.spec
        if spec.media == 'table':
            headers = self.first_object
            self.first_object = False
            body = tables.table(spec.rt, [], rv, headers=headers, api_version=spec.table_version)
        elif spec.media == 'partial':
            meta = collections.OrderedDict([('resourceVersion', str(rv)),
                                            ('creationTimestamp', None)])
            if end:
                meta['annotations'] = {'k8s.io/initial-events-end': 'true'}
            body = jsonutil.dumps(collections.OrderedDict([
                ('kind', 'PartialObjectMetadata'), ('apiVersion', spec.table_version),
                ('metadata', meta)]))
        else:
            body = spec.rt.bookmark(rv, end)
        return b'{"type":"BOOKMARK","object":' + body + b'}\n'

    @staticmethod
    def error_line(st):
        return b'{"type":"ERROR","object":' + jsonutil.dumps(st) + b'}\n'

    def transform(self, ev):
        """The line a store Event becomes for this watcher, or None."""
        match = self.spec.matches
        cur = ev.obj is not None and match(ev.obj)
        old = ev.prev is not None and match(ev.prev)
        if cur and not old:
            return self.event_line('ADDED', ev.obj)
        if cur:
            return self.event_line('MODIFIED', ev.obj)
        if old:
            # The previous state, stamped with the event's resourceVersion.
            return self.event_line('DELETED', ev.prev, storemod.with_rv(ev.prev.raw, ev.rv),
                                   ev.rv)
        return None

    # --- wire --------------------------------------------------------------

    def start(self):
        self.h.start_chunked('application/json')
        self.headers_sent = True
        if self.invalid_json:
            self.write(b'{"type":"ADDED","object":{this is not JSON\n')

    def write(self, data):
        if self.truncate:
            # Half an event, then the connection is cut: no last chunk.
            half = data[:max(1, len(data.split(b'\n', 1)[0]) // 2)]
            self.h.wfile.write(b'%x\r\n' % len(half) + half + b'\r\n')
            self.h.abort_connection()
            raise ConnectionAbortedError('truncated by fault injection')
        self.h.wfile.write(b'%x\r\n' % len(data) + data + b'\r\n')

    def write_lines(self, lines):
        buf = []
        size = 0
        for line in lines:
            if line is None:
                continue
            buf.append(line)
            size += len(line)
            if size >= _BATCH_BYTES:
                self.write(b''.join(buf))
                buf = []
                size = 0
        if buf:
            self.write(b''.join(buf))

    def finish(self):
        self.h.wfile.write(b'0\r\n\r\n')

    def client_gone(self):
        return client_gone(self.h)

    def next_bookmark(self, last, deadline, pre_sent):
        """When the next BOOKMARK is due (cacheWatcher.nextBookmarkTime): an
        interval after the last one, and once 2s before the deadline."""
        if not self.spec.bookmarks:
            return None
        t = last + self.app.control.bookmark_interval
        if not pre_sent and deadline - 2 > last:
            t = min(t, deadline - 2)
        return t

    # --- the stream ----------------------------------------------------------

    def serve(self):
        spec = self.spec
        store = self.store
        rt = spec.rt
        rs = store.state(rt)
        deadline = time.monotonic() + spec.timeout
        initial = None
        error = None
        epoch = store.watch_epoch
        sie = spec.send_initial_events
        want_initial = sie is True or (sie is None and spec.rv in ('', '0'))

        if sie and spec.rv not in ('', '0'):
            n = int(spec.rv)
            if not store.wait_for_rv(n, 3.0):
                error = status.too_large_rv(n, store.rv)
        with store.lock:
            current = store.rv
            if error is None and want_initial:
                snap = store.current_snapshot(rt)
                lo, hi = snap.range(spec.namespace)
                initial = [o for o in snap.objs[lo:hi] if spec.matches(o)]
                last = current
            elif error is None:
                last = current if spec.rv in ('', '0') else int(spec.rv)
                try:
                    store.watch_start_check(rt, last)
                except storemod.TooOld as e:
                    error = status.expired_status('too old resource version: %d (%d)'
                                                  % (last, e.oldest))
            store.watch_count += 1
            self.blast_seen = blastmod.seq(rs)
        try:
            self.start()
            if error is not None:
                self.write(self.error_line(error))
                self.finish()
                return
            if self.app.control.watch_close_left() > 0:
                # close_watches: the stream ends at once, as watches do on a
                # server that is shutting down.
                self.finish()
                return
            if initial:
                self.write_lines(self.event_line('ADDED', o) for o in initial)
            if sie and spec.bookmarks:
                self.write(self.bookmark_line(last, end=True))
            start_rv = last
            last_bm = time.monotonic()
            pre_sent = False
            try:
                while True:
                    stall = self.app.control.watch_stall_left()
                    if stall > 0:
                        # stall_watches: silence (no events, no bookmarks), as a
                        # hung connection or a stuck server looks to a client.
                        if self.client_gone():
                            self.h.close_connection = True
                            return
                        time.sleep(min(stall, 0.25))
                        continue
                    next_bm = self.next_bookmark(last_bm, deadline, pre_sent)
                    bookmark_rv = None
                    with store.lock:
                        if store.closing or store.watch_epoch != epoch:
                            break
                        evs, blast = self._take(rs, last)
                        if not evs and blast is None:
                            now = time.monotonic()
                            wait = min(1.0, deadline - now)
                            if next_bm is not None:
                                wait = min(wait, next_bm - now)
                            if wait > 0:
                                rs.cond.wait(wait)
                            if store.closing or store.watch_epoch != epoch:
                                break
                            if self.app.control.watch_stall_left() > 0:
                                continue    # stalled while waiting: write nothing
                            evs, blast = self._take(rs, last)
                        if evs:
                            try:
                                store.watch_start_check(rt, last)
                            except storemod.TooOld:
                                # Fell out of the window (a slow reader): the real
                                # cacher terminates such watchers.
                                break
                        now = time.monotonic()
                        if next_bm is not None and now >= next_bm:
                            # The cacher's bookmark carries the last event of
                            # the resource (any namespace) it processed, and
                            # goes only to watches that started before it: a
                            # resource quiet since the watch began gets none.
                            bookmark_rv = evs[-1].rv if evs else rs.last_change
                            if bookmark_rv <= start_rv:
                                bookmark_rv = None
                                last_bm = now
                                pre_sent = pre_sent or now >= deadline - 2
                    if evs:
                        last = evs[-1].rv
                        self.write_lines(self.transform(ev) for ev in evs)
                    if blast is not None:
                        self.blast_seen = blast.id
                        if spec.media == 'json':
                            blastmod.stream(self, blast)
                        last = max(last, blast.last_rv)
                        if blast.then == 'gone':
                            self.write(self.error_line(status.expired_status(
                                'too old resource version: %d (%d)' % (last, last + 1))))
                            break
                        if blast.then == 'invalid_json':
                            self.write(b'{"type":"MODIFIED","object":{this is not JSON\n')
                        if blast.then == 'cut':
                            self.truncate = True
                            self.write(b'{"type":"MODIFIED","object":{"metadata":{}}}\n')
                        if blast.end:
                            break
                    if bookmark_rv is not None:
                        last = max(last, bookmark_rv)
                        self.write(self.bookmark_line(bookmark_rv))
                        pre_sent = pre_sent or now >= deadline - 2
                        last_bm = now
                    if time.monotonic() >= deadline:
                        break
                    if not evs and blast is None and self.client_gone():
                        self.h.close_connection = True
                        return
            except blastmod.Missed as e:
                # Blasts it had to write are gone (its client did not read
                # for that long): ended as the real cacher ends a watcher
                # that fell out of its window, never skipping in silence.
                self.write(self.error_line(status.expired_status(
                    'too old resource version: %d (%s)' % (last, e))))
            self.finish()
        finally:
            with store.lock:
                store.watch_count -= 1
