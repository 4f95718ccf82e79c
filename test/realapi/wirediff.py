#!/usr/bin/env python3
"""wirediff: the same requests to the real kube-apiserver and to test/fakeapi,
their answers compared (issue 23). Run by test/realapi/fakeapi.bats, which
starts both, creates the same objects in namespace NS on each (the same
manifests through kubectl) and passes their addresses:

    wirediff.py --ns NS --real URL,CA,ADMIN_TOKEN,VIEWER_TOKEN \\
                --fake URL,CA,ADMIN_TOKEN,VIEWER_TOKEN [--only NAME,...] [--show]

Each request of REQUESTS below goes to both servers; a difference is a line

    NAME: WHAT: real=... fake=...

on stdout: the status code, the Content-Type, the presence of the headers
clients act on (Warning, Retry-After, Vary, ETag, Cache-Control, Audit-Id),
and the body: JSON compared value by value and in key order after the
values that must differ (uids, resourceVersions, timestamps, generated
names, continue tokens' revisions) are masked; watch streams event by
event; text as text. Exit status 1 when there is a difference that
test/realapi/wirediff-known.txt does not list (a line "NAME: WHAT", with
the reason after " # "), 0 otherwise. --show prints both answers.
"""

import argparse
import base64
import http.client
import json
import os
import re
import socket
import ssl
import sys
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
UA = 'kinf-wirediff/1'     # not curl: the apiserver pretty-prints JSON for curl

TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io'
KUBECTL_TABLE = ('application/json;as=Table;v=v1;g=meta.k8s.io,'
                 'application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json')
AGGREGATED = 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList'
CLIENT_GO_DISCOVERY = ('application/json;g=apidiscovery.k8s.io;v=v2beta1;'
                       'as=APIGroupDiscoveryList,application/json')

# Headers whose presence clients act on; their values are compared too
# where they are not per-request (Audit-Id is, ETag is the document's hash).
HEADERS = ('content-type', 'warning', 'retry-after', 'vary', 'etag', 'cache-control', 'audit-id')
VALUE_HEADERS = ('content-type', 'warning', 'retry-after', 'vary', 'cache-control')

# Keys whose values differ between any two servers by nature.
MASKED_KEYS = {'uid', 'resourceVersion', 'creationTimestamp', 'time', 'deletionTimestamp',
               'startTime', 'lastTransitionTime', 'lastProbeTime', 'generateName'}
GENERATED = [
    (re.compile(r'kube-api-access-[a-z0-9]{5}'), 'kube-api-access-XXXXX'),
    (re.compile(r'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'), 'UUID'),
    (re.compile(r'\b(too old resource version: )\d+ \(\d+\)'), r'\1N (M)'),
    (re.compile(r'\b(Too large resource version: )\d+(, current: )\d+'), r'\1N\2M'),
    (re.compile(r'(resourceVersion[ =:"]+)\d+'), r'\1N'),
    (re.compile(r'^127\.0\.0\.1:\d+$'), 'SERVER:PORT'),
]


def mask_text(s, ns):
    s = s.replace(ns, 'NS')
    for rx, rep in GENERATED:
        s = rx.sub(rep, s)
    return s


def mask_continue(tok):
    """A continue token is base64url JSON {"v","rv","start"}: its revision masked."""
    try:
        pad = '=' * (-len(tok) % 4)
        d = json.loads(base64.urlsafe_b64decode(tok + pad))
        d['rv'] = 'N' if isinstance(d.get('rv'), int) and d['rv'] > 0 else d.get('rv')
        return 'TOKEN' + json.dumps(d, sort_keys=False)
    except Exception:
        return 'TOKEN?' + tok[:8]


def normalize(v, ns, key=None):
    """v with the values that must differ masked; dicts stay ordered."""
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            if k in MASKED_KEYS and x not in (None, '', {}):
                out[k] = 'MASKED'
            elif k == 'continue' and isinstance(x, str) and x:
                out[k] = mask_continue(x)
            elif k == 'fieldsV1':
                # The field set of an apply: clients never read it, and the
                # test server's is an approximation (its manager, operation
                # and apiVersion are compared).
                out[k] = 'FIELDS'
            elif k == 'kubectl.kubernetes.io/last-applied-configuration':
                out[k] = 'LAST-APPLIED'
            elif k == 'cells' and isinstance(x, list):
                # A Table's Age cell (any cell that looks like an age).
                out[k] = [('AGE' if isinstance(c, str) and re.fullmatch(r'\d+[smhd](\d+[smh])?', c)
                           else normalize(c, ns)) for c in x]
            else:
                out[k] = normalize(x, ns, k)
        return out
    if isinstance(v, list):
        return [normalize(x, ns, key) for x in v]
    if isinstance(v, str):
        return mask_text(v, ns)
    return v


