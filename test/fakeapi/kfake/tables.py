"""Server-side printing: meta.k8s.io Tables as kube-apiserver builds them.

Column definitions and cell values follow pkg/printers/internalversion/
printers.go (the server always prints "wide"), rest's default table for
kinds without a printer (ClusterRole: Name and Created At) and, for custom
resources without additionalPrinterColumns, the apiextensions table
convertor (Name and Age).  Ages and "N (Xm ago)" restart counts are computed when the response is
written; everything else about a row is computed once per object version.
"""

import collections
import time

from . import jsonutil
from . import store

_NAME_DOC = ('Name must be unique within a namespace. Is required when creating resources, '
             'although some resources may allow a client to request the generation of an '
             'appropriate name automatically. Name is primarily intended for creation '
             'idempotence and configuration definition. Cannot be updated. More info: '
             'https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names')
_AGE_DOC = ('CreationTimestamp is a timestamp representing the server time when this object '
            'was created. It is not guaranteed to be set in happens-before order across '
            'separate operations. Clients may not set this value. It is represented in '
            'RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for '
            'lists. More info: https://git.k8s.io/community/contributors/devel/'
            'sig-architecture/api-conventions.md#metadata')
_ADDRESSES_DOC = ('List of addresses reachable to the node. Queried from cloud provider, if '
                  'available. More info: https://kubernetes.io/docs/reference/node/'
                  'node-status/#addresses Note: This field is declared as mergeable, but the '
                  'merge key is not sufficiently unique, which can cause data corruption when '
                  'it is merged. Callers should instead use a full-replacement patch. See '
                  'https://pr.k8s.io/79391 for an example. Consumers should assume that '
                  'addresses can change during the lifetime of a Node. However, there are some '
                  'exceptions where this may not be possible, such as Pods that inherit a '
                  "Node's address in its own status or consumers of the downward API "
                  '(status.hostIP).')


def _col(name, typ, desc, priority=0, fmt=''):
    return collections.OrderedDict([('name', name), ('type', typ), ('format', fmt),
                                    ('description', desc), ('priority', priority)])


_NAME = _col('Name', 'string', _NAME_DOC, fmt='name')
_AGE = _col('Age', 'string', _AGE_DOC)

