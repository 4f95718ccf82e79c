"""The HTTP side: routing, authentication, authorization, content negotiation,
lists, gets, writes, discovery, OpenAPI and the /_fake/ control interface."""

import base64
import binascii
import collections
import gzip
import hashlib
import http.server
import json
import socket
import socketserver
import ssl
import sys
import time
import traceback
import urllib.parse
import uuid

from . import catalog
from . import control as controlmod
from . import jsonutil
from . import objects
from . import protobuf
from . import selection
from . import status
from . import store as storemod
from . import tables
from . import watch as watchmod

OD = collections.OrderedDict
VIEWER_NAMESPACES = ('default', 'viewer-ns')
_NON_RESOURCE_OPEN = ('/healthz', '/livez', '/readyz', '/version')
_GZIP_THRESHOLD = 128 * 1024


class App:
    """Everything a request handler needs."""

    def __init__(self, store, control, url, verbose=False):
        self.store = store
        self.control = control
        self.writer = objects.Writer(store)
        self.url = url
        self.verbose = verbose


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 512
    block_on_close = False

    def __init__(self, addr, app, ssl_ctx):
        self.app = app
        self.ssl_ctx = ssl_ctx
        super().__init__(addr, Handler)

    def finish_request(self, request, client_address):
        # The TLS handshake runs here, in the connection's own thread, so a
        # silent client cannot hold up accept().
        if self.ssl_ctx is None:
            self.RequestHandlerClass(request, client_address, self)
            return
        request.settimeout(30)
        try:
            tls = self.ssl_ctx.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError):
            return
        try:
            self.RequestHandlerClass(tls, client_address, self)
        finally:
            try:
                tls.close()
            except OSError:
                pass

    def handle_error(self, request, client_address):
        if self.app.verbose:
            super().handle_error(request, client_address)


class RequestInfo:
    def __init__(self):
        self.verb = None          # list, watch, get, create, update, patch, delete, ...
        self.rt = None
        self.namespace = None
        self.name = None
        self.subresource = None
        self.api_version = None
        self.discovery = None     # a non-resource path


def _first(q, key, default=''):
    v = q.get(key)
    return v[0] if v else default


def _query_bool(q, key):
    """A boolean query parameter as apimachinery's Convert_Slice_string_To_bool
    reads it: absent is false; "0" and "false" (any case) are false; any
    other value, "bogus" and the empty one included, is true."""
    if key not in q:
        return False
    v = q[key][0]
    return not (v == '0' or v.lower() == 'false')


def parse_accept(header):
    """[(media type, params)] in preference order (q, then position)."""
    clauses = []
    for i, part in enumerate((header or '').split(',')):
        part = part.strip()
        if not part:
            continue
        bits = [b.strip() for b in part.split(';')]
        params = {}
        q = 1.0
        for b in bits[1:]:
            if '=' in b:
                k, v = b.split('=', 1)
                k = k.strip().lower()
                v = v.strip().strip('"')
                if k == 'q':
                    try:
                        q = float(v)
                    except ValueError:
                        q = 0.0
                else:
                    params[k] = v
        if q > 0:
            clauses.append((-q, i, bits[0].lower(), params))
    clauses.sort()
    return [(mt, params) for _, _, mt, params in clauses]


def _json_like(mt):
    return mt in ('application/json', 'application/*', '*/*')


