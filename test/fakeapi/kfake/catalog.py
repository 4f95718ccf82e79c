"""The served resource types, and the discovery and OpenAPI documents about them."""

import base64
import collections
import gzip
import hashlib
import json
import os
import threading

from . import jsonutil

SERVER_VERSION = collections.OrderedDict([
    ('major', '1'), ('minor', '32'), ('gitVersion', 'v1.32.0'),
    ('gitCommit', '70d3cc986aa8221cd1dfb1121852688902d3bf53'), ('gitTreeState', 'clean'),
    ('buildDate', '2024-12-11T17:59:15Z'), ('goVersion', 'go1.23.3'), ('compiler', 'gc'),
    ('platform', 'linux/amd64')])

ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']
# The apiextensions handler lists a custom resource's verbs in this order.
CRD_VERBS = ['delete', 'deletecollection', 'get', 'list', 'patch', 'create', 'update', 'watch']
NS_VERBS = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch']


class ResourceType:
    """One served resource: names, scope, verbs, and how objects are encoded."""

    def __init__(self, group, version, plural, singular, kind, namespaced, short_names=(),
                 categories=(), verbs=ALL_VERBS, subresources=(), field_labels=(),
                 crd=False, delete_returns_object=False, status_subresource=False):
        self.group = group
        self.version = version
        self.plural = plural
        self.singular = singular
        self.kind = kind
        self.list_kind = kind + 'List'
        self.namespaced = namespaced
        self.short_names = list(short_names)
        self.categories = list(categories)
        self.verbs = list(verbs)
        # subresources: (name, group, version, kind, verbs)
        self.subresources = list(subresources)
        self.field_labels = ('metadata.name',) + (('metadata.namespace',) if namespaced else ()) \
            + tuple(field_labels)
        self.crd = crd
        # A field label conversion function of its own (core's pods, nodes,
        # namespaces; every custom resource), else the default one, whose
        # refusal reads differently.
        self.own_field_conversion = bool(field_labels) or crd
        self.delete_returns_object = delete_returns_object
        self.status_subresource = status_subresource
        self.api_version = version if not group else group + '/' + version
        self.qualified = plural if not group else plural + '.' + group
        self.prefix = '/api/' + version if not group else '/apis/%s/%s' % (group, version)
        # Builtin objects are stored without TypeMeta (list items omit it) and
        # this prefix is spliced in front for GET and watch; custom resources
        # are unstructured and keep apiVersion/kind everywhere (sorted keys).
        self.type_prefix = jsonutil.dumps(collections.OrderedDict([
            ('kind', kind), ('apiVersion', self.api_version)]))[:-1] + b','
        h = hashlib.sha256(('%s/%s/%s' % (group, version, kind)).encode()).digest()
        self.storage_version_hash = base64.b64encode(h[:8]).decode()

    def full_bytes(self, raw):
        """Object bytes with apiVersion and kind (GET bodies, watch events)."""
        if self.crd:
            return raw
        return self.type_prefix + raw[1:]

    def list_envelope(self, rv, cont=None, remaining=None):
        """(head, tail) around the comma-joined items of a list response."""
        meta = collections.OrderedDict()
        if self.crd:
            meta['continue'] = cont or ''
            if remaining is not None:
                meta['remainingItemCount'] = remaining
            meta['resourceVersion'] = str(rv)
            head = b'{"apiVersion":' + jsonutil.dumps(self.api_version) + b',"items":['
            tail = b'],"kind":' + jsonutil.dumps(self.list_kind) + b',"metadata":' + \
                jsonutil.dumps(meta) + b'}\n'
            return head, tail
        meta['resourceVersion'] = str(rv)
        if cont:
            meta['continue'] = cont
        if remaining is not None:
            meta['remainingItemCount'] = remaining
        head = b'{"kind":' + jsonutil.dumps(self.list_kind) + b',"apiVersion":' + \
            jsonutil.dumps(self.api_version) + b',"metadata":' + jsonutil.dumps(meta) + \
            b',"items":['
        return head, b']}\n'

    def bookmark(self, rv, initial_events_end=False):
        """The object of a BOOKMARK event, as the real server encodes it."""
        meta = collections.OrderedDict([('resourceVersion', str(rv))])
        if self.crd:
            if initial_events_end:
                meta['annotations'] = {'k8s.io/initial-events-end': 'true'}
            return jsonutil.dumps(collections.OrderedDict([
                ('apiVersion', self.api_version), ('kind', self.kind), ('metadata', meta)]))
        # A Go zero-value struct with only the resourceVersion set.
        meta['creationTimestamp'] = None
        if initial_events_end:
            meta['annotations'] = {'k8s.io/initial-events-end': 'true'}
        obj = collections.OrderedDict([('metadata', meta)])
        obj.update(_ZERO_BODIES.get(self.kind, {}))
        return self.full_bytes(jsonutil.dumps(obj))