COLUMNS = {
    'Pod': [
        _NAME,
        _col('Ready', 'string', 'The aggregate readiness state of this pod for accepting '
             'traffic.'),
        _col('Status', 'string', 'The aggregate status of the containers in this pod.'),
        _col('Restarts', 'string', 'The number of times the containers in this pod have been '
             'restarted and when the last container in this pod has restarted.'),
        _AGE,
        _col('IP', 'string', 'podIP address allocated to the pod. Routable at least within the '
             'cluster. Empty if not yet allocated.', 1),
        _col('Node', 'string', 'NodeName indicates in which node this pod is scheduled. If '
             'empty, this pod is a candidate for scheduling by the scheduler defined in '
             'schedulerName. Once this field is set, the kubelet for this node becomes '
             'responsible for the lifecycle of this pod. This field should not be used to '
             'express a desire for the pod to be scheduled on a specific node. '
             'https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/'
             '#nodename', 1),
        _col('Nominated Node', 'string', 'nominatedNodeName is set only when this pod preempts '
             'other pods on the node, but it cannot be scheduled right away as preemption '
             'victims receive their graceful termination periods. This field does not guarantee '
             'that the pod will be scheduled on this node. Scheduler may decide to place the pod '
             'elsewhere if other nodes become available sooner. Scheduler may also decide to '
             'give the resources on this node to a higher priority pod that is created after '
             'preemption. As a result, this field may be different than PodSpec.nodeName when '
             'the pod is scheduled.', 1),
        _col('Readiness Gates', 'string', 'If specified, all readiness gates will be evaluated '
             'for pod readiness. A pod is ready when all its containers are ready AND all '
             'conditions specified in the readiness gates have status equal to "True" More '
             'info: https://git.k8s.io/enhancements/keps/sig-network/'
             '580-pod-readiness-gates', 1),
    ],
    'Deployment': [
        _NAME,
        _col('Ready', 'string', 'Number of the pod with ready state'),
        _col('Up-to-date', 'string', 'Total number of non-terminated pods targeted by this '
             'deployment that have the desired template spec.'),
        _col('Available', 'string', 'Total number of available pods (ready for at least '
             'minReadySeconds) targeted by this deployment.'),
        _AGE,
        _col('Containers', 'string', 'Names of each container in the template.', 1),
        _col('Images', 'string', 'Images referenced by each container in the template.', 1),
        _col('Selector', 'string', 'Label selector for pods. Existing ReplicaSets whose pods '
             'are selected by this will be the ones affected by this deployment.', 1),
    ],
    'Node': [
        _NAME,
        _col('Status', 'string', 'The status of the node'),
        _col('Roles', 'string', 'The roles of the node'),
        _AGE,
        _col('Version', 'string', 'Kubelet Version reported by the node.'),
        _col('Internal-IP', 'string', _ADDRESSES_DOC, 1),
        _col('External-IP', 'string', _ADDRESSES_DOC, 1),
        _col('OS-Image', 'string', 'OS Image reported by the node from /etc/os-release (e.g. '
             'Debian GNU/Linux 7 (wheezy)).', 1),
        _col('Kernel-Version', 'string', "Kernel Version reported by the node from 'uname -r' "
             '(e.g. 3.16.0-0.bpo.4-amd64).', 1),
        _col('Container-Runtime', 'string', 'ContainerRuntime Version reported by the node '
             'through runtime remote API (e.g. containerd://1.4.2).', 1),
    ],
    'Namespace': [_NAME, _col('Status', 'string', 'The status of the namespace'), _AGE],
    'ConfigMap': [
        _NAME,
        _col('Data', 'string', "Data contains the configuration data. Each key must consist of "
             "alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences "
             'must use the BinaryData field. The keys stored in Data must not overlap with the '
             'keys in the BinaryData field, this is enforced during validation process.'),
        _AGE],
    'Event': [
        _col('Last Seen', 'string', 'The time at which the most recent occurrence of this '
             'event was recorded.'),
        _col('Type', 'string', 'Type of this event (Normal, Warning), new types could be added '
             'in the future'),
        _col('Reason', 'string', 'This should be a short, machine understandable string that '
             "gives the reason for the transition into the object's current status."),
        _col('Object', 'string', 'The object that this event is about.'),
        _col('Subobject', 'string', 'If referring to a piece of an object instead of an entire '
             'object, this string should contain a valid JSON/Go field access statement, such '
             'as desiredState.manifest.containers[2]. For example, if the object reference is '
             'to a container within a pod, this would take on a value like: '
             '"spec.containers{name}" (where "name" refers to the name of the container that '
             'triggered the event) or if no container name is specified "spec.containers[2]" '
             '(container with index 2 in this pod). This syntax is chosen only to have some '
             'well-defined way of referencing a part of an object.', 1),
        _col('Source', 'string', 'The component reporting this event. Should be a short '
             'machine understandable string.', 1),
        _col('Message', 'string', 'A human-readable description of the status of this '
             'operation.'),
        _col('First Seen', 'string', 'The time at which the event was first recorded. (Time '
             'of server receipt is in TypeMeta.)', 1),
        _col('Count', 'string', 'The number of times this event has occurred.', 1),
        _col('Name', 'string', _NAME_DOC, 1, 'name'),
    ],
    'Service': [
        _NAME,
        _col('Type', 'string', 'type determines how the Service is exposed. Defaults to '
             'ClusterIP. Valid options are ExternalName, ClusterIP, NodePort, and '
             'LoadBalancer. "ClusterIP" allocates a cluster-internal IP address for '
             'load-balancing to endpoints. Endpoints are determined by the selector or if that '
             'is not specified, by manual construction of an Endpoints object or EndpointSlice '
             'objects. If clusterIP is "None", no virtual IP is allocated and the endpoints are '
             'published as a set of endpoints rather than a virtual IP. "NodePort" builds on '
             'ClusterIP and allocates a port on every node which routes to the same endpoints '
             'as the clusterIP. "LoadBalancer" builds on NodePort and creates an external '
             'load-balancer (if supported in the current cloud) which routes to the same '
             'endpoints as the clusterIP. "ExternalName" aliases this service to the specified '
             'externalName. Several other fields do not apply to ExternalName services. More '
             'info: https://kubernetes.io/docs/concepts/services-networking/service/'
             '#publishing-services-service-types'),
        _col('Cluster-IP', 'string', 'clusterIP is the IP address of the service and is '
             'usually assigned randomly. If an address is specified manually, is in-range (as '
             'per system configuration), and is not in use, it will be allocated to the '
             'service; otherwise creation of the service will fail. This field may not be '
             'changed through updates unless the type field is also being changed to '
             'ExternalName (which requires this field to be blank) or the type field is being '
             'changed from ExternalName (in which case this field may optionally be specified, '
             'as describe above).  Valid values are "None", empty string (""), or a valid IP '
             'address. Setting this to "None" makes a "headless service" (no virtual IP), which '
             'is useful when direct endpoint connections are preferred and proxying is not '
             'required.  Only applies to types ClusterIP, NodePort, and LoadBalancer. If this '
             'field is specified when creating a Service of type ExternalName, creation will '
             'fail. This field will be wiped when updating a Service to type ExternalName. More '
             'info: https://kubernetes.io/docs/concepts/services-networking/service/'
             '#virtual-ips-and-service-proxies'),
        _col('External-IP', 'string', 'externalIPs is a list of IP addresses for which nodes '
             'in the cluster will also accept traffic for this service.  These IPs are not '
             'managed by Kubernetes.  The user is responsible for ensuring that traffic arrives '
             'at a node with this IP.  A common example is external load-balancers that are '
             'not part of the Kubernetes system.'),
        _col('Port(s)', 'string', 'The list of ports that are exposed by this service. More '
             'info: https://kubernetes.io/docs/concepts/services-networking/service/'
             '#virtual-ips-and-service-proxies'),
        _AGE,
        _col('Selector', 'string', 'Route service traffic to pods with label keys and values '
             'matching this selector. If empty or not present, the service is assumed to have '
             'an external process managing its endpoints, which Kubernetes will not modify. '
             'Only applies to types ClusterIP, NodePort, and LoadBalancer. Ignored if type is '
             'ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/'
             'service/', 1),
    ],
    'ServiceAccount': [
        _NAME,
        _col('Secrets', 'string', 'Secrets is a list of the secrets in the same namespace '
             'that pods running using this ServiceAccount are allowed to use. Pods are only '
             'limited to this list if this service account has a '
             '"kubernetes.io/enforce-mountable-secrets" annotation set to "true". This field '
             'should not be used to find auto-generated service account token secrets for use '
             'outside of pods. Instead, tokens can be requested directly using the TokenRequest '
             'API, or service account token secrets can be manually created. More info: '
             'https://kubernetes.io/docs/concepts/configuration/secret'),
        _AGE],
    # rest.NewDefaultTableConvertor: the creationTimestamp in RFC 3339.
    'ClusterRole': [_NAME, _col('Created At', 'date', _AGE_DOC)],
    'ClusterRoleBinding': [
        _NAME,
        _col('Role', 'string', 'RoleRef can only reference a ClusterRole in the global '
             'namespace. If the RoleRef cannot be resolved, the Authorizer must return an '
             'error.'),
        _AGE,
        _col('Users', 'string', 'Users in the clusterRoleBinding', 1),
        _col('Groups', 'string', 'Groups in the clusterRoleBinding', 1),
        _col('ServiceAccounts', 'string', 'ServiceAccounts in the clusterRoleBinding', 1),
    ],
    # A custom resource without additionalPrinterColumns (serveDefaultColumnsIfEmpty).
    'Widget': [_NAME, _col('Age', 'date', _AGE_DOC)],
}

