#!/usr/bin/python3
"""fakeapi: a stand-in Kubernetes API server for kinf's tests.

Usage: server.py --dir DIR [--pods N] [--namespaces K] [--seed S] [--plain-http]
                 [--history N] [--bookmark-interval S] [--nodes M] [--port P]
                 [--exit-with PID] [--state FILE] [--without-group GROUP] [--verbose]

Listens on 127.0.0.1 (a free port).  When ready it writes DIR/url,
DIR/kubeconfig, DIR/pid and, last, DIR/ready (each atomically).  SIGTERM and
SIGINT stop it (exit status 0).  See README.md for the control interface.
"""

import argparse
import os
import signal
import ssl
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from kfake import catalog, certs, control, generate, handler, state, store  # noqa: E402


def write_atomic(path, text, mode=0o644):
    tmp = '%s.tmp.%d' % (path, os.getpid())
    with open(tmp, 'w') as f:
        f.write(text)
    os.chmod(tmp, mode)
    os.rename(tmp, path)


_RESTART_FILES = ('ca.crt', 'ca.key', 'server.crt', 'server.key', 'admin.crt', 'admin.key',
                  'viewer.crt', 'viewer.key', 'admin-token', 'viewer-token')


def _read(path):
    with open(path) as f:
        return f.read().strip()


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def parse_args(argv):
    p = argparse.ArgumentParser(description='Fake Kubernetes API server for kinf tests.')
    p.add_argument('--dir', required=True, help='state directory (created if missing)')
    p.add_argument('--pods', type=int, default=0, help='generate N extra pods')
    p.add_argument('--namespaces', type=int, default=10,
                   help='spread generated pods over K namespaces pod-ns-0..K-1')
    p.add_argument('--nodes', type=int, default=0,
                   help='node count (default: max(2, ceil(pods/110)))')
    p.add_argument('--seed', type=int, default=1, help='seed for generated data')
    p.add_argument('--plain-http', action='store_true', help='serve http instead of https')
    p.add_argument('--history', type=int, default=1000,
                   help='watch event window per resource')
    p.add_argument('--bookmark-interval', type=float, default=60.0,
                   help='seconds between BOOKMARK events')
    p.add_argument('--port', type=int, default=0, help='port (default: a free one)')
    p.add_argument('--exit-with', type=int, default=0, metavar='PID',
                   help='stop when process PID is gone (test harness safety net)')
    p.add_argument('--state', metavar='FILE',
                   help='load the data from FILE if it exists, save it there at exit '
                        '(a restart with the same data)')
    p.add_argument('--without-group', action='append', default=[], metavar='GROUP',
                   help='do not serve API group GROUP (e.g. example.com: no widgets), '
                        'as a cluster without that CRD')
    p.add_argument('--verbose', action='store_true', help='log requests to stderr')
    return p.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    d = os.path.abspath(args.dir)
    os.makedirs(d, exist_ok=True)
    for stale in ('ready', 'url', 'pid', 'kubeconfig'):
        try:
            os.unlink(os.path.join(d, stale))
        except FileNotFoundError:
            pass

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())

    t0 = time.time()
    restart = bool(args.state) and os.path.exists(args.state)
    if restart and all(os.path.exists(os.path.join(d, f)) for f in _RESTART_FILES):
        # A restart: the same certificates and tokens, so clients carry on.
        admin_token = _read(os.path.join(d, 'admin-token'))
        viewer_token = _read(os.path.join(d, 'viewer-token'))
    else:
        certs.generate(d)
        admin_token = certs.new_token('admin')
        viewer_token = certs.new_token('viewer')
        write_atomic(os.path.join(d, 'admin-token'), admin_token + '\n', 0o600)
        write_atomic(os.path.join(d, 'viewer-token'), viewer_token + '\n', 0o600)

    catalog.HIDDEN_GROUPS.update(args.without_group)
    st = store.Store(catalog.RESOURCES, history=args.history)
    ctl = control.Control(admin_token, viewer_token, args.bookmark_interval)
    if restart:
        state.load(args.state, st, ctl)
    else:
        generate.load(st, pods=args.pods, namespaces=max(1, args.namespaces), seed=args.seed,
                      nodes=args.nodes or None, start_time=t0)

    ssl_ctx = None
    if not args.plain_http:
        ssl_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ssl_ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        ssl_ctx.load_cert_chain(os.path.join(d, 'server.crt'), os.path.join(d, 'server.key'))
        ssl_ctx.load_verify_locations(os.path.join(d, 'ca.crt'))
        ssl_ctx.verify_mode = ssl.CERT_OPTIONAL
        ssl_ctx.set_alpn_protocols(['http/1.1'])

    app = handler.App(st, ctl, '', verbose=args.verbose)
    server = handler.Server(('127.0.0.1', args.port), app, ssl_ctx)
    port = server.server_address[1]
    app.url = '%s://127.0.0.1:%d' % ('http' if args.plain_http else 'https', port)

    thread = threading.Thread(target=server.serve_forever, kwargs={'poll_interval': 0.2},
                              name='accept', daemon=True)
    thread.start()

    write_atomic(os.path.join(d, 'url'), app.url + '\n')
    write_atomic(os.path.join(d, 'kubeconfig'),
                 certs.kubeconfig(d, app.url, admin_token, viewer_token), 0o600)
    write_atomic(os.path.join(d, 'pid'), '%d\n' % os.getpid())
    write_atomic(os.path.join(d, 'ready'), '%s\n' % app.url)
    sys.stderr.write('fakeapi: serving %s (%d objects, resourceVersion %d) after %.1fs\n' % (
        app.url, sum(len(rs.objs) for rs in st.res.values()), st.rv, time.time() - t0))
    sys.stderr.flush()

    while not stop.wait(0.5):
        if args.exit_with and not _alive(args.exit_with):
            sys.stderr.write('fakeapi: process %d is gone\n' % args.exit_with)
            break
    try:
        os.unlink(os.path.join(d, 'ready'))
    except FileNotFoundError:
        pass
    st.shutdown()
    server.shutdown()
    server.server_close()
    if args.state:
        state.save(args.state, st, ctl)
    sys.stderr.write('fakeapi: stopped\n')
    sys.stderr.flush()
    # Watch threads are daemons; leave without waiting for their sockets.
    os._exit(0)


if __name__ == '__main__':
    main(sys.argv[1:])