def compare(a, b, path, out, limit=20):
    """Differences between JSON values a (real) and b (fake), as (path, what, a, b)."""
    if len(out) >= limit:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        ka, kb = list(a), list(b)
        for k in ka:
            if k not in b:
                out.append((path + '.' + k, 'missing in fake', short(a[k]), None))
        for k in kb:
            if k not in a:
                out.append((path + '.' + k, 'extra in fake', None, short(b[k])))
        common_a = [k for k in ka if k in b]
        common_b = [k for k in kb if k in a]
        if common_a != common_b:
            out.append((path, 'key order', ','.join(common_a), ','.join(common_b)))
        for k in common_a:
            compare(a[k], b[k], path + '.' + k, out, limit)
        return
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append((path, 'length', len(a), len(b)))
        for i, (x, y) in enumerate(zip(a, b)):
            compare(x, y, '%s[%d]' % (path, i), out, limit)
        return
    if a != b or type(a) != type(b):
        out.append((path, 'value', short(a), short(b)))


def short(v, n=160):
    s = json.dumps(v, separators=(',', ':')) if not isinstance(v, str) else json.dumps(v)
    return s if len(s) <= n else s[:n] + '...'


class Target:
    def __init__(self, name, spec):
        self.name = name
        self.url, ca, tok, vtok = spec.split(',')
        u = urllib.parse.urlparse(self.url)
        self.host, self.port = u.hostname, u.port
        self.ctx = ssl.create_default_context(cafile=ca)
        self.tokens = {'admin': open(tok).read().strip(), 'viewer': open(vtok).read().strip()}

    def conn(self, timeout=10):
        return http.client.HTTPSConnection(self.host, self.port, context=self.ctx,
                                           timeout=timeout)

    def control(self, what, body):
        """POST /_fake/WHAT (the test server's control interface)."""
        c = self.conn()
        c.request('POST', '/_fake/' + what, body=json.dumps(body).encode(),
                  headers={'Content-Type': 'application/json'})
        r = c.getresponse()
        r.read()
        c.close()
        if r.status != 200:
            raise RuntimeError('POST /_fake/%s: %d' % (what, r.status))

    def request(self, method, path, headers=None, body=None, auth='admin', watch=None):
        """(status, {header: [values]}, body bytes or [watch lines], ended)."""
        h = {'User-Agent': UA}
        if auth == 'admin' or auth == 'viewer':
            h['Authorization'] = 'Bearer ' + self.tokens[auth]
        elif auth:
            h['Authorization'] = auth % self.tokens    # e.g. 'Bearer %(admin)s '
        h.update(headers or {})
        c = self.conn(timeout=(watch or {}).get('seconds', 10) + 5)
        if body is not None and not isinstance(body, bytes):
            body = json.dumps(body).encode()
        c.request(method, path, body=body, headers=h)
        r = c.getresponse()
        hdrs = {}
        for k, v in r.getheaders():
            hdrs.setdefault(k.lower(), []).append(v)
        if not watch:
            data = r.read()
            c.close()
            return r.status, hdrs, data, True
        lines, ended = [], False
        deadline = time.monotonic() + watch.get('seconds', 3)
        c.sock.settimeout(0.2)
        buf = b''
        while time.monotonic() < deadline and len(lines) < watch.get('max', 1000):
            try:
                chunk = r.read1(65536) if hasattr(r, 'read1') else r.read(1)
            except socket.timeout:
                continue
            except (http.client.IncompleteRead, ConnectionError, OSError):
                break
            if not chunk:
                ended = True
                break
            buf += chunk
            while b'\n' in buf:
                line, buf = buf.split(b'\n', 1)
                if line.strip():
                    lines.append(line)
        c.close()
        return r.status, hdrs, lines, ended


# --- the requests ------------------------------------------------------------

def R(name, path, accept=None, **kw):
    d = {'name': name, 'path': path, 'accept': accept}
    d.update(kw)
    return d