_COLUMN_BYTES = {k: jsonutil.dumps(v) for k, v in COLUMNS.items()}

_SUCCEEDED = [collections.OrderedDict([('type', 'Completed'), ('status', 'True'),
                                       ('reason', 'Succeeded'),
                                       ('message', 'The pod has completed successfully.')])]
_FAILED = [collections.OrderedDict([('type', 'Completed'), ('status', 'True'),
                                    ('reason', 'Failed'), ('message', 'The pod failed.')])]

# A dynamic cell: ('age', timestamp) or ('restarts', count, timestamp).


def _pod_cells(pod):
    meta = pod.get('metadata') or {}
    spec = pod.get('spec') or {}
    status = pod.get('status') or {}
    restarts = 0
    restartable_restarts = 0
    total = len(spec.get('containers') or [])
    ready = 0
    last_restart = None
    last_restartable = None
    phase = status.get('phase', '')
    reason = status.get('reason') or phase
    for cond in status.get('conditions') or []:
        if cond.get('type') == 'PodScheduled' and cond.get('reason') == 'SchedulingGated':
            reason = 'SchedulingGated'
    conditions = _SUCCEEDED if phase == 'Succeeded' else _FAILED if phase == 'Failed' else None

    def finished(cs):
        term = (cs.get('lastState') or {}).get('terminated')
        return jsonutil.parse_rfc3339(term.get('finishedAt')) if term else None

    init_containers = {c.get('name'): c for c in spec.get('initContainers') or []}
    for c in init_containers.values():
        if c.get('restartPolicy') == 'Always':
            total += 1
    initializing = False
    init_statuses = status.get('initContainerStatuses') or []
    for i, cs in enumerate(init_statuses):
        restarts += cs.get('restartCount', 0)
        t = finished(cs)
        if t is not None and (last_restart is None or t > last_restart):
            last_restart = t
        restartable = (init_containers.get(cs.get('name')) or {}).get('restartPolicy') == 'Always'
        if restartable:
            restartable_restarts += cs.get('restartCount', 0)
            if t is not None and (last_restartable is None or t > last_restartable):
                last_restartable = t
        state = cs.get('state') or {}
        term = state.get('terminated')
        waiting = state.get('waiting')
        if term is not None and term.get('exitCode', 0) == 0:
            continue
        if restartable and cs.get('started'):
            if cs.get('ready'):
                ready += 1
            continue
        if term is not None:
            if not term.get('reason'):
                reason = 'Init:Signal:%d' % term['signal'] if term.get('signal') else \
                    'Init:ExitCode:%d' % term.get('exitCode', 0)
            else:
                reason = 'Init:' + term['reason']
        elif waiting and waiting.get('reason') and waiting.get('reason') != 'PodInitializing':
            reason = 'Init:' + waiting['reason']
        else:
            reason = 'Init:%d/%d' % (i, len(init_containers))
        initializing = True
        break
    initialized = any(c.get('type') == 'Initialized' and c.get('status') == 'True'
                      for c in status.get('conditions') or [])
    if not initializing or initialized:
        restarts = restartable_restarts
        last_restart = last_restartable
        has_running = False
        for cs in reversed(status.get('containerStatuses') or []):
            restarts += cs.get('restartCount', 0)
            t = finished(cs)
            if t is not None and (last_restart is None or t > last_restart):
                last_restart = t
            state = cs.get('state') or {}
            waiting = state.get('waiting')
            term = state.get('terminated')
            if waiting and waiting.get('reason'):
                reason = waiting['reason']
            elif term and term.get('reason'):
                reason = term['reason']
            elif term is not None:
                reason = 'Signal:%d' % term['signal'] if term.get('signal') else \
                    'ExitCode:%d' % term.get('exitCode', 0)
            elif cs.get('ready') and state.get('running') is not None:
                has_running = True
                ready += 1
        if reason == 'Completed' and has_running:
            ready_cond = any(c.get('type') == 'Ready' and c.get('status') == 'True'
                             for c in status.get('conditions') or [])
            reason = 'Running' if ready_cond else 'NotReady'
    if meta.get('deletionTimestamp') and status.get('reason') == 'NodeLost':
        reason = 'Unknown'
    elif meta.get('deletionTimestamp') and phase not in ('Succeeded', 'Failed'):
        reason = 'Terminating'
    if restarts != 0 and last_restart is not None:
        restarts_cell = ('restarts', restarts, last_restart)
    else:
        restarts_cell = str(restarts)
    ips = status.get('podIPs') or []
    pod_ip = ips[0].get('ip', '') if ips else ''
    gates = spec.get('readinessGates') or []
    gates_cell = '<none>'
    if gates:
        true = 0
        for g in gates:
            for c in status.get('conditions') or []:
                if c.get('type') == g.get('conditionType'):
                    if c.get('status') == 'True':
                        true += 1
                    break
        gates_cell = '%d/%d' % (true, len(gates))
    cells = [meta.get('name', ''), '%d/%d' % (ready, total), reason, restarts_cell,
             ('age', _created(meta)), pod_ip or '<none>', spec.get('nodeName') or '<none>',
             status.get('nominatedNodeName') or '<none>', gates_cell]
    return cells, conditions


