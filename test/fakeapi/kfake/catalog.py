"""The served resource types, and the discovery and OpenAPI documents about them."""

import base64
import collections
import hashlib

from . import jsonutil

SERVER_VERSION = collections.OrderedDict([
    ('major', '1'), ('minor', '32'), ('gitVersion', 'v1.32.0'),
    ('gitCommit', '70d3cc986aa8221cd1dfb1121852688902d3bf53'), ('gitTreeState', 'clean'),
    ('buildDate', '2024-12-11T17:59:15Z'), ('goVersion', 'go1.23.3'), ('compiler', 'gc'),
    ('platform', 'linux/amd64')])

ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']
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
                 crd=True, delete_returns_object=True),
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
        r = collections.OrderedDict([
            ('resource', rt.plural),
            ('responseKind', collections.OrderedDict([
                ('group', rt.group), ('version', rt.version), ('kind', rt.kind)])),
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
                    ('group', g), ('version', v), ('kind', kind)])),
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


# --- OpenAPI v3 --------------------------------------------------------------
# kubectl create/apply (validation "Strict") only ask OpenAPI v3 whether the
# PATCH operation of a kind declares the fieldValidation query parameter; the
# documents below carry the operations with their parameters but no schemas.

_QUERY_PARAMS = ['dryRun', 'fieldManager', 'fieldValidation', 'force', 'pretty']


def _operation(rt, verb, op_id):
    params = [collections.OrderedDict([
        ('name', p), ('in', 'query'), ('description', p), ('schema', {'type': 'string'}),
        ('uniqueItems', True)]) for p in _QUERY_PARAMS]
    return collections.OrderedDict([
        ('tags', [rt.group.replace('.', '') + '_' + rt.version if rt.group else 'core_v1']),
        ('description', '%s the specified %s' % (verb, rt.kind)),
        ('operationId', op_id), ('parameters', params),
        ('responses', {'200': {'description': 'OK'}}),
        ('x-kubernetes-action', verb),
        ('x-kubernetes-group-version-kind', collections.OrderedDict([
            ('group', rt.group), ('version', rt.version), ('kind', rt.kind)]))])


def openapi_v3_paths(hash_of):
    """The /openapi/v3 index; hash_of(gv_path) gives the document hash."""
    paths = collections.OrderedDict()
    for p in ['api/v1'] + ['apis/%s/%s' % (g, v) for g, vs in served_groups() for v in vs]:
        paths[p] = {'serverRelativeURL': '/openapi/v3/%s?hash=%s' % (p, hash_of(p))}
    return {'paths': paths}


def openapi_v3_doc(gv_path):
    """A minimal OpenAPI v3 document for 'api/v1' or 'apis/G/V', or None."""
    if gv_path == 'api/v1':
        api_version = 'v1'
    elif gv_path.startswith('apis/'):
        api_version = gv_path[len('apis/'):]
    else:
        return None
    types = _types_in(api_version)
    if not types:
        return None
    paths = collections.OrderedDict()
    for rt in types:
        name_path = rt.prefix + ('/namespaces/{namespace}' if rt.namespaced else '') + \
            '/' + rt.plural + '/{name}'
        coll_path = rt.prefix + ('/namespaces/{namespace}' if rt.namespaced else '') + \
            '/' + rt.plural
        ns = 'Namespaced' if rt.namespaced else ''
        paths[coll_path] = collections.OrderedDict([
            ('post', _operation(rt, 'post', 'create%s%s' % (ns, rt.kind)))])
        paths[name_path] = collections.OrderedDict([
            ('put', _operation(rt, 'put', 'replace%s%s' % (ns, rt.kind))),
            ('patch', _operation(rt, 'patch', 'patch%s%s' % (ns, rt.kind)))])
    return collections.OrderedDict([
        ('openapi', '3.0.0'),
        ('info', collections.OrderedDict([('title', 'Kubernetes'),
                                          ('version', SERVER_VERSION['gitVersion'])])),
        ('paths', paths), ('components', {'schemas': {}})])
