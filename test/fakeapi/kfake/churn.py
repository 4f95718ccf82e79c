"""POST /_fake/churn: create, update and delete objects quickly through the same
write path as the API (so every change becomes a watch event)."""

import collections
import copy
import random

from . import catalog
from . import objects


def run(app, spec):
    rt = catalog.BY_PLURAL.get(spec.get('resource', 'pods'))
    if rt is None:
        raise ValueError('unknown resource %r' % spec.get('resource'))
    ns = spec.get('namespace') if rt.namespaced else None
    rng = random.Random(spec.get('seed'))
    writer = app.writer
    store = app.store
    result = collections.OrderedDict([('created', []), ('updated', []), ('relabeled', []),
                                      ('deleted', [])])

    def candidates():
        rs = store.state(rt)
        with store.lock:
            keys = [k for k in rs.keys if ns is None or k.startswith(ns + '/')]
        return keys

    for _ in range(int(spec.get('create', 0))):
        keys = candidates()
        with store.lock:
            src = store.state(rt).objs.get(rng.choice(keys)) if keys else None
        if src is not None:
            d = src.decode()
            meta = d['metadata']
            base = meta.get('generateName') or meta['name'] + '-'
            # A copy of a copy: back to the first name, so names stay short
            # (a copy of a minimal object, itself named churn-X: churn-Y).
            if base.find('churn-') >= 0:
                base = base[:base.find('churn-')]
            for k in ('uid', 'resourceVersion', 'creationTimestamp', 'managedFields',
                      'generateName'):
                meta.pop(k, None)
            meta['name'] = base + 'churn-' + objects.suffix()
            target_ns = meta.get('namespace', ns)
        else:
            d = _minimal(rt)
            target_ns = ns or 'default'
            d['metadata']['name'] = 'churn-' + objects.suffix()
        obj = writer.create(rt, target_ns if rt.namespaced else None, d, 'fakeapi-churn')
        result['created'].append(obj.key)
    for i in range(int(spec.get('update', 0))):
        keys = candidates()
        if not keys:
            break
        key = rng.choice(keys)
        with store.lock:
            cur = store.state(rt).objs.get(key)
            if cur is None:
                continue
            d = copy.deepcopy(cur.decode())
            ann = d['metadata'].setdefault('annotations', {})
            ann['fakeapi/churn'] = str(store.rv + 1)
            obj = writer.update(rt, cur.ns, cur.name, d, 'fakeapi-churn')
        result['updated'].append(obj.key)
    for _ in range(int(spec.get('relabel', 0))):
        # Label "chaos" moves between a, b and c: label-selector watchers see
        # objects start and stop matching.
        keys = candidates()
        if not keys:
            break
        key = rng.choice(keys)
        with store.lock:
            cur = store.state(rt).objs.get(key)
            if cur is None:
                continue
            d = copy.deepcopy(cur.decode())
            labels = d['metadata'].get('labels') or {}
            labels['chaos'] = rng.choice([v for v in ('a', 'b', 'c') if v != labels.get('chaos')])
            d['metadata']['labels'] = labels
            obj = writer.update(rt, cur.ns, cur.name, d, 'fakeapi-churn')
        result['relabeled'].append(obj.key)
    for _ in range(int(spec.get('delete', 0))):
        keys = candidates()
        if not keys:
            break
        key = rng.choice(keys)
        with store.lock:
            cur = store.state(rt).objs.get(key)
            if cur is None:
                continue
            writer.delete(rt, cur.ns, cur.name)
        result['deleted'].append(key)
    result['resourceVersion'] = store.rv
    return result


def _minimal(rt):
    d = {'metadata': {}}
    if rt.kind == 'Pod':
        d['spec'] = {'containers': [{'name': 'app', 'image': 'registry.example.com/app:1.0'}]}
    elif rt.kind == 'ConfigMap':
        d['data'] = {'k': 'v'}
    elif rt.kind == 'Deployment':
        d['spec'] = {'selector': {'matchLabels': {'app': 'churn'}}, 'template': {
            'metadata': {'labels': {'app': 'churn'}},
            'spec': {'containers': [{'name': 'app', 'image': 'registry.example.com/app:1.0'}]}}}
    elif rt.kind == 'Widget':
        d['spec'] = {'size': 1}
    return d
