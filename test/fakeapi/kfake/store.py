"""Object storage shaped like etcd plus the apiserver watch cache.

One global resourceVersion counter (an etcd revision) is bumped by every
create, update and delete.  Each resource keeps its objects (immutable Obj
records holding pre-encoded JSON), a sorted key list (etcd key order), and a
window of recent events used to replay watches and to rebuild the state at an
older resourceVersion for paged and exact lists.

Locking: one re-entrant lock guards everything; each resource has a condition
on that lock which its watchers wait on.  Callers that read-modify-write hold
store.lock around the whole operation.
"""

import bisect
import collections
import threading
import time

from . import jsonutil

META_ORDER = ('name', 'generateName', 'namespace', 'selfLink', 'uid', 'resourceVersion',
               'generation', 'creationTimestamp', 'deletionTimestamp',
               'deletionGracePeriodSeconds', 'labels', 'annotations', 'ownerReferences',
               'finalizers', 'managedFields')
_MANAGED_FIELDS_ORDER = ('manager', 'operation', 'apiVersion', 'time', 'fieldsType',
                         'fieldsV1', 'subresource')
_OWNER_REF_ORDER = ('apiVersion', 'kind', 'name', 'uid', 'controller', 'blockOwnerDeletion')
_TOP_ORDER = ('metadata', 'immutable', 'data', 'binaryData', 'spec', 'status')
_SORTED_MAPS = ('labels', 'annotations')


class Obj:
    """One stored object version.  raw is compact JSON: builtin kinds without
    apiVersion/kind (as list items are encoded), custom resources with them."""
    __slots__ = ('key', 'ns', 'name', 'rv', 'raw', 'labels', 'fields', 'cells')

    def __init__(self, key, ns, name, rv, raw, labels, fields):
        self.key = key
        self.ns = ns
        self.name = name
        self.rv = rv
        self.raw = raw
        self.labels = labels
        self.fields = fields
        self.cells = None

    def decode(self):
        return jsonutil.loads(self.raw)


class Event:
    __slots__ = ('rv', 'type', 'obj', 'prev')

    def __init__(self, rv, typ, obj, prev):
        self.rv = rv
        self.type = typ
        self.obj = obj
        self.prev = prev


class Snapshot:
    """The sorted objects of one resource at one state version."""
    __slots__ = ('version', 'keys', 'objs')

    def __init__(self, version, keys, objs):
        self.version = version
        self.keys = keys
        self.objs = objs

    def range(self, namespace=None, start_key=None):
        """Index bounds [lo, hi) for a namespace and a continue start key."""
        if namespace is None:
            lo, hi = 0, len(self.keys)
        else:
            lo = bisect.bisect_left(self.keys, namespace + '/')
            hi = bisect.bisect_left(self.keys, namespace + '0')  # '0' follows '/'
        if start_key is not None:
            lo = max(lo, bisect.bisect_left(self.keys, start_key))
        return lo, hi


class TooOld(Exception):
    def __init__(self, oldest):
        super().__init__(oldest)
        self.oldest = oldest


class ResourceState:
    def __init__(self, rt, lock):
        self.rt = rt
        self.objs = {}
        self.keys = []
        self.history = []
        self.hist_rvs = []
        self.base_rv = 0          # the state is known (reconstructible) from here on
        self.trimmed = False      # events were dropped from the window since base_rv
        self.last_change = 0
        self.cond = threading.Condition(lock)
        self.current = None
        self.snapshots = collections.OrderedDict()


def _in_order(d, order):
    out = collections.OrderedDict((k, d[k]) for k in order if k in d)
    out.update((k, v) for k, v in d.items() if k not in out)
    return out


def typed_metadata(meta):
    """ObjectMeta as Go encodes it (field order, its lists' entries too): what
    a custom resource's unstructured (sorted) metadata becomes once converted
    to a typed object, such as a Table row's PartialObjectMetadata."""
    m = _in_order(meta, META_ORDER)
    for k, order in (('managedFields', _MANAGED_FIELDS_ORDER),
                     ('ownerReferences', _OWNER_REF_ORDER)):
        if isinstance(m.get(k), list):
            m[k] = [_in_order(e, order) if isinstance(e, dict) else e for e in m[k]]
    return m