_ZERO_BODIES = {
    'Pod': collections.OrderedDict([('spec', {'containers': None}), ('status', {})]),
    'Namespace': collections.OrderedDict([('spec', {}), ('status', {})]),
    'Node': collections.OrderedDict([('spec', {}), ('status', collections.OrderedDict([
        ('daemonEndpoints', {'kubeletEndpoint': {'Port': 0}}),
        ('nodeInfo', collections.OrderedDict([(k, '') for k in (
            'machineID', 'systemUUID', 'bootID', 'kernelVersion', 'osImage',
            'containerRuntimeVersion', 'kubeletVersion', 'kubeProxyVersion',
            'operatingSystem', 'architecture')]))]))]),
    'Deployment': collections.OrderedDict([
        ('spec', collections.OrderedDict([
            ('selector', None),
            ('template', collections.OrderedDict([
                ('metadata', {'creationTimestamp': None}), ('spec', {'containers': None})])),
            ('strategy', {})])),
        ('status', {})]),
}


def _sub(name, kind, verbs, group='', version='v1'):
    return (name, group, version, kind, verbs)


RESOURCES = [
    ResourceType('', 'v1', 'configmaps', 'configmap', 'ConfigMap', True, ['cm']),
    ResourceType('', 'v1', 'events', 'event', 'Event', True, ['ev'],
                 field_labels=('involvedObject.kind', 'involvedObject.namespace',
                               'involvedObject.name', 'involvedObject.uid',
                               'involvedObject.apiVersion', 'involvedObject.resourceVersion',
                               'involvedObject.fieldPath', 'reason', 'reportingComponent',
                               'source', 'type')),
    ResourceType('', 'v1', 'namespaces', 'namespace', 'Namespace', False, ['ns'],
                 verbs=NS_VERBS, field_labels=('status.phase',),
                 subresources=[_sub('finalize', 'Namespace', ['update']),
                               _sub('status', 'Namespace', ['get', 'patch', 'update'])],
                 delete_returns_object=True, status_subresource=True),
    ResourceType('', 'v1', 'nodes', 'node', 'Node', False, ['no'],
                 field_labels=('spec.unschedulable',),
                 subresources=[_sub('proxy', 'NodeProxyOptions',
                                    ['create', 'delete', 'get', 'patch', 'update']),
                               _sub('status', 'Node', ['get', 'patch', 'update'])],
                 status_subresource=True),
    ResourceType('', 'v1', 'pods', 'pod', 'Pod', True, ['po'], categories=['all'],
                 field_labels=('spec.nodeName', 'spec.restartPolicy', 'spec.schedulerName',
                               'spec.serviceAccountName', 'spec.hostNetwork', 'status.phase',
                               'status.podIP', 'status.podIPs', 'status.nominatedNodeName'),
                 subresources=[
                     _sub('attach', 'PodAttachOptions', ['create', 'get']),
                     _sub('binding', 'Binding', ['create']),
                     _sub('ephemeralcontainers', 'Pod', ['get', 'patch', 'update']),
                     _sub('eviction', 'Eviction', ['create'], 'policy'),
                     _sub('exec', 'PodExecOptions', ['create', 'get']),
                     _sub('log', 'Pod', ['get']),
                     _sub('portforward', 'PodPortForwardOptions', ['create', 'get']),
                     _sub('proxy', 'PodProxyOptions',
                          ['create', 'delete', 'get', 'patch', 'update']),
                     _sub('status', 'Pod', ['get', 'patch', 'update'])],
                 delete_returns_object=True, status_subresource=True),
    ResourceType('', 'v1', 'serviceaccounts', 'serviceaccount', 'ServiceAccount', True, ['sa'],
                 subresources=[_sub('token', 'TokenRequest', ['create'],
                                    'authentication.k8s.io')]),
    ResourceType('', 'v1', 'services', 'service', 'Service', True, ['svc'], categories=['all'],
                 subresources=[_sub('proxy', 'ServiceProxyOptions',
                                    ['create', 'delete', 'get', 'patch', 'update']),
                               _sub('status', 'Service', ['get', 'patch', 'update'])],
                 status_subresource=True),
    ResourceType('apps', 'v1', 'deployments', 'deployment', 'Deployment', True, ['deploy'],
                 categories=['all'],
                 subresources=[_sub('scale', 'Scale', ['get', 'patch', 'update'],
                                    'autoscaling'),
                               _sub('status', 'Deployment', ['get', 'patch', 'update'])],
                 status_subresource=True),
    ResourceType('rbac.authorization.k8s.io', 'v1', 'clusterroles', 'clusterrole',
                 'ClusterRole', False),
    ResourceType('rbac.authorization.k8s.io', 'v1', 'clusterrolebindings',
                 'clusterrolebinding', 'ClusterRoleBinding', False),
    ResourceType('example.com', 'v1', 'widgets', 'widget', 'Widget', True, ['wd'],
                 verbs=CRD_VERBS, crd=True, delete_returns_object=True),
]

