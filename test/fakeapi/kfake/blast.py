"""POST /_fake/blast: MODIFIED events for the benchmark's watch throughput,
pre-encoded and written to every open watch as fast as its client reads.

A blast takes the objects of one resource (optionally one namespace) as they
are now and reserves `count` resourceVersions after the current one.  Event
i modifies object i mod K with resourceVersion base+1+i: the stored bytes,
with apiVersion/kind and the new resourceVersion, split once around the
resourceVersion so each event costs a join.  The store itself is not
changed (its objects keep their versions; lists afterwards show the old
state at the new resourceVersion), and the events are not in the watch
window: the blast measures clients, not the server.

Watchers that were open when the blast was made (JSON media only) write its
events with their own selectors applied, then go on as usual (the last
4096 blasts are kept for them: a watcher whose client has not read for a
while writes every one it missed; one further behind than that ends with a
410 Expired ERROR, never skipping a blast in silence); with
"end":true they end their stream after it (kubectl and curl then exit).
"then" puts a fault right after the events, where a client has long been
busy decoding: "gone" an in-stream ERROR with a 410 Expired Status, the
stream ended; "invalid_json" a line that is not JSON, the stream left open
and quiet (a client must end it itself); "cut" half an event and the
connection cut without the last chunk.
"""

import collections
import itertools
import threading
import time

from . import catalog

# Bytes joined per write: large enough that Python's per-call cost vanishes.
_CHUNK_BYTES = 512 * 1024
_MARKER = b'"resourceVersion":"'
# Blasts are kept for watchers that have not written them yet (each holds
# the snapshot's list, shared, not a copy): by default 4096 (POST
# /_fake/faults {"blast_keep":N}), at 20 blasts/s 200 s of lag.


class Missed(Exception):
    """A watcher fell so far behind that blasts it had to write are gone."""

    def __init__(self, seen, oldest):
        Exception.__init__(self, 'blasts %d-%d are no longer kept' % (seen + 1, oldest - 1))
        self.seen = seen
        self.oldest = oldest


class Blast:
    __slots__ = ('id', 'rt', 'namespace', 'objs', 'lo', 'hi', 'parts', 'base_rv', 'count',
                 'end', 'then', 'created', 'done', 'lock')

    def __init__(self, blast_id, rt, namespace, objs, lo, hi, base_rv, count, end, then=None):
        self.id = blast_id
        self.rt = rt
        self.namespace = namespace
        self.objs = objs            # the snapshot's list (shared): objects lo..hi-1
        self.lo = lo
        self.hi = hi
        self.base_rv = base_rv
        self.count = count
        self.end = end
        self.then = then
        self.created = time.monotonic()
        self.done = []              # per watcher: (events, seconds from creation)
        self.lock = threading.Lock()
        self.parts = {}             # key -> (prefix, suffix), filled lazily

    @property
    def last_rv(self):
        return self.base_rv + self.count

    def split(self, obj):
        """(prefix, suffix) of obj's MODIFIED event line around its RV."""
        p = self.parts.get(obj.key)
        if p is None:
            line = b'{"type":"MODIFIED","object":' + self.rt.full_bytes(obj.raw) + b'}\n'
            i = line.find(_MARKER)
            if i < 0:
                raise ValueError('object %s has no resourceVersion' % obj.key)
            i += len(_MARKER)
            j = line.index(b'"', i)
            p = (line[:i], line[j:])
            self.parts[obj.key] = p
        return p

    def describe(self):
        with self.lock:
            done = list(self.done)
        return collections.OrderedDict([
            ('id', self.id), ('resource', self.rt.plural), ('namespace', self.namespace),
            ('objects', self.hi - self.lo), ('count', self.count),
            ('from', self.base_rv + 1), ('to', self.last_rv), ('end', self.end),
            ('then', self.then),
            ('done', [collections.OrderedDict([('events', n), ('seconds', round(s, 6))])
                      for n, s in done])])