P = '/api/v1/namespaces/{ns}/pods'
REQUESTS = [
    # Reads of objects and lists.
    R('list-pods', P),
    R('list-pods-limit', P + '?limit=1'),
    R('list-pods-limit-continue', P + '?limit=1&continue={continue}'),
    R('list-pods-rv0-limit', P + '?limit=1&resourceVersion=0'),
    R('list-pods-label', P + '?labelSelector=app%3Dweb'),
    R('list-pods-field', P + '?fieldSelector=spec.nodeName%3Dnode-a'),
    R('get-pod', P + '/web-1'),
    R('get-pod-node', P + '/db-1'),
    R('list-deployments', '/apis/apps/v1/namespaces/{ns}/deployments'),
    R('get-deployment', '/apis/apps/v1/namespaces/{ns}/deployments/web'),
    R('list-configmaps', '/api/v1/namespaces/{ns}/configmaps?labelSelector=app'),
    R('get-configmap', '/api/v1/namespaces/{ns}/configmaps/app-config'),
    R('list-widgets', '/apis/example.com/v1/namespaces/{ns}/widgets'),
    R('list-widgets-limit', '/apis/example.com/v1/namespaces/{ns}/widgets?limit=1'),
    R('get-widget', '/apis/example.com/v1/namespaces/{ns}/widgets/widget-a'),
    R('get-namespace', '/api/v1/namespaces/{ns}'),
    # Tables.
    R('table-pods', P, TABLE),
    R('table-pods-kubectl', P, KUBECTL_TABLE),
    R('table-pods-none', P + '?includeObject=None', TABLE),
    R('table-pods-object', P + '?includeObject=Object', TABLE),
    R('table-pods-bad-include', P + '?includeObject=Bogus', TABLE),
    R('table-pod', P + '/web-1', TABLE),
    R('table-deployments', '/apis/apps/v1/namespaces/{ns}/deployments', TABLE),
    R('table-configmaps', '/api/v1/namespaces/{ns}/configmaps?labelSelector=app', TABLE),
    R('table-widgets', '/apis/example.com/v1/namespaces/{ns}/widgets', TABLE),
    R('partial-metadata', P,
      'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io'),
    # Errors.
    R('pod-not-found', P + '/nope'),
    R('widget-not-found', '/apis/example.com/v1/namespaces/{ns}/widgets/nope'),
    R('deployment-not-found', '/apis/apps/v1/namespaces/{ns}/deployments/nope'),
    R('namespace-not-found', '/api/v1/namespaces/nope-kinf-wirediff'),
    R('unknown-resource', '/api/v1/namespaces/{ns}/bogus'),
    R('unknown-group', '/apis/bogus.example.com/v1/bogus'),
    R('bad-label-selector', P + '?labelSelector=app%3D%3D%3Dx'),
    R('bad-field-selector', P + '?fieldSelector=metadata.name%3D%3D%3Dx'),
    R('unknown-field-label', P + '?fieldSelector=spec.bogus%3Dx'),
    R('unknown-field-label-deployments',
      '/apis/apps/v1/namespaces/{ns}/deployments?fieldSelector=spec.replicas%3D1'),
    R('send-initial-events-list', P + '?sendInitialEvents=true'),
    R('match-without-rv', P + '?resourceVersionMatch=NotOlderThan'),
    R('match-exact-rv0', P + '?resourceVersionMatch=Exact&resourceVersion=0'),
    R('continue-with-rv', P + '?limit=1&continue={continue}&resourceVersion={rv}'),
    R('continue-garbage', P + '?limit=1&continue=garbage'),
    R('limit-negative', P + '?limit=-1'),
    R('rv-not-a-number', P + '?resourceVersion=abc'),
    R('rv-too-large', P + '?resourceVersion={rv_future}', slow=True),
    R('rv-too-large-limit', P + '?resourceVersion={rv_future}&limit=1'),
    R('rv-not-a-number-get', P + '/web-1?resourceVersion=abc'),
    R('rv-not-a-number-watch', P + '?watch=1&resourceVersion=abc'),
    R('rv-not-a-number-limit', P + '?resourceVersion=abc&limit=1'),
    R('rv-too-large-exact', P + '?resourceVersion={rv_future}&resourceVersionMatch=Exact'),
    R('rv-too-large-not-older-limit', P + '?resourceVersion={rv_future}&'
      'resourceVersionMatch=NotOlderThan&limit=1'),
    R('timeout-seconds-bad', P + '?watch=1&timeoutSeconds=abc'),
    R('limit-not-a-number', P + '?limit=abc'),
    R('allow-bookmarks-bogus', P + '?allowWatchBookmarks=bogus'),
    R('unknown-field-label-configmaps',
      '/api/v1/namespaces/{ns}/configmaps?fieldSelector=data.x%3D1'),
    R('unknown-field-label-widgets',
      '/apis/example.com/v1/namespaces/{ns}/widgets?fieldSelector=spec.color%3Dred'),
    R('unknown-version-builtin-group', '/apis/apps/v2'),
    R('unknown-version-core', '/api/v2'),
    R('unknown-resource-crd-group', '/apis/example.com/v1/namespaces/{ns}/bogus'),
    R('unknown-subresource', P + '/web-1/bogus'),
    R('unknown-path', '/foo'),
    R('openapi-unknown', '/openapi/v3/apis/bogus.example.com/v1'),
    R('anonymous-api', '/api', auth=''),
    R('anonymous-version', '/version', auth='', pick='version'),
    R('anonymous-healthz', '/healthz', auth=''),
    R('pod-log-no-node', P + '/web-2/log'),
    # Authentication and authorization.
    R('token-trailing-space', P, auth='Bearer %(admin)s '),
    R('token-bad', P, auth='Bearer nope'),
    R('token-none', P, auth=''),
    R('viewer-cluster-list', '/api/v1/pods', auth='viewer'),
    R('viewer-namespace-list', P, auth='viewer'),
    R('viewer-get', P + '/web-1', auth='viewer'),
    R('viewer-deployment', '/apis/apps/v1/namespaces/{ns}/deployments/web', auth='viewer'),
    # Discovery.
    R('discovery-api-aggregated', '/api', AGGREGATED, pick='discovery'),
    R('discovery-apis-aggregated', '/apis', AGGREGATED, pick='discovery'),
    R('discovery-api-client-go', '/api', CLIENT_GO_DISCOVERY, pick='discovery'),
    R('discovery-api-legacy', '/api', pick='discovery'),
    R('discovery-apis-legacy', '/apis', pick='discovery'),
    R('discovery-api-v1', '/api/v1', pick='discovery'),
    R('discovery-apps-v1', '/apis/apps/v1', pick='discovery'),
    R('discovery-example-v1', '/apis/example.com/v1', pick='discovery'),
    R('discovery-apps', '/apis/apps', pick='discovery'),
    # Watches.
    R('watch-rv0', P + '?watch=1&resourceVersion=0&timeoutSeconds=2', watch={'seconds': 4}),
    R('watch-bookmark', P + '?watch=1&resourceVersion={rv}&timeoutSeconds=3&'
      'allowWatchBookmarks=true', watch={'seconds': 6}),
    R('watch-bogus', P + '?watch=bogus&timeoutSeconds=1', watch={'seconds': 3}),
    R('watch-empty', P + '?watch=&timeoutSeconds=1', watch={'seconds': 3}),
    R('watch-bookmarks-bogus', P + '?watch=1&resourceVersion={rv}&timeoutSeconds=3&'
      'allowWatchBookmarks=bogus', watch={'seconds': 6}),
    R('watch-false', P + '?watch=false'),
    R('watch-path', '/api/v1/watch/namespaces/{ns}/pods?resourceVersion={rv}&timeoutSeconds=1',
      watch={'seconds': 3}),
    # 1.28 has the WatchList gate off; the test server (1.32) has it on
    # unless told otherwise, as here.
    R('watch-initial-events', P + '?watch=1&sendInitialEvents=true&resourceVersionMatch='
      'NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=2', watch={'seconds': 4},
      fake_faults=({'watch_list': False}, {'watch_list': True})),
    R('watch-table', P + '?watch=1&resourceVersion=0&timeoutSeconds=1', TABLE,
      watch={'seconds': 3}),
    R('watch-change', P + '?watch=1&resourceVersion={rv}&timeoutSeconds=3&'
      'labelSelector=app%3Dweb', watch={'seconds': 5},
      during=('PATCH', P + '/web-2', 'application/merge-patch+json',
              {'metadata': {'labels': {'app': 'web2'}}},
              {'metadata': {'labels': {'app': 'web'}}})),
    R('watch-widgets', '/apis/example.com/v1/namespaces/{ns}/widgets?watch=1&'
      'resourceVersion=0&timeoutSeconds=1', watch={'seconds': 3}),
    R('watch-widgets-bookmark', '/apis/example.com/v1/namespaces/{ns}/widgets?watch=1&'
      'resourceVersion={rv}&timeoutSeconds=3&allowWatchBookmarks=true', watch={'seconds': 6}),
]


