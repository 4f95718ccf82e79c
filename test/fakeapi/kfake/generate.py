"""Initial data: a small realistic cluster, plus --pods N generated pods.

Pods look like what a real API server returns for Deployment-managed pods
(managedFields from kube-controller-manager and kubelet, two containers,
projected service-account volume, conditions, containerStatuses) and weigh
5-9 KB each.  Everything is derived from --seed except timestamps, which are
relative to the start time.  Generated pods are built from per-app JSON
templates so that 100,000 of them load in a few seconds.
"""

import collections
import random
import re
import time

from . import catalog
from . import jsonutil
from . import store as storemod

OD = collections.OrderedDict
_SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789'
_APP_NAMES = ['api', 'web', 'worker', 'cache', 'gateway', 'auth', 'billing', 'search', 'mailer',
              'queue', 'scheduler', 'metrics', 'frontend', 'backend', 'ingest', 'reports']
_TIERS = ['frontend', 'backend', 'cache', 'db']
_IMAGES = ['registry.example.com/%s:1.%d.%d', 'ghcr.io/example/%s:v2.%d.%d',
           'docker.io/library/%s:3.%d.%d']
_SIDECAR_IMAGE = 'registry.example.com/log-shipper:0.%d.%d'

def _suffix(rng, n):
    return ''.join(rng.choice(_SUFFIX_ALPHABET) for _ in range(n))


def _uid(rng):
    b = rng.getrandbits(128)
    h = '%032x' % b
    return '%s-%s-4%s-%s%s-%s' % (h[:8], h[8:12], h[13:16], '89ab'[b & 3], h[17:20], h[20:32])


def _hex(rng, n):
    return '%0*x' % (n, rng.getrandbits(4 * n))


