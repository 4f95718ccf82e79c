"""JSON encoding as Go's encoding/json writes it, and time helpers."""

import calendar
import decimal
import json
import math
import os
import re
import time


class GoFloat:
    """A number that only a float64 holds, with the text Go's encoding/json
    writes for it ("1e-7", "1.5", "1e+21"); loads() makes them, dumps()
    writes the text. Whole ones below 1e21 are plain ints instead (their
    text is the digits: 100000000000000000000)."""

    __slots__ = ('text', 'value')

    def __init__(self, text, value):
        self.text = text
        self.value = value

    def __eq__(self, other):
        return isinstance(other, GoFloat) and other.text == self.text

    def __hash__(self):
        return hash(self.text)

    def __float__(self):
        return self.value

    def __repr__(self):
        return 'GoFloat(%s)' % self.text


class NumberError(ValueError):
    """A number Go's decoder refuses (beyond float64, NaN, Infinity)."""


# Written in place of a GoFloat, then replaced by its text: a NUL and a
# random tag, which no JSON string the server holds can contain.
_RAW = '\x00gofloat-%s:' % os.urandom(8).hex()
_RAW_JSON = re.compile(r'"\\u0000gofloat-%s:([^"]*)"' % _RAW[9:-1])


def _raw_number(o):
    if isinstance(o, GoFloat):
        return _RAW + o.text
    raise TypeError('%r is not JSON serializable' % (o,))


_ENCODER = json.JSONEncoder(separators=(',', ':'), ensure_ascii=False,
                            check_circular=False, default=_raw_number)
_SORTED_ENCODER = json.JSONEncoder(separators=(',', ':'), ensure_ascii=False,
                                   check_circular=False, sort_keys=True,
                                   default=_raw_number)


def go_float_text(f):
    """encoding/json's text for a float64: the shortest digits that read
    back (Python's repr chooses the same), positional from 1e-6 to 1e21,
    an exponent outside, with "e-07" written "e-7"."""
    if f == 0:
        return '-0' if math.copysign(1, f) < 0 else '0'
    r = repr(f)
    if 1e-6 <= abs(f) < 1e21:
        return format(decimal.Decimal(r).normalize(), 'f')
    return re.sub(r'e-0(\d)$', r'e-\1', r)


def _go_float(f, literal):
    if math.isinf(f) or math.isnan(f):
        raise NumberError('json: cannot unmarshal number %s into Go value of type float64'
                          % literal)
    text = go_float_text(f)
    # What the server serves is its stored text decoded again: an integer
    # form (no '.', no exponent) reads back as an int64, so -0 becomes 0.
    if re.fullmatch(r'-?[0-9]+', text):
        return int(text)
    return GoFloat(text, f)


def _go_int(literal):
    n = int(literal)
    if -(1 << 63) <= n < (1 << 63):
        return n
    return _go_float(float(literal), literal)


def _no_constant(name):
    raise NumberError("invalid character '%s' looking for beginning of value" % name[0])
# Go escapes these even in compact output (HTML safety, JavaScript).
_GO_ESCAPES = (('<', '\\u003c'), ('>', '\\u003e'), ('&', '\\u0026'),
               ('\u2028', '\\u2028'), ('\u2029', '\\u2029'))


def _go_escape(s):
    for ch, rep in _GO_ESCAPES:
        if ch in s:
            s = s.replace(ch, rep)
    return s


def _encode(enc, obj):
    s = enc.encode(obj)
    if '\\u0000gofloat-' in s:
        s = _RAW_JSON.sub(r'\1', s)
    return s


def dumps(obj, sort_keys=False):
    """Compact JSON bytes, Go style (no spaces, <>& escaped, UTF-8)."""
    enc = _SORTED_ENCODER if sort_keys else _ENCODER
    return _go_escape(_encode(enc, obj)).encode('utf-8', 'replace')


def dumps_str(obj):
    return _go_escape(_encode(_ENCODER, obj))


def loads(data):
    """JSON as kube-apiserver decodes, stores and reads back a request body
    (sigs.k8s.io/json with PreserveInts, encoding/json, then the stored
    bytes decoded again): an integer within int64 stays exact, every other
    number becomes a float64 and is served in Go's form (1e20 as
    100000000000000000000, 1.0 as 1, 12345678901234567890 as
    12345678901234567000, -0.0 as 0); beyond float64 (1e400), NaN and
    Infinity raise NumberError with Go's message."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        data = bytes(data).decode('utf-8', 'replace')
    return json.loads(data, parse_int=_go_int,
                      parse_float=lambda lit: _go_float(float(lit), lit),
                      parse_constant=_no_constant)


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


def _go_quote_char(c):
    """encoding/json's quoteChar: a byte as Go's strconv.Quote prints the
    rune of that value, in single quotes."""
    if c == 0x27:
        return "'\\''"
    if c == 0x22:
        return "'\"'"
    ch = chr(c)
    esc = {7: '\\a', 8: '\\b', 12: '\\f', 10: '\\n', 13: '\\r', 9: '\\t', 11: '\\v',
           0x5c: '\\\\'}
    if c in esc:
        return "'%s'" % esc[c]
    if c < 0x20 or c == 0x7f:
        return "'\\x%02x'" % c
    if not ch.isprintable():
        return "'\\u%04x'" % c
    return "'%s'" % ch


def go_json_error(data):
    """What Go's json.Unmarshal says about bytes that are not JSON (the
    first byte's error; empty input's), for errors that quote them."""
    rest = data.lstrip(b' \t\r\n')
    if not rest:
        return 'unexpected end of JSON input'
    c = rest[0]
    if chr(c) not in '{["-0123456789tfn':
        return 'invalid character %s looking for beginning of value' % _go_quote_char(c)
    try:
        json.loads(data)
    except ValueError as e:
        return str(e)
    return ''
