"""Writes: create, update, patch and delete with the real server's defaulting,
validation, preconditions, managedFields and Status errors."""

import collections
import copy
import random
import re
import zlib

from . import catalog
from . import jsonutil
from . import patch as patchmod
from . import status
from . import store as storemod
from . import tables

OD = collections.OrderedDict
_SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789'
_DNS1123_SUBDOMAIN = re.compile(
    r'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z')
_DNS1123_LABEL = re.compile(r'[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z')
_GENERATION_KINDS = ('Deployment', 'Widget')

_POD_SPEC_ORDER = (
    'volumes', 'initContainers', 'containers', 'ephemeralContainers', 'restartPolicy',
    'terminationGracePeriodSeconds', 'activeDeadlineSeconds', 'dnsPolicy', 'nodeSelector',
    'serviceAccountName', 'serviceAccount', 'automountServiceAccountToken', 'nodeName',
    'hostNetwork', 'hostPID', 'hostIPC', 'shareProcessNamespace', 'securityContext',
    'imagePullSecrets', 'hostname', 'subdomain', 'affinity', 'schedulerName', 'tolerations',
    'hostAliases', 'priorityClassName', 'priority', 'dnsConfig', 'readinessGates',
    'runtimeClassName', 'enableServiceLinks', 'preemptionPolicy', 'overhead',
    'topologySpreadConstraints', 'setHostnameAsFQDN', 'os', 'hostUsers', 'schedulingGates',
    'resourceClaims')
_CONTAINER_ORDER = (
    'name', 'image', 'command', 'args', 'workingDir', 'ports', 'envFrom', 'env', 'resources',
    'resizePolicy', 'restartPolicy', 'volumeMounts', 'volumeDevices', 'livenessProbe',
    'readinessProbe', 'startupProbe', 'lifecycle', 'terminationMessagePath',
    'terminationMessagePolicy', 'imagePullPolicy', 'securityContext', 'stdin', 'stdinOnce',
    'tty')
_DEPLOYMENT_SPEC_ORDER = ('replicas', 'selector', 'template', 'strategy', 'minReadySeconds',
                          'revisionHistoryLimit', 'paused', 'progressDeadlineSeconds')


def _ordered(d, order):
    if not isinstance(d, dict):
        return d
    out = OD((k, d[k]) for k in order if k in d)
    for k, v in d.items():
        if k not in out:
            out[k] = v
    return out


def suffix(n=5):
    return ''.join(random.choice(_SUFFIX_ALPHABET) for _ in range(n))


def new_uid():
    h = '%032x' % random.getrandbits(128)
    return '%s-%s-4%s-%s%s-%s' % (h[:8], h[8:12], h[13:16], '89ab'[random.getrandbits(2)],
                                  h[17:20], h[20:32])


# --- managedFields -------------------------------------------------------------

def _fields_v1(value, name=None, depth=0):
    if isinstance(value, dict):
        out = OD()
        if depth >= 2 and value:
            out['.'] = {}
        for k, v in value.items():
            if k in ('managedFields', 'resourceVersion', 'uid', 'creationTimestamp',
                     'generation', 'name', 'namespace') and depth == 1 and name == 'metadata':
                continue
            out['f:' + k] = _fields_v1(v, k, depth + 1)
        return out
    if isinstance(value, list):
        key = patchmod.MERGE_KEYS.get(name)
        if key is None or not all(isinstance(x, dict) and key in x for x in value):
            return {}
        out = OD()
        for item in value:
            kv = item[key]
            ident = 'k:' + jsonutil.dumps_str(OD([(key, kv)]))
            sub = _fields_v1(item, None, depth + 1)
            sub.pop('.', None)
            out[ident] = OD([('.', {})] + list(sub.items()))
        return out
    return {}


def _union(a, b):
    out = OD(a)
    for k, v in b.items():
        out[k] = _union(out[k], v) if isinstance(out.get(k), dict) and isinstance(v, dict) \
            else v
    return out


