"""JSON encoding as Go's encoding/json writes it, and time helpers."""

import calendar
import json
import time

_ENCODER = json.JSONEncoder(separators=(',', ':'), ensure_ascii=False,
                            check_circular=False)
_SORTED_ENCODER = json.JSONEncoder(separators=(',', ':'), ensure_ascii=False,
                                   check_circular=False, sort_keys=True)
# Go escapes these even in compact output (HTML safety, JavaScript).
_GO_ESCAPES = (('<', '\\u003c'), ('>', '\\u003e'), ('&', '\\u0026'),
               ('\u2028', '\\u2028'), ('\u2029', '\\u2029'))


def _go_escape(s):
    for ch, rep in _GO_ESCAPES:
        if ch in s:
            s = s.replace(ch, rep)
    return s


def dumps(obj, sort_keys=False):
    """Compact JSON bytes, Go style (no spaces, <>& escaped, UTF-8)."""
    enc = _SORTED_ENCODER if sort_keys else _ENCODER
    return _go_escape(enc.encode(obj)).encode('utf-8', 'replace')


def dumps_str(obj):
    return _go_escape(_ENCODER.encode(obj))


def loads(data):
    if isinstance(data, (bytes, bytearray, memoryview)):
        data = bytes(data).decode('utf-8', 'replace')
    return json.loads(data)


def rfc3339(t=None):
    """Seconds since the epoch to metav1.Time text (UTC, second precision)."""
    if t is None:
        t = time.time()
    return time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(t))


def rfc3339_micro(t=None):
    if t is None:
        t = time.time()
    return time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime(t)) + \
        '.%06dZ' % int((t % 1) * 1e6)


def parse_rfc3339(s):
    """metav1.Time text to epoch seconds; None when absent or malformed."""
    if not isinstance(s, str) or len(s) < 20:
        return None
    try:
        base = time.strptime(s[:19], '%Y-%m-%dT%H:%M:%S')
    except ValueError:
        return None
    t = float(calendar.timegm(base))
    rest = s[19:]
    if rest.startswith('.'):
        i = 1
        while i < len(rest) and rest[i].isdigit():
            i += 1
        t += float('0' + rest[:i])
        rest = rest[i:]
    if rest in ('Z', 'z', ''):
        return t
    if len(rest) == 6 and rest[0] in '+-' and rest[3] == ':':
        try:
            off = int(rest[1:3]) * 3600 + int(rest[4:6]) * 60
        except ValueError:
            return None
        return t - off if rest[0] == '+' else t + off
    return None


def human_duration(seconds):
    """Port of apimachinery/pkg/util/duration.HumanDuration."""
    secs = int(seconds)
    if secs < -1:
        return '<invalid>'
    if secs < 0:
        return '0s'
    if secs < 60 * 2:
        return '%ds' % secs
    minutes = secs // 60
    if minutes < 10:
        s = secs % 60
        return '%dm' % minutes if s == 0 else '%dm%ds' % (minutes, s)
    if minutes < 60 * 3:
        return '%dm' % minutes
    hours = secs // 3600
    if hours < 8:
        m = minutes % 60
        return '%dh' % hours if m == 0 else '%dh%dm' % (hours, m)
    if hours < 48:
        return '%dh' % hours
    if hours < 24 * 8:
        h = hours % 24
        return '%dd' % (hours // 24) if h == 0 else '%dd%dh' % (hours // 24, h)
    if hours < 24 * 365 * 2:
        return '%dd' % (hours // 24)
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return '%dy' % (hours // 24 // 365) if dy == 0 else \
            '%dy%dd' % (hours // 24 // 365, dy)
    return '%dy' % (hours // 24 // 365)