def _created(meta):
    return jsonutil.parse_rfc3339(meta.get('creationTimestamp'))


def format_label_selector(sel):
    """metav1.LabelSelectorAsSelector(sel).String()."""
    if not sel:
        return ''
    reqs = []
    for k, v in (sel.get('matchLabels') or {}).items():
        reqs.append((k, '%s=%s' % (k, v)))
    for e in sel.get('matchExpressions') or []:
        k = e.get('key', '')
        op = e.get('operator')
        vals = ','.join(sorted(e.get('values') or []))
        if op == 'In':
            reqs.append((k, '%s in (%s)' % (k, vals)))
        elif op == 'NotIn':
            reqs.append((k, '%s notin (%s)' % (k, vals)))
        elif op == 'Exists':
            reqs.append((k, k))
        elif op == 'DoesNotExist':
            reqs.append((k, '!' + k))
    return ','.join(r for _, r in sorted(reqs, key=lambda r: r[0]))


def _deployment_cells(d):
    meta = d.get('metadata') or {}
    spec = d.get('spec') or {}
    status = d.get('status') or {}
    containers = ((spec.get('template') or {}).get('spec') or {}).get('containers') or []
    return [meta.get('name', ''),
            '%d/%d' % (status.get('readyReplicas', 0), spec.get('replicas', 0)),
            status.get('updatedReplicas', 0), status.get('availableReplicas', 0),
            ('age', _created(meta)),
            ','.join(c.get('name', '') for c in containers),
            ','.join(c.get('image', '') for c in containers),
            format_label_selector(spec.get('selector'))], None