def pick_discovery(body, ns):
    """The parts of a discovery document both servers have: the entries of
    the resources both serve (pods, configmaps, deployments, widgets...)."""
    shared = {'pods', 'configmaps', 'namespaces', 'nodes', 'services', 'serviceaccounts',
              'deployments', 'widgets', 'pods/log', 'pods/status', 'deployments/scale',
              'deployments/status', 'namespaces/status', 'namespaces/finalize'}
    groups = {'', 'apps', 'example.com'}
    if body.get('kind') == 'APIGroupDiscoveryList':
        items = []
        for g in body.get('items', []):
            if g['metadata'].get('name', '') not in groups:
                continue
            g = dict(g)
            g['versions'] = [dict(v, resources=[r for r in v.get('resources', [])
                                                if r['resource'] in shared])
                             for v in g.get('versions', []) if v['version'] == 'v1']
            items.append(g)
        return dict(body, items=items)
    if body.get('kind') == 'APIResourceList':
        return dict(body, resources=[r for r in body.get('resources', [])
                                     if r['name'] in shared])
    if body.get('kind') == 'APIGroupList':
        # example.com's v1 only: the real server has gadgets' v1beta1 too.
        return dict(body, groups=[dict(g, versions=[v for v in g['versions']
                                                    if v['version'] == 'v1'])
                                  for g in body.get('groups', []) if g['name'] in groups])
    if body.get('kind') == 'APIGroup':
        return body
    return body