BY_PATH = {(rt.api_version, rt.plural): rt for rt in RESOURCES}
BY_KIND = {(rt.api_version, rt.kind): rt for rt in RESOURCES}
BY_PLURAL = {rt.plural: rt for rt in RESOURCES}

# Groups in discovery order (the real server sorts by group priority).
GROUPS = [('apps', ['v1']), ('rbac.authorization.k8s.io', ['v1']), ('example.com', ['v1'])]

# Groups this server does not serve (--without-group): absent from
# discovery, OpenAPI and routing, as on a cluster without that CRD.
HIDDEN_GROUPS = set()


def served_groups():
    return [(n, v) for n, v in GROUPS if n not in HIDDEN_GROUPS]


def unknown_path_is_json(group):
    """Whether a request for a resource or version this server lacks, under
    /api or /apis/GROUP, is answered by the group's own handler (a JSON
    NotFound Status: the core group and built-in groups) or falls through to
    the apiserver's NotFound handler (text: a group nobody serves, or a
    custom resource group, whose handler delegates)."""
    if group == '':
        return True
    if group in HIDDEN_GROUPS:
        return False
    types = [rt for rt in RESOURCES if rt.group == group]
    return bool(types) and not any(rt.crd for rt in types)


def lookup(api_version, plural):
    rt = BY_PATH.get((api_version, plural))
    return None if rt is None or rt.group in HIDDEN_GROUPS else rt


def _resource_entry(rt):
    e = collections.OrderedDict([
        ('name', rt.plural), ('singularName', rt.singular), ('namespaced', rt.namespaced),
        ('kind', rt.kind), ('verbs', rt.verbs)])
    if rt.short_names:
        e['shortNames'] = rt.short_names
    if rt.categories:
        e['categories'] = rt.categories
    e['storageVersionHash'] = rt.storage_version_hash
    return e


def _types_in(api_version):
    return [rt for rt in RESOURCES
            if rt.api_version == api_version and rt.group not in HIDDEN_GROUPS]


def api_resource_list(api_version):
    """/api/v1 or /apis/G/V (legacy discovery), or None when not served."""
    types = _types_in(api_version)
    if not types:
        return None
    resources = []
    for rt in types:
        resources.append(_resource_entry(rt))
        for name, group, version, kind, verbs in rt.subresources:
            s = collections.OrderedDict([
                ('name', rt.plural + '/' + name), ('singularName', ''),
                ('namespaced', rt.namespaced)])
            if group:
                s['group'] = group
                s['version'] = version
            s['kind'] = kind
            s['verbs'] = verbs
            resources.append(s)
    doc = collections.OrderedDict([('kind', 'APIResourceList')])
    if '/' in api_version:
        doc['apiVersion'] = 'v1'
    doc['groupVersion'] = api_version
    doc['resources'] = resources
    return doc


def api_versions(server_address):
    return collections.OrderedDict([
        ('kind', 'APIVersions'), ('versions', ['v1']),
        ('serverAddressByClientCIDRs', [collections.OrderedDict([
            ('clientCIDR', '0.0.0.0/0'), ('serverAddress', server_address)])])])


def _group_entry(name, versions):
    gvs = [collections.OrderedDict([('groupVersion', name + '/' + v), ('version', v)])
           for v in versions]
    return collections.OrderedDict([('name', name), ('versions', gvs),
                                    ('preferredVersion', gvs[0])])


def api_group_list():
    return collections.OrderedDict([
        ('kind', 'APIGroupList'), ('apiVersion', 'v1'),
        ('groups', [_group_entry(n, v) for n, v in served_groups()])])


def api_group(name):
    for n, v in served_groups():
        if n == name:
            g = collections.OrderedDict([('kind', 'APIGroup'), ('apiVersion', 'v1')])
            g.update(_group_entry(n, v))
            return g
    return None