def _node_cells(n):
    meta = n.get('metadata') or {}
    spec = n.get('spec') or {}
    status = n.get('status') or {}
    st = []
    for c in status.get('conditions') or []:
        if c.get('type') == 'Ready':
            st = ['Ready' if c.get('status') == 'True' else 'NotReady']
    if not st:
        st = ['Unknown']
    if spec.get('unschedulable'):
        st.append('SchedulingDisabled')
    roles = set()
    for k, v in (meta.get('labels') or {}).items():
        if k.startswith('node-role.kubernetes.io/') and k[len('node-role.kubernetes.io/'):]:
            roles.add(k[len('node-role.kubernetes.io/'):])
        elif k == 'kubernetes.io/role' and v:
            roles.add(v)
    info = status.get('nodeInfo') or {}

    def addr(kind):
        for a in status.get('addresses') or []:
            if a.get('type') == kind:
                return a.get('address', '')
        return '<none>'
    return [meta.get('name', ''), ','.join(st), ','.join(sorted(roles)) or '<none>',
            ('age', _created(meta)), info.get('kubeletVersion', ''), addr('InternalIP'),
            addr('ExternalIP'), info.get('osImage') or '<unknown>',
            info.get('kernelVersion') or '<unknown>',
            info.get('containerRuntimeVersion') or '<unknown>'], None


