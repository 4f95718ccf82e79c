#!/usr/bin/env python3
"""legacyproxy: plain http on 127.0.0.1 in front of the real kube-apiserver,
for test/realapi/wire.bats. Every request is forwarded with the admin token;
on /api and /apis the Accept header is dropped, so the apiserver answers the
legacy discovery documents (APIVersions, APIGroupList) and a client must
fall back to /api/v1 and /apis/G/V. One line per request on stdout.

    legacyproxy.py --real URL --ca CA --token FILE --port-file FILE
"""

import argparse
import http.client
import http.server
import os
import ssl
import sys
import urllib.parse


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--real', required=True)
    ap.add_argument('--ca', required=True)
    ap.add_argument('--token', required=True)
    ap.add_argument('--port-file', required=True)
    args = ap.parse_args()
    up = urllib.parse.urlparse(args.real)
    ctx = ssl.create_default_context(cafile=args.ca)
    token = open(args.token).read().strip()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = 'HTTP/1.1'

        def log_message(self, fmt, *a):
            pass

        def do_GET(self):
            path = urllib.parse.urlsplit(self.path).path
            headers = {'Authorization': 'Bearer ' + token,
                       'User-Agent': self.headers.get('User-Agent', 'legacyproxy')}
            if path.rstrip('/') not in ('/api', '/apis') and self.headers.get('Accept'):
                headers['Accept'] = self.headers['Accept']
            c = http.client.HTTPSConnection(up.hostname, up.port, context=ctx, timeout=30)
            c.request('GET', self.path, headers=headers)
            r = c.getresponse()
            body = r.read()
            c.close()
            print('GET %s %d %s' % (self.path, r.status, r.getheader('Content-Type')), flush=True)
            self.send_response(r.status)
            for k in ('Content-Type', 'Warning'):
                for v in r.headers.get_all(k) or []:
                    self.send_header(k, v)
            self.send_header('Content-Length', str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    srv = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Handler)
    tmp = args.port_file + '.tmp'
    with open(tmp, 'w') as f:
        f.write(str(srv.server_address[1]))
    os.rename(tmp, args.port_file)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == '__main__':
    sys.exit(main())