def _pod_cidr(node):
    return '10.%d.%d.0/24' % (244 + node // 256, node % 256)


def _fields(*names):
    """managedFields fieldsV1 for a list of dotted names ('f:' prefixed)."""
    out = OD()
    for n in names:
        cur = out
        for part in n.split('|'):
            cur = cur.setdefault(part, OD())
    return out


def _double(quantity):
    """'250m' -> '500m', '64Mi' -> '128Mi'."""
    digits = quantity.rstrip('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ')
    return str(int(digits) * 2) + quantity[len(digits):]


def _container(name, image, env, port, mounts, cpu, mem):
    c = OD()
    c['name'] = name
    c['image'] = image
    if port:
        c['ports'] = [OD([('name', 'http' if port != 9090 else 'metrics'),
                          ('containerPort', port), ('protocol', 'TCP')])]
    c['env'] = [OD([('name', k), ('value', v)]) for k, v in env]
    c['resources'] = OD([('limits', OD([('cpu', _double(cpu)), ('memory', _double(mem))])),
                         ('requests', OD([('cpu', cpu), ('memory', mem)]))])
    c['volumeMounts'] = mounts
    c['terminationMessagePath'] = '/dev/termination-log'
    c['terminationMessagePolicy'] = 'File'
    c['imagePullPolicy'] = 'IfNotPresent'
    return c


def _container_fields(c):
    key = 'k:{"name":"%s"}' % c['name']
    names = [key + '|.', key + '|f:env', key + '|f:image', key + '|f:imagePullPolicy',
             key + '|f:name', key + '|f:resources|.', key + '|f:resources|f:limits|.',
             key + '|f:resources|f:limits|f:cpu', key + '|f:resources|f:limits|f:memory',
             key + '|f:resources|f:requests|.', key + '|f:resources|f:requests|f:cpu',
             key + '|f:resources|f:requests|f:memory', key + '|f:terminationMessagePath',
             key + '|f:terminationMessagePolicy', key + '|f:volumeMounts']
    for e in c['env']:
        ek = key + '|f:env|k:{"name":"%s"}' % e['name']
        names += [ek + '|.', ek + '|f:name', ek + '|f:value']
    for p in c.get('ports', []):
        pk = key + '|f:ports|k:{"containerPort":%d,"protocol":"TCP"}' % p['containerPort']
        names += [key + '|f:ports|.', pk + '|.', pk + '|f:containerPort', pk + '|f:name',
                  pk + '|f:protocol']
    return ['f:spec|f:containers|' + n for n in names]


class AppSpec:
    """What the pods of one Deployment have in common."""

    def __init__(self, rng, ns, name, tier):
        self.ns = ns
        self.name = name
        self.tier = tier
        self.hash = _suffix(rng, 10)
        self.labels = {'app': name, 'pod-template-hash': self.hash, 'tier': tier}
        self.rs_uid = _uid(rng)
        base = name.split('-')[0]
        self.image = rng.choice(_IMAGES) % (base, rng.randrange(30), rng.randrange(10))
        self.sidecar_image = _SIDECAR_IMAGE % (rng.randrange(20), rng.randrange(10))
        n_env = rng.randrange(2, 11)
        self.env = [('APP_NAME', name), ('APP_TIER', tier), ('LOG_LEVEL', rng.choice(
            ['info', 'debug', 'warn'])), ('POD_NAMESPACE', ns)]
        for i in range(n_env):
            self.env.append(('%s_SETTING_%d' % (base.upper(), i),
                             'value-%s-%d' % (_suffix(rng, 12), rng.randrange(100000))))
        self.sidecar_env = [('SHIP_TO', 'http://logs.%s.svc:9200' % ns),
                            ('BATCH_SIZE', str(rng.choice([128, 256, 512])))]
        self.port = rng.choice([8080, 8443, 3000, 5000])
        self.cpu = rng.choice(['50m', '100m', '250m', '500m'])
        self.mem = rng.choice(['64Mi', '128Mi', '256Mi', '512Mi'])
        self.sa = rng.choice(['default', name.split('-')[0]])
        self.annotations = OD()
        if rng.random() < 0.5:
            self.annotations['prometheus.io/scrape'] = 'true'
            self.annotations['prometheus.io/port'] = '9090'
        if rng.random() < 0.3:
            self.annotations['kubectl.kubernetes.io/restartedAt'] = '2024-11-02T10:%02d:00Z' % (
                rng.randrange(60))


def make_pod(app, p):
    """A Pod dict.  p: name, uid, rv, created, started, node, ip, host_ip, cid1,
    cid2, token, restarts (int), finished, phase ('Running', 'Pending',
    'Succeeded', 'Failed')."""
    phase = p['phase']
    mounts = [OD([('name', 'config'), ('mountPath', '/etc/%s' % app.name.split('-')[0]),
                  ('readOnly', True)]),
              OD([('name', p['token']), ('readOnly', True),
                  ('mountPath', '/var/run/secrets/kubernetes.io/serviceaccount')])]
    c1 = _container(app.name.split('-')[0], app.image, app.env, app.port, mounts, app.cpu,
                    app.mem)
    c2 = _container('log-shipper', app.sidecar_image, app.sidecar_env, 9090,
                    [OD([('name', 'varlog'), ('mountPath', '/var/log/app')]), mounts[1]],
                    '10m', '32Mi')
    meta = OD()
    meta['name'] = p['name']
    meta['generateName'] = '%s-%s-' % (app.name, app.hash)
    meta['namespace'] = app.ns
    meta['uid'] = p['uid']
    meta['resourceVersion'] = p['rv']
    meta['creationTimestamp'] = p['created']
    meta['labels'] = OD([('app', app.name), ('pod-template-hash', app.hash),
                         ('tier', app.tier)])
    if app.annotations:
        meta['annotations'] = app.annotations
    meta['ownerReferences'] = [OD([
        ('apiVersion', 'apps/v1'), ('kind', 'ReplicaSet'), ('name', '%s-%s' % (app.name, app.hash)),
        ('uid', app.rs_uid), ('controller', True), ('blockOwnerDeletion', True)])]
    spec_fields = ['f:metadata|f:generateName', 'f:metadata|f:labels|.',
                   'f:metadata|f:labels|f:app', 'f:metadata|f:labels|f:pod-template-hash',
                   'f:metadata|f:labels|f:tier', 'f:metadata|f:ownerReferences|.',
                   'f:metadata|f:ownerReferences|k:{"uid":"%s"}' % app.rs_uid]
    spec_fields += _container_fields(c1) + _container_fields(c2)
    spec_fields += ['f:spec|f:dnsPolicy', 'f:spec|f:enableServiceLinks',
                    'f:spec|f:restartPolicy', 'f:spec|f:schedulerName',
                    'f:spec|f:securityContext', 'f:spec|f:serviceAccount',
                    'f:spec|f:serviceAccountName', 'f:spec|f:terminationGracePeriodSeconds',
                    'f:spec|f:volumes|.', 'f:spec|f:volumes|k:{"name":"config"}|.',
                    'f:spec|f:volumes|k:{"name":"config"}|f:configMap|.',
                    'f:spec|f:volumes|k:{"name":"config"}|f:configMap|f:name',
                    'f:spec|f:volumes|k:{"name":"config"}|f:name',
                    'f:spec|f:volumes|k:{"name":"varlog"}|.',
                    'f:spec|f:volumes|k:{"name":"varlog"}|f:emptyDir',
                    'f:spec|f:volumes|k:{"name":"varlog"}|f:name']
    managed = [OD([('manager', 'kube-controller-manager'), ('operation', 'Update'),
                   ('apiVersion', 'v1'), ('time', p['created']), ('fieldsType', 'FieldsV1'),
                   ('fieldsV1', _fields(*spec_fields))])]
    if phase == 'Pending':
        managed.append(OD([
            ('manager', 'kube-scheduler'), ('operation', 'Update'), ('apiVersion', 'v1'),
            ('time', p['created']), ('fieldsType', 'FieldsV1'),
            ('fieldsV1', _fields(*['f:status|f:conditions|.'] + [
                'f:status|f:conditions|k:{"type":"PodScheduled"}|' + f
                for f in ('.', 'f:lastProbeTime', 'f:lastTransitionTime', 'f:message',
                          'f:reason', 'f:status', 'f:type')])),
            ('subresource', 'status')]))
    else:
        status_fields = ['f:status|f:conditions|k:{"type":"%s"}|%s' % (t, f)
                         for t in ('ContainersReady', 'Initialized', 'PodReadyToStartContainers',
                                   'Ready')
                         for f in ('.', 'f:lastProbeTime', 'f:lastTransitionTime', 'f:status',
                                   'f:type')]
        status_fields += ['f:status|f:containerStatuses', 'f:status|f:hostIP',
                          'f:status|f:hostIPs', 'f:status|f:phase', 'f:status|f:podIP',
                          'f:status|f:podIPs|.',
                          'f:status|f:podIPs|k:{"ip":"%s"}|.' % p['ip'],
                          'f:status|f:podIPs|k:{"ip":"%s"}|f:ip' % p['ip'],
                          'f:status|f:startTime']
        managed.append(OD([('manager', 'kubelet'), ('operation', 'Update'), ('apiVersion', 'v1'),
                           ('time', p['started']), ('fieldsType', 'FieldsV1'),
                           ('fieldsV1', _fields(*status_fields)), ('subresource', 'status')]))
    meta['managedFields'] = managed

    spec = OD()
    spec['volumes'] = [
        OD([('name', 'config'), ('configMap', OD([('name', app.name + '-config'),
                                                  ('defaultMode', 420)]))]),
        OD([('name', 'varlog'), ('emptyDir', {})]),
        OD([('name', p['token']), ('projected', OD([
            ('sources', [
                {'serviceAccountToken': OD([('expirationSeconds', 3607), ('path', 'token')])},
                {'configMap': OD([('name', 'kube-root-ca.crt'), ('items', [
                    OD([('key', 'ca.crt'), ('path', 'ca.crt')])])])},
                {'downwardAPI': {'items': [OD([('path', 'namespace'), ('fieldRef', OD([
                    ('apiVersion', 'v1'), ('fieldPath', 'metadata.namespace')]))])]}}]),
            ('defaultMode', 420)]))])]
    spec['containers'] = [c1, c2]
    spec['restartPolicy'] = 'Always'
    spec['terminationGracePeriodSeconds'] = 30
    spec['dnsPolicy'] = 'ClusterFirst'
    spec['serviceAccountName'] = app.sa
    spec['serviceAccount'] = app.sa
    if phase != 'Pending':
        spec['nodeName'] = p['node']
    spec['securityContext'] = {}
    spec['schedulerName'] = 'default-scheduler'
    spec['tolerations'] = [
        OD([('key', 'node.kubernetes.io/not-ready'), ('operator', 'Exists'),
            ('effect', 'NoExecute'), ('tolerationSeconds', 300)]),
        OD([('key', 'node.kubernetes.io/unreachable'), ('operator', 'Exists'),
            ('effect', 'NoExecute'), ('tolerationSeconds', 300)])]
    spec['priority'] = 0
    spec['enableServiceLinks'] = True
    spec['preemptionPolicy'] = 'PreemptLowerPriority'

    status = OD()
    status['phase'] = phase
    if phase == 'Pending':
        status['conditions'] = [OD([
            ('type', 'PodScheduled'), ('status', 'False'), ('lastProbeTime', None),
            ('lastTransitionTime', p['created']), ('reason', 'Unschedulable'),
            ('message', '0/%d nodes are available: 1 Insufficient cpu. preemption: 0/%d nodes '
             'are available: 1 No preemption victims found for incoming pod.' % (2, 2))])]
        status['qosClass'] = 'Burstable'
        return OD([('metadata', meta), ('spec', spec), ('status', status)])
    running = phase == 'Running'
    ready = 'True' if running else 'False'
    conds = [('PodReadyToStartContainers', 'True' if running else 'False'),
             ('Initialized', 'True'), ('Ready', ready), ('ContainersReady', ready),
             ('PodScheduled', 'True')]
    status['conditions'] = []
    for t, s in conds:
        c = OD([('type', t), ('status', s), ('lastProbeTime', None),
                ('lastTransitionTime', p['started'])])
        if s == 'False' and t in ('Ready', 'ContainersReady'):
            c['reason'] = 'PodCompleted'
        status['conditions'].append(c)
    status['hostIP'] = p['host_ip']
    status['hostIPs'] = [{'ip': p['host_ip']}]
    status['podIP'] = p['ip']
    status['podIPs'] = [{'ip': p['ip']}]
    status['startTime'] = p['started']
    statuses = []
    for c, cid in ((c1, p['cid1']), (c2, p['cid2'])):
        cs = OD()
        cs['name'] = c['name']
        if running:
            cs['state'] = {'running': {'startedAt': p['started']}}
        else:
            code = 0 if phase == 'Succeeded' else 1
            cs['state'] = {'terminated': OD([
                ('exitCode', code), ('reason', 'Completed' if code == 0 else 'Error'),
                ('startedAt', p['started']), ('finishedAt', p['finished']),
                ('containerID', 'containerd://' + cid)])}
        if running and p['restarts'] and c is c1:
            cs['lastState'] = {'terminated': OD([
                ('exitCode', 137), ('reason', 'OOMKilled'), ('startedAt', p['created']),
                ('finishedAt', p['finished']), ('containerID', 'containerd://' + cid)])}
        else:
            cs['lastState'] = {}
        cs['ready'] = running
        cs['restartCount'] = p['restarts'] if c is c1 else 0
        cs['image'] = c['image']
        cs['imageID'] = c['image'].split(':')[0] + '@sha256:' + p['cid2' if c is c1 else 'cid1']
        cs['containerID'] = 'containerd://' + cid
        cs['started'] = running
        statuses.append(cs)
    status['containerStatuses'] = statuses
    status['qosClass'] = 'Burstable'
    return OD([('metadata', meta), ('spec', spec), ('status', status)])


# --- template compilation for bulk generation --------------------------------

_PH = re.compile(r'"@@N:(\w+)@@"|@@(\w+)@@')
_PLACEHOLDERS = {k: '@@%s@@' % k for k in (
    'name', 'uid', 'rv', 'created', 'started', 'node', 'ip', 'host_ip', 'cid1', 'cid2',
    'token', 'finished')}


def _compile(obj):
    s = jsonutil.dumps_str(storemod.canonical(catalog.BY_PLURAL['pods'], obj))
    parts, names = [], []
    pos = 0
    for m in _PH.finditer(s):
        parts.append(s[pos:m.start()])
        names.append(m.group(1) or m.group(2))
        pos = m.end()
    parts.append(s[pos:])
    return parts, names


def _fill(template, values):
    parts, names = template
    out = [parts[0]]
    for i, n in enumerate(names):
        out.append(values[n])
        out.append(parts[i + 1])
    return ''.join(out)


class Generator:
    def __init__(self, seed, start_time):
        self.rng = random.Random(seed)
        self.now = start_time
        self.ips_used = {}

    def ts(self, seconds_ago):
        return jsonutil.rfc3339(self.now - seconds_ago)

    def namespace(self, name, age):
        labels = OD([('kubernetes.io/metadata.name', name)])
        return OD([('metadata', OD([
            ('name', name), ('uid', _uid(self.rng)), ('creationTimestamp', self.ts(age)),
            ('labels', labels),
            ('managedFields', [OD([
                ('manager', 'kube-apiserver'), ('operation', 'Update'), ('apiVersion', 'v1'),
                ('time', self.ts(age)), ('fieldsType', 'FieldsV1'),
                ('fieldsV1', _fields('f:metadata|f:labels|.',
                                     'f:metadata|f:labels|f:kubernetes.io/metadata.name'))])])])),
            ('spec', {'finalizers': ['kubernetes']}), ('status', {'phase': 'Active'})])

    def node(self, i, age):
        name = 'node-%d' % i
        labels = OD([('beta.kubernetes.io/arch', 'amd64'), ('beta.kubernetes.io/os', 'linux'),
                     ('kubernetes.io/arch', 'amd64'), ('kubernetes.io/hostname', name),
                     ('kubernetes.io/os', 'linux'),
                     ('topology.kubernetes.io/zone', 'zone-%s' % 'abc'[i % 3])])
        if i == 0:
            labels['node-role.kubernetes.io/control-plane'] = ''
        ip = '10.0.%d.%d' % (i // 250, i % 250 + 2)
        hb = self.ts(self.rng.randrange(5, 40))
        conds = []
        for t, s, reason, msg in (
                ('MemoryPressure', 'False', 'KubeletHasSufficientMemory',
                 'kubelet has sufficient memory available'),
                ('DiskPressure', 'False', 'KubeletHasNoDiskPressure',
                 'kubelet has no disk pressure'),
                ('PIDPressure', 'False', 'KubeletHasSufficientPID',
                 'kubelet has sufficient PID available'),
                ('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status')):
            conds.append(OD([('type', t), ('status', s), ('lastHeartbeatTime', hb),
                             ('lastTransitionTime', self.ts(age - 60)), ('reason', reason),
                             ('message', msg)]))
        cap = OD([('cpu', '8'), ('ephemeral-storage', '101430960Ki'), ('hugepages-1Gi', '0'),
                  ('hugepages-2Mi', '0'), ('memory', '32827152Ki'), ('pods', '110')])
        alloc = OD(cap)
        alloc['cpu'] = '7910m'
        alloc['memory'] = '31676176Ki'
        return OD([
            ('metadata', OD([
                ('name', name), ('uid', _uid(self.rng)), ('creationTimestamp', self.ts(age)),
                ('labels', labels),
                ('annotations', OD([
                    ('node.alpha.kubernetes.io/ttl', '0'),
                    ('volumes.kubernetes.io/controller-managed-attach-detach', 'true')]))])),
            ('spec', OD([('podCIDR', _pod_cidr(i)), ('podCIDRs', [_pod_cidr(i)]),
                         ('providerID', 'fake://%s' % name)] +
                        ([('taints', [OD([('key', 'node-role.kubernetes.io/control-plane'),
                                          ('effect', 'NoSchedule')])])] if i == 0 else []))),
            ('status', OD([
                ('capacity', cap), ('allocatable', alloc), ('conditions', conds),
                ('addresses', [OD([('type', 'InternalIP'), ('address', ip)]),
                               OD([('type', 'Hostname'), ('address', name)])]),
                ('daemonEndpoints', {'kubeletEndpoint': {'Port': 10250}}),
                ('nodeInfo', OD([
                    ('machineID', _hex(self.rng, 32)), ('systemUUID', _uid(self.rng)),
                    ('bootID', _uid(self.rng)), ('kernelVersion', '6.1.0-27-amd64'),
                    ('osImage', 'Debian GNU/Linux 12 (bookworm)'),
                    ('containerRuntimeVersion', 'containerd://1.7.24'),
                    ('kubeletVersion', 'v1.32.0'), ('kubeProxyVersion', 'v1.32.0'),
                    ('operatingSystem', 'linux'), ('architecture', 'amd64')]))]))])

    def configmap(self, ns, name, data, age):
        return OD([('metadata', OD([('name', name), ('namespace', ns), ('uid', _uid(self.rng)),
                                    ('creationTimestamp', self.ts(age))])),
                   ('data', data)])

    def deployment(self, app, replicas, age):
        meta = OD([('name', app.name), ('namespace', app.ns), ('uid', _uid(self.rng)),
                   ('generation', 1), ('creationTimestamp', self.ts(age)),
                   ('labels', OD([('app', app.name)])),
                   ('annotations', OD([('deployment.kubernetes.io/revision', '1')]))])
        template = OD([
            ('metadata', OD([('creationTimestamp', None), ('labels', OD([
                ('app', app.name), ('tier', app.tier)]))])),
            ('spec', OD([('containers', [OD([
                ('name', app.name.split('-')[0]), ('image', app.image),
                ('ports', [OD([('containerPort', app.port), ('protocol', 'TCP')])]),
                ('resources', {}), ('terminationMessagePath', '/dev/termination-log'),
                ('terminationMessagePolicy', 'File'), ('imagePullPolicy', 'IfNotPresent')])]),
                ('restartPolicy', 'Always'), ('terminationGracePeriodSeconds', 30),
                ('dnsPolicy', 'ClusterFirst'), ('securityContext', {}),
                ('schedulerName', 'default-scheduler')]))])
        spec = OD([('replicas', replicas),
                   ('selector', {'matchLabels': OD([('app', app.name)])}),
                   ('template', template),
                   ('strategy', OD([('type', 'RollingUpdate'), ('rollingUpdate', OD([
                       ('maxUnavailable', '25%'), ('maxSurge', '25%')]))])),
                   ('revisionHistoryLimit', 10), ('progressDeadlineSeconds', 600)])
        t = self.ts(age - 30)
        status = OD([
            ('observedGeneration', 1), ('replicas', replicas), ('updatedReplicas', replicas),
            ('readyReplicas', replicas), ('availableReplicas', replicas),
            ('conditions', [
                OD([('type', 'Available'), ('status', 'True'), ('lastUpdateTime', t),
                    ('lastTransitionTime', t), ('reason', 'MinimumReplicasAvailable'),
                    ('message', 'Deployment has minimum availability.')]),
                OD([('type', 'Progressing'), ('status', 'True'), ('lastUpdateTime', t),
                    ('lastTransitionTime', self.ts(age)), ('reason', 'NewReplicaSetAvailable'),
                    ('message', 'ReplicaSet "%s-%s" has successfully progressed.' % (
                        app.name, app.hash))])])])
        return OD([('metadata', meta), ('spec', spec), ('status', status)])

    def widget(self, ns, name, size, color, age):
        return OD([('metadata', OD([('name', name), ('namespace', ns), ('uid', _uid(self.rng)),
                                    ('generation', 1), ('creationTimestamp', self.ts(age)),
                                    ('labels', {'app': 'widgets'})])),
                   ('spec', OD([('size', size), ('color', color)])),
                   ('status', {'state': 'Ready'})])

    def pod_params(self, app, name, node_count, phase, age):
        rng = self.rng
        node = rng.randrange(node_count)
        # Each node hands out addresses from its own /24, like a real CNI.
        used = self.ips_used.get(node, 1) + 1
        self.ips_used[node] = used
        ip = '10.%d.%d.%d' % (244 + node // 256, node % 256, used % 254 + 1)
        started = age - rng.randrange(1, 30)
        restarts = 0
        if phase == 'Running' and rng.random() < 0.1:
            restarts = rng.randrange(1, 6)
        return {
            'name': name, 'uid': _uid(rng), 'created': self.ts(age), 'started': self.ts(started),
            'finished': self.ts(max(1, started - rng.randrange(60, 3600))
                                if phase == 'Running' else max(0, started - 120)),
            'node': 'node-%d' % node, 'ip': ip,
            'host_ip': '10.0.%d.%d' % (node // 250, node % 250 + 2),
            'cid1': _hex(rng, 64), 'cid2': _hex(rng, 64),
            'token': 'kube-api-access-' + _suffix(rng, 5), 'restarts': restarts, 'phase': phase}


def _apps_for(gen, ns, count):
    apps = []
    used = set()
    for i in range(count):
        base = _APP_NAMES[i % len(_APP_NAMES)]
        name = base if base not in used else '%s-%d' % (base, i // len(_APP_NAMES))
        used.add(name)
        apps.append(AppSpec(gen.rng, ns, name, _TIERS[i % len(_TIERS)]))
    return apps


def load(store, pods=0, namespaces=10, seed=1, nodes=None, start_time=None):
    """Fill store with the default data plus `pods` generated pods."""
    gen = Generator(seed, start_time or time.time())
    rts = catalog.BY_PLURAL
    day = 86400

    def put(plural, d):
        store.rv += 1
        d['metadata']['resourceVersion'] = str(store.rv)
        store.load(rts[plural], storemod.build_obj(rts[plural], d))
        return d

    ns_names = ['default', 'kube-node-lease', 'kube-public', 'kube-system', 'viewer-ns']
    pod_namespaces = ['pod-ns-%d' % i for i in range(namespaces)] if pods else []
    for i, ns in enumerate(ns_names):
        put('namespaces', gen.namespace(ns, 30 * day - i))
    for i, ns in enumerate(pod_namespaces):
        put('namespaces', gen.namespace(ns, 20 * day - i))
    node_count = nodes if nodes else max(2, -(-pods // 110))
    for i in range(node_count):
        put('nodes', gen.node(i, 30 * day - 100 - i))
    ca = '-----BEGIN CERTIFICATE-----\nMIIBfakeapi\n-----END CERTIFICATE-----\n'
    for ns in ns_names + pod_namespaces:
        put('configmaps', gen.configmap(ns, 'kube-root-ca.crt', {'ca.crt': ca}, 20 * day))
    put('configmaps', gen.configmap('default', 'app-config', OD([
        ('LOG_LEVEL', 'info'), ('settings.yaml', 'replicas: 3\ncolor: blue\n')]), 5 * day))
    put('configmaps', gen.configmap('kube-system', 'coredns', {
        'Corefile': '.:53 {\n    errors\n    health\n    kubernetes cluster.local in-addr.arpa '
                    'ip6.arpa\n    forward . /etc/resolv.conf\n    cache 30\n}\n'}, 30 * day))

    web = AppSpec(gen.rng, 'default', 'web', 'frontend')
    coredns = AppSpec(gen.rng, 'kube-system', 'coredns', 'backend')
    viewer = AppSpec(gen.rng, 'viewer-ns', 'viewer-app', 'frontend')
    put('deployments', gen.deployment(web, 3, 5 * day))
    put('deployments', gen.deployment(coredns, 2, 30 * day))
    put('deployments', gen.deployment(viewer, 1, 3 * day))
    fixed = [(web, 'Running', 5 * day - 60), (web, 'Running', 5 * day - 61),
             (web, 'Running', 2 * day), (coredns, 'Running', 30 * day - 300),
             (coredns, 'Running', 30 * day - 301), (viewer, 'Running', 3 * day - 30)]
    fixed_pods = []
    for i, (app, phase, age) in enumerate(fixed):
        name = '%s-%s-%s' % (app.name, app.hash, _suffix(gen.rng, 5))
        p = gen.pod_params(app, name, node_count, phase, age)
        p['rv'] = '0'
        p['restarts'] = 0
        fixed_pods.append((app, put('pods', make_pod(app, p))))
    backup = AppSpec(gen.rng, 'default', 'backup', 'db')
    p = gen.pod_params(backup, 'backup-28934400-%s' % _suffix(gen.rng, 5), node_count,
                       'Succeeded', 3600)
    p['rv'] = '0'
    fixed_pods.append((backup, put('pods', make_pod(backup, p))))
    put('widgets', gen.widget('default', 'widget-a', 3, 'blue', 4 * day))
    put('widgets', gen.widget('default', 'widget-b', 5, 'red', 2 * day))

    if pods:
        _generate_pods(store, gen, pods, pod_namespaces, node_count)
    # Last, so that every other object keeps the resourceVersion it had
    # before there were events.
    for d in _pod_events(random.Random(seed * 7919 + 1), gen.now, fixed_pods):
        put('events', d)
    store.finish_load()


def _event(rng, now, pod, reason, message, typ='Normal', container=None, count=1,
           first=60, last=None, component='kubelet'):
    """A core/v1 Event about pod as the kubelet records one (Go field order);
    first and last are seconds ago."""
    meta = pod['metadata']
    last = first if last is None else last
    inv = OD([('kind', 'Pod'), ('namespace', meta['namespace']), ('name', meta['name']),
              ('uid', meta['uid']), ('apiVersion', 'v1'),
              ('resourceVersion', meta['resourceVersion'])])
    if container:
        inv['fieldPath'] = 'spec.containers{%s}' % container
    node = pod['spec'].get('nodeName', '')
    source = OD([('component', component)])
    if component == 'kubelet':
        source['host'] = node
    return OD([
        ('metadata', OD([('name', '%s.%x' % (meta['name'], int(now - first) * 10**9 +
                                                     rng.randrange(10**9))),
                         ('namespace', meta['namespace']), ('uid', _uid(rng)),
                         ('creationTimestamp', jsonutil.rfc3339(now - first))])),
        ('involvedObject', inv), ('reason', reason), ('message', message),
        ('source', source), ('firstTimestamp', jsonutil.rfc3339(now - first)),
        ('lastTimestamp', jsonutil.rfc3339(now - last)), ('count', count), ('type', typ),
        ('eventTime', None), ('reportingComponent', component),
        ('reportingInstance', node if component == 'kubelet' else '')])


def _pod_events(rng, now, fixed_pods):
    """Events of the last hour (the apiserver's event TTL): the backup job's
    pod ran to completion, a web pod fails its readiness probe now and then.
    Their ages are half a minute past a minute, so that two clients asking a
    moment apart print the same "60m" (kubectl shows minutes at that age)."""
    out = []
    for app, pod in fixed_pods:
        c = pod['spec']['containers'][0]
        node = pod['spec'].get('nodeName', '')
        if app.name == 'backup':
            out.append(_event(rng, now, pod, 'Scheduled', 'Successfully assigned %s/%s to %s'
                              % (app.ns, pod['metadata']['name'], node), first=3630,
                              component='default-scheduler'))
            out.append(_event(rng, now, pod, 'Pulled', 'Container image "%s" already present '
                              'on machine' % c['image'], container=c['name'], first=3629))
            out.append(_event(rng, now, pod, 'Created', 'Created container %s' % c['name'],
                              container=c['name'], first=3628))
            out.append(_event(rng, now, pod, 'Started', 'Started container %s' % c['name'],
                              container=c['name'], first=3627))
    web = [pod for app, pod in fixed_pods if app.name == 'web']
    if web:
        c = web[0]['spec']['containers'][0]
        out.append(_event(rng, now, web[0], 'Unhealthy', 'Readiness probe failed: Get '
                          '"http://%s:%d/healthz": context deadline exceeded (Client.Timeout '
                          'exceeded while awaiting headers)' % (
                              web[0]['status'].get('podIP', ''),
                              c['ports'][0]['containerPort']),
                          typ='Warning', container=c['name'], count=3, first=2430, last=1230))
    return out


def _generate_pods(store, gen, total, namespaces, node_count):
    rt = catalog.BY_PLURAL['pods']
    rng = gen.rng
    per_ns = [total // len(namespaces) + (1 if i < total % len(namespaces) else 0)
              for i in range(len(namespaces))]
    for ns, count in zip(namespaces, per_ns):
        if not count:
            continue
        apps = _apps_for(gen, ns, max(1, count // 20))
        templates = {}
        names = set()
        for i in range(count):
            app = apps[i % len(apps)]
            r = rng.random()
            phase = 'Running' if r < 0.96 else 'Pending' if r < 0.98 else \
                'Succeeded' if r < 0.99 else 'Failed'
            age = rng.randrange(600, 20 * 86400)
            while True:
                name = '%s-%s-%s' % (app.name, app.hash, _suffix(rng, 5))
                if name not in names:
                    names.add(name)
                    break
            p = gen.pod_params(app, name, node_count, phase, age)
            variant = (app.name, phase, p['restarts'] > 0)
            tpl = templates.get(variant)
            if tpl is None:
                params = dict(_PLACEHOLDERS)
                params.update(phase=phase, restarts='@@N:restarts@@' if p['restarts'] else 0)
                tpl = _compile(make_pod(app, params))
                templates[variant] = (tpl, app)
            else:
                tpl = tpl[0]
            store.rv += 1
            p['rv'] = str(store.rv)
            p['restarts'] = str(p['restarts'])
            raw = _fill(tpl, p).encode()
            fields = {'metadata.name': name, 'metadata.namespace': ns,
                      'spec.nodeName': p['node'] if phase != 'Pending' else '',
                      'spec.restartPolicy': 'Always', 'spec.schedulerName': 'default-scheduler',
                      'spec.serviceAccountName': app.sa, 'spec.hostNetwork': 'false',
                      'status.phase': phase, 'status.podIP': p['ip'] if phase != 'Pending' else '',
                      'status.podIPs': p['ip'] if phase != 'Pending' else '',
                      'status.nominatedNodeName': ''}
            store.load(rt, storemod.Obj(ns + '/' + name, ns, name, store.rv, raw, app.labels,
                                        fields))