def _aggregated_version(group, version):
    resources = []
    for rt in RESOURCES:
        if rt.group != group or rt.version != version:
            continue
        # A built-in resource's responseKind has its kind only (the
        # installer copies the legacy APIResource's group and version, empty
        # unless they differ from the group's); a custom resource's has all
        # three.
        r = collections.OrderedDict([
            ('resource', rt.plural),
            ('responseKind', collections.OrderedDict([
                ('group', rt.group if rt.crd else ''),
                ('version', rt.version if rt.crd else ''), ('kind', rt.kind)])),
            ('scope', 'Namespaced' if rt.namespaced else 'Cluster'),
            ('singularResource', rt.singular), ('verbs', rt.verbs)])
        if rt.short_names:
            r['shortNames'] = rt.short_names
        if rt.categories:
            r['categories'] = rt.categories
        subs = []
        for name, g, v, kind, verbs in rt.subresources:
            subs.append(collections.OrderedDict([
                ('subresource', name),
                ('responseKind', collections.OrderedDict([
                    ('group', g), ('version', v if g else ''), ('kind', kind)])),
                ('verbs', verbs)]))
        if subs:
            r['subresources'] = subs
        resources.append(r)
    return collections.OrderedDict([('version', version), ('resources', resources),
                                    ('freshness', 'Current')])


def aggregated_discovery(legacy, api_version='apidiscovery.k8s.io/v2'):
    """APIGroupDiscoveryList for /api (legacy=True) or /apis."""
    items = []
    if legacy:
        items.append(collections.OrderedDict([
            ('metadata', {'creationTimestamp': None}),
            ('versions', [_aggregated_version('', 'v1')])]))
    else:
        for name, versions in served_groups():
            items.append(collections.OrderedDict([
                ('metadata', collections.OrderedDict([('name', name),
                                                      ('creationTimestamp', None)])),
                ('versions', [_aggregated_version(name, v) for v in versions])]))
    return collections.OrderedDict([('kind', 'APIGroupDiscoveryList'),
                                    ('apiVersion', api_version), ('metadata', {}),
                                    ('items', items)])


# --- OpenAPI ------------------------------------------------------------------
# Real documents of a v1.28.7 kube-apiserver, trimmed to the types served
# here (tools/openapi.py made them; kfake/openapi/).  They are read the
# first time a client asks, so that start-up stays fast.

_OPENAPI_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'openapi')
_openapi_lock = threading.Lock()
_openapi_cache = {}


def _etag(data):
    """kube-openapi's computeETag: SHA-512, upper-case hex."""
    return hashlib.sha512(data).hexdigest().upper()


def _read_gz(name):
    with gzip.open(os.path.join(_OPENAPI_DIR, name), 'rb') as f:
        return f.read()


def _hidden_path(path):
    return any(path.startswith('/apis/%s/' % g) for g in HIDDEN_GROUPS)


def _hidden_definition(name):
    # com.example.v1.Widget: a CRD's definitions are named by its reversed group.
    return any(name.startswith('.'.join(reversed(g.split('.'))) + '.') for g in HIDDEN_GROUPS)


def _pb_varint(buf, i):
    v = shift = 0
    while True:
        b = buf[i]
        i += 1
        v |= (b & 0x7f) << shift
        shift += 7
        if b < 0x80:
            return v, i