def _record_manager(meta, manager, operation, api_version, fields, subresource=None):
    entries = [e for e in meta.get('managedFields') or [] if isinstance(e, dict)]
    now = jsonutil.rfc3339()
    for e in entries:
        if e.get('manager') == manager and e.get('operation') == operation and \
                e.get('subresource') == subresource:
            e['time'] = now
            e['fieldsV1'] = _union(e.get('fieldsV1') or {}, fields)
            break
    else:
        e = OD([('manager', manager), ('operation', operation), ('apiVersion', api_version),
                ('time', now), ('fieldsType', 'FieldsV1'), ('fieldsV1', fields)])
        if subresource:
            e['subresource'] = subresource
        entries.append(e)
    meta['managedFields'] = entries


def manager_name(field_manager, user_agent):
    if field_manager:
        return field_manager
    return (user_agent or 'unknown').split('/')[0] or 'unknown'


# --- defaulting ------------------------------------------------------------------

def _default_container(c):
    if not isinstance(c, dict):
        return c
    c.setdefault('resources', {})
    c.setdefault('terminationMessagePath', '/dev/termination-log')
    c.setdefault('terminationMessagePolicy', 'File')
    image = c.get('image', '')
    tag = image.rsplit('/', 1)[-1]
    if 'imagePullPolicy' not in c:
        c['imagePullPolicy'] = 'Always' if (':' not in tag or tag.endswith(':latest')) \
            and '@' not in tag else 'IfNotPresent'
    for p in c.get('ports') or []:
        if isinstance(p, dict):
            p.setdefault('protocol', 'TCP')
    return _ordered(c, _CONTAINER_ORDER)


def _default_pod_spec(spec, is_pod):
    spec['containers'] = [_default_container(c) for c in spec.get('containers') or []]
    if spec.get('initContainers'):
        spec['initContainers'] = [_default_container(c) for c in spec['initContainers']]
    spec.setdefault('restartPolicy', 'Always')
    spec.setdefault('terminationGracePeriodSeconds', 30)
    spec.setdefault('dnsPolicy', 'ClusterFirst')
    spec.setdefault('securityContext', {})
    spec.setdefault('schedulerName', 'default-scheduler')
    if is_pod:
        sa = spec.setdefault('serviceAccountName', spec.get('serviceAccount') or 'default')
        spec['serviceAccount'] = sa
        tol = spec.setdefault('tolerations', [])
        for key in ('node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable'):
            if not any(isinstance(t, dict) and t.get('key') == key for t in tol):
                tol.append(OD([('key', key), ('operator', 'Exists'), ('effect', 'NoExecute'),
                               ('tolerationSeconds', 300)]))
        spec.setdefault('priority', 0)
        spec.setdefault('enableServiceLinks', True)
        spec.setdefault('preemptionPolicy', 'PreemptLowerPriority')
        has_token = any(isinstance(v, dict) and str(v.get('name', '')).startswith(
            'kube-api-access-') for v in spec.get('volumes') or [])
        if spec.get('automountServiceAccountToken', True) is not False and not has_token:
            vol = 'kube-api-access-' + suffix()
            spec['volumes'] = list(spec.get('volumes') or []) + [OD([
                ('name', vol), ('projected', OD([('sources', [
                    {'serviceAccountToken': OD([('expirationSeconds', 3607),
                                                ('path', 'token')])},
                    {'configMap': OD([('name', 'kube-root-ca.crt'), ('items', [
                        OD([('key', 'ca.crt'), ('path', 'ca.crt')])])])},
                    {'downwardAPI': {'items': [OD([('path', 'namespace'), ('fieldRef', OD([
                        ('apiVersion', 'v1'), ('fieldPath', 'metadata.namespace')]))])]}}]),
                    ('defaultMode', 420)]))])]
            for c in spec['containers']:
                if isinstance(c, dict):
                    c['volumeMounts'] = list(c.get('volumeMounts') or []) + [OD([
                        ('name', vol), ('readOnly', True),
                        ('mountPath', '/var/run/secrets/kubernetes.io/serviceaccount')])]
                    c2 = _ordered(c, _CONTAINER_ORDER)
                    c.clear()
                    c.update(c2)
    return _ordered(spec, _POD_SPEC_ORDER)