def _namespace_cells(n):
    meta = n.get('metadata') or {}
    return [meta.get('name', ''), (n.get('status') or {}).get('phase', ''),
            ('age', _created(meta))], None


def _configmap_cells(c):
    meta = c.get('metadata') or {}
    return [meta.get('name', ''), len(c.get('data') or {}) + len(c.get('binaryData') or {}),
            ('age', _created(meta))], None


def _event_cells(e):
    """printers.go printEvent, wide."""
    meta = e.get('metadata') or {}
    first = jsonutil.parse_rfc3339(e.get('firstTimestamp'))
    if first is None:
        first = jsonutil.parse_rfc3339(e.get('eventTime'))
    last = jsonutil.parse_rfc3339(e.get('lastTimestamp'))
    if last is None:
        last = first
    count = e.get('count') or 0
    series = e.get('series')
    if isinstance(series, dict):
        last = jsonutil.parse_rfc3339(series.get('lastObservedTime'))
        count = series.get('count') or 0
    elif not count:
        count = 1
    inv = e.get('involvedObject') or {}
    target = (inv.get('kind') or '').lower()
    if inv.get('name'):
        target += '/' + inv['name']
    source = e.get('source') or {}
    component = source.get('component') or e.get('reportingComponent') or ''
    instance = source.get('host') or e.get('reportingInstance') or ''
    return [('age', last), e.get('type', ''), e.get('reason', ''), target,
            inv.get('fieldPath', ''), component + (', ' + instance if instance else ''),
            (e.get('message') or '').strip(), ('age', first), count,
            meta.get('name', '')], None


def format_labels(labels):
    """labels.FormatLabels: k=v sorted by key, "<none>" for none."""
    return ','.join('%s=%s' % (k, labels[k]) for k in sorted(labels or {})) or '<none>'


def _service_cells(svc):
    """printService, wide (no load balancer clipped)."""
    meta = svc.get('metadata') or {}
    spec = svc.get('spec') or {}
    typ = spec.get('type', '')
    external = spec.get('externalIPs') or []
    if typ in ('ClusterIP', 'NodePort'):
        ext = ','.join(external) or '<none>'
    elif typ == 'LoadBalancer':
        ingress = ((svc.get('status') or {}).get('loadBalancer') or {}).get('ingress') or []
        lb = sorted({i.get('ip') or i.get('hostname') for i in ingress
                     if i.get('ip') or i.get('hostname')})
        ext = ','.join(lb + external) or '<pending>'
    elif typ == 'ExternalName':
        ext = spec.get('externalName', '')
    else:
        ext = '<unknown>'
    ports = []
    for p in spec.get('ports') or []:
        node = ':%d' % p['nodePort'] if p.get('nodePort', 0) > 0 else ''
        ports.append('%d%s/%s' % (p.get('port', 0), node, p.get('protocol', '')))
    ips = spec.get('clusterIPs') or []
    return [meta.get('name', ''), typ, ips[0] if ips else '<none>', ext,
            ','.join(ports) or '<none>', ('age', _created(meta)),
            format_labels(spec.get('selector'))], None


def _serviceaccount_cells(sa):
    meta = sa.get('metadata') or {}
    return [meta.get('name', ''), len(sa.get('secrets') or []), ('age', _created(meta))], None


