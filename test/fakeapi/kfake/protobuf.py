"""Decoding of application/vnd.kubernetes.protobuf request bodies.

kubectl's typed clients (kubectl create namespace / configmap / deployment)
send protobuf.  The body is "k8s\\0" followed by a runtime.Unknown message
whose raw field holds the object; the schemas below cover the fields those
commands can set (field numbers from k8s.io/api generated.proto).  Decoded
objects come back as JSON-shaped dicts; fields outside the schemas are
dropped.
"""

import base64

from . import jsonutil

MAGIC = b'k8s\x00'

# type codes: 's' string, 'i' integer, 'b' bool, 'y' bytes (base64 in JSON),
# 'm' map<string,string>, 'M' map<string,bytes>, 'q' map<string,Quantity>,
# 'T' Time, 'I' IntOrString, 'Q' Quantity, a schema name for a message;
# a leading '[' means repeated, a leading '^' means the message is inlined
# into its parent (Go's embedded structs).
SCHEMAS = {
    'TypeMeta': {1: ('apiVersion', 's'), 2: ('kind', 's')},
    # k8s.io/api/authorization/v1 (kubectl auth can-i)
    'SelfSubjectAccessReview': {1: ('metadata', 'ObjectMeta'),
                                2: ('spec', 'SelfSubjectAccessReviewSpec'),
                                3: ('status', 'Empty')},
    'SelfSubjectAccessReviewSpec': {1: ('resourceAttributes', 'ResourceAttributes'),
                                    2: ('nonResourceAttributes', 'NonResourceAttributes')},
    'ResourceAttributes': {1: ('namespace', 's'), 2: ('verb', 's'), 3: ('group', 's'),
                           4: ('version', 's'), 5: ('resource', 's'), 6: ('subresource', 's'),
                           7: ('name', 's')},
    'NonResourceAttributes': {1: ('path', 's'), 2: ('verb', 's')},
    'ObjectMeta': {1: ('name', 's'), 2: ('generateName', 's'), 3: ('namespace', 's'),
                   4: ('selfLink', 's'), 5: ('uid', 's'), 6: ('resourceVersion', 's'),
                   7: ('generation', 'i'), 8: ('creationTimestamp', 'T'),
                   9: ('deletionTimestamp', 'T'), 10: ('deletionGracePeriodSeconds', 'i'),
                   11: ('labels', 'm'), 12: ('annotations', 'm'),
                   13: ('ownerReferences', '[OwnerReference'), 14: ('finalizers', '[s')},
    'OwnerReference': {1: ('kind', 's'), 3: ('name', 's'), 4: ('uid', 's'),
                       5: ('apiVersion', 's'), 6: ('controller', 'b'),
                       7: ('blockOwnerDeletion', 'b')},
    'Namespace': {1: ('metadata', 'ObjectMeta'), 2: ('spec', 'NamespaceSpec'),
                  3: ('status', 'Empty')},
    'NamespaceSpec': {1: ('finalizers', '[s')},
    'ConfigMap': {1: ('metadata', 'ObjectMeta'), 2: ('data', 'm'), 3: ('binaryData', 'M'),
                  4: ('immutable', 'b')},
    'Pod': {1: ('metadata', 'ObjectMeta'), 2: ('spec', 'PodSpec'), 3: ('status', 'Empty')},
    'PodTemplateSpec': {1: ('metadata', 'ObjectMeta'), 2: ('spec', 'PodSpec')},
    'PodSpec': {1: ('volumes', '[Volume'), 2: ('containers', '[Container'),
                3: ('restartPolicy', 's'), 4: ('terminationGracePeriodSeconds', 'i'),
                5: ('activeDeadlineSeconds', 'i'), 6: ('dnsPolicy', 's'),
                7: ('nodeSelector', 'm'), 8: ('serviceAccountName', 's'),
                9: ('serviceAccount', 's'), 10: ('nodeName', 's'), 11: ('hostNetwork', 'b'),
                12: ('hostPID', 'b'), 13: ('hostIPC', 'b'),
                14: ('securityContext', 'Empty'), 15: ('imagePullSecrets', '[LocalObjectReference'),
                16: ('hostname', 's'), 17: ('subdomain', 's'), 19: ('schedulerName', 's'),
                20: ('initContainers', '[Container'), 21: ('automountServiceAccountToken', 'b'),
                22: ('tolerations', '[Toleration'), 24: ('priorityClassName', 's'),
                25: ('priority', 'i'), 29: ('runtimeClassName', 's'),
                30: ('enableServiceLinks', 'b'), 31: ('preemptionPolicy', 's')},
    'Container': {1: ('name', 's'), 2: ('image', 's'), 3: ('command', '[s'), 4: ('args', '[s'),
                  5: ('workingDir', 's'), 6: ('ports', '[ContainerPort'), 7: ('env', '[EnvVar'),
                  8: ('resources', 'ResourceRequirements'), 9: ('volumeMounts', '[VolumeMount'),
                  13: ('terminationMessagePath', 's'), 14: ('imagePullPolicy', 's'),
                  16: ('stdin', 'b'), 17: ('stdinOnce', 'b'), 18: ('tty', 'b'),
                  19: ('envFrom', '[EnvFromSource'), 20: ('terminationMessagePolicy', 's'),
                  24: ('restartPolicy', 's')},
    'ContainerPort': {1: ('name', 's'), 2: ('hostPort', 'i'), 3: ('containerPort', 'i'),
                      4: ('protocol', 's'), 5: ('hostIP', 's')},
    'EnvVar': {1: ('name', 's'), 2: ('value', 's'), 3: ('valueFrom', 'EnvVarSource')},
    'EnvVarSource': {1: ('fieldRef', 'ObjectFieldSelector'),
                     3: ('configMapKeyRef', 'KeySelector'), 4: ('secretKeyRef', 'KeySelector')},
    'ObjectFieldSelector': {1: ('apiVersion', 's'), 2: ('fieldPath', 's')},
    'KeySelector': {1: ('', '^LocalObjectReference'), 2: ('key', 's'), 3: ('optional', 'b')},
    'EnvFromSource': {1: ('prefix', 's'), 2: ('configMapRef', 'EnvSource'),
                      3: ('secretRef', 'EnvSource')},
    'EnvSource': {1: ('', '^LocalObjectReference'), 2: ('optional', 'b')},
    'LocalObjectReference': {1: ('name', 's')},
    'ResourceRequirements': {1: ('limits', 'q'), 2: ('requests', 'q')},
    'VolumeMount': {1: ('name', 's'), 2: ('readOnly', 'b'), 3: ('mountPath', 's'),
                    4: ('subPath', 's'), 5: ('mountPropagation', 's'), 6: ('subPathExpr', 's')},
    'Volume': {1: ('name', 's'), 2: ('', '^VolumeSource')},
    'VolumeSource': {1: ('hostPath', 'HostPath'), 2: ('emptyDir', 'EmptyDir'),
                     6: ('secret', 'SecretVolume'), 10: ('persistentVolumeClaim', 'PVCVolume'),
                     19: ('configMap', 'ConfigMapVolume')},
    'HostPath': {1: ('path', 's'), 2: ('type', 's')},
    'EmptyDir': {1: ('medium', 's'), 2: ('sizeLimit', 'Q')},
    'SecretVolume': {1: ('secretName', 's'), 3: ('defaultMode', 'i'), 4: ('optional', 'b')},
    'PVCVolume': {1: ('claimName', 's'), 2: ('readOnly', 'b')},
    'ConfigMapVolume': {1: ('', '^LocalObjectReference'), 3: ('defaultMode', 'i'),
                        4: ('optional', 'b')},
    'Toleration': {1: ('key', 's'), 2: ('operator', 's'), 3: ('value', 's'), 4: ('effect', 's'),
                   5: ('tolerationSeconds', 'i')},
    'Deployment': {1: ('metadata', 'ObjectMeta'), 2: ('spec', 'DeploymentSpec'),
                   3: ('status', 'Empty')},
    'DeploymentSpec': {1: ('replicas', 'i'), 2: ('selector', 'LabelSelector'),
                       3: ('template', 'PodTemplateSpec'), 4: ('strategy', 'DeploymentStrategy'),
                       5: ('minReadySeconds', 'i'), 6: ('revisionHistoryLimit', 'i'),
                       7: ('paused', 'b'), 9: ('progressDeadlineSeconds', 'i')},
    'DeploymentStrategy': {1: ('type', 's'), 2: ('rollingUpdate', 'RollingUpdate')},
    'RollingUpdate': {1: ('maxUnavailable', 'I'), 2: ('maxSurge', 'I')},
    'LabelSelector': {1: ('matchLabels', 'm'),
                      2: ('matchExpressions', '[LabelSelectorRequirement')},
    'LabelSelectorRequirement': {1: ('key', 's'), 2: ('operator', 's'), 3: ('values', '[s')},
    'Empty': {},
}