def _qos(spec):
    has = False
    for c in spec.get('containers') or []:
        res = (c or {}).get('resources') or {}
        if res.get('requests') or res.get('limits'):
            has = True
    return 'Burstable' if has else 'BestEffort'


def apply_defaults(rt, d):
    meta = d['metadata']
    if rt.kind == 'Pod':
        d['spec'] = _default_pod_spec(d.get('spec') or {}, True)
        d['status'] = OD([('phase', 'Pending'), ('qosClass', _qos(d['spec']))])
    elif rt.kind == 'Deployment':
        spec = d.setdefault('spec', {})
        spec.setdefault('replicas', 1)
        strategy = spec.get('strategy') or OD()
        strategy.setdefault('type', 'RollingUpdate')
        if strategy['type'] == 'RollingUpdate':
            ru = strategy.setdefault('rollingUpdate', OD())
            ru.setdefault('maxUnavailable', '25%')
            ru.setdefault('maxSurge', '25%')
        spec['strategy'] = strategy
        spec.setdefault('revisionHistoryLimit', 10)
        spec.setdefault('progressDeadlineSeconds', 600)
        tpl = spec.setdefault('template', {})
        tpl.setdefault('metadata', {}).setdefault('creationTimestamp', None)
        # ObjectMeta's field order: creationTimestamp before labels.
        tpl['metadata'] = _ordered(tpl['metadata'], storemod.META_ORDER)
        tpl['spec'] = _default_pod_spec(tpl.get('spec') or {}, False)
        d['spec'] = _ordered(spec, _DEPLOYMENT_SPEC_ORDER)
        d['status'] = {}
    elif rt.kind == 'Namespace':
        meta.setdefault('labels', {})['kubernetes.io/metadata.name'] = meta['name']
        d['spec'] = {'finalizers': ['kubernetes']}
        d['status'] = {'phase': 'Active'}
    elif rt.kind == 'Node':
        d.setdefault('spec', {})
        d.setdefault('status', {})
    elif rt.kind == 'Service':
        _default_service(meta, d)


def _default_service(meta, d):
    """What the apiserver's defaulting and allocators give a Service (the
    printer's fields): type, protocols, a cluster IP from 10.96.0.0/12 and
    node ports, chosen from the name so a run repeats itself."""
    spec = d.setdefault('spec', OD())
    typ = spec.setdefault('type', 'ClusterIP')
    h = zlib.crc32(('%s/%s' % (meta.get('namespace', ''), meta['name'])).encode())
    for i, p in enumerate(spec.get('ports') or []):
        p.setdefault('protocol', 'TCP')
        p.setdefault('targetPort', p.get('port', 0))
        if typ in ('NodePort', 'LoadBalancer') and not p.get('nodePort'):
            p['nodePort'] = 30000 + (h + i) % 2768
    if typ != 'ExternalName':
        ip = spec.get('clusterIP') or '10.96.%d.%d' % ((h >> 8) % 256, h % 254 + 1)
        spec['clusterIP'] = ip
        spec.setdefault('clusterIPs', [ip])
        spec.setdefault('sessionAffinity', 'None')
    d.setdefault('status', OD([('loadBalancer', OD())]))


# --- validation ------------------------------------------------------------------