def canonical(rt, d):
    """Re-order an object as the real server serializes it; returns a new dict."""
    if rt.crd:
        return d
    out = collections.OrderedDict()
    meta = d.get('metadata') or {}
    m = collections.OrderedDict()
    for k in META_ORDER:
        if k in meta:
            v = meta[k]
            if k in _SORTED_MAPS and isinstance(v, dict):
                v = collections.OrderedDict(sorted(v.items()))
            m[k] = v
    for k, v in meta.items():
        if k not in m:
            m[k] = v
    out['metadata'] = m
    for k in _TOP_ORDER[1:]:
        if k in d:
            v = d[k]
            if k in ('data', 'binaryData') and isinstance(v, dict):
                v = collections.OrderedDict(sorted(v.items()))
            out[k] = v
    for k, v in d.items():
        if k not in out and k not in ('kind', 'apiVersion'):
            out[k] = v
    return out


def _bool_text(v):
    return 'true' if v is True else 'false'


def extract_fields(rt, d):
    """The field-selector values of an object (missing fields are '')."""
    meta = d.get('metadata') or {}
    f = {'metadata.name': meta.get('name', '')}
    if rt.namespaced:
        f['metadata.namespace'] = meta.get('namespace', '')
    spec = d.get('spec') or {}
    status = d.get('status') or {}
    if rt.kind == 'Pod':
        f['spec.nodeName'] = spec.get('nodeName', '')
        f['spec.restartPolicy'] = spec.get('restartPolicy', '')
        f['spec.schedulerName'] = spec.get('schedulerName', '')
        f['spec.serviceAccountName'] = spec.get('serviceAccountName', '')
        f['spec.hostNetwork'] = _bool_text(spec.get('hostNetwork', False))
        f['status.phase'] = status.get('phase', '')
        f['status.podIP'] = status.get('podIP', '')
        f['status.podIPs'] = status.get('podIP', '')
        f['status.nominatedNodeName'] = status.get('nominatedNodeName', '')
    elif rt.kind == 'Namespace':
        f['status.phase'] = status.get('phase', '')
    elif rt.kind == 'Node':
        f['spec.unschedulable'] = _bool_text(spec.get('unschedulable', False))
    elif rt.kind == 'Event':
        # pkg/registry/core/event/strategy.go ToSelectableFields
        inv = d.get('involvedObject') or {}
        for k in ('kind', 'namespace', 'name', 'uid', 'apiVersion', 'resourceVersion',
                  'fieldPath'):
            f['involvedObject.' + k] = inv.get(k, '')
        f['reason'] = d.get('reason', '')
        f['reportingComponent'] = d.get('reportingComponent', '')
        f['source'] = (d.get('source') or {}).get('component', '') or \
            d.get('reportingComponent', '')
        f['type'] = d.get('type', '')
    return f


def key_of(ns, name):
    return ns + '/' + name if ns else name


def build_obj(rt, d):
    """An Obj from a complete object dict (metadata.resourceVersion set)."""
    meta = d['metadata']
    name = meta['name']
    ns = meta.get('namespace', '') if rt.namespaced else ''
    if rt.crd:
        d = dict(d)
        d['apiVersion'] = rt.api_version
        d['kind'] = rt.kind
        raw = jsonutil.dumps(d, sort_keys=True)
    else:
        raw = jsonutil.dumps(canonical(rt, d))
    return Obj(key_of(ns, name), ns, name, int(meta['resourceVersion']), raw,
               dict(meta.get('labels') or {}), extract_fields(rt, d))


def with_rv(raw, rv):
    """raw with metadata.resourceVersion replaced (the first occurrence is
    metadata's: it precedes labels, annotations and everything user-set)."""
    marker = b'"resourceVersion":"'
    i = raw.find(marker)
    if i < 0:
        return raw
    j = raw.index(b'"', i + len(marker))
    return raw[:i + len(marker)] + str(rv).encode() + raw[j:]