def initial_sorted(events):
    """The ADDED events that open a watch from resourceVersion 0 sorted by
    name: the watch cache sends its store in map order (the test server
    sorted), which no client may rely on."""
    n = 0
    while n < len(events) and events[n] and events[n].get('type') == 'ADDED':
        n += 1

    def key(e):
        o = e.get('object') or {}
        if o.get('kind') == 'Table':
            o = ((o.get('rows') or [{}])[0].get('object')) or {}
        m = o.get('metadata') or {}
        return (m.get('namespace', ''), m.get('name', ''))
    head = events[:n]
    # A Table watch: the column definitions ride on the first event only.
    # (null in the others): they stay first.
    cols = None
    if head and isinstance(head[0].get('object'), dict) and \
            'columnDefinitions' in head[0]['object']:
        cols = head[0]['object']['columnDefinitions']
        head[0]['object']['columnDefinitions'] = None
    head = sorted(head, key=key)
    if cols is not None:
        head[0]['object']['columnDefinitions'] = cols
    return head + events[n:]


def parse_json(data):
    try:
        return json.loads(data)
    except ValueError:
        return None


def context(t, ns):
    """Per-server values for the templates: a list's resourceVersion, a
    continue token, a resourceVersion far ahead."""
    st, _, body, _ = t.request('GET', P.format(ns=ns) + '?limit=1')
    d = json.loads(body)
    rv = d['metadata']['resourceVersion']
    return {'ns': ns, 'rv': rv, 'continue': d['metadata'].get('continue', ''),
            'rv_future': str(int(rv) + 1000000)}


def run_one(t, req, ctx):
    path = req['path'].format(**ctx)
    headers = {'Accept': req['accept']} if req.get('accept') else {}
    during = req.get('during')
    timer = None
    if during:
        method, p, ctype, body, undo = during

        def act():
            t.request(method, p.format(**ctx), {'Content-Type': ctype}, body)
            time.sleep(0.3)
            t.request(method, p.format(**ctx), {'Content-Type': ctype}, undo)
        timer = threading.Timer(0.7, act)
        timer.start()
    try:
        return t.request('GET', path, headers, auth=req.get('auth', 'admin'),
                         watch=req.get('watch'))
    finally:
        if timer:
            timer.join()