def _default_convertor_cells(o):
    meta = o.get('metadata') or {}
    t = _created(meta)
    return [meta.get('name', ''), jsonutil.rfc3339(t) if t is not None else
            '0001-01-01T00:00:00Z'], None


def _binding_cells(b):
    """printClusterRoleBinding, wide: rbac.SubjectsStrings joined with ", "."""
    meta = b.get('metadata') or {}
    ref = b.get('roleRef') or {}
    subjects = b.get('subjects') or []

    def names(kind):
        return ', '.join(('%s/%s' % (s.get('namespace', ''), s.get('name', ''))
                          if kind == 'ServiceAccount' else s.get('name', ''))
                         for s in subjects if s.get('kind') == kind)
    return [meta.get('name', ''), '%s/%s' % (ref.get('kind', ''), ref.get('name', '')),
            ('age', _created(meta)), names('User'), names('Group'),
            names('ServiceAccount')], None


def _default_cells(o):
    meta = o.get('metadata') or {}
    return [meta.get('name', ''), ('age', _created(meta))], None


_PRINTERS = {'Pod': _pod_cells, 'Deployment': _deployment_cells, 'Node': _node_cells,
             'Namespace': _namespace_cells, 'ConfigMap': _configmap_cells,
             'Event': _event_cells, 'Service': _service_cells,
             'ServiceAccount': _serviceaccount_cells, 'ClusterRole': _default_convertor_cells,
             'ClusterRoleBinding': _binding_cells}


def _row_template(rt, obj):
    """(cells, conditions) with dynamic cells, cached on the Obj."""
    t = obj.cells
    if t is None:
        t = _PRINTERS.get(rt.kind, _default_cells)(obj.decode())
        obj.cells = t
    return t


def _resolve(cell, now):
    if type(cell) is tuple:
        if cell[0] == 'age':
            return '<unknown>' if cell[1] is None else jsonutil.human_duration(now - cell[1])
        return '%d (%s ago)' % (cell[1], jsonutil.human_duration(now - cell[2]))
    return cell


def _row_bytes(rt, obj, include, now, api_version):
    cells, conditions = _row_template(rt, obj)
    row = collections.OrderedDict([('cells', [_resolve(c, now) for c in cells])])
    if conditions:
        row['conditions'] = conditions
    head = jsonutil.dumps(row)[:-1]
    if include == 'None':
        return head + b',"object":null}'
    if include == 'Object':
        return head + b',"object":' + rt.full_bytes(obj.raw) + b'}'
    return head + b',"object":' + partial_metadata(obj, api_version) + b'}'


def partial_metadata(obj, api_version='meta.k8s.io/v1'):
    """A PartialObjectMetadata object for obj."""
    meta = store.typed_metadata(obj.decode().get('metadata') or {})
    return jsonutil.dumps(collections.OrderedDict([
        ('kind', 'PartialObjectMetadata'), ('apiVersion', api_version), ('metadata', meta)]))


def table(rt, objs, rv, cont=None, remaining=None, include='Metadata', headers=True,
          api_version='meta.k8s.io/v1'):
    """A Table response body for objs."""
    now = time.time()
    meta = collections.OrderedDict([('resourceVersion', str(rv))])
    if cont:
        meta['continue'] = cont
    if remaining is not None:
        meta['remainingItemCount'] = remaining
    cols = _COLUMN_BYTES.get(rt.kind) if headers else None
    if headers and cols is None:
        cols = _COLUMN_BYTES['Widget']
    rows = b','.join(_row_bytes(rt, o, include, now, api_version) for o in objs)
    return b''.join([b'{"kind":"Table","apiVersion":', jsonutil.dumps(api_version),
                     b',"metadata":', jsonutil.dumps(meta), b',"columnDefinitions":',
                     cols or b'null', b',"rows":[', rows, b']}'])
