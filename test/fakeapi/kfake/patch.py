"""Patch application: JSON merge patch (RFC 7386), JSON patch (RFC 6902) and a
strategic merge patch that knows the merge keys of the built-in lists kubectl
touches (containers by name, env by name, conditions by type, ...)."""

import copy

# list field name -> merge key, for strategic merge patches of built-in kinds
MERGE_KEYS = {
    'containers': 'name', 'initContainers': 'name', 'ephemeralContainers': 'name',
    'env': 'name', 'ports': 'containerPort', 'volumeMounts': 'mountPath',
    'volumeDevices': 'devicePath', 'volumes': 'name', 'imagePullSecrets': 'name',
    'conditions': 'type', 'ownerReferences': 'uid', 'hostAliases': 'ip',
    'containerStatuses': 'name', 'initContainerStatuses': 'name', 'podIPs': 'ip',
    'hostIPs': 'ip', 'addresses': 'type', 'taints': 'key', 'topologySpreadConstraints':
    'topologyKey', 'resourceClaims': 'name', 'readinessGates': 'conditionType',
}
# primitive lists that merge as sets
SET_LISTS = {'finalizers'}


class PatchError(Exception):
    pass


def merge_patch(target, patch):
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if not isinstance(target, dict):
        target = {}
    out = dict(target)
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


def strategic_merge_patch(target, patch):
    if not isinstance(patch, dict):
        raise PatchError('strategic merge patch must be a JSON object')
    return _smp_map(target if isinstance(target, dict) else {}, patch)


def _smp_map(target, patch):
    directive = patch.get('$patch')
    if directive == 'replace':
        return {k: copy.deepcopy(v) for k, v in patch.items() if k != '$patch'}
    if directive == 'delete':
        return None
    out = dict(target)
    retain = patch.get('$retainKeys')
    for k, v in patch.items():
        if k in ('$patch', '$retainKeys'):
            continue
        if k.startswith('$setElementOrder/'):
            continue
        if k.startswith('$deleteFromPrimitiveList/'):
            field = k[len('$deleteFromPrimitiveList/'):]
            if isinstance(out.get(field), list):
                out[field] = [x for x in out[field] if x not in v]
            continue
        if v is None:
            out.pop(k, None)
        elif isinstance(v, dict):
            merged = _smp_map(out.get(k) if isinstance(out.get(k), dict) else {}, v)
            if merged is None:
                out.pop(k, None)
            else:
                out[k] = merged
        elif isinstance(v, list) and k in MERGE_KEYS and isinstance(out.get(k), list):
            out[k] = _smp_list(out[k], v, MERGE_KEYS[k])
        elif isinstance(v, list) and k in SET_LISTS and isinstance(out.get(k), list):
            out[k] = out[k] + [x for x in v if x not in out[k]]
        else:
            out[k] = copy.deepcopy(v)
    if retain is not None:
        out = {k: v for k, v in out.items() if k in retain}
    for k, order in patch.items():
        if k.startswith('$setElementOrder/') and isinstance(out.get(k[17:]), list):
            field = k[17:]
            key = MERGE_KEYS.get(field)
            out[field] = _reorder(out[field], order, key)
    return out


def _smp_list(target, patch, key):
    out = [copy.deepcopy(x) for x in target]
    for item in patch:
        if not isinstance(item, dict):
            continue
        if item.get('$patch') == 'replace':
            return [copy.deepcopy({k: v for k, v in x.items() if k != '$patch'})
                    for x in patch if isinstance(x, dict)]
        kv = item.get(key)
        idx = next((i for i, x in enumerate(out) if isinstance(x, dict) and x.get(key) == kv),
                   None)
        if item.get('$patch') == 'delete':
            if idx is not None:
                del out[idx]
            continue
        if idx is None:
            out.append({k: copy.deepcopy(v) for k, v in item.items() if k != '$patch'})
        else:
            out[idx] = _smp_map(out[idx], item)
    return out


def _reorder(items, order, key):
    if key is None:
        ordered = [x for x in order if x in items]
        return ordered + [x for x in items if x not in ordered]
    want = [o.get(key) for o in order if isinstance(o, dict)]
    ranked = {k: i for i, k in enumerate(want)}
    return sorted(items, key=lambda x: ranked.get(x.get(key) if isinstance(x, dict) else None,
                                                  len(want)))


def _pointer(path):
    if path == '':
        return []
    if not path.startswith('/'):
        raise PatchError('invalid JSON pointer %r' % path)
    return [p.replace('~1', '/').replace('~0', '~') for p in path[1:].split('/')]


def _walk(doc, parts):
    cur = doc
    for p in parts:
        if isinstance(cur, list):
            try:
                cur = cur[int(p)]
            except (ValueError, IndexError):
                raise PatchError('path not found')
        elif isinstance(cur, dict):
            if p not in cur:
                raise PatchError('path not found: ' + p)
            cur = cur[p]
        else:
            raise PatchError('path not found')
    return cur


def _add(doc, parts, value):
    if not parts:
        return value
    parent = _walk(doc, parts[:-1])
    last = parts[-1]
    if isinstance(parent, list):
        if last == '-':
            parent.append(value)
        else:
            try:
                i = int(last)
            except ValueError:
                raise PatchError('invalid index ' + last)
            if i < 0 or i > len(parent):
                raise PatchError('index out of range')
            parent.insert(i, value)
    elif isinstance(parent, dict):
        parent[last] = value
    else:
        raise PatchError('cannot add to a scalar')
    return doc


def _remove(doc, parts):
    if not parts:
        raise PatchError('cannot remove the root')
    parent = _walk(doc, parts[:-1])
    last = parts[-1]
    try:
        if isinstance(parent, list):
            return parent.pop(int(last))
        return parent.pop(last)
    except (KeyError, ValueError, IndexError, AttributeError):
        raise PatchError('Unable to remove nonexistent key: %s: missing value' % last)


def json_patch(doc, ops):
    if not isinstance(ops, list):
        raise PatchError('json patch must be a JSON array')
    doc = copy.deepcopy(doc)
    for op in ops:
        if not isinstance(op, dict) or 'op' not in op:
            raise PatchError('invalid operation')
        kind = op['op']
        parts = _pointer(op.get('path', ''))
        if kind == 'add':
            doc = _add(doc, parts, copy.deepcopy(op.get('value')))
        elif kind == 'remove':
            _remove(doc, parts)
        elif kind == 'replace':
            _remove(doc, parts) if parts else None
            doc = _add(doc, parts, copy.deepcopy(op.get('value')))
        elif kind == 'move':
            value = _remove(doc, _pointer(op.get('from', '')))
            doc = _add(doc, parts, value)
        elif kind == 'copy':
            value = copy.deepcopy(_walk(doc, _pointer(op.get('from', ''))))
            doc = _add(doc, parts, value)
        elif kind == 'test':
            if _walk(doc, parts) != op.get('value'):
                raise PatchError('testing value %s failed' % op.get('path'))
        else:
            raise PatchError('Unexpected kind: %s' % kind)
    return doc