def _pb_put_varint(v):
    out = bytearray()
    while True:
        b = v & 0x7f
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def _pb_fields(buf):
    """(field number, wire type, raw bytes of the whole field, payload) of a message."""
    i = 0
    while i < len(buf):
        start = i
        key, i = _pb_varint(buf, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            _, i = _pb_varint(buf, i)
            payload = None
        elif wt == 2:
            n, i = _pb_varint(buf, i)
            payload = buf[i:i + n]
            i += n
        elif wt == 1:
            i += 8
            payload = None
        elif wt == 5:
            i += 4
            payload = None
        else:
            raise ValueError('unexpected wire type %d' % wt)
        yield num, wt, buf[start:i], payload


def _pb_name(entry):
    """The name (field 1) of a NamedPathItem or NamedSchema."""
    for num, wt, _, payload in _pb_fields(entry):
        if num == 1 and wt == 2:
            return payload.decode()
    return ''


def _pb_filter(msg, field, keep):
    """msg with the entries of repeated field (named maps) that keep() refuses dropped."""
    out = bytearray()
    for num, wt, raw, payload in _pb_fields(msg):
        if num == field and wt == 2 and not keep(_pb_name(payload)):
            continue
        out += raw
    return bytes(out)


def _pb_replace(msg, field, fn):
    """msg with the message in field replaced by fn(it)."""
    out = bytearray()
    for num, wt, raw, payload in _pb_fields(msg):
        if num == field and wt == 2:
            new = fn(payload)
            out += _pb_put_varint(num << 3 | 2) + _pb_put_varint(len(new)) + new
        else:
            out += raw
    return bytes(out)


def _openapi_v2():
    """(json bytes, protobuf bytes, etag) of /openapi/v2 for the served groups."""
    with _openapi_lock:
        got = _openapi_cache.get('v2')
        if got is None:
            raw = _read_gz('v2.json.gz')
            pb = _read_gz('v2.pb.gz')
            if HIDDEN_GROUPS:
                doc = json.loads(raw)  # a document, not a request body: no Go numbers
                doc['paths'] = collections.OrderedDict(
                    (k, v) for k, v in doc['paths'].items() if not _hidden_path(k))
                doc['definitions'] = collections.OrderedDict(
                    (k, v) for k, v in doc['definitions'].items() if not _hidden_definition(k))
                raw = json.dumps(doc, separators=(',', ':'), ensure_ascii=False).encode()
                # gnostic's Document: paths = 8 (Paths.path = 2), definitions = 9
                # (Definitions.additional_properties = 1): the same entries go.
                pb = _pb_replace(pb, 8, lambda m: _pb_filter(
                    m, 2, lambda name: not _hidden_path(name)))
                pb = _pb_replace(pb, 9, lambda m: _pb_filter(
                    m, 1, lambda name: not _hidden_definition(name)))
            got = (raw, pb, _etag(raw))
            _openapi_cache['v2'] = got
        return got


def openapi_v2(accept):
    """(content type, body, etag) of /openapi/v2 as kube-openapi's handler
    negotiates it (the first clause with a type it has), None for 406."""
    # The deprecated subtype is accepted, the current one is answered.
    pb_types = ('com.github.proto-openapi.spec.v2@v1.0+protobuf',
                'com.github.proto-openapi.spec.v2.v1.0+protobuf')
    for mt, _ in _accept_clauses(accept):
        t, _, sub = mt.partition('/')
        if t not in ('application', '*'):
            continue
        for want in ('json',) + pb_types:
            if sub in (want, '*'):
                raw, pb, etag = _openapi_v2()
                if want == 'json':
                    return 'application/json', raw, etag
                return 'application/' + pb_types[1], pb, etag
    return None


def _accept_clauses(accept):
    """goautoneg.ParseAccept: media types by q (stable), q=0 dropped."""
    out = []
    for i, part in enumerate((accept or '*/*').split(',')):
        bits = [b.strip() for b in part.split(';')]
        if not bits[0]:
            continue
        q = 1.0
        for b in bits[1:]:
            k, _, v = b.partition('=')
            if k.strip().lower() == 'q':
                try:
                    q = float(v)
                except ValueError:
                    q = 0.0
        if q > 0:
            out.append((-q, i, bits[0].lower()))
    out.sort()
    return [(mt, None) for _, _, mt in out]


def _v3_names():
    names = ['api', 'api/v1', 'apis']
    for g, vs in served_groups():
        names.append('apis/' + g)
        names += ['apis/%s/%s' % (g, v) for v in vs]
    return names + ['version']


def openapi_v3_doc(gv_path):
    """(bytes, etag) of the OpenAPI v3 document of 'api/v1', 'apis/G/V',
    'apis/G', 'api', 'apis' or 'version'; None when not served."""
    if gv_path not in _v3_names():
        return None
    with _openapi_lock:
        key = 'v3/' + gv_path
        got = _openapi_cache.get(key)
        if got is None:
            raw = _read_gz('v3/%s.json.gz' % gv_path.replace('/', '__'))
            got = (raw, _etag(raw))
            _openapi_cache[key] = got
        return got


def openapi_v3_accepts_json(accept):
    """Whether handler3 would answer JSON (application/json, */*, application/*)."""
    for mt, _ in _accept_clauses(accept):
        t, _, sub = mt.partition('/')
        if t in ('application', '*') and sub in ('json', '*'):
            return True
        if t in ('application', '*') and sub == 'com.github.proto-openapi.spec.v3@v1.0+protobuf':
            return False
    return False


def openapi_v3_index():
    """The /openapi/v3 discovery document (bytes) and its etag."""
    paths = collections.OrderedDict()
    for p in sorted(_v3_names()):
        _, etag = openapi_v3_doc(p)
        paths[p] = {'serverRelativeURL': '/openapi/v3/%s?hash=%s' % (p, etag)}
    raw = json.dumps({'paths': paths}, separators=(',', ':')).encode()
    return raw, _etag(raw)