def negotiate(header, want_list, table_ok=True):
    """('json'|'table'|'partial', group version) for a resource request.

    With table_ok False, an as=Table clause is passed over, as by a server
    (an aggregated API) that cannot print Tables: a later application/json
    clause then answers with the plain object or list."""
    if not (header or '').strip():
        return 'json', None
    for mt, params in parse_accept(header):
        if not _json_like(mt):
            continue
        as_ = params.get('as')
        if not as_ and not params.get('g') and not params.get('v'):
            return 'json', None
        if params.get('g') != 'meta.k8s.io' or params.get('v') not in ('v1', 'v1beta1'):
            continue
        gv = 'meta.k8s.io/' + params['v']
        if as_ == 'Table':
            if not table_ok:
                continue
            return 'table', gv
        if as_ == ('PartialObjectMetadataList' if want_list else 'PartialObjectMetadata'):
            return 'partial', gv
    raise status.not_acceptable()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'
    timeout = 300                 # idle keep-alive connections
    server_version = 'kube-apiserver'

    # --- plumbing ----------------------------------------------------------

    def setup(self):
        super().setup()
        try:
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass

    def log_message(self, fmt, *args):
        if self.server.app.verbose:
            sys.stderr.write('fakeapi: %s %s\n' % (self.address_string(), fmt % args))

    def send_response(self, code, message=None):
        self.log_request(code)
        self.send_response_only(code, message)
        self.send_header('Date', self.date_time_string())
        rec = getattr(self, '_rec', None)
        if rec is not None:
            for w in self.server.app.control.warning_headers():
                # UTF-8 on the wire, as Go writes it (send_header encodes latin-1)
                self.send_header('Warning', w.encode('utf-8').decode('latin-1'))
        if rec is not None and not self._logged:
            rec['status'] = code
            rec['duration_ms'] = round((time.monotonic() - self._t0) * 1000, 3)
            self._logged = True
            self.server.app.control.record(rec)

    def abort_connection(self):
        """Close the TCP connection at once (no TLS close_notify, no last chunk)."""
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def do_GET(self):
        self.dispatch('GET')

    def do_HEAD(self):
        self.dispatch('HEAD')

    def do_POST(self):
        self.dispatch('POST')

    def do_PUT(self):
        self.dispatch('PUT')

    def do_PATCH(self):
        self.dispatch('PATCH')

    def do_DELETE(self):
        self.dispatch('DELETE')

    def read_body(self):
        if self._body is not None:
            return self._body
        te = (self.headers.get('Transfer-Encoding') or '').lower()
        if 'chunked' in te:
            parts = []
            while True:
                line = self.rfile.readline(65537)
                size = int(line.split(b';')[0].strip() or b'0', 16)
                if size == 0:
                    while self.rfile.readline(65537) not in (b'\r\n', b'\n', b''):
                        pass
                    break
                parts.append(self.rfile.read(size))
                self.rfile.readline(65537)
            self._body = b''.join(parts)
        else:
            n = int(self.headers.get('Content-Length') or 0)
            self._body = self.rfile.read(n) if n > 0 else b''
        return self._body

    def read_json(self, kind=None, version='v1'):
        """The request body as a dict (JSON, or protobuf from typed clients)."""
        body = self.read_body()
        ct = (self.headers.get('Content-Type') or '').split(';')[0].strip()
        if ct == 'application/vnd.kubernetes.protobuf':
            try:
                return protobuf.decode_object(body, kind)
            except protobuf.ProtobufError as e:
                raise status.bad_request('failed to decode protobuf body: %s' % e)
        if not body.strip():
            raise status.bad_request('the body of the request was empty')
        try:
            return jsonutil.loads(body)
        except jsonutil.NumberError as e:
            # Valid JSON, but no value for unstructured decoding (1e400).
            raise status.bad_request('%s in version "%s" cannot be handled as a %s: %s'
                                     % (kind, version, kind, e))
        except ValueError as e:
            raise status.bad_request("couldn't get version/kind; json parse error: %s" % e)

    def send_bytes(self, code, body, content_type='application/json', headers=None,
                   compress=True):
        app = self.server.app
        extra = dict(headers or {})
        if compress and app.control.gzip and len(body) > _GZIP_THRESHOLD and \
                'gzip' in (self.headers.get('Accept-Encoding') or '').lower():
            body = gzip.compress(body, compresslevel=1)
            extra['Content-Encoding'] = 'gzip'
            extra['Vary'] = 'Accept-Encoding'
        self.send_response(code)
        self.send_header('Audit-Id', self.audit_id)
        if 'Cache-Control' not in extra:
            self.send_header('Cache-Control', 'no-cache, private')
        if content_type:
            self.send_header('Content-Type', content_type)
        for k, v in extra.items():
            self.send_header(k, v)
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        if self.command == 'HEAD':
            return
        trickle = app.control.trickle
        if trickle and self._rec is not None:
            step, delay = trickle
            for i in range(0, len(body), step):
                self.wfile.write(body[i:i + step])
                time.sleep(delay)
        else:
            self.wfile.write(body)
        if self._rec is not None:
            # When the last byte went to the socket: a client that asks for
            # its next page before then asked before this one was in.
            self._rec['body_sent'] = jsonutil.rfc3339_micro()

    def start_chunked(self, content_type):
        """The head of a streamed 200 (a watch, a followed log): chunked, no length."""
        self.send_response(200)
        self.send_header('Audit-Id', self.audit_id)
        self.send_header('Cache-Control', 'no-cache, private')
        self.send_header('Content-Type', content_type)
        self.send_header('Transfer-Encoding', 'chunked')
        self.end_headers()

    def send_json(self, code, obj, headers=None, content_type='application/json'):
        self.send_bytes(code, jsonutil.dumps(obj) + b'\n', content_type, headers)

    def send_status(self, err):
        if isinstance(err, status.PlainNotFound):
            if err.body:
                self.send_bytes(404, err.body, 'text/plain; charset=utf-8',
                                {'X-Content-Type-Options': 'nosniff'})
            else:
                self.send_bytes(404, b'', None)
            return
        self.send_bytes(err.code, jsonutil.dumps(err.status) + b'\n', headers=err.headers)

    # --- dispatch ----------------------------------------------------------------

    def dispatch(self, method):
        app = self.server.app
        self._t0 = time.monotonic()
        self._body = None
        self._logged = False
        self._rec = None
        self.audit_id = str(uuid.uuid4())
        url = urllib.parse.urlsplit(self.path)
        path = urllib.parse.unquote(url.path)
        q = urllib.parse.parse_qs(url.query, keep_blank_values=True)
        try:
            if path.startswith('/_fake/') or path == '/_fake':
                self.control_request(method, path, q)
                return
            self._rec = self.new_record(method, path, url.query)
            self.api_request(method, path, q)
        except status.ApiError as e:
            if not self._logged:
                self.send_status(e)
            else:
                self.close_connection = True
        except (BrokenPipeError, ConnectionError, ssl.SSLError, socket.timeout, TimeoutError):
            self.close_connection = True
        except Exception:
            traceback.print_exc(file=sys.stderr)
            if not self._logged:
                try:
                    self.send_status(status.ApiError(status.internal(
                        'fakeapi: %s' % traceback.format_exc().splitlines()[-1])))
                except OSError:
                    pass
            self.close_connection = True
        finally:
            if self._rec is not None and not self._logged:
                self._rec['status'] = 0
                self._logged = True
                app.control.record(self._rec)

    def new_record(self, method, path, query):
        auth = self.headers.get('Authorization') or ''
        cn = None
        peer = self.peer_subject()
        if peer:
            cn = peer.get('commonName')
        rec = OD([
            ('time', jsonutil.rfc3339_micro()), ('method', method), ('path', path),
            ('query', query), ('verb', None), ('resource', None), ('namespace', None),
            ('name', None), ('accept', self.headers.get('Accept')),
            ('content_type', self.headers.get('Content-Type')),
            ('accept_encoding', self.headers.get('Accept-Encoding')),
            ('user_agent', self.headers.get('User-Agent')),
            ('auth', auth.split(' ', 1)[0] if auth else 'none'), ('client_cert_cn', cn),
            ('user', None), ('tls', isinstance(self.connection, ssl.SSLSocket)),
            ('impersonate', [[k, v] for k, v in self.headers.items()
                             if k.lower().startswith('impersonate-')]),
            ('status', None)])
        return rec

    def peer_subject(self):
        conn = self.connection
        if not isinstance(conn, ssl.SSLSocket):
            return None
        try:
            cert = conn.getpeercert()
        except (ValueError, OSError):
            return None
        if not cert:
            return None
        out = {}
        for rdn in cert.get('subject', ()):
            for k, v in rdn:
                if k == 'organizationName':
                    out.setdefault('groups', []).append(v)
                else:
                    out[k] = v
        return out

    # --- authentication / authorization --------------------------------------------

    def authenticate(self):
        app = self.server.app
        auth = self.headers.get('Authorization') or ''
        if auth:
            scheme, _, cred = auth.partition(' ')
            if scheme.lower() == 'bearer' and cred.strip():
                user = app.control.user_for_token(cred.strip())
                if user is not None:
                    return user
            if scheme.lower() == 'basic' and cred.strip():
                # Basic auth: users added as tokens "basic:USER:PASSWORD".
                try:
                    pair = base64.b64decode(cred.strip(), validate=True).decode('utf-8')
                except (ValueError, UnicodeDecodeError):
                    pair = None
                user = app.control.user_for_token('basic:' + pair) if pair else None
                if user is not None:
                    return user
            raise status.unauthorized()
        peer = self.peer_subject()
        if peer and peer.get('commonName'):
            groups = list(peer.get('groups', [])) + ['system:authenticated']
            return controlmod.User(peer['commonName'], groups)
        # No credentials at all: anonymous (--anonymous-auth defaults to
        # true), whom RBAC then refuses: 403, not 401.
        return controlmod.User('system:anonymous', ['system:unauthenticated'])

    def decide(self, user, verb, group, resource, subresource, namespace):
        """(allowed, reason) as the real authorizer chain answers: system:masters
        by the privileged-group authorizer (no reason), the viewer's Role in its
        namespaces and the rules of POST /_fake/rbac by RBAC (the binding named
        in the reason), anything else no opinion (denied, no reason)."""
        if user.is_admin:
            return True, ''
        if user.name == 'viewer' and verb in ('get', 'list', 'watch') and \
                namespace in VIEWER_NAMESPACES and subresource in (None, '', 'status', 'log'):
            return True, 'RBAC: allowed by RoleBinding "viewer/%s" of Role "viewer" to ' \
                'User "viewer"' % namespace
        if subresource:
            resource = resource + '/' + subresource
        reason = self.server.app.control.rbac_reason(user.name, verb, group, resource,
                                                     namespace)
        return reason is not None, reason or ''

    def authorize(self, user, info):
        if self.decide(user, info.verb, info.rt.group, info.rt.plural, info.subresource,
                       info.namespace)[0]:
            return
        rt = info.rt
        resource = rt.plural + ('/' + info.subresource if info.subresource else '')
        raise status.forbidden(rt, info.name, user.name, info.verb, resource, rt.group,
                               info.namespace)

    def self_subject_access_review(self):
        """POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews: the
        review sent back with its status (201), as the real registry does;
        every authenticated user may ask (system:basic-user)."""
        rec = self._rec
        rec['verb'], rec['resource'] = 'create', 'selfsubjectaccessreviews'
        user = self.authenticate()
        rec['user'] = user.name
        body = self.read_json('SelfSubjectAccessReview')
        spec = body.get('spec') if isinstance(body, dict) else None
        spec = spec if isinstance(spec, dict) else {}
        ra, nra = spec.get('resourceAttributes'), spec.get('nonResourceAttributes')
        if bool(ra) == bool(nra):
            raise status.invalid('authorization.k8s.io', 'SelfSubjectAccessReview', '', [
                status.field_error('Invalid value', 'spec.nonResourceAttributes',
                                   'cannot be specified in combination with resourceAttributes',
                                   'null') if ra else
                status.field_error('Invalid value', 'spec.resourceAttributes',
                                   'exactly one of nonResourceAttributes or '
                                   'resourceAttributes must be specified', 'null')])
        if ra:
            allowed, reason = self.decide(user, ra.get('verb', ''), ra.get('group', ''),
                                          ra.get('resource', ''), ra.get('subresource'),
                                          ra.get('namespace') or None)
            attrs = OD((k, ra[k]) for k in ('namespace', 'verb', 'group', 'version',
                                            'resource', 'subresource', 'name') if ra.get(k))
            spec_out = OD([('resourceAttributes', attrs)])
        else:
            allowed, reason = user.is_admin, ''
            spec_out = OD([('nonResourceAttributes', OD(
                (k, nra[k]) for k in ('path', 'verb') if nra.get(k)))])
        st = OD([('allowed', allowed)])
        if reason:
            st['reason'] = reason
        self.send_json(201, OD([
            ('kind', 'SelfSubjectAccessReview'), ('apiVersion', 'authorization.k8s.io/v1'),
            ('metadata', OD([('creationTimestamp', None)])), ('spec', spec_out),
            ('status', st)]))

    # --- routing -----------------------------------------------------------------

    def route(self, method, path, q):
        info = RequestInfo()
        segs = [s for s in path.split('/') if s]
        if not segs or segs[0] not in ('api', 'apis'):
            info.discovery = path
            info.verb = 'discovery'
            return info
        if segs[0] == 'api':
            if len(segs) == 1:
                info.discovery, info.verb = '/api', 'discovery'
                return info
            info.api_version = segs[1]
            rest = segs[2:]
        else:
            if len(segs) <= 2:
                info.discovery, info.verb = '/' + '/'.join(segs), 'discovery'
                return info
            info.api_version = segs[1] + '/' + segs[2]
            rest = segs[3:]
        if not rest:
            info.discovery, info.verb = '/' + '/'.join(segs), 'discovery'
            return info
        legacy_watch = rest[0] == 'watch'
        if legacy_watch:
            rest = rest[1:]
        if len(rest) >= 3 and rest[0] == 'namespaces' and rest[2] not in ('status', 'finalize'):
            info.namespace = rest[1]
            rest = rest[2:]
        group = info.api_version.split('/')[0] if '/' in info.api_version else ''
        if not rest or len(rest) > 3:
            raise status.path_not_found() if catalog.unknown_path_is_json(group) \
                else status.page_not_found()
        rt = catalog.lookup(info.api_version, rest[0])
        if rt is None or (info.namespace is not None and not rt.namespaced):
            raise status.path_not_found() if catalog.unknown_path_is_json(group) \
                else status.page_not_found()
        info.rt = rt
        info.name = rest[1] if len(rest) > 1 else None
        info.subresource = rest[2] if len(rest) > 2 else None
        if info.subresource and info.subresource not in [s[0] for s in rt.subresources]:
            raise status.path_not_found()
        watching = legacy_watch or (method == 'GET' and _query_bool(q, 'watch'))
        if method in ('GET', 'HEAD'):
            info.verb = 'watch' if watching else ('get' if info.name else 'list')
        elif method == 'POST' and not info.name:
            info.verb = 'create'
        elif method == 'PUT' and info.name:
            info.verb = 'update'
        elif method == 'PATCH' and info.name:
            info.verb = 'patch'
        elif method == 'DELETE':
            info.verb = 'delete' if info.name else 'deletecollection'
        else:
            raise status.method_not_allowed()
        return info

    def api_request(self, method, path, q):
        app = self.server.app
        rec = self._rec
        if method == 'POST' and path.rstrip('/') == \
                '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews':
            self.self_subject_access_review()
            return
        if method in ('POST', 'PUT', 'PATCH', 'DELETE'):
            # Consume the body first so that keep-alive survives any error.
            self.read_body()
        try:
            info = self.route(method, path, q)
        except status.ApiError:
            rec['verb'] = 'unknown'
            raise
        rec['verb'] = info.verb
        if info.rt is not None:
            rec['resource'] = info.rt.plural + ('/' + info.subresource if info.subresource else '')
            rec['namespace'] = info.namespace
            rec['name'] = info.name
        stall = app.control.take_stall(info.verb, path, q)
        if stall:
            time.sleep(stall)
        if info.discovery is not None and info.discovery in _NON_RESOURCE_OPEN:
            user = None
        else:
            user = self.authenticate()
            rec['user'] = user.name
        failure = app.control.take_failure(info.verb, path, q)
        if failure is not None:
            st, headers = failure
            raise status.ApiError(st, headers)
        if info.discovery is not None:
            if user is not None and user.name == 'system:anonymous':
                raise status.forbidden_path(user.name, path)
            self.serve_discovery(info.discovery, q)
            return
        self.authorize(user, info)
        getattr(self, 'op_' + info.verb)(info, q)

    # --- discovery, version, openapi -------------------------------------------------

    def serve_discovery(self, path, q):
        path = path.rstrip('/') or '/'
        if path in ('/healthz', '/livez', '/readyz'):
            self.send_bytes(200, b'ok', 'text/plain; charset=utf-8')
            return
        if path == '/version':
            self.send_bytes(200, json.dumps(catalog.SERVER_VERSION, indent=2).encode() + b'\n')
            return
        if path in ('/api', '/apis'):
            self.serve_api_index(path == '/api')
            return
        if path == '/openapi/v2':
            self.serve_openapi_v2()
            return
        if path == '/openapi/v3' or path.startswith('/openapi/v3/'):
            self.serve_openapi_v3(path, q)
            return
        json_404 = False
        if path.startswith('/api/'):
            doc = catalog.api_resource_list(path[len('/api/'):])
            json_404 = True
        elif path.startswith('/apis/'):
            rest = path[len('/apis/'):]
            doc = catalog.api_group(rest) if '/' not in rest else catalog.api_resource_list(rest)
            json_404 = catalog.unknown_path_is_json(rest.split('/')[0])
        else:
            doc = None
        if doc is None:
            raise status.path_not_found() if json_404 else status.page_not_found()
        self.send_json(200, doc)

    # OpenAPI as kube-openapi's handlers serve it: http.ServeContent (ETag,
    # If-None-Match, Last-Modified), Vary: Accept, 406 with no body.
    _OPENAPI_MODIFIED = time.strftime('%a, %d %b %Y %H:%M:%S GMT', time.gmtime())

    def _serve_content(self, content_type, body, etag, headers=None):
        extra = OD([('Vary', 'Accept'), ('Accept-Ranges', 'bytes'),
                    ('Etag', '"%s"' % etag), ('Last-Modified', self._OPENAPI_MODIFIED)])
        extra.update(headers or {})
        inm = self.headers.get('If-None-Match')
        if inm and etag in [t.strip().strip('W/').strip('"') for t in inm.split(',')]:
            extra.pop('Accept-Ranges')
            self.send_bytes(304, b'', None, extra, compress=False)
            return
        self.send_bytes(200, body, content_type, extra)

    def serve_openapi_v2(self):
        got = catalog.openapi_v2(self.headers.get('Accept'))
        if got is None:
            self.send_bytes(406, b'', None, {'Vary': 'Accept'}, compress=False)
            return
        self._serve_content(*got)

    def serve_openapi_v3(self, path, q):
        if path == '/openapi/v3':
            body, etag = catalog.openapi_v3_index()
            self._serve_content('application/json', body, etag)
            return
        gv = path[len('/openapi/v3/'):]
        got = catalog.openapi_v3_doc(gv)
        if got is None:
            raise status.PlainNotFound(b'')     # kube-openapi: no body, no Content-Type
        if not catalog.openapi_v3_accepts_json(self.headers.get('Accept')):
            self.send_bytes(406, b'', None, {'Vary': 'Accept'}, compress=False)
            return
        body, etag = got
        headers = {}
        want = _first(q, 'hash')
        if want:
            if want != etag:
                url = '/openapi/v3/%s?hash=%s' % (gv, etag)
                self.send_bytes(301, ('<a href="%s">Moved Permanently</a>.\n\n' % url).encode(),
                                'text/html; charset=utf-8',
                                {'Vary': 'Accept', 'Etag': '"%s"' % etag, 'Location': url},
                                compress=False)
                return
            headers = OD([('Cache-Control', 'public, immutable'), ('Expires', time.strftime(
                '%a, %d %b %Y %H:%M:%S GMT', time.gmtime(time.time() + 365 * 86400)))])
        self._serve_content('application/json', body, etag, headers)

    def serve_api_index(self, legacy):
        accept = self.headers.get('Accept') or ''
        chosen = None
        for mt, params in parse_accept(accept) if accept.strip() else [('application/json', {})]:
            if not _json_like(mt):
                continue
            if 'as' in params or 'g' in params or 'v' in params:
                if params.get('g') == 'apidiscovery.k8s.io' and \
                        params.get('as') == 'APIGroupDiscoveryList' and \
                        params.get('v') in ('v2', 'v2beta1'):
                    chosen = params['v']
                    break
                continue
            chosen = 'legacy'
            break
        if chosen is None:
            raise status.not_acceptable()
        if chosen == 'legacy':
            if legacy:
                self.send_json(200, catalog.api_versions(self.server.app.url.split('://', 1)[1]))
            else:
                self.send_json(200, catalog.api_group_list())
            return
        api_version = 'apidiscovery.k8s.io/' + chosen
        body = jsonutil.dumps(catalog.aggregated_discovery(legacy, api_version)) + b'\n'
        etag = '"%s"' % hashlib.sha512(body).hexdigest().upper()
        headers = {'Vary': 'Accept', 'Etag': etag, 'Cache-Control': 'public'}
        if self.headers.get('If-None-Match') == etag:
            self.send_response(304)
            self.send_header('Etag', etag)
            self.send_header('Vary', 'Accept')
            self.send_header('Content-Length', '0')
            self.end_headers()
            return
        self.send_bytes(200, body, 'application/json;g=apidiscovery.k8s.io;v=%s;'
                                   'as=APIGroupDiscoveryList' % chosen, headers)

    # --- reads ---------------------------------------------------------------------

    def _selectors(self, info, q):
        try:
            pred = selection.parse_labels(_first(q, 'labelSelector'))
            terms = selection.parse_fields(_first(q, 'fieldSelector'), info.rt.field_labels,
                                           info.rt.own_field_conversion)
        except selection.SelectorError as e:
            raise status.bad_request(str(e))
        return pred, terms

    @staticmethod
    def _list_options_errors(q, watch, watch_list_enabled):
        """metainternalversion validation.ValidateListOptions."""
        errs = []
        rvm = _first(q, 'resourceVersionMatch')
        rv = _first(q, 'resourceVersion')
        sie = 'sendInitialEvents' in q
        if watch:
            if sie:
                if rvm != 'NotOlderThan':
                    errs.append(status.field_error(
                        'Forbidden', 'resourceVersionMatch',
                        'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'))
                if not watch_list_enabled:
                    errs.append(status.field_error(
                        'Forbidden', 'sendInitialEvents',
                        'sendInitialEvents is forbidden for watch unless the WatchList feature '
                        'gate is enabled'))
            if rvm:
                if not sie:
                    errs.append(status.field_error(
                        'Forbidden', 'resourceVersionMatch',
                        'resourceVersionMatch is forbidden for watch unless sendInitialEvents is '
                        'provided'))
                if rvm != 'NotOlderThan':
                    errs.append(status.field_error(
                        'Unsupported value', 'resourceVersionMatch',
                        'supported values: "NotOlderThan"', jsonutil.dumps_str(rvm)))
                if _first(q, 'continue'):
                    errs.append(status.field_error(
                        'Forbidden', 'resourceVersionMatch',
                        'resourceVersionMatch is forbidden when continue is provided'))
            return errs
        if rvm:
            if not rv:
                errs.append(status.field_error(
                    'Forbidden', 'resourceVersionMatch',
                    'resourceVersionMatch is forbidden unless resourceVersion is provided'))
            if _first(q, 'continue'):
                errs.append(status.field_error(
                    'Forbidden', 'resourceVersionMatch',
                    'resourceVersionMatch is forbidden when continue is provided'))
            if rvm not in ('Exact', 'NotOlderThan'):
                errs.append(status.field_error(
                    'Unsupported value', 'resourceVersionMatch',
                    'supported values: "Exact", "NotOlderThan", ""', jsonutil.dumps_str(rvm)))
            if rvm == 'Exact' and rv == '0':
                errs.append(status.field_error(
                    'Forbidden', 'resourceVersionMatch',
                    'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'))
        if sie:
            errs.append(status.field_error('Forbidden', 'sendInitialEvents',
                                           'sendInitialEvents is forbidden for list'))
        return errs

    def _validate_list_options(self, q, watch):
        errs = self._list_options_errors(q, watch, self.server.app.control.watch_list)
        if errs:
            raise status.invalid('meta.k8s.io', 'ListOptions', '', errs)

    @staticmethod
    def _parse_rv(text, etcd=False):
        """A resourceVersion that must be a number. Not one: the watch cache
        (gets, watches, lists it serves) fails with a bare 500; a list it
        hands to etcd (limit, Exact) with a 400."""
        try:
            if not text.isdigit():
                raise ValueError
            return int(text)
        except ValueError:
            msg = 'resourceVersion: Invalid value: %s: strconv.ParseUint: parsing %s: ' \
                'invalid syntax' % (jsonutil.dumps_str(text), jsonutil.dumps_str(text))
            if etcd:
                raise status.bad_request('invalid resource version: ' + msg)
            raise status.ApiError(status.status(500, '', msg))

    def _include_object(self, q):
        inc = _first(q, 'includeObject') or 'Metadata'
        if inc not in ('None', 'Metadata', 'Object'):
            raise status.bad_request('Unable to convert to Table as requested: includeObject: '
                                     'Invalid value: %s: must be \'Metadata\', \'Object\', '
                                     '\'None\', or empty' % jsonutil.dumps_str(inc))
        return inc

    def op_list(self, info, q):
        app = self.server.app
        store = app.store
        rt = info.rt
        media, gv = negotiate(self.headers.get('Accept'), True,
                              self.server.app.control.tables)
        include = self._include_object(q) if media == 'table' else None
        self._validate_list_options(q, False)
        pred, terms = self._selectors(info, q)
        rv_text = _first(q, 'resourceVersion')
        rvm = _first(q, 'resourceVersionMatch')
        cont = _first(q, 'continue')
        try:
            limit = int(_first(q, 'limit') or 0)
        except ValueError:
            raise status.bad_request('strconv.ParseInt: parsing %s: invalid syntax'
                                     % jsonutil.dumps_str(_first(q, 'limit')))
        if limit < 0:
            limit = 0
        start_key = None
        if cont:
            if rv_text not in ('', '0'):
                raise status.bad_request('specifying resource version is not allowed when using '
                                         'continue')
            token_rv, start = self._decode_continue(cont, info.namespace)
            start_key = start
            try:
                with store.lock:
                    if token_rv == -1:
                        list_rv = store.rv
                        snap = store.current_snapshot(rt)
                    elif token_rv <= store.continue_floor or \
                            app.control.take_continue_expiry():
                        raise storemod.TooOld(store.continue_floor)
                    else:
                        list_rv = token_rv
                        snap = store.snapshot_at(rt, token_rv)
            except storemod.TooOld:
                raise status.expired(
                    'The provided continue parameter is too old to display a consistent list '
                    'result. You can start a new list without the continue parameter, or use '
                    'the continue token in this response to retrieve the remainder of the '
                    'results. Continuing with the provided token results in an inconsistent list '
                    '- objects that were created, modified, or deleted between the time the '
                    'first chunk was returned and now may show up in the list.',
                    self._encode_continue(-1, start_key, info.namespace))
        else:
            exact = rvm == 'Exact' or (rvm == '' and limit > 0 and rv_text not in ('', '0'))
            # What the cacher hands to etcd (shouldDelegateList): these do
            # not wait for a resourceVersion ahead of the store.
            delegated = rvm == 'Exact' or (limit > 0 and rv_text not in ('', '0'))
            if rv_text not in ('', '0'):
                want = self._parse_rv(rv_text, delegated)
                if delegated and want > store.rv:
                    if exact:
                        # A read at a revision etcd does not have yet.
                        raise status.ApiError(status.status(
                            500, '', 'etcdserver: mvcc: required revision is a future '
                            'revision'))
                    raise status.ApiError(status.too_large_rv(want, store.rv, retry=0))
                if not store.wait_for_rv(want, 3.0):
                    st = status.too_large_rv(want, store.rv)
                    raise status.ApiError(st)
            else:
                want = None
            with store.lock:
                if exact:
                    try:
                        snap = store.snapshot_at(rt, want)
                    except storemod.TooOld:
                        raise status.expired('The resourceVersion for the provided list is too '
                                             'old.')
                    list_rv = want
                else:
                    snap = store.current_snapshot(rt)
                    list_rv = store.rv
            # The watch cache serves everything but exact and consistent paged
            # reads, and it ignores limit (Kubernetes 1.32).
            if not exact and rv_text != '':
                limit = 0
        lo, hi = snap.range(info.namespace, start_key)
        items = []
        i = lo
        objs = snap.objs
        if pred is None and terms is None:
            end = hi if not limit else min(hi, lo + limit)
            items = objs[lo:end]
            i = end
        else:
            while i < hi and (not limit or len(items) < limit):
                o = objs[i]
                i += 1
                if (pred is None or pred(o.labels)) and \
                        (terms is None or selection.fields_match(terms, o.fields)):
                    items.append(o)
        next_token = None
        remaining = None
        if limit and i < hi:
            next_token = self._encode_continue(list_rv, items[-1].key + '\x00', info.namespace)
            if pred is None and terms is None:
                remaining = hi - i
        if media == 'table':
            body = tables.table(rt, items, list_rv, next_token, remaining, include,
                                api_version=gv) + b'\n'
        elif media == 'partial':
            meta = OD([('resourceVersion', str(list_rv))])
            if next_token:
                meta['continue'] = next_token
            if remaining is not None:
                meta['remainingItemCount'] = remaining
            body = b''.join([b'{"kind":"PartialObjectMetadataList","apiVersion":',
                             jsonutil.dumps(gv), b',"metadata":', jsonutil.dumps(meta),
                             b',"items":[', b','.join(tables.partial_metadata(o, gv)
                                                      for o in items), b']}\n'])
        else:
            head, tail = rt.list_envelope(list_rv, next_token, remaining)
            body = head + b','.join([o.raw for o in items]) + tail
        self.send_bytes(200, body)

    @staticmethod
    def _encode_continue(rv, key, namespace):
        """The token kube-apiserver's etcd3 store hands out (key relative to the prefix)."""
        start = key
        if namespace is not None and start.startswith(namespace + '/'):
            start = start[len(namespace) + 1:]
        tok = json.dumps(OD([('v', 'meta.k8s.io/v1'), ('rv', rv), ('start', start)]),
                         separators=(',', ':'))
        return base64.urlsafe_b64encode(tok.encode()).decode().rstrip('=')

    @staticmethod
    def _decode_continue(token, namespace):
        try:
            data = base64.urlsafe_b64decode(token + '=' * (-len(token) % 4))
        except (binascii.Error, ValueError):
            bad = next((i for i, ch in enumerate(token) if not (ch.isalnum() and ch.isascii())
                        and ch not in '-_'), len(token) - 1)
            raise status.bad_request('invalid continue token: continue key is not valid: '
                                     'illegal base64 data at input byte %d' % bad)
        try:
            c = json.loads(data)
        except ValueError:
            raise status.bad_request('invalid continue token: continue key is not valid: %s'
                                     % jsonutil.go_json_error(data))
        if not isinstance(c, dict) or c.get('v') != 'meta.k8s.io/v1':
            raise status.bad_request('invalid continue token: continue key is not valid: server '
                                     'does not recognize this encoded version %s'
                                     % (c.get('v') if isinstance(c, dict) else ''))
        rv = c.get('rv')
        start = c.get('start')
        if not isinstance(rv, int) or rv == 0:
            raise status.bad_request('invalid continue token: continue key is not valid: '
                                     'incorrect encoded start resourceVersion (version '
                                     'meta.k8s.io/v1)')
        if not isinstance(start, str) or not start:
            raise status.bad_request('invalid continue token: continue key is not valid: encoded '
                                     'start key empty (version meta.k8s.io/v1)')
        if namespace is not None:
            start = namespace + '/' + start
        return rv, start

    def op_get(self, info, q):
        app = self.server.app
        rt = info.rt
        if _first(q, 'resourceVersion') not in ('', '0'):
            self._parse_rv(_first(q, 'resourceVersion'))
        obj = app.store.get(rt, info.namespace or '', info.name)
        if obj is None:
            raise status.not_found(rt, info.name)
        if info.subresource == 'log':
            self.serve_log(rt, obj, q)
            return
        if info.subresource == 'scale':
            self.send_json(200, objects.scale_of(rt, obj))
            return
        media, gv = negotiate(self.headers.get('Accept'), False,
                              self.server.app.control.tables)
        if media == 'table':
            body = tables.table(rt, [obj], obj.rv, include=self._include_object(q),
                                api_version=gv) + b'\n'
        elif media == 'partial':
            body = tables.partial_metadata(obj, gv) + b'\n'
        else:
            body = rt.full_bytes(obj.raw) + b'\n'
        self.send_bytes(200, body)

    def serve_log(self, rt, obj, q):
        """pods/log: ten lines, text/plain; follow=true streams them (chunked, as
        the apiserver relays the kubelet's stream) and then one more line every
        log_interval seconds until the client goes, the pod is deleted or the
        server stops."""
        app = self.server.app
        d = obj.decode()
        node = (d.get('spec') or {}).get('nodeName')
        if not node:
            # Not scheduled: no kubelet to ask, nothing to say (204).
            self.send_bytes(204, b'', None, compress=False)
            return
        if self.server.app.store.get(catalog.BY_PLURAL['nodes'], '', node) is None:
            # The apiserver words a missing Node as a missing pod of its name.
            raise status.not_found(catalog.BY_PLURAL['pods'], node)
        containers = [c.get('name') for c in (d.get('spec') or {}).get('containers') or []]
        want = _first(q, 'container') or (containers[0] if containers else '')
        if want not in containers:
            raise status.bad_request('container %s is not valid for pod %s' % (want, obj.name))
        follow = _query_bool(q, 'follow')

        def line(i):
            return ('%s fakeapi: %s/%s container %s line %d\n' % (
                jsonutil.rfc3339(), obj.ns, obj.name, want, i)).encode()
        lines = [line(i) for i in range(1, 11)]
        tail = _first(q, 'tailLines')
        if tail.isdigit():
            lines = lines[-int(tail):] if int(tail) else []
        if not follow:
            self.send_bytes(200, b''.join(lines), 'text/plain', compress=False)
            return
        self.start_chunked('text/plain')

        def chunk(data):
            if data:
                self.wfile.write(b'%x\r\n' % len(data) + data + b'\r\n')
                self.wfile.flush()
        chunk(b''.join(lines))
        i = 10
        next_at = time.monotonic() + app.control.log_interval
        while not app.store.closing:
            if watchmod.client_gone(self):
                return
            if app.store.get(rt, obj.ns, obj.name) is None:
                break
            now = time.monotonic()
            if now >= next_at:
                i += 1
                chunk(line(i))
                next_at = now + app.control.log_interval
            time.sleep(min(0.05, max(0.0, next_at - now)))
        self.wfile.write(b'0\r\n\r\n')

    def op_watch(self, info, q):
        app = self.server.app
        rt = info.rt
        media, gv = negotiate(self.headers.get('Accept'), False,
                              self.server.app.control.tables)
        include = self._include_object(q) if media == 'table' else None
        self._validate_list_options(q, True)
        pred, terms = self._selectors(info, q)
        rv = _first(q, 'resourceVersion')
        if rv not in ('', '0'):
            self._parse_rv(rv)
        sie = _query_bool(q, 'sendInitialEvents') if 'sendInitialEvents' in q else None
        bookmarks = _query_bool(q, 'allowWatchBookmarks')
        timeout = None
        if _first(q, 'timeoutSeconds'):
            try:
                timeout = int(_first(q, 'timeoutSeconds'))
            except ValueError:
                raise status.bad_request('strconv.ParseInt: parsing %s: invalid syntax'
                                         % jsonutil.dumps_str(_first(q, 'timeoutSeconds')))
        if not timeout:
            timeout = watchmod.default_timeout(app.control)
        name = info.name or selection.exact_name(terms)
        spec = watchmod.WatchSpec(rt, info.namespace, name, pred, terms, media, gv, include,
                                  rv, sie, bookmarks, float(timeout))
        watchmod.Streamer(self, app, spec).serve()

    # --- writes ----------------------------------------------------------------------

    def _manager(self, q):
        return objects.manager_name(_first(q, 'fieldManager'), self.headers.get('User-Agent'))

    def _dry_run(self, q):
        return 'All' in q.get('dryRun', [])

    def _send_obj(self, code, rt, obj):
        self.send_bytes(code, rt.full_bytes(obj.raw) + b'\n')

    def op_create(self, info, q):
        app = self.server.app
        if info.subresource:
            raise status.method_not_allowed()
        obj = app.writer.create(info.rt, info.namespace,
                                self.read_json(info.rt.kind, info.rt.version),
                                self._manager(q),
                                self._dry_run(q))
        self._send_obj(201, info.rt, obj)

    def op_update(self, info, q):
        app = self.server.app
        rt = info.rt
        body = self.read_json(rt.kind, rt.version)
        if info.subresource == 'scale':
            replicas = ((body or {}).get('spec') or {}).get('replicas')
            obj, _ = app.writer.patch(rt, info.namespace or '', info.name,
                                      'application/merge-patch+json',
                                      json.dumps({'spec': {'replicas': replicas}}).encode(),
                                      self._manager(q), None, self._dry_run(q))
            self.send_json(200, objects.scale_of(rt, obj))
            return
        obj = app.writer.update(rt, info.namespace or '', info.name, body, self._manager(q),
                                info.subresource, self._dry_run(q))
        self._send_obj(200, rt, obj)

    def op_patch(self, info, q):
        app = self.server.app
        rt = info.rt
        ct = self.headers.get('Content-Type')
        if ct and ct.split(';')[0].strip() == 'application/apply-patch+yaml' and \
                not _first(q, 'fieldManager'):
            raise status.bad_request('PATCH %s: fieldManager is required for apply requests'
                                     % urllib.parse.urlsplit(self.path).path)
        if info.subresource == 'scale':
            patch = jsonutil.loads(self.read_body() or b'{}')
            replicas = ((patch or {}).get('spec') or {}).get('replicas')
            obj, _ = app.writer.patch(rt, info.namespace or '', info.name,
                                      'application/merge-patch+json',
                                      json.dumps({'spec': {'replicas': replicas}}).encode(),
                                      self._manager(q), None, self._dry_run(q))
            self.send_json(200, objects.scale_of(rt, obj))
            return
        obj, created = app.writer.patch(rt, info.namespace or '', info.name, ct,
                                        self.read_body(), self._manager(q), info.subresource,
                                        self._dry_run(q))
        self._send_obj(201 if created else 200, rt, obj)

    def op_delete(self, info, q):
        app = self.server.app
        rt = info.rt
        body = self.read_body()
        options = {}
        ct = (self.headers.get('Content-Type') or '').split(';')[0].strip()
        if body.strip() and ct != 'application/vnd.kubernetes.protobuf':
            try:
                options = jsonutil.loads(body) or {}
            except ValueError as e:
                raise status.bad_request("couldn't get version/kind; json parse error: %s" % e)
        obj = app.writer.delete(rt, info.namespace or '', info.name, options, self._dry_run(q))
        if rt.delete_returns_object:
            self._send_obj(200, rt, obj)
            return
        d = OD([('name', obj.name)])
        if rt.group:
            d['group'] = rt.group
        d['kind'] = rt.plural
        d['uid'] = obj.decode()['metadata'].get('uid')
        self.send_json(200, status.success(d))

    def op_deletecollection(self, info, q):
        app = self.server.app
        rt = info.rt
        pred, terms = self._selectors(info, q)

        def match(o):
            return (pred is None or pred(o.labels)) and \
                (terms is None or selection.fields_match(terms, o.fields))
        victims = app.writer.delete_collection(rt, info.namespace, match, self._dry_run(q))
        head, tail = rt.list_envelope(app.store.rv)
        self.send_bytes(200, head + b','.join(v.raw for v in victims) + tail)

    # --- control interface -------------------------------------------------------------

    def control_request(self, method, path, q):
        app = self.server.app
        ctl = app.control
        what = path[len('/_fake/'):].strip('/')
        try:
            body = self.read_body() if method in ('POST', 'PUT', 'PATCH', 'DELETE') else b''
            spec = json.loads(body) if body.strip() else {}
            if what == 'requests' and method == 'GET':
                lines = [json.dumps(r, separators=(',', ':')) for r in ctl.recorded()]
                self.send_bytes(200, ''.join(l + '\n' for l in lines).encode(),
                                'application/x-ndjson', compress=False)
            elif what == 'requests' and method == 'DELETE':
                ctl.clear_requests()
                self.send_json(200, {'cleared': True})
            elif what == 'faults' and method == 'POST':
                ctl.apply_faults(spec, app.store)
                self.send_json(200, ctl.describe(app.store))
            elif what == 'faults' and method == 'GET':
                self.send_json(200, ctl.describe(app.store))
            elif what == 'tokens' and method == 'POST':
                ctl.add_token(spec)
                self.send_json(200, {'token': spec['token'], 'user': spec['user']})
            elif what == 'rbac' and method == 'POST':
                ctl.set_rbac(spec)
                self.send_json(200, {'user': spec['user'], 'rules': spec['rules']})
            elif what == 'tokens' and method == 'DELETE':
                ctl.remove_token(spec.get('token') or _first(q, 'token'))
                self.send_json(200, {'removed': True})
            elif what == 'objects' and method == 'GET':
                self.control_objects(q)
            elif what == 'state' and method == 'GET':
                self.control_state()
            elif what == 'churn' and method == 'POST':
                from . import churn
                self.send_json(200, churn.run(app, spec))
            elif what == 'blast' and method in ('GET', 'POST'):
                from . import blast
                self.send_json(200, blast.create(app, spec) if method == 'POST'
                               else blast.recent(app))
            else:
                self.send_json(404, {'error': 'unknown control endpoint %s %s' % (method, path)})
        except (controlmod.ControlError, ValueError, TypeError, KeyError) as e:
            self.send_json(400, {'error': str(e)})
        except status.ApiError as e:
            self.send_json(e.code, {'error': e.status.get('message')})

    def control_objects(self, q):
        store = self.server.app.store
        plural = _first(q, 'resource') or 'pods'
        rt = catalog.BY_PLURAL.get(plural)
        if rt is None:
            raise controlmod.ControlError('unknown resource %r' % plural)
        ns = _first(q, 'namespace') or None
        with store.lock:
            snap = store.current_snapshot(rt)
            rv = store.rv
        lo, hi = snap.range(ns)
        body = b''.join(rt.full_bytes(o.raw) + b'\n' for o in snap.objs[lo:hi])
        self.send_bytes(200, body, 'application/x-ndjson',
                        {'X-Resource-Version': str(rv)}, compress=False)

    def control_state(self):
        store = self.server.app.store
        with store.lock:
            st = OD([('resourceVersion', store.rv), ('watches', store.watch_count),
                     ('continueFloor', store.continue_floor),
                     ('objects', OD((p, len(rs.objs)) for p, rs in sorted(store.res.items()))),
                     ('history', OD((p, len(rs.history)) for p, rs in sorted(store.res.items())))])
        self.send_json(200, st)
