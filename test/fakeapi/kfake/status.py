"""metav1.Status objects, built the way k8s.io/apimachinery/pkg/api/errors does."""

import collections


class ApiError(Exception):
    """An error answered with a Status body (and optional extra headers)."""

    def __init__(self, status, headers=None):
        super().__init__(status.get('message', ''))
        self.status = status
        self.code = status.get('code', 500)
        self.headers = dict(headers or {})
        retry = (status.get('details') or {}).get('retryAfterSeconds')
        if retry:
            self.headers.setdefault('Retry-After', str(retry))


def status(code, reason, message, details=None, list_meta=None):
    """A Failure Status dict, fields in Go's order."""
    st = collections.OrderedDict()
    st['kind'] = 'Status'
    st['apiVersion'] = 'v1'
    st['metadata'] = list_meta or {}
    st['status'] = 'Failure'
    if message:
        st['message'] = message
    if reason:
        st['reason'] = reason
    if details is not None:     # NotFound of a path: "details":{}
        st['details'] = details
    st['code'] = code
    return st


def success(details):
    st = collections.OrderedDict()
    st['kind'] = 'Status'
    st['apiVersion'] = 'v1'
    st['metadata'] = {}
    st['status'] = 'Success'
    st['details'] = details
    return st


def _details(rt, name=None, causes=None):
    d = collections.OrderedDict()
    if name:
        d['name'] = name
    if rt is not None:
        if rt.group:
            d['group'] = rt.group
        d['kind'] = rt.plural
    if causes:
        d['causes'] = causes
    return d


def not_found(rt, name):
    return ApiError(status(404, 'NotFound', '%s "%s" not found' % (rt.qualified, name),
                           _details(rt, name)))


def namespace_not_found(name):
    d = collections.OrderedDict([('name', name), ('kind', 'namespaces')])
    return ApiError(status(404, 'NotFound', 'namespaces "%s" not found' % name, d))


def already_exists(rt, name):
    return ApiError(status(409, 'AlreadyExists',
                           '%s "%s" already exists' % (rt.qualified, name),
                           _details(rt, name)))


def conflict(rt, name, msg):
    return ApiError(status(409, 'Conflict', 'Operation cannot be fulfilled on %s "%s": %s'
                           % (rt.qualified, name, msg), _details(rt, name)))


def forbidden(rt, name, user, verb, resource, group, namespace):
    where = ('in the namespace "%s"' % namespace) if namespace else 'at the cluster scope'
    subject = rt.qualified if rt else resource
    if name:
        subject += ' "%s"' % name
    msg = '%s is forbidden: User "%s" cannot %s resource "%s" in API group "%s" %s' % (
        subject, user, verb, resource, group, where)
    return ApiError(status(403, 'Forbidden', msg, _details(rt, name)))


def unauthorized():
    return ApiError(status(401, 'Unauthorized', 'Unauthorized'))


def bad_request(msg):
    return ApiError(status(400, 'BadRequest', msg))


def field_error(kind, field, detail, value=None):
    """One field.Error: (cause dict, 'field: Kind: detail' text)."""
    body = kind
    if kind in ('Invalid value', 'Unsupported value') and value is not None:
        body += ': %s' % value
    if detail:
        body += ': ' + detail
    cause = collections.OrderedDict([
        ('reason', {'Forbidden': 'FieldValueForbidden', 'Required value': 'FieldValueRequired',
                    'Invalid value': 'FieldValueInvalid',
                    'Unsupported value': 'FieldValueNotSupported'}.get(kind, 'FieldValueInvalid')),
        ('message', body), ('field', field)])
    return cause, '%s: %s' % (field, body)


def invalid(group, kind, name, errors):
    """422 Invalid like apierrors.NewInvalid; errors = [(cause, text)]."""
    texts = [t for _, t in errors]
    qualified = kind + ('.' + group if group else '')
    msg = '%s "%s" is invalid: ' % (qualified, name)
    msg += texts[0] if len(texts) == 1 else '[' + ', '.join(texts) + ']'
    d = collections.OrderedDict()
    if name:
        d['name'] = name
    if group:
        d['group'] = group
    d['kind'] = kind
    d['causes'] = [c for c, _ in errors]
    return ApiError(status(422, 'Invalid', msg, d))


def expired(msg, continue_token=None):
    meta = {'continue': continue_token} if continue_token else None
    return ApiError(status(410, 'Expired', msg, list_meta=meta))


def expired_status(msg):
    return status(410, 'Expired', msg)


def too_large_rv(minimum, current, retry=1):
    """504 for a resourceVersion ahead of the store: retry 1 from the watch
    cache (after its 3 s wait), 0 (no Retry-After) from etcd."""
    d = collections.OrderedDict([
        ('causes', [collections.OrderedDict([('reason', 'ResourceVersionTooLarge'),
                                             ('message', 'Too large resource version')])])])
    if retry:
        d['retryAfterSeconds'] = retry
    return status(504, 'Timeout', 'Timeout: Too large resource version: %d, current: %d'
                  % (minimum, current), d)


def internal(msg):
    d = collections.OrderedDict([('causes', [{'message': msg}])])
    return status(500, 'InternalError', 'Internal error occurred: %s' % msg, d)


def generic(code, retry_after=None, message=None):
    """The Status a real server answers with for an injected failure code."""
    reasons = {400: 'BadRequest', 401: 'Unauthorized', 403: 'Forbidden', 404: 'NotFound',
               405: 'MethodNotAllowed', 409: 'Conflict', 410: 'Expired', 422: 'Invalid',
               429: 'TooManyRequests', 500: 'InternalError', 503: 'ServiceUnavailable',
               504: 'Timeout'}
    if code == 500 and not message:
        st = internal('injected failure (fakeapi)')
    else:
        default_msgs = {429: 'Too many requests, please try again later.',
                        503: 'The server is currently unable to handle the request',
                        504: 'Timeout: request did not complete within the allowed duration',
                        401: 'Unauthorized'}
        st = status(code, reasons.get(code, ''), message or default_msgs.get(
            code, 'injected failure (fakeapi)'))
    if retry_after is not None:
        d = st.get('details') or collections.OrderedDict()
        d['retryAfterSeconds'] = int(retry_after)
        st['details'] = d
        # keep "code" last, as Go prints it
        st.move_to_end('code')
    return st


def not_acceptable():
    return ApiError(status(406, 'NotAcceptable',
                           'only the following media types are accepted: application/json'))


def method_not_allowed():
    return ApiError(status(405, 'MethodNotAllowed',
                           'the server does not allow this method on the requested resource'))


def unsupported_media_type(types):
    return ApiError(status(415, 'UnsupportedMediaType',
                           'the body of the request was in an unknown format - accepted '
                           'media types include: ' + ', '.join(types)))


class PlainNotFound(ApiError):
    """A 404 outside every API group's handler: the apiserver's NotFound
    handler answers text, "404 page not found" (or, under /openapi/v3/,
    nothing at all)."""

    def __init__(self, body=b'404 page not found\n'):
        super().__init__(status(404, 'NotFound', body.decode().strip()))
        self.body = body


def page_not_found():
    return PlainNotFound()


def forbidden_path(user, path):
    """The authorizer's 403 for a non-resource path (/api for system:anonymous)."""
    return ApiError(status(403, 'Forbidden', 'forbidden: User "%s" cannot get path "%s"'
                           % (user, path), collections.OrderedDict()))


def path_not_found():
    return ApiError(status(404, 'NotFound', 'the server could not find the requested resource',
                           collections.OrderedDict()))