def create(app, spec):
    """Make a blast from a POST body; returns its description."""
    if not isinstance(spec, dict):
        raise ValueError('expected a JSON object')
    unknown = set(spec) - {'resource', 'namespace', 'count', 'end', 'then'}
    if unknown:
        raise ValueError('unknown key(s): ' + ', '.join(sorted(unknown)))
    then = spec.get('then')
    if then not in (None, 'gone', 'invalid_json', 'cut'):
        raise ValueError('"then" must be "gone", "invalid_json" or "cut"')
    rt = catalog.BY_PLURAL.get(spec.get('resource', 'pods'))
    if rt is None:
        raise ValueError('unknown resource %r' % spec.get('resource'))
    count = int(spec.get('count', 0))
    if count < 1:
        raise ValueError('"count" must be >= 1')
    ns = spec.get('namespace') if rt.namespaced else None
    store = app.store
    with store.lock:
        snap = store.current_snapshot(rt)
        lo, hi = snap.range(ns)
        if lo >= hi:
            raise ValueError('no objects to modify')
        rs = store.state(rt)
        base = store.rv
        store.rv += count
        rs.blast_seq = getattr(rs, 'blast_seq', 0) + 1
        b = Blast(rs.blast_seq, rt, ns, snap.objs, lo, hi, base, count,
                  bool(spec.get('end')), then)
        keep = app.control.blast_keep
        blasts = getattr(rs, 'blasts', None)
        if blasts is None or blasts.maxlen != keep:
            blasts = rs.blasts = collections.deque(blasts or (), maxlen=keep)
        blasts.append(b)
        watchers = store.watch_count
        rs.cond.notify_all()
        store.changed.notify_all()
    d = b.describe()
    d['watches'] = watchers
    return d


def recent(app):
    store = app.store
    out = []
    with store.lock:
        for rs in store.res.values():
            out.extend(getattr(rs, 'blasts', []))
    out.sort(key=lambda b: b.id)
    return [b.describe() for b in out[-8:]]


def pending(rs, seen):
    """The oldest blast of a resource state newer than id seen, or None
    (caller holds the lock); Missed when blasts after seen are gone."""
    kept = getattr(rs, 'blasts', None)
    if not kept or kept[-1].id <= seen:
        return None
    if kept[0].id > seen + 1:
        raise Missed(seen, kept[0].id)
    return kept[seen + 1 - kept[0].id]


def seq(rs):
    return getattr(rs, 'blast_seq', 0)


def stream(streamer, blast):
    """Write blast's events to one watcher; returns the number written.

    The watcher's events for one pass over its objects are laid out once in
    a bytearray (the template); each write patches the resourceVersions of
    the events in a slice of it and sends that slice, so the per-event cost
    is one formatted number.  All resourceVersions of a template have the
    same width; crossing a power of ten rebuilds it."""
    spec = streamer.spec
    # Event i is object i mod k: a blast of fewer events than objects
    # needs only the first `count` (not a template, nor a look at, every
    # object: 10 events of 100,000 pods 20 times a second are 20 looks).
    objs = list(itertools.islice(
        (o for o in itertools.islice(blast.objs, blast.lo, blast.hi) if spec.matches(o)),
        blast.count))
    if not objs:
        return 0
    parts = [blast.split(o) for o in objs]
    k = len(parts)
    write = streamer.h.wfile.write
    template = None
    width = 0
    offsets = []
    rv = blast.base_rv + 1
    left = blast.count
    e = 0                   # next event's index in the template
    while left > 0:
        w = len(b'%d' % rv)
        if w != width:
            width = w
            pieces = []
            offsets = []
            pos = 0
            for pre, suf in parts:
                offsets.append(pos + len(pre))
                pieces.append(pre)
                pieces.append(b'0' * width)
                pieces.append(suf)
                pos += len(pre) + width + len(suf)
            offsets.append(pos)
            template = bytearray(b''.join(pieces))
            view = memoryview(template)
        # Events e.. up to about _CHUNK_BYTES, within the template and the width.
        start = offsets[e]
        n = 0
        limit = min(left, k - e, 10 ** width - rv)
        while n < limit and (n == 0 or offsets[e + n] - start < _CHUNK_BYTES):
            o = offsets[e + n]
            template[o:o + width] = b'%d' % (rv + n)
            n += 1
        a = offsets[e] - len(parts[e][0])
        b = offsets[e + n] - len(parts[(e + n) % k][0]) if e + n < k else len(template)
        write(b'%x\r\n' % (b - a))
        write(view[a:b])
        write(b'\r\n')
        rv += n
        left -= n
        e = (e + n) % k
    with blast.lock:
        blast.done.append((blast.count, time.monotonic() - blast.created))
    return blast.count
