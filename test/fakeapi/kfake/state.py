"""--state FILE: the server's data across a restart.

A restarted server (same --dir, --port and --state) comes back with the same
objects, byte for byte, the same resourceVersion counter, the same event
window (so a client can re-watch from where it was, as after a real
kube-apiserver restart over the same etcd), the same continue-token floor and
the same bearer tokens.  The file is one JSON document written atomically at
shutdown; object bytes are kept as strings, never re-encoded.
"""

import json
import os

from . import catalog
from . import jsonutil
from . import store as storemod
from .control import User

VERSION = 1


def _obj_from_raw(rt, raw):
    """An Obj with exactly these bytes (labels and fields derived from them)."""
    d = jsonutil.loads(raw)
    meta = d['metadata']
    ns = meta.get('namespace', '') if rt.namespaced else ''
    return storemod.Obj(storemod.key_of(ns, meta['name']), ns, meta['name'],
                        int(meta['resourceVersion']), raw,
                        dict(meta.get('labels') or {}), storemod.extract_fields(rt, d))


def _text(raw):
    return raw.decode('utf-8')


def save(path, st, control):
    """Write the store and the tokens to path (tmp + rename)."""
    with st.lock:
        resources = {}
        for plural, rs in st.res.items():
            history = []
            for ev in rs.history:
                history.append([ev.rv, ev.type,
                                _text(ev.obj.raw) if ev.obj is not None else None,
                                _text(ev.prev.raw) if ev.prev is not None else None])
            resources[plural] = {
                'baseRv': rs.base_rv,
                'trimmed': rs.trimmed,
                'lastChange': rs.last_change,
                'objects': [_text(rs.objs[k].raw) for k in rs.keys],
                'history': history,
            }
        doc = {
            'version': VERSION,
            'resourceVersion': st.rv,
            'continueFloor': st.continue_floor,
            'historyLimit': st.history_limit,
            'resources': resources,
        }
    with control.lock:
        doc['tokens'] = [{'token': t, 'user': u.name, 'groups': list(u.groups),
                          'expires': exp} for t, (u, exp) in control.tokens.items()]
    tmp = '%s.tmp.%d' % (path, os.getpid())
    with open(tmp, 'w') as f:
        json.dump(doc, f, separators=(',', ':'))
    os.chmod(tmp, 0o600)
    os.rename(tmp, path)


def load(path, st, control):
    """Fill an empty store (and the token table) from path."""
    with open(path) as f:
        doc = json.load(f)
    if doc.get('version') != VERSION:
        raise ValueError('%s: unknown state version %r' % (path, doc.get('version')))
    with st.lock:
        st.rv = int(doc['resourceVersion'])
        st.continue_floor = int(doc.get('continueFloor', 0))
        st.history_limit = max(1, int(doc.get('historyLimit', st.history_limit)))
        for plural, saved in doc['resources'].items():
            rt = catalog.BY_PLURAL[plural]
            rs = st.res[plural]
            objs = {}
            for text in saved['objects']:
                o = _obj_from_raw(rt, text.encode('utf-8'))
                objs[o.key] = o
            rs.objs = objs
            rs.keys = sorted(objs)
            rs.history = []
            rs.hist_rvs = []
            for rv, typ, obj, prev in saved['history']:
                ev = storemod.Event(int(rv), typ,
                                    _obj_from_raw(rt, obj.encode('utf-8')) if obj else None,
                                    _obj_from_raw(rt, prev.encode('utf-8')) if prev else None)
                rs.history.append(ev)
                rs.hist_rvs.append(ev.rv)
            rs.base_rv = int(saved['baseRv'])
            rs.trimmed = bool(saved['trimmed'])
            rs.last_change = int(saved['lastChange'])
            rs.current = None
            rs.snapshots.clear()
    with control.lock:
        for t in doc.get('tokens', []):
            control.tokens[t['token']] = (User(t['user'], t['groups']), t.get('expires'))