def _name_errors(rt, name):
    if rt.kind == 'Namespace':
        if len(name) > 63 or not _DNS1123_LABEL.match(name):
            return ["a lowercase RFC 1123 label must consist of lower case alphanumeric "
                    "characters or '-', and must start and end with an alphanumeric character "
                    "(e.g. 'my-name',  or '123-abc', regex used for validation is "
                    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"]
        return []
    errs = []
    if len(name) > 253:
        errs.append('must be no more than 253 characters')
    if not _DNS1123_SUBDOMAIN.match(name):
        errs.append("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                    "characters, '-' or '.', and must start and end with an alphanumeric "
                    "character (e.g. 'example.com', regex used for validation is "
                    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
    return errs


def _quote(v):
    return jsonutil.dumps_str(v)


def validate(rt, d):
    meta = d['metadata']
    name = meta.get('name', '')
    errors = []
    if not name:
        errors.append(status.field_error('Required value', 'metadata.name',
                                         'name or generateName is required'))
    else:
        for e in _name_errors(rt, name):
            errors.append(status.field_error('Invalid value', 'metadata.name', e, _quote(name)))
    for k in ('labels', 'annotations'):
        v = meta.get(k)
        if v is not None and (not isinstance(v, dict) or
                              not all(isinstance(x, str) for x in v.values())):
            errors.append(status.field_error('Invalid value', 'metadata.' + k,
                                             'must be a map of strings', '"..."'))
    if rt.kind == 'Pod':
        containers = (d.get('spec') or {}).get('containers')
        if not containers:
            errors.append(status.field_error('Required value', 'spec.containers', ''))
        else:
            for i, c in enumerate(containers):
                if not isinstance(c, dict) or not c.get('name'):
                    errors.append(status.field_error('Required value',
                                                     'spec.containers[%d].name' % i, ''))
                if not isinstance(c, dict) or not c.get('image'):
                    errors.append(status.field_error('Required value',
                                                     'spec.containers[%d].image' % i, ''))
    if rt.kind == 'Deployment':
        spec = d.get('spec') or {}
        if not spec.get('selector'):
            errors.append(status.field_error('Required value', 'spec.selector', ''))
    if errors:
        raise status.invalid(rt.group, rt.kind, name, errors)


# --- operations ------------------------------------------------------------------

def _check_type(rt, d):
    kind = d.get('kind')
    av = d.get('apiVersion')
    if kind and kind != rt.kind:
        raise status.bad_request('%s in version "%s" cannot be handled as a %s: no kind "%s" '
                                 'is registered for version "%s"' % (kind, av, rt.kind, kind, av))
    if av and av != rt.api_version:
        raise status.bad_request('the API version in the data (%s) does not match the expected '
                                 'API version (%s)' % (av, rt.api_version))


class Writer:
    """Mutations of one store; every method takes the store lock itself."""

    def __init__(self, store):
        self.store = store

    def _finish(self, rt, d, rv):
        d['metadata']['resourceVersion'] = str(rv)
        return storemod.build_obj(rt, d)

    def _ns_exists(self, ns):
        return self.store.get(catalog.BY_PLURAL['namespaces'], '', ns) is not None

    def create(self, rt, ns, d, manager='unknown', dry_run=False):
        if not isinstance(d, dict):
            raise status.bad_request('the body of the request must be a JSON object')
        _check_type(rt, d)
        d = copy.deepcopy(d)
        d.pop('kind', None)
        d.pop('apiVersion', None)
        meta = d.get('metadata')
        if not isinstance(meta, dict):
            meta = d['metadata'] = {}
        if rt.namespaced:
            body_ns = meta.get('namespace')
            if body_ns and ns and body_ns != ns:
                raise status.bad_request('the namespace of the provided object does not match '
                                         'the namespace sent on the request')
            meta['namespace'] = ns or body_ns or 'default'
        else:
            meta.pop('namespace', None)
        if not meta.get('name') and meta.get('generateName'):
            meta['name'] = meta['generateName'] + suffix()
        for k in ('uid', 'resourceVersion', 'creationTimestamp', 'deletionTimestamp',
                  'generation', 'selfLink'):
            meta.pop(k, None)
        validate(rt, d)
        with self.store.lock:
            if rt.namespaced and not self._ns_exists(meta['namespace']):
                raise status.namespace_not_found(meta['namespace'])
            if self.store.get(rt, meta.get('namespace', ''), meta['name']) is not None:
                raise status.already_exists(rt, meta['name'])
            meta['uid'] = new_uid()
            meta['creationTimestamp'] = jsonutil.rfc3339()
            if rt.kind in _GENERATION_KINDS:
                meta['generation'] = 1
            apply_defaults(rt, d)
            fields = _fields_v1(OD((k, v) for k, v in d.items() if k != 'status'))
            _record_manager(meta, manager, 'Update', rt.api_version, fields)
            if dry_run:
                return self._finish(rt, d, self.store.rv)
            rv = self.store.bump()
            obj = self._finish(rt, d, rv)
            self.store.commit(rt, 'ADDED', obj, None, rv)
            return obj

    def _replace(self, rt, cur, new, manager, sub, dry_run, fields):
        """Commit new (a dict) over cur (an Obj), keeping server-owned metadata."""
        old = cur.decode()
        meta = new.setdefault('metadata', {})
        if not isinstance(meta, dict):
            raise status.bad_request('metadata must be an object')
        if meta.get('name', cur.name) != cur.name:
            raise status.bad_request('the name of the object (%s) does not match the name on '
                                     'the URL (%s)' % (meta.get('name'), cur.name))
        if rt.namespaced and meta.get('namespace', cur.ns) != cur.ns:
            raise status.bad_request('the namespace of the provided object does not match the '
                                     'namespace sent on the request')
        want_rv = meta.get('resourceVersion')
        if want_rv and want_rv != str(cur.rv):
            raise status.conflict(rt, cur.name, 'the object has been modified; please apply '
                                  'your changes to the latest version and try again')
        om = old['metadata']
        for k in ('uid', 'creationTimestamp', 'generation', 'deletionTimestamp'):
            if k in om:
                meta[k] = om[k]
            else:
                meta.pop(k, None)
        meta['name'] = cur.name
        if rt.namespaced:
            meta['namespace'] = cur.ns
        if 'managedFields' not in meta and 'managedFields' in om:
            meta['managedFields'] = om['managedFields']
        if sub == 'status':
            merged = dict(old)
            merged['status'] = new.get('status', old.get('status'))
            merged['metadata'] = OD(om)
            new = merged
            meta = new['metadata'] = OD(om)
        elif rt.status_subresource and 'status' in old:
            new['status'] = old['status']
        if rt.kind in _GENERATION_KINDS and new.get('spec') != old.get('spec'):
            meta['generation'] = om.get('generation', 0) + 1
        new.pop('kind', None)
        new.pop('apiVersion', None)
        validate(rt, new)
        compare_old = dict(old)
        compare_old.pop('kind', None)
        compare_old.pop('apiVersion', None)
        meta['resourceVersion'] = str(cur.rv)
        if _same(compare_old, new):
            return cur
        _record_manager(meta, manager, 'Update', rt.api_version, fields,
                        'status' if sub == 'status' else None)
        if dry_run:
            return self._finish(rt, new, cur.rv)
        rv = self.store.bump()
        obj = self._finish(rt, new, rv)
        self.store.commit(rt, 'MODIFIED', obj, cur, rv)
        return obj

    def update(self, rt, ns, name, d, manager='unknown', sub=None, dry_run=False):
        if not isinstance(d, dict):
            raise status.bad_request('the body of the request must be a JSON object')
        _check_type(rt, d)
        with self.store.lock:
            cur = self.store.get(rt, ns, name)
            if cur is None:
                raise status.not_found(rt, name)
            d = copy.deepcopy(d)
            fields = _fields_v1(OD((k, v) for k, v in d.items()
                                   if k not in ('kind', 'apiVersion')))
            return self._replace(rt, cur, d, manager, sub, dry_run, fields)

    def patch(self, rt, ns, name, content_type, body, manager='unknown', sub=None,
              dry_run=False):
        ct = (content_type or '').split(';')[0].strip().lower()
        accepted = ['application/json-patch+json', 'application/merge-patch+json',
                    'application/apply-patch+yaml']
        if not rt.crd:
            accepted.insert(2, 'application/strategic-merge-patch+json')
        if ct not in accepted:
            raise status.unsupported_media_type(accepted)
        try:
            p = jsonutil.loads(body)
        except ValueError as e:
            if ct == 'application/apply-patch+yaml':
                raise status.bad_request('fakeapi only understands apply patches written as '
                                         'JSON: %s' % e)
            raise status.bad_request('error decoding patch: %s' % e)
        with self.store.lock:
            cur = self.store.get(rt, ns, name)
            if cur is None:
                if ct == 'application/apply-patch+yaml':
                    if not isinstance(p, dict):
                        raise status.bad_request('apply patch must be a JSON object')
                    p.setdefault('metadata', {})['name'] = name
                    return self.create(rt, ns, p, manager, dry_run), True
                raise status.not_found(rt, name)
            old = cur.decode()
            try:
                if ct == 'application/json-patch+json':
                    new = patchmod.json_patch(old, p)
                elif ct == 'application/strategic-merge-patch+json':
                    new = patchmod.strategic_merge_patch(old, p)
                else:
                    if ct == 'application/apply-patch+yaml':
                        _check_type(rt, p if isinstance(p, dict) else {})
                    new = patchmod.merge_patch(old, p)
            except patchmod.PatchError as e:
                raise status.ApiError(status.status(422, 'Invalid', str(e)))
            if not isinstance(new, dict):
                raise status.bad_request('the patch produced a non-object')
            fields = _fields_v1(p) if isinstance(p, dict) else {}
            obj = self._replace(rt, cur, new, manager, sub, dry_run, fields)
            return obj, False

    def delete(self, rt, ns, name, options=None, dry_run=False):
        options = options or {}
        with self.store.lock:
            cur = self.store.get(rt, ns, name)
            if cur is None:
                raise status.not_found(rt, name)
            pre = options.get('preconditions') or {}
            if pre:
                meta = cur.decode()['metadata']
                if pre.get('uid') and pre['uid'] != meta.get('uid'):
                    raise status.ApiError(status.status(409, 'Conflict', (
                        'Precondition failed: UID in precondition: %s, UID in object meta: %s'
                        % (pre['uid'], meta.get('uid'))), collections.OrderedDict([
                            ('name', name), ('kind', rt.plural)])))
                if pre.get('resourceVersion') and pre['resourceVersion'] != str(cur.rv):
                    raise status.ApiError(status.status(409, 'Conflict', (
                        'Precondition failed: ResourceVersion in precondition: %s, '
                        'ResourceVersion in object meta: %s' % (pre['resourceVersion'], cur.rv)),
                        collections.OrderedDict([('name', name), ('kind', rt.plural)])))
            if dry_run:
                return cur
            if rt.kind == 'Namespace':
                # The namespace controller empties a deleted namespace first.
                for other in catalog.RESOURCES:
                    if other.namespaced:
                        for key in [k for k in self.store.state(other).keys
                                    if k.startswith(name + '/')]:
                            victim = self.store.state(other).objs[key]
                            self.store.commit(other, 'DELETED', None, victim, self.store.bump())
            self.store.commit(rt, 'DELETED', None, cur, self.store.bump())
            return cur

    def delete_collection(self, rt, ns, match, dry_run=False):
        with self.store.lock:
            rs = self.store.state(rt)
            victims = [rs.objs[k] for k in rs.keys if (not ns or rs.objs[k].ns == ns)
                       and (match is None or match(rs.objs[k]))]
            if not dry_run:
                for v in victims:
                    self.store.commit(rt, 'DELETED', None, v, self.store.bump())
            return victims


def _same(a, b):
    """Equal ignoring managedFields timestamps (a no-op write changes nothing)."""
    def strip(d):
        d = dict(d)
        m = dict(d.get('metadata') or {})
        m.pop('managedFields', None)
        m.pop('resourceVersion', None)
        d['metadata'] = m
        return d
    return jsonutil.dumps(strip(a), sort_keys=True) == jsonutil.dumps(strip(b), sort_keys=True)


def scale_of(rt, obj):
    """The autoscaling/v1 Scale of a Deployment."""
    d = obj.decode()
    meta = d['metadata']
    spec = d.get('spec') or {}
    return OD([('kind', 'Scale'), ('apiVersion', 'autoscaling/v1'),
               ('metadata', OD((k, meta[k]) for k in ('name', 'namespace', 'uid',
                                                     'resourceVersion', 'creationTimestamp')
                               if k in meta)),
               ('spec', {'replicas': spec.get('replicas', 0)}),
               ('status', OD([('replicas', (d.get('status') or {}).get('replicas', 0)),
                              ('selector', tables.format_label_selector(spec.get('selector')))]))])
