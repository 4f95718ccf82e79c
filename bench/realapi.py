"""bench/run --real: issue 23's figures, measured on the real kube-apiserver
v1.28.7 of ../shared/realapi (etcd 3.4.23) in one run, side by side with
curl and kubectl, medians of --reps (at least 3).

    bench/run --real                        every figure (loads what is missing)
    bench/run --real --only sync,list       some of them
    bench/run --real --only load            load the pods and record the
                                            apiserver's RSS growth, nothing else

The pods come from ../shared/realapi/load-pods.sh (realistic Deployment pods,
about 4.5 KB of JSON each) in namespaces kinf-bench-5000, kinf-bench-10000
and kinf-bench-100000 (with as many pods), and kinf-bench-few (10 pods).
They are loaded once and reused: a run loads only what is missing. The
100,000 get 100 more labelled kinf-bench=hundred (the answer of serve's
selector figures); so do the 10,000. When it loads the 100,000 the bench
restarts the apiserver before and after (down.sh --keep-etcd, up.sh) and
records its resident memory in both states (a fresh watch cache without and
with the pods) in realapi/run/kinf-bench-load.json: the apiserver's RSS
growth for those pods, beside serve's RSS for the same.

The apiserver answers gzip (level 1) to clients that accept it, as kinf and
client-go do; curl does not unless --compressed. Every kinf/curl ratio is
given for both encodings: kinf as it runs against curl --compressed, and
kinf with compression off (a kubeconfig with disable-compression: true)
against plain curl. curl runs with a User-Agent that is not curl's: the
apiserver pretty-prints JSON for curl's own (2.4 times the bytes).

Nothing else may use the server meanwhile: the bench takes the lock that
test/real takes (realapi/run/kinf-test.lock).
"""

import fcntl
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

UA = 'kinf-bench/1'
NS = {5000: 'kinf-bench-5000', 10000: 'kinf-bench-10000', 100000: 'kinf-bench-100000'}
FEW_NS, FEW = 'kinf-bench-few', 10
LABEL = ('kinf-bench', 'hundred')
SELECTOR_800 = 'app=web'    # about 1 pod in 12 of load-pods.sh's

# (key, description, op, bound): issue 23's table.
TARGETS = [
    ('sync_5000', 'kinf watch --exit-after-sync / curl ?resourceVersion=0, 5,000 pods', '<=', 1.2),
    ('sync_10000', 'kinf watch --exit-after-sync / curl ?resourceVersion=0, 10,000 pods', '<=',
     1.2),
    ('list_curl', 'kinf list / curl paged list (limit 500, sequential), {n} pods', '<=', 1.0),
    ('list_kubectl_wall', 'kubectl get -o json / kinf list -o json, wall, {n} pods', '>=', 10),
    ('list_kubectl_rss', 'kubectl get -o json / kinf list -o json, peak RSS, {n} pods', '>=', 10),
    ('serve_consistent_10000', 'serve label-selector list / apiserver consistent list, '
     '10,000 pods (p50s)', '>=', 30),
    ('serve_consistent_100000', 'serve label-selector list / apiserver consistent list, '
     '100,000 pods (p50s)', '>=', 30),
    ('serve_cache_10000', 'serve label-selector list / apiserver watch cache (rv=0), '
     '10,000 pods (p50s)', '>=', 5),
    ('serve_cache_100000', 'serve label-selector list / apiserver watch cache (rv=0), '
     '100,000 pods (p50s)', '>=', 5),
    ('serve_p50', 'serve: p50 of 1,000 such queries, 100,000 pods, 100 matches (ms)', '<=', 1),
    ('serve_p99', 'serve: p99 of the same (ms)', '<=', 5),
    ('startup', 'kubectl straight / kinf list --server unix: (start-up, {few} pods)', '>=', 20),
    ('serve_kubectl', 'kubectl get straight / through serve, 10,000 pods, {sel} ({matches} '
     'matches), wall', 'report', None),
    ('serve_rss', 'serve RSS for 100,000 pods / apiserver RSS growth for them', 'report', None),
]


def log(msg):
    sys.stderr.write('bench: %s\n' % msg)
    sys.stderr.flush()