def differences(req, real, fake, ns):
    out = []
    name = req['name']
    (sa, ha, ba, ea), (sb, hb, bb, eb) = real, fake
    if sa != sb:
        out.append((name, 'status', sa, sb))
    for h in HEADERS:
        if (h in ha) != (h in hb):
            out.append((name, 'header %s' % h, ha.get(h), hb.get(h)))
        elif h in ha and h in VALUE_HEADERS:
            va = [mask_text(x, ns) for x in ha[h]]
            vb = [mask_text(x, ns) for x in hb[h]]
            if va != vb:
                out.append((name, 'header %s' % h, va, vb))
    if req.get('watch'):
        if ea != eb:
            out.append((name, 'stream ended', ea, eb))
        ta = initial_sorted([parse_json(x) for x in ba])
        tb = initial_sorted([parse_json(x) for x in bb])
        types_a = [x.get('type') if x else 'NOT-JSON' for x in ta]
        types_b = [x.get('type') if x else 'NOT-JSON' for x in tb]
        if types_a != types_b:
            out.append((name, 'event types', types_a, types_b))
        diffs = []
        for i, (x, y) in enumerate(zip(ta, tb)):
            if x is not None and y is not None:
                compare(normalize(x, ns), normalize(y, ns), 'event[%d]' % i, diffs)
        out += [(name, 'body %s: %s' % (p, w), a, b) for p, w, a, b in diffs]
        return out
    ja, jb = parse_json(ba), parse_json(bb)
    if ja is None or jb is None:
        ta, tb = mask_text(ba.decode('utf-8', 'replace'), ns), mask_text(
            bb.decode('utf-8', 'replace'), ns)
        if (ja is None) != (jb is None) or ta != tb:
            out.append((name, 'body', short(ta), short(tb)))
        return out
    if req.get('pick') == 'discovery':
        ja, jb = pick_discovery(ja, ns), pick_discovery(jb, ns)
    elif req.get('pick') == 'version':
        # The versions differ by design (1.28 and the test server's 1.32).
        ja, jb = list(ja), list(jb)
    diffs = []
    compare(normalize(ja, ns), normalize(jb, ns), '', diffs)
    out += [(name, 'body %s: %s' % (p or '.', w), a, b) for p, w, a, b in diffs]
    return out


def load_known():
    known = {}
    path = os.path.join(HERE, 'wirediff-known.txt')
    if os.path.exists(path):
        for line in open(path):
            line = line.rstrip('\n')
            if not line.strip() or line.startswith('#'):
                continue
            key, _, why = line.partition(' # ')
            known[key.strip()] = why.strip()
    return known


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--ns', required=True)
    ap.add_argument('--real', required=True)
    ap.add_argument('--fake', required=True)
    ap.add_argument('--only', help='request names, comma-separated')
    ap.add_argument('--show', action='store_true', help='print both answers')
    args = ap.parse_args()
    real, fake = Target('real', args.real), Target('fake', args.fake)
    known = load_known()
    only = set(args.only.split(',')) if args.only else None
    ctx = {'real': context(real, args.ns), 'fake': context(fake, args.ns)}
    reqs = [r for r in REQUESTS if not only or r['name'] in only]
    # Slow requests (a 3 s wait for a future resourceVersion) and watches
    # run on both servers at once.
    unknown = 0
    for req in reqs:
        answers = {}
        if req.get('fake_faults'):
            fake.control('faults', req['fake_faults'][0])

        def go(t):
            try:
                answers[t.name] = run_one(t, req, ctx[t.name])
            except Exception as e:      # a failure is an answer too
                answers[t.name] = (0, {}, ('%s: %s' % (type(e).__name__, e)).encode(), True)
        threads = [threading.Thread(target=go, args=(t,)) for t in (real, fake)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        if req.get('fake_faults'):
            fake.control('faults', req['fake_faults'][1])
        if args.show:
            for tn in ('real', 'fake'):
                s, h, b, e = answers[tn]
                body = b'\n'.join(b) if isinstance(b, list) else b
                print('== %s %s: %s %s\n%s' % (req['name'], tn, s, h.get('content-type'),
                                               body[:2000].decode('utf-8', 'replace')))
        for name, what, a, b in differences(req, answers['real'], answers['fake'], args.ns):
            key = '%s: %s' % (name, what)
            mark = ''
            if key in known or '%s: *' % name in known:
                mark = '(known) '
            else:
                unknown += 1
            print('%s%s: real=%s fake=%s' % (mark, key, short(a, 300), short(b, 300)))
    return 1 if unknown else 0


if __name__ == '__main__':
    sys.exit(main())