# Go pointer fields whose zero value is meaningful (kept when decoded as 0/false).
_KEEP_ZERO = {'replicas', 'terminationGracePeriodSeconds', 'activeDeadlineSeconds', 'priority',
              'revisionHistoryLimit', 'progressDeadlineSeconds', 'automountServiceAccountToken',
              'enableServiceLinks', 'immutable', 'optional', 'tolerationSeconds', 'defaultMode',
              'controller', 'blockOwnerDeletion', 'containerPort'}

KIND_SCHEMAS = {'Namespace': 'Namespace', 'ConfigMap': 'ConfigMap', 'Pod': 'Pod',
                'Deployment': 'Deployment',
                'SelfSubjectAccessReview': 'SelfSubjectAccessReview'}


class ProtobufError(ValueError):
    pass


def _varint(buf, i):
    shift = 0
    result = 0
    while True:
        if i >= len(buf):
            raise ProtobufError('truncated varint')
        b = buf[i]
        i += 1
        result |= (b & 0x7f) << shift
        if not b & 0x80:
            return result, i
        shift += 7
        if shift > 63:
            raise ProtobufError('varint too long')


def _fields(buf):
    """Yield (field number, wire type, value) over a message."""
    i = 0
    n = len(buf)
    while i < n:
        key, i = _varint(buf, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(buf, i)
        elif wt == 2:
            ln, i = _varint(buf, i)
            if i + ln > n:
                raise ProtobufError('truncated field %d' % num)
            v = bytes(buf[i:i + ln])
            i += ln
        elif wt == 1:
            v = buf[i:i + 8]
            i += 8
        elif wt == 5:
            v = buf[i:i + 4]
            i += 4
        else:
            raise ProtobufError('unsupported wire type %d' % wt)
        yield num, wt, v


def _signed(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def _map_entry(buf):
    k = v = b''
    for num, _, val in _fields(buf):
        if num == 1:
            k = val
        elif num == 2:
            v = val
    return k.decode('utf-8', 'replace'), v


def _scalar(code, wt, v):
    if code == 's':
        return v.decode('utf-8', 'replace')
    if code == 'i':
        return _signed(v)
    if code == 'b':
        return bool(v)
    if code == 'y':
        return base64.b64encode(v).decode()
    if code == 'Q':
        q = decode_message(v, {1: ('string', 's')})
        return q.get('string', '0')
    if code == 'T':
        t = decode_message(v, {1: ('seconds', 'i'), 2: ('nanos', 'i')})
        return jsonutil.rfc3339(t['seconds']) if t.get('seconds') else None
    if code == 'I':
        ios = decode_message(v, {1: ('type', 'i'), 2: ('intVal', 'i'), 3: ('strVal', 's')})
        return ios.get('strVal', '') if ios.get('type') == 1 else ios.get('intVal', 0)
    return decode_message(v, SCHEMAS[code])


def decode_message(buf, schema):
    out = {}
    for num, wt, v in _fields(buf):
        entry = schema.get(num)
        if entry is None:
            continue
        name, code = entry
        if code.startswith('^'):
            out.update(decode_message(v, SCHEMAS[code[1:]]))
            continue
        if code in ('m', 'M', 'q'):
            k, raw = _map_entry(v)
            m = out.setdefault(name, {})
            if code == 'm':
                m[k] = raw.decode('utf-8', 'replace')
            elif code == 'M':
                m[k] = base64.b64encode(raw).decode()
            else:
                m[k] = _scalar('Q', 2, raw)
            continue
        if code.startswith('['):
            item = code[1:]
            if item == 'i' and wt == 2:      # packed repeated varints
                vals, j = [], 0
                while j < len(v):
                    x, j = _varint(v, j)
                    vals.append(_signed(x))
                out.setdefault(name, []).extend(vals)
            else:
                out.setdefault(name, []).append(_scalar(item, wt, v))
            continue
        val = _scalar(code, wt, v)
        if val in ('', 0, False) and not isinstance(val, dict) and name not in _KEEP_ZERO:
            continue
        out[name] = val
    return out


def decode_object(body, kind):
    """The object a protobuf request body carries, as a dict (kind is the
    resource's kind, used when the envelope does not name one)."""
    if not body.startswith(MAGIC):
        raise ProtobufError('missing the k8s protobuf magic number')
    type_meta = {}
    raw = b''
    for num, _, v in _fields(body[len(MAGIC):]):
        if num == 1:
            type_meta = decode_message(v, SCHEMAS['TypeMeta'])
        elif num == 2:
            raw = v
    schema = KIND_SCHEMAS.get(type_meta.get('kind') or kind)
    if schema is None:
        raise ProtobufError('fakeapi cannot decode %s from protobuf'
                            % (type_meta.get('kind') or kind))
    obj = decode_message(raw, SCHEMAS[schema])
    if type_meta.get('apiVersion'):
        obj['apiVersion'] = type_meta['apiVersion']
    if type_meta.get('kind'):
        obj['kind'] = type_meta['kind']
    return obj