def find_realapi(root):
    """(scripts dir, artifacts dir) as test/real finds them, or Nones."""
    scripts = os.environ.get('REALAPI_DIR')
    if not scripts:
        for up in ('..', '../..', '../../..'):
            d = os.path.normpath(os.path.join(root, up, 'shared', 'realapi'))
            if os.access(os.path.join(d, 'up.sh'), os.X_OK):
                scripts = d
                break
    real = os.environ.get('REAL')
    if scripts and not real and os.path.isdir(scripts):
        real = os.path.normpath(os.path.join(scripts, '..', '..', 'realapi'))
    if not scripts or not real or not os.access(os.path.join(real, 'bin', 'kube-apiserver'),
                                                os.X_OK):
        return None, None
    return scripts, real


class RealServer:
    """The real apiserver: its scripts, credentials, an environment whose
    kubeconfig points at it, the lock, loading pods."""

    def __init__(self, h, scripts, real, workdir):
        self.h = h
        self.scripts, self.real = scripts, real
        self.url = 'https://127.0.0.1:6443'
        self.ca = os.path.join(real, 'pki', 'ca.crt')
        self.token = open(os.path.join(real, 'pki', 'admin.token')).read().strip()
        self.kubeconfig = os.path.join(real, 'kubeconfig')
        os.makedirs(os.path.join(real, 'run'), exist_ok=True)
        self.lock = open(os.path.join(real, 'run', 'kinf-test.lock'), 'w')
        try:
            fcntl.flock(self.lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            log('waiting for test/real or another bench/run --real to finish')
            fcntl.flock(self.lock, fcntl.LOCK_EX)
        self.env = dict(os.environ)
        self.env.update({'KUBECONFIG': self.kubeconfig,
                         'XDG_CACHE_HOME': os.path.join(workdir, 'cache'),
                         'KUBECACHEDIR': os.path.join(workdir, 'cache', 'kube')})
        os.makedirs(self.env['KUBECACHEDIR'], exist_ok=True)
        # The same, with compression off (kubeconfig disable-compression).
        self.env_nogzip = dict(self.env)
        nogzip = os.path.join(workdir, 'kubeconfig-nogzip')
        with open(self.kubeconfig) as f:
            kc = f.read()
        kc = re.sub(r'(\n    server: https://127\.0\.0\.1:6443)',
                    r'\1\n    disable-compression: true', kc)
        with open(nogzip, 'w') as f:
            f.write(kc)
        self.env_nogzip['KUBECONFIG'] = nogzip
        # A memory limit for the apiserver's Go runtime when the bench
        # starts it: holding 115,000 pods (4.5 GB live) and answering
        # consistent lists of 100,000, its heap grew to 18 GB with the
        # default GOGC and the kernel killed it (24 GiB machine, shared).
        self.server_env = dict(os.environ, GOMEMLIMIT=os.environ.get('GOMEMLIMIT', '10GiB'))
        self.was_up = self.ready()
        self.up()

    def script(self, name, *args, quiet=True):
        subprocess.run([os.path.join(self.scripts, name)] + list(args), check=True,
                       env=self.server_env, stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL if quiet else None,
                       stderr=subprocess.DEVNULL if quiet else None, close_fds=True)

    def ready(self):
        r = subprocess.run(['curl', '-fsS', '--max-time', '3', '--cacert', self.ca,
                            '-H', 'Authorization: Bearer ' + self.token, self.url + '/readyz'],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        return r.stdout.strip() == b'ok'

    def up(self):
        """up.sh, which gives up after 60 s, again until the apiserver is
        ready (it starts nothing twice), ten times at most: an apiserver
        fills its watch cache with 115,000 pods in minutes."""
        for _ in range(9):
            try:
                self.script('up.sh')
                return
            except subprocess.CalledProcessError:
                log('apiserver not ready yet (up.sh gives up after 60 s): up.sh again')
        self.script('up.sh')

    def restart(self):
        self.script('down.sh', '--keep-etcd')
        self.up()

    def apiserver_pid(self):
        return int(open(os.path.join(self.real, 'run', 'kube-apiserver.pid')).read())

    def apiserver_rss(self):
        return self.h.rss_bytes(self.apiserver_pid())

    def curl(self, path, *extra):
        r = subprocess.run(['curl', '-sS', '--fail', '-A', UA, '--cacert', self.ca,
                            '-H', 'Authorization: Bearer ' + self.token] + list(extra) +
                           [self.url + path], stdout=subprocess.PIPE, check=True)
        return r.stdout

    def kubectl(self, *args, input=None):
        return subprocess.run(['kubectl'] + list(args), env=self.env, input=input,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True).stdout

    def count(self, ns, selector=None):
        if selector:
            # remainingItemCount is left out with a selector: count the items
            # the watch cache gives (a consistent list of 100,000 pods with a
            # selector pages through etcd past the request timeout when the
            # machine is loaded).
            d = json.loads(self.curl('/api/v1/namespaces/%s/pods?resourceVersion=0&'
                                     'labelSelector=%s' % (ns, urllib.parse.quote(selector))))
            return len(d['items'])
        d = json.loads(self.curl('/api/v1/namespaces/%s/pods?limit=1' % ns))
        return len(d['items']) + (d['metadata'].get('remainingItemCount') or 0)

    def load(self, ns, n):
        have = self.count(ns)
        if have >= n:
            return False
        log('loading %d pods into %s (it has %d)' % (n - have, ns, have))
        t0 = time.monotonic()
        env = dict(self.env, PARALLEL='4')
        subprocess.run([os.path.join(self.scripts, 'load-pods.sh'), str(n - have), ns],
                       env=env, check=True, stdin=subprocess.DEVNULL, close_fds=True)
        log('loaded %s in %.0f s' % (ns, time.monotonic() - t0))
        return True

    def label_hundred(self, ns, count=100):
        """count pods labelled kinf-bench=hundred in ns (copies of one of its
        pods, under names of their own)."""
        key, val = LABEL
        if self.count(ns, '%s=%s' % LABEL) >= count:
            return
        src = json.loads(self.curl('/api/v1/namespaces/%s/pods?limit=1' % ns))['items'][0]
        items = []
        for i in range(count):
            o = json.loads(json.dumps(src))
            md = o['metadata']
            for k in ('resourceVersion', 'uid', 'creationTimestamp', 'managedFields',
                      'generateName'):
                md.pop(k, None)
            md['name'] = 'bench-hundred-%03d' % i
            md['labels'] = {key: val, 'app': 'bench-hundred'}
            o.pop('status', None)
            o['apiVersion'], o['kind'] = 'v1', 'Pod'
            items.append(o)
        doc = json.dumps({'apiVersion': 'v1', 'kind': 'List', 'items': items}).encode()
        self.kubectl('apply', '-n', ns, '-f', '-', input=doc)

    def load_all(self, sizes, record):
        """Every namespace the run needs, loaded; the 100,000's apiserver RSS
        growth measured when it is loaded now (else read from record)."""
        if 100000 in sizes and self.count(NS[100000]) < 100000:
            self.restart()
            time.sleep(20)
            before = self.apiserver_rss()
            self.load(NS[100000], 100000)
            self.restart()
            time.sleep(20)     # the watch cache filled, the start-up garbage collected
            after = self.apiserver_rss()
            rec = {'pods': self.count(NS[100000]), 'rss_before': before, 'rss_after': after,
                   'when': time.strftime('%Y-%m-%d %H:%M'),
                   'how': 'RSS of a fresh apiserver (up.sh, then 20 s) before and after '
                   'loading the namespace'}
            with open(record, 'w') as f:
                json.dump(rec, f, indent=1)
            log('apiserver RSS %s before, %s after %d pods' % (
                self.h.mib(before), self.h.mib(after), rec['pods']))
        for n in sizes:
            self.load(NS[n], n)
        self.load(FEW_NS, FEW)
        for n in sizes:
            if n >= 10000:
                self.label_hundred(NS[n])

    def close(self):
        if not self.was_up:
            self.script('down.sh')
        self.lock.close()


# --- measuring ---------------------------------------------------------------------

def med(values):
    return statistics.median(values)


def pages(srv, ns, gzip):
    """The URLs of every page of a paginated list of ns's pods (limit 500), as
    a client following continue asks for them: fetched just before the
    timed runs (a token lives until the apiserver's next compaction)."""
    urls, cont = [], None
    while True:
        p = '/api/v1/namespaces/%s/pods?limit=500' % ns + ('&continue=' + cont if cont else '')
        urls.append(srv.url + p)
        d = json.loads(srv.curl(p))
        cont = d['metadata'].get('continue')
        if not cont:
            return urls


def curl_argv(srv, urls, gzip):
    a = ['curl', '-s', '--fail', '-A', UA, '--cacert', srv.ca,
         '-H', 'Authorization: Bearer ' + srv.token, '-H', 'Accept: application/json']
    if gzip:
        a.append('--compressed')
    for u in urls:
        a += ['-o', '/dev/null', u]
    return a


def list_bytes(srv, ns):
    """Bytes of the list (rv=0, uncompressed), for CPU seconds per MB."""
    return len(srv.curl('/api/v1/namespaces/%s/pods?resourceVersion=0' % ns))


def bench_sync(h, srv, kinf, n, reps, out):
    ns = NS[n]
    url = srv.url + '/api/v1/namespaces/%s/pods?resourceVersion=0' % ns
    size = list_bytes(srv, ns)
    watch = [kinf, 'watch', 'pods', '-n', ns, '--exit-after-sync', '-o', 'name']
    clients = [
        ('curl --compressed', curl_argv(srv, [url], True), srv.env),
        ('kinf', watch, srv.env),
        ('curl', curl_argv(srv, [url], False), srv.env),
        ('kinf, compression off', watch, srv.env_nogzip),
    ]
    h.check(h.run(watch, srv.env), 'kinf warm-up')
    h.check(h.run(watch, srv.env_nogzip), 'kinf warm-up')
    res = {name: [] for name, _, _ in clients}
    for rep in range(reps):
        for name, argv, env in clients:
            r = h.check(h.run(argv, env), name)
            res[name].append(r)
            log('sync %d rep %d %s: %.3f s, %s, %.2f CPU s' % (
                n, rep + 1, name, r.wall, h.mib(r.rss), r.cpu or 0))
    out['sync'][n] = {'bytes': size, 'res': res, 'argv': {c[0]: c[1] for c in clients}}


def bench_list(h, srv, kinf, n, reps, kubectl_reps, out):
    ns = NS[n]
    kinf_argv = [kinf, 'list', 'pods', '-n', ns, '-o', 'json']
    kubectl_argv = ['kubectl', 'get', 'pods', '-n', ns, '-o', 'json', '--chunk-size=500']
    h.check(h.run(kinf_argv, srv.env), 'kinf warm-up')
    h.check(h.run(kubectl_argv[:5] + ['-o', 'name'], srv.env), 'kubectl warm-up')
    res = {k: [] for k in ('curl --compressed', 'kinf', 'curl', 'kinf, compression off',
                           'kubectl')}
    n_pages = 0
    for rep in range(reps):
        urls = pages(srv, ns, False)
        n_pages = len(urls)
        for name, argv, env in (
                ('curl --compressed', curl_argv(srv, urls, True), srv.env),
                ('kinf', kinf_argv, srv.env),
                ('curl', curl_argv(srv, urls, False), srv.env),
                ('kinf, compression off', kinf_argv, srv.env_nogzip)):
            r = h.check(h.run(argv, env), name)
            res[name].append(r)
            log('list %d rep %d %s: %.3f s, %s' % (n, rep + 1, name, r.wall, h.mib(r.rss)))
    for rep in range(kubectl_reps):
        r = h.check(h.run(kubectl_argv, srv.env), 'kubectl')
        res['kubectl'].append(r)
        log('list %d rep %d kubectl: %.3f s, %s' % (n, rep + 1, r.wall, h.mib(r.rss)))
    out['list'][n] = {'pages': n_pages, 'bytes': list_bytes(srv, ns), 'res': res,
                      'argv': {'kinf': kinf_argv, 'kubectl': kubectl_argv,
                               'curl': curl_argv(srv, ['$U/...'], False)}}


def serve_get(h, client, base, ca, token, path, q):
    argv = [client, 'get', base + path, ca, token, str(q)]
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode != 0:
        raise RuntimeError('serve-client get %s: %s' % (path, r.stderr.decode()[-300:]))
    return json.loads(r.stdout)


class RealServe:
    """kinf serve pods -n NS on the real server (TLS port, unix socket)."""

    def __init__(self, h, srv, kinf, workdir, namespaces):
        self.h = h
        self.dir = tempfile.mkdtemp(prefix='serve.', dir=workdir)
        self.kubeconfig = os.path.join(self.dir, 'kubeconfig')
        self.sock = os.path.join(self.dir, 's.sock')
        self.argv = [kinf, 'serve', 'pods', '-n', ','.join(namespaces), '--listen',
                     'unix:' + self.sock, '--listen', 'tcp:127.0.0.1:0',
                     '--write-kubeconfig', self.kubeconfig]
        self.log = open(os.path.join(self.dir, 'log'), 'w')
        t0 = time.monotonic()
        self.proc = subprocess.Popen(self.argv, env=srv.env, stdin=subprocess.DEVNULL,
                                     stdout=self.log, stderr=self.log)
        while True:
            r = subprocess.run(['curl', '-s', '-m', '1', '--unix-socket', self.sock,
                                'http://kinf/readyz'], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL)
            if r.stdout == b'ok' and os.path.exists(self.kubeconfig):
                break
            if self.proc.poll() is not None or time.monotonic() - t0 > 900:
                raise RuntimeError('kinf serve not ready: see %s' % self.log.name)
            time.sleep(0.1)
        self.sync_s = time.monotonic() - t0
        time.sleep(2)   # the sync's garbage returned
        kc = open(self.kubeconfig).read()
        self.url = re.search(r'server: *"?(https://[^/"\s]+)', kc).group(1)
        self.token = re.search(r'token: *"?([^"\s]+)', kc).group(1)
        import base64
        self.ca = os.path.join(self.dir, 'ca.crt')
        with open(self.ca, 'wb') as f:
            f.write(base64.b64decode(re.search(r'certificate-authority-data: *"?([^"\s]+)',
                                               kc).group(1)))
        self.env = dict(srv.env, KUBECONFIG=self.kubeconfig,
                        KUBECACHEDIR=os.path.join(self.dir, 'kubecache'))

    def rss(self):
        return self.h.rss_bytes(self.proc.pid)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(30)
        self.log.close()


def bench_serve(h, srv, kinf, client, sizes, reps, queries, workdir, record, out):
    sel = '%s=%s' % LABEL
    o = {'queries': queries, 'sizes': {}}
    out['serve'] = o
    for n in sizes:
        ns = NS[n]
        path = '/api/v1/namespaces/%s/pods?labelSelector=%s' % (ns, urllib.parse.quote(sel))
        sv = RealServe(h, srv, kinf, workdir, [ns])
        try:
            d = {'sync_s': sv.sync_s, 'rss': sv.rss(), 'matches': srv.count(ns, sel)}
            log('serve %d: ready in %.1f s, RSS %s' % (n, sv.sync_s, h.mib(d['rss'])))
            d['serve'] = serve_get(h, client, sv.url, sv.ca, sv.token, path, queries)
            # The apiserver: its consistent list (etcd) and its watch cache,
            # fewer queries (each is a filter over every pod of ns).
            slow = max(reps, 3 if n >= 100000 else 10)
            d['consistent'] = serve_get(h, client, srv.url, srv.ca, srv.token, path, slow)
            d['cache'] = serve_get(h, client, srv.url, srv.ca, srv.token,
                                   path + '&resourceVersion=0', max(reps, 20))
            # What the answer's size costs: the same query cut to 1 and 10 pods.
            d['by_size'] = [serve_get(h, client, sv.url, sv.ca, sv.token,
                                      path + '&limit=%d' % m, max(200, queries // 5))
                            for m in (1, 10)] + [d['serve']]
            for k in ('serve', 'consistent', 'cache'):
                log('serve %d %s: p50 %.2f ms, p99 %.2f ms (%d queries, %d bytes)' % (
                    n, k, d[k]['p50_us'] / 1000, d[k]['p99_us'] / 1000, d[k]['n'],
                    d[k]['bytes']))
            if n == 10000:
                d['kubectl'] = bench_serve_kubectl(h, srv, sv, ns, reps)
            d['rss_after'] = sv.rss()
            d['apiserver_rss'] = srv.apiserver_rss()
        finally:
            sv.stop()
        o['sizes'][n] = d
    if os.path.exists(record):
        o['apiserver'] = json.load(open(record))


def bench_serve_kubectl(h, srv, sv, ns, reps):
    kube = ['kubectl', 'get', 'pods', '-n', ns, '-l', SELECTOR_800]
    res = {'through serve': [], 'straight': []}
    envs = {'through serve': sv.env, 'straight': srv.env}
    for name in res:
        h.check(h.run(kube, envs[name]), 'kubectl warm-up ' + name)
    for rep in range(reps):
        for name in res:
            r = h.check(h.run(kube, envs[name]), 'kubectl ' + name)
            res[name].append(r)
            log('serve kubectl rep %d %s: %.3f s' % (rep + 1, name, r.wall))
    return {'res': res, 'argv': kube, 'matches': srv.count(ns, SELECTOR_800)}


def bench_startup(h, srv, kinf, reps, workdir, out):
    sv = RealServe(h, srv, kinf, workdir, [FEW_NS])
    try:
        clients = [('kinf list --server unix:', [kinf, 'list', 'pods', '-n', FEW_NS, '--server',
                                                 'unix:' + sv.sock], srv.env),
                   ('kubectl straight', ['kubectl', 'get', 'pods', '-n', FEW_NS], srv.env),
                   ('kinf list straight', [kinf, 'list', 'pods', '-n', FEW_NS], srv.env)]
        res = {name: [] for name, _, _ in clients}
        for name, argv, env in clients:
            h.check(h.run(argv, env), name + ' warm-up')
        for rep in range(reps):
            for name, argv, env in clients:
                t0 = time.monotonic()
                p = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                if p.returncode != 0:
                    raise RuntimeError('%s: %s' % (name, p.stderr.decode()[-300:]))
                res[name].append(time.monotonic() - t0)
        for name in res:
            log('startup %s: %.1f ms' % (name, med(res[name]) * 1000))
        out['startup'] = {'res': res, 'argv': {n: a for n, a, _ in clients}}
    finally:
        sv.stop()


# --- report ---------------------------------------------------------------------------

def ratios(out):
    v = {}
    for n, d in out['sync'].items():
        r = d['res']
        v['sync_%d' % n] = med([x.wall for x in r['kinf']]) / med(
            [x.wall for x in r['curl --compressed']])
        v['sync_%d_plain' % n] = med([x.wall for x in r['kinf, compression off']]) / med(
            [x.wall for x in r['curl']])
    if out['list']:
        n = max(out['list'])
        r = out['list'][n]['res']
        v['list_curl'] = med([x.wall for x in r['kinf']]) / med(
            [x.wall for x in r['curl --compressed']])
        v['list_curl_plain'] = med([x.wall for x in r['kinf, compression off']]) / med(
            [x.wall for x in r['curl']])
        if r['kubectl']:
            v['list_kubectl_wall'] = med([x.wall for x in r['kubectl']]) / med(
                [x.wall for x in r['kinf']])
            v['list_kubectl_rss'] = med([x.rss for x in r['kubectl']]) / med(
                [x.rss for x in r['kinf']])
    s = out.get('serve')
    if s:
        for n, d in s['sizes'].items():
            v['serve_consistent_%d' % n] = d['consistent']['p50_us'] / d['serve']['p50_us']
            v['serve_cache_%d' % n] = d['cache']['p50_us'] / d['serve']['p50_us']
            if n == 100000:
                v['serve_p50'] = d['serve']['p50_us'] / 1000
                v['serve_p99'] = d['serve']['p99_us'] / 1000
                a = s.get('apiserver')
                if a:
                    v['serve_rss'] = d['rss'] / max(1, a['rss_after'] - a['rss_before'])
            if d.get('kubectl'):
                k = d['kubectl']['res']
                v['serve_kubectl'] = med([x.wall for x in k['straight']]) / med(
                    [x.wall for x in k['through serve']])
    if out.get('startup'):
        r = out['startup']['res']
        v['startup'] = med(r['kubectl straight']) / med(r['kinf list --server unix:'])
    return v


def report(h, out, args, kinf, t_start):
    L = ['### Run of %s on the real kube-apiserver v1.28.7' % time.strftime('%Y-%m-%d %H:%M'),
         '', '`%s`' % ' '.join(['bench/run'] + sys.argv[1:]), '']
    for m in h.machine():
        L.append('- ' + re.sub(r'; load average at start [0-9.]+', '', m))
    L.append('- load average (1, 5, 15 min) at the start: %.2f %.2f %.2f; at the end: '
             '%.2f %.2f %.2f' % (out['load_start'] + os.getloadavg()))
    if out['load']:
        ld = sorted(out['load'])
        L.append('- 1-minute load average during the run (every 10 s, %d samples): median '
                 '%.2f, min %.2f, max %.2f, on 2 cores shared with other sessions' % (
                     len(ld), med(ld), ld[0], ld[-1]))
    L.append('- kinf: `%s`; server: kube-apiserver v1.28.7 on etcd 3.4.23 (../shared/realapi), '
             'TLS, HTTP/2, gzip (level 1) to clients that accept it' % kinf)
    L.append('')
    v = ratios(out)
    L.append('| figure | target | measured | met |')
    L.append('|---|---|---|---|')
    n_list = max(out['list']) if out['list'] else 0
    matches = ''
    if out.get('serve') and 10000 in out['serve']['sizes'] and \
            out['serve']['sizes'][10000].get('kubectl'):
        matches = '{:,}'.format(out['serve']['sizes'][10000]['kubectl']['matches'])
    for key, desc, op, bound in TARGETS:
        if key not in v:
            continue
        desc = desc.format(n='{:,}'.format(n_list), few=FEW, sel='`-l %s`' % SELECTOR_800,
                           matches=matches)
        val = v[key]
        extra = ''
        if key + '_plain' in v:
            extra = ' (compression off: %.2f)' % v[key + '_plain']
        if op == 'report':
            L.append('| %s | report | %.2f | - |' % (desc, val))
        else:
            ok = val <= bound if op == '<=' else val >= bound
            L.append('| %s | %s %s | %.2f%s | %s |' % (desc, op, bound, val, extra,
                                                      'yes' if ok else '**no**'))
    L.append('')
    if out['sync']:
        L.append('Sync (`kinf watch pods -n NS --exit-after-sync -o name`) and curl fetching '
                 'the same `?resourceVersion=0` list; medians (min-max) of %d; kinf\'s CPU '
                 'seconds (user + system) per MB of the uncompressed list:' % args.reps)
        L.append('')
        L.append('| pods | MB | client | wall | peak RSS | CPU s | CPU s / MB |')
        L.append('|---|---|---|---|---|---|---|')
        for n, d in sorted(out['sync'].items()):
            mb = d['bytes'] / 1e6
            for name, rs in d['res'].items():
                cpu = [x.cpu for x in rs if x.cpu is not None]
                L.append('| {:,} | {:.1f} | {} | {} | {} | {} | {} |'.format(
                    n, mb, name, h.fmt_range([x.wall for x in rs], h.secs),
                    h.fmt_range([x.rss for x in rs], h.mib),
                    '%.2f' % med(cpu) if cpu else '-',
                    '%.3f' % (med(cpu) / mb) if cpu else '-'))
        L.append('')
    if out['list']:
        L.append('List (`kinf list pods -n NS -o json`; curl fetching the same pages of 500 '
                 'on one connection, one after another; kubectl get -o json --chunk-size=500):')
        L.append('')
        L.append('| pods | pages | MB | client | wall | peak RSS | CPU s |')
        L.append('|---|---|---|---|---|---|---|')
        for n, d in sorted(out['list'].items()):
            for name, rs in d['res'].items():
                if not rs:
                    continue
                cpu = [x.cpu for x in rs if x.cpu is not None]
                L.append('| {:,} | {} | {:.1f} | {} | {} | {} | {} |'.format(
                    n, d['pages'], d['bytes'] / 1e6, name,
                    h.fmt_range([x.wall for x in rs], h.secs),
                    h.fmt_range([x.rss for x in rs], h.mib),
                    '%.2f' % med(cpu) if cpu else '-'))
        L.append('')
    s = out.get('serve')
    if s:
        L.append('Serve (`kinf serve pods -n NS`; bench/serve-client on one kept TLS connection, '
                 'no gzip; the same path to the apiserver: `?labelSelector=%s=%s`, and with '
                 '`&resourceVersion=0` for its watch cache):' % LABEL)
        L.append('')
        L.append('| pods | matches | answered by | queries | p50 | p99 | bytes |')
        L.append('|---|---|---|---|---|---|---|')
        for n, d in sorted(s['sizes'].items()):
            for k, label in (('serve', 'kinf serve'), ('consistent', 'apiserver, consistent '
                                                       '(etcd)'),
                             ('cache', 'apiserver, watch cache')):
                x = d[k]
                L.append('| {:,} | {} | {} | {:,} | {:.2f} ms | {:.2f} ms | {:,} |'.format(
                    n, d['matches'], label, x['n'], x['p50_us'] / 1000, x['p99_us'] / 1000,
                    x['bytes']))
        L.append('')
        for n, d in sorted(s['sizes'].items()):
            L.append('- serve of {:,} pods: ready in {:.1f} s, RSS {} (after the queries {}); '
                     'p50 by the answer\'s size: {}'.format(
                         n, d['sync_s'], h.mib(d['rss']), h.mib(d['rss_after']), ', '.join(
                             '{:,} bytes {:.2f} ms'.format(x['bytes'], x['p50_us'] / 1000)
                             for x in d.get('by_size', []))))
        a = s.get('apiserver')
        if a:
            L.append('- the apiserver for {:,} pods: RSS {} before, {} after ({}; {}): growth {}'
                     .format(a['pods'], h.mib(a['rss_before']), h.mib(a['rss_after']),
                             a['how'], a['when'], h.mib(a['rss_after'] - a['rss_before'])))
        for n, d in sorted(s['sizes'].items()):
            if d.get('apiserver_rss'):
                L.append('- the apiserver\'s RSS in this run, after the queries of {:,}: {} '
                         '(it holds every namespace of the bench)'.format(
                             n, h.mib(d['apiserver_rss'])))
        L.append('')
        k = s['sizes'].get(10000, {}).get('kubectl')
        if k:
            L.append('kubectl get pods -n %s -l %s (%d matches), through serve and straight: %s '
                     'and %s.' % (NS[10000], SELECTOR_800, k['matches'],
                                  h.fmt_range([x.wall for x in k['res']['through serve']], h.secs),
                                  h.fmt_range([x.wall for x in k['res']['straight']], h.secs)))
            L.append('')
    if out.get('startup'):
        r = out['startup']['res']
        L.append('Start-up (`-n %s`, %d pods, warm discovery caches, %d runs each): %s.' % (
            FEW_NS, FEW, len(r['kinf list --server unix:']), '; '.join(
                '%s %.1f ms (%.1f-%.1f)' % (name, med(x) * 1000, min(x) * 1000, max(x) * 1000)
                for name, x in r.items())))
        L.append('')
    for note in out['notes']:
        L.append('- ' + note)
    L.append('The run took %.0f s.' % (time.monotonic() - t_start))
    return L


def main(args, h):
    root = h.ROOT
    scripts, real = find_realapi(root)
    if not scripts:
        print('bench: no real kube-apiserver here: build one with ../shared/realapi/build.sh '
              '(its README.md says how)', file=sys.stderr)
        return 77
    kinf = h.find_kinf(args.kinf)
    client = h.serve_client_bin(kinf, args.serve_client)
    only = set(args.only.split(',')) if args.only else {'sync', 'list', 'serve', 'startup'}
    sizes = [int(x) for x in args.n.split(',')] if args.n else [5000, 10000]
    serve_sizes = [10000, 100000]
    work = args.keep or tempfile.mkdtemp(prefix='kinf-bench-real.')
    os.makedirs(work, exist_ok=True)
    out = {'sync': {}, 'list': {}, 'notes': [], 'load_start': os.getloadavg(), 'load': []}
    t_start = time.monotonic()
    # The machine's 1-minute load average every 10 s of the run: other
    # sessions share its 2 cores, and the figures are worth what it was.
    done = threading.Event()

    def sample_load():
        while not done.wait(10):
            out['load'].append(os.getloadavg()[0])
    threading.Thread(target=sample_load, daemon=True).start()
    srv = RealServer(h, scripts, real, work)
    record = os.path.join(real, 'run', 'kinf-bench-load.json')
    failed = []
    try:
        need = set(sizes) | (set(serve_sizes) if only & {'serve', 'load'} else set())
        srv.load_all(sorted(need), record)
        if only == {'load'}:
            return 0

        def step(name, fn):
            try:
                fn()
            except Exception as e:     # one failing figure does not hide the others
                log('%s failed: %s' % (name, e))
                failed.append(name)
                out['notes'].append('%s failed: %s' % (name, e))
        for n in sizes:
            if 'sync' in only:
                step('sync %d' % n, lambda: bench_sync(h, srv, kinf, n, args.reps, out))
        for n in sizes:
            if 'list' in only:
                step('list %d' % n, lambda: bench_list(
                    h, srv, kinf, n, args.reps, args.reps if n == max(sizes) else 0, out))
        if 'startup' in only:
            step('startup', lambda: bench_startup(h, srv, kinf, args.startup_reps, work, out))
        # Last: serve of 100,000 pods beside an apiserver holding them is
        # the most memory the machine gives.
        if 'serve' in only:
            step('serve', lambda: bench_serve(h, srv, kinf, client, serve_sizes, args.reps,
                                              args.serve_queries, work, record, out))
    finally:
        done.set()
        srv.close()
    text = '\n'.join(report(h, out, args, kinf, t_start)) + '\n'
    print(text)
    if args.out:
        with open(args.out, 'w') as f:
            f.write(text)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0
