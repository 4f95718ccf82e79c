"""State behind the /_fake/ control interface: injected faults, tokens, and the
log of recorded requests.  All methods are thread-safe."""

import collections
import threading
import time

from . import status

# Verbs a fault may be restricted to; "discovery" covers /api, /apis, /version
# and /openapi; without "verb" a fault applies to every resource request.
VERBS = ('list', 'watch', 'get', 'create', 'update', 'patch', 'delete', 'deletecollection',
         'discovery', 'any')


class ControlError(Exception):
    pass


class User:
    def __init__(self, name, groups=()):
        self.name = name
        self.groups = tuple(groups)

    @property
    def is_admin(self):
        return 'system:masters' in self.groups


class Control:
    def __init__(self, admin_token, viewer_token, bookmark_interval=60.0):
        self.lock = threading.Lock()
        self.requests = collections.deque(maxlen=200000)
        self.fail = []            # [{count, status, verb, path, retry_after, message}]
        self.stalls = []          # [{count, seconds, verb, path}]
        self.truncate_watches = 0
        self.invalid_json_watches = 0
        self.expire_continues = 0
        self.watch_stall_until = 0.0  # time.monotonic(): open watches write nothing until then
        self.watch_close_until = 0.0  # time.monotonic(): new watches end at once until then
        self.watch_list = True
        self.bookmark_interval = float(bookmark_interval)
        self.watch_timeout = None
        self.trickle = None       # (bytes, delay)
        self.gzip = True
        self.tables = True        # False: as=Table is not offered (plain JSON instead)
        self.warnings = []        # Warning header values on every API response
        self.blast_keep = 4096    # blasts kept for watchers behind (blast.py)
        self.log_interval = 1.0   # seconds between the lines of a followed pods/log
        self.rbac = {}            # user -> rules (POST /_fake/rbac)
        # token -> (User, expires_at or None)
        self.tokens = {
            admin_token: (User('admin', ['system:masters', 'system:authenticated']), None),
            viewer_token: (User('viewer', ['system:authenticated']), None),
        }

    # --- authentication ----------------------------------------------------

    def user_for_token(self, token):
        with self.lock:
            entry = self.tokens.get(token)
        if entry is None:
            return None
        user, expires = entry
        if expires is not None and time.time() >= expires:
            return None
        return user

    def add_token(self, spec):
        token = spec.get('token')
        user = spec.get('user')
        if not isinstance(token, str) or not token or not isinstance(user, str) or not user:
            raise ControlError('"token" and "user" are required strings')
        groups = list(spec.get('groups') or [])
        if user == 'admin' and 'system:masters' not in groups:
            groups.append('system:masters')
        groups.append('system:authenticated')
        expires = None
        if spec.get('expires_in') is not None:
            expires = time.time() + float(spec['expires_in'])
        with self.lock:
            self.tokens[token] = (User(user, groups), expires)

    def remove_token(self, token):
        with self.lock:
            self.tokens.pop(token, None)

    # --- RBAC ------------------------------------------------------------------

    def set_rbac(self, spec):
        """The rules of a user: [{"verbs", "resources", "apiGroups"?, "namespaces"?}].
        With namespaces, a RoleBinding in each; without, a ClusterRoleBinding."""
        user = spec.get('user')
        rules = spec.get('rules')
        if not isinstance(user, str) or not user or not isinstance(rules, list):
            raise ControlError('"user" (a string) and "rules" (a list) are required')
        for r in rules:
            if not isinstance(r, dict) or not isinstance(r.get('verbs'), list) or \
                    not isinstance(r.get('resources'), list):
                raise ControlError('each rule needs "verbs" and "resources" lists')
        with self.lock:
            self.rbac[user] = [dict(r) for r in rules]

    def rbac_reason(self, user, verb, group, resource, namespace):
        """The RBAC authorizer's reason when a rule of user allows the
        request, else None."""
        with self.lock:
            rules = list(self.rbac.get(user, ()))
        for r in rules:
            if not (set(r['verbs']) & {verb, '*'}) or \
                    not (set(r['resources']) & {resource, '*'}) or \
                    not (set(r.get('apiGroups', [group, '*'])) & {group, '*'}):
                continue
            if 'namespaces' not in r:
                return 'RBAC: allowed by ClusterRoleBinding "fake-%s" of ClusterRole ' \
                       '"fake-%s" to User "%s"' % (user, user, user)
            if namespace and namespace in r['namespaces']:
                return 'RBAC: allowed by RoleBinding "fake-%s/%s" of Role "fake-%s" ' \
                       'to User "%s"' % (user, namespace, user, user)
        return None

    # --- request log -------------------------------------------------------

    def record(self, rec):
        with self.lock:
            self.requests.append(rec)

    def recorded(self):
        with self.lock:
            return list(self.requests)

    def clear_requests(self):
        with self.lock:
            self.requests.clear()

    # --- faults ----------------------------------------------------------------

    @staticmethod
    def _matches(entry, verb, path, query):
        if entry.get('continue') and not (query or {}).get('continue', [''])[0]:
            return False
        want = entry.get('verb')
        if want is None:
            if verb == 'discovery':
                return False
        elif want != 'any' and want != verb:
            return False
        return not entry.get('path') or entry['path'] in path

    def _take(self, entries, verb, path, query):
        with self.lock:
            for e in entries:
                if e['count'] > 0 and self._matches(e, verb, path, query):
                    e['count'] -= 1
                    if e['count'] == 0:
                        entries.remove(e)
                    return e
        return None

    def take_failure(self, verb, path, query=None):
        """(status dict, headers) for an injected failure, or None."""
        e = self._take(self.fail, verb, path, query)
        if e is None:
            return None
        st = status.generic(e['status'], e.get('retry_after'), e.get('message'))
        headers = {}
        if e.get('retry_after') is not None:
            headers['Retry-After'] = str(int(e['retry_after']))
        return st, headers

    def take_stall(self, verb, path, query=None):
        e = self._take(self.stalls, verb, path, query)
        return e['seconds'] if e else 0

    def take_watch_faults(self):
        """(truncate, invalid_json) for a watch that is starting."""
        with self.lock:
            truncate = self.truncate_watches > 0
            if truncate:
                self.truncate_watches -= 1
            invalid = self.invalid_json_watches > 0
            if invalid:
                self.invalid_json_watches -= 1
            return truncate, invalid

    def take_continue_expiry(self):
        """True when this (otherwise valid) continue token is to be treated as expired."""
        with self.lock:
            if self.expire_continues > 0:
                self.expire_continues -= 1
                return True
            return False

    def warning_headers(self):
        """The Warning header values every API response carries now."""
        with self.lock:
            return list(self.warnings)

    def watch_stall_left(self):
        """Seconds watch streams must still stay silent (0: none)."""
        with self.lock:
            return max(0.0, self.watch_stall_until - time.monotonic())

    def watch_close_left(self):
        """Seconds during which a new watch ends right after its headers (0: none)."""
        with self.lock:
            return max(0.0, self.watch_close_until - time.monotonic())

    def _verb(self, spec):
        verb = spec.get('verb')
        if verb is not None and verb not in VERBS:
            raise ControlError('"verb" must be one of ' + ', '.join(VERBS))
        return verb

    def apply_faults(self, spec, store):
        """Apply a POST /_fake/faults body."""
        if not isinstance(spec, dict):
            raise ControlError('expected a JSON object')
        known = {'drop_watches', 'compact', 'expire_continue', 'expire_next_continue', 'fail_next',
                 'stall', 'stall_watches', 'close_watches', 'truncate_next_watch',
                 'invalid_json_next_watch', 'watch_list', 'bookmark_interval', 'watch_timeout',
                 'history', 'trickle', 'gzip', 'tables', 'warnings', 'blast_keep',
                 'log_interval', 'reset'}
        unknown = set(spec) - known
        if unknown:
            raise ControlError('unknown fault(s): ' + ', '.join(sorted(unknown)))
        if spec.get('reset'):
            with self.lock:
                self.fail = []
                self.stalls = []
                self.truncate_watches = 0
                self.invalid_json_watches = 0
                self.expire_continues = 0
                self.watch_stall_until = 0.0
                self.watch_close_until = 0.0
                self.trickle = None
                self.warnings = []
        if 'warnings' in spec:
            w = spec['warnings']
            if not isinstance(w, list) or not all(isinstance(v, str) for v in w) or \
                    any(c in v for v in w for c in '\r\n\0'):
                raise ControlError('"warnings" must be a list of header values '
                                   '(strings without CR, LF or NUL)')
            with self.lock:
                self.warnings = list(w)
        if 'fail_next' in spec:
            f = spec['fail_next']
            if not isinstance(f, dict) or not isinstance(f.get('status', 500), int):
                raise ControlError('"fail_next" must be {"count":N,"status":CODE,...}')
            entry = {'count': int(f.get('count', 1)), 'status': int(f.get('status', 500)),
                     'verb': self._verb(f), 'path': f.get('path'),
                     'continue': bool(f.get('continue')),
                     'retry_after': f.get('retry_after'), 'message': f.get('message')}
            if entry['status'] in (429, 503) and entry['retry_after'] is None:
                entry['retry_after'] = 1
            with self.lock:
                self.fail.append(entry)
        if 'stall' in spec:
            s = spec['stall']
            if not isinstance(s, dict) or 'seconds' not in s:
                raise ControlError('"stall" must be {"seconds":S}')
            with self.lock:
                self.stalls.append({'count': int(s.get('count', 1)),
                                    'seconds': float(s['seconds']),
                                    'verb': self._verb(s), 'path': s.get('path'),
                                    'continue': bool(s.get('continue'))})
        with self.lock:
            if spec.get('truncate_next_watch'):
                self.truncate_watches += 1
            if spec.get('invalid_json_next_watch'):
                self.invalid_json_watches += 1
            if spec.get('expire_next_continue'):
                n = spec['expire_next_continue']
                self.expire_continues += 1 if n is True else int(n)
            for name in ('stall_watches', 'close_watches'):
                if name in spec:
                    s = spec[name]
                    if not isinstance(s, dict) or 'seconds' not in s:
                        raise ControlError('"%s" must be {"seconds":S}' % name)
                    until = time.monotonic() + float(s['seconds'])
                    if name == 'stall_watches':
                        self.watch_stall_until = until
                    else:
                        self.watch_close_until = until
            if 'watch_list' in spec:
                self.watch_list = bool(spec['watch_list'])
            if 'bookmark_interval' in spec:
                self.bookmark_interval = float(spec['bookmark_interval'])
            if 'watch_timeout' in spec:
                v = spec['watch_timeout']
                self.watch_timeout = None if v is None else float(v)
            if 'trickle' in spec:
                t = spec['trickle']
                self.trickle = None if not t else (max(1, int(t.get('bytes', 1024))),
                                                    float(t.get('delay', 0.01)))
            if 'gzip' in spec:
                self.gzip = bool(spec['gzip'])
            if 'tables' in spec:
                self.tables = bool(spec['tables'])
            if 'log_interval' in spec:
                v = spec['log_interval']
                if not isinstance(v, (int, float)) or isinstance(v, bool) or v <= 0:
                    raise ControlError('"log_interval" must be a number of seconds > 0')
                self.log_interval = float(v)
            if 'blast_keep' in spec:
                if not isinstance(spec['blast_keep'], int) or spec['blast_keep'] < 1:
                    raise ControlError('"blast_keep" must be a number >= 1')
                self.blast_keep = spec['blast_keep']
        if 'history' in spec:
            store.set_history(spec['history'])
        if spec.get('compact'):
            store.compact()
        if spec.get('expire_continue'):
            store.expire_continue()
        if spec.get('drop_watches'):
            store.drop_watches()

    def describe(self, store):
        with self.lock:
            return collections.OrderedDict([
                ('fail_next', [dict(e) for e in self.fail]),
                ('stall', [dict(e) for e in self.stalls]),
                ('truncate_next_watch', self.truncate_watches),
                ('invalid_json_next_watch', self.invalid_json_watches),
                ('expire_next_continue', self.expire_continues),
                ('stall_watches', round(max(0.0, self.watch_stall_until - time.monotonic()), 3)),
                ('close_watches', round(max(0.0, self.watch_close_until - time.monotonic()), 3)),
                ('watch_list', self.watch_list),
                ('bookmark_interval', self.bookmark_interval),
                ('watch_timeout', self.watch_timeout),
                ('history', store.history_limit),
                ('trickle', None if not self.trickle else {'bytes': self.trickle[0],
                                                           'delay': self.trickle[1]}),
                ('gzip', self.gzip),
                ('tables', self.tables),
                ('warnings', list(self.warnings)),
                ('log_interval', self.log_interval)])