class Store:
    def __init__(self, resource_types, history=1000, start_rv=1000):
        self.lock = threading.RLock()
        self.rv = start_rv
        self.history_limit = max(1, history)
        self.res = {rt.plural: ResourceState(rt, self.lock) for rt in resource_types}
        self.changed = threading.Condition(self.lock)   # any resourceVersion bump
        self.continue_floor = 0
        self.watch_epoch = 0
        self.watch_count = 0
        self.closing = False

    def state(self, rt):
        return self.res[rt.plural]

    def bump(self):
        with self.lock:
            self.rv += 1
            return self.rv

    # --- loading (no events) ---------------------------------------------

    def load(self, rt, obj):
        rs = self.res[rt.plural]
        rs.objs[obj.key] = obj

    def finish_load(self):
        with self.lock:
            for rs in self.res.values():
                rs.keys = sorted(rs.objs)
                rs.base_rv = self.rv
                rs.last_change = self.rv
                rs.current = None

    # --- reads -----------------------------------------------------------

    def get(self, rt, ns, name):
        return self.res[rt.plural].objs.get(key_of(ns, name))

    def current_snapshot(self, rt):
        with self.lock:
            rs = self.res[rt.plural]
            if rs.current is None:
                keys = list(rs.keys)
                objs = rs.objs
                rs.current = Snapshot(rs.last_change, keys, [objs[k] for k in keys])
                self._remember(rs, rs.current)
            return rs.current

    def _remember(self, rs, snap):
        rs.snapshots[snap.version] = snap
        rs.snapshots.move_to_end(snap.version)
        while len(rs.snapshots) > 16:
            rs.snapshots.popitem(last=False)

    def snapshot_at(self, rt, rv):
        """The state at resourceVersion rv; raises TooOld when it is gone."""
        with self.lock:
            rs = self.res[rt.plural]
            if rv >= rs.last_change:
                return self.current_snapshot(rt)
            if rv < rs.base_rv:
                raise TooOld(rs.base_rv)
            i = bisect.bisect_right(rs.hist_rvs, rv)
            version = rs.hist_rvs[i - 1] if i > 0 else rs.base_rv
            snap = rs.snapshots.get(version)
            if snap is not None:
                return snap
            objs = dict(rs.objs)
            for ev in reversed(rs.history[i:]):
                if ev.prev is None:
                    objs.pop(ev.obj.key, None)
                else:
                    objs[ev.prev.key] = ev.prev
            keys = sorted(objs)
            snap = Snapshot(version, keys, [objs[k] for k in keys])
            self._remember(rs, snap)
            return snap

    def watch_start_check(self, rt, rv):
        """Raise TooOld(oldest-1) when events after rv are no longer kept."""
        rs = self.res[rt.plural]
        oldest = rs.hist_rvs[0] if rs.trimmed and rs.hist_rvs else rs.base_rv + 1
        if rv < oldest - 1:
            raise TooOld(oldest - 1)

    def events_after(self, rt, rv, limit=512):
        rs = self.res[rt.plural]
        i = bisect.bisect_right(rs.hist_rvs, rv)
        return rs.history[i:i + limit]

    # --- writes (caller holds self.lock) ----------------------------------

    def commit(self, rt, typ, obj, prev, rv):
        """Record one change at resourceVersion rv (from bump()): typ ADDED
        (prev None), MODIFIED, or DELETED (obj None)."""
        rs = self.res[rt.plural]
        if typ == 'ADDED':
            rs.objs[obj.key] = obj
            bisect.insort(rs.keys, obj.key)
        elif typ == 'MODIFIED':
            rs.objs[obj.key] = obj
        else:
            del rs.objs[prev.key]
            i = bisect.bisect_left(rs.keys, prev.key)
            del rs.keys[i]
        ev = Event(rv, typ, obj, prev)
        rs.history.append(ev)
        rs.hist_rvs.append(rv)
        limit = self.history_limit
        if len(rs.history) > limit + max(16, limit // 4):
            cut = len(rs.history) - limit
            rs.base_rv = rs.hist_rvs[cut - 1]
            rs.trimmed = True
            del rs.history[:cut]
            del rs.hist_rvs[:cut]
        rs.last_change = rv
        rs.current = None
        rs.cond.notify_all()
        self.changed.notify_all()
        return ev

    # --- control ------------------------------------------------------------

    def compact(self):
        """Forget all event history (like an etcd compaction plus a watch
        cache relist): watches and lists from older versions get 410."""
        with self.lock:
            for rs in self.res.values():
                rs.history = []
                rs.hist_rvs = []
                rs.base_rv = self.rv
                rs.trimmed = False
                cur = rs.current
                rs.snapshots.clear()
                if cur is not None:
                    rs.snapshots[cur.version] = cur
            self.continue_floor = max(self.continue_floor, self.rv - 1)

    def expire_continue(self):
        """Make every continue token issued so far expire."""
        with self.lock:
            self.rv += 1
            self.continue_floor = self.rv - 1
            self.changed.notify_all()

    def wait_for_rv(self, rv, timeout):
        """Wait until the store reaches rv; False when it did not in time."""
        deadline = time.monotonic() + timeout
        with self.lock:
            while self.rv < rv:
                left = deadline - time.monotonic()
                if left <= 0 or self.closing:
                    return False
                self.changed.wait(left)
            return True

    def set_history(self, n):
        with self.lock:
            self.history_limit = max(1, int(n))

    def drop_watches(self):
        with self.lock:
            self.watch_epoch += 1
            for rs in self.res.values():
                rs.cond.notify_all()

    def shutdown(self):
        with self.lock:
            self.closing = True
            for rs in self.res.values():
                rs.cond.notify_all()
