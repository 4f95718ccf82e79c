"""Label and field selectors: a port of apimachinery's parsers and their messages.

parse_labels() and parse_fields() raise SelectorError with the text the real
server puts in its 400 BadRequest Status.
"""

import re


class SelectorError(Exception):
    pass


# --- label selectors (k8s.io/apimachinery/pkg/labels/selector.go) -----------

(ERROR, EOS, CLOSEDPAR, COMMA, NOT, DOUBLEEQ, EQ, GT, IDENT, IN, LT, NOTEQ, NOTIN,
 OPENPAR) = range(14)
_STRING2TOKEN = {')': CLOSEDPAR, ',': COMMA, '!': NOT, '==': DOUBLEEQ, '=': EQ, '>': GT,
                 'in': IN, '<': LT, '!=': NOTEQ, 'notin': NOTIN, '(': OPENPAR}
_SPECIAL = set('=!(),><')
_WHITESPACE = set(' \t\r\n')
_BINARY_OPERATORS = ['in', 'notin', '=', '==', '!=', 'gt', 'lt']

_QNAME_RE = re.compile(r'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\Z')
_DNS1123_SUB_RE = re.compile(r'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z')
_LABEL_VALUE_RE = re.compile(r'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?\Z')
_QNAME_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'


def _regex_error(msg, fmt, *examples):
    if not examples:
        return msg + " (regex used for validation is '" + fmt + "')"
    msg += ' (e.g. '
    for i, ex in enumerate(examples):
        if i > 0:
            msg += ' or '
        msg += "'" + ex + "', "
    return msg + "regex used for validation is '" + fmt + "')"


_QNAME_ERR = _regex_error("must consist of alphanumeric characters, '-', '_' or '.', and "
                          "must start and end with an alphanumeric character", _QNAME_FMT,
                          'MyName', 'my.name', '123-abc')


def _qualified_name_errors(value):
    errs = []
    parts = value.split('/')
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append('prefix part must be non-empty')
        else:
            if len(prefix) > 253:
                errs.append('prefix part must be no more than 253 characters')
            if not _DNS1123_SUB_RE.match(prefix):
                errs.append('prefix part ' + _regex_error(
                    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                    "characters, '-' or '.', and must start and end with an alphanumeric "
                    "character", r'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*',
                    'example.com'))
    else:
        return ['a qualified name ' + _QNAME_ERR + " with an optional DNS subdomain prefix "
                "and '/' (e.g. 'example.com/MyName')"]
    if not name:
        errs.append('name part must be non-empty')
    elif len(name) > 63:
        errs.append('name part must be no more than 63 characters')
    if not _QNAME_RE.match(name):
        errs.append('name part ' + _QNAME_ERR)
    return errs


def _label_value_errors(value):
    errs = []
    if len(value) > 63:
        errs.append('must be no more than 63 characters')
    if not _LABEL_VALUE_RE.match(value):
        errs.append(_regex_error(
            "a valid label must be an empty string or consist of alphanumeric characters, "
            "'-', '_' or '.', and must start and end with an alphanumeric character",
            '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?', 'MyValue', 'my_value', '12345'))
    return errs


def _go_quote(s):
    return '"' + s.replace('\\', '\\\\').replace('"', '\\"') + '"'


def _lex(s):
    items = []
    pos = 0
    n = len(s)
    while True:
        while pos < n and s[pos] in _WHITESPACE:
            pos += 1
        if pos >= n:
            items.append((EOS, ''))
            return items
        ch = s[pos]
        if ch in _SPECIAL:
            buf = ''
            last = None
            while pos < n and s[pos] in _SPECIAL:
                buf += s[pos]
                if buf in _STRING2TOKEN:
                    last = (_STRING2TOKEN[buf], buf)
                    pos += 1
                elif last is not None:
                    break
                else:
                    pos += 1
            if last is None:
                items.append((ERROR, "error expected: keyword found '%s'" % buf))
            else:
                items.append(last)
        else:
            start = pos
            while pos < n and s[pos] not in _SPECIAL and s[pos] not in _WHITESPACE:
                pos += 1
            word = s[start:pos]
            items.append((_STRING2TOKEN.get(word, IDENT), word))


class _LabelParser:
    def __init__(self, s):
        self.items = _lex(s)
        self.pos = 0

    def lookahead(self, values):
        tok, lit = self.items[self.pos]
        if values and tok in (IN, NOTIN):
            tok = IDENT
        return tok, lit

    def consume(self, values):
        tok, lit = self.items[self.pos]
        self.pos += 1
        if values and tok in (IN, NOTIN):
            tok = IDENT
        return tok, lit

    def parse(self):
        reqs = []
        while True:
            tok, lit = self.lookahead(True)
            if tok in (IDENT, NOT):
                try:
                    reqs.append(self.requirement())
                except SelectorError as e:
                    raise SelectorError('unable to parse requirement: %s' % e)
                t, lit = self.consume(True)
                if t == EOS:
                    return reqs
                if t == COMMA:
                    t2, l2 = self.lookahead(True)
                    if t2 not in (IDENT, NOT):
                        raise SelectorError("found '%s', expected: identifier after ','" % l2)
                else:
                    raise SelectorError("found '%s', expected: ',' or 'end of string'" % lit)
            elif tok == EOS:
                return reqs
            else:
                raise SelectorError("found '%s', expected: !, identifier, or 'end of string'"
                                    % lit)

    def requirement(self):
        key, op = self.key_and_operator()
        if op in ('exists', '!'):
            return _new_requirement(key, op, [])
        op = self.operator()
        if op in ('in', 'notin'):
            values = self.values()
        else:
            values = self.exact_value()
        return _new_requirement(key, op, sorted(values))

    def key_and_operator(self):
        op = None
        tok, lit = self.consume(True)
        if tok == NOT:
            op = '!'
            tok, lit = self.consume(True)
        if tok != IDENT:
            raise SelectorError("found '%s', expected: identifier" % lit)
        errs = _qualified_name_errors(lit)
        if errs:
            raise SelectorError('<nil>: Invalid value: %s: %s' % (_go_quote(lit), '; '.join(errs)))
        t, _ = self.lookahead(True)
        if t in (EOS, COMMA) and op != '!':
            op = 'exists'
        return lit, op

    def operator(self):
        tok, lit = self.consume(False)
        ops = {IN: 'in', EQ: '=', DOUBLEEQ: '==', GT: 'gt', LT: 'lt', NOTIN: 'notin',
               NOTEQ: '!='}
        if tok not in ops:
            raise SelectorError("found '%s', expected: %s" % (lit, ', '.join(_BINARY_OPERATORS)))
        return ops[tok]

    def values(self):
        tok, lit = self.consume(True)
        if tok != OPENPAR:
            raise SelectorError("found '%s' expected: '('" % lit)
        tok, lit = self.lookahead(True)
        if tok in (IDENT, COMMA):
            s = self.identifiers()
            tok, _ = self.consume(True)
            if tok != CLOSEDPAR:
                raise SelectorError("found '%s', expected: ')'" % lit)
            return s
        if tok == CLOSEDPAR:
            self.consume(True)
            return {''}
        raise SelectorError("found '%s', expected: ',', ')' or identifier" % lit)

    def identifiers(self):
        s = set()
        while True:
            tok, lit = self.consume(True)
            if tok == IDENT:
                s.add(lit)
                tok2, lit2 = self.lookahead(True)
                if tok2 == COMMA:
                    continue
                if tok2 == CLOSEDPAR:
                    return s
                raise SelectorError("found '%s', expected: ',' or ')'" % lit2)
            elif tok == COMMA:
                if not s:
                    s.add('')
                tok2, _ = self.lookahead(True)
                if tok2 == CLOSEDPAR:
                    s.add('')
                    return s
                if tok2 == COMMA:
                    s.add('')
            else:
                raise SelectorError("found '%s', expected: ',', or identifier" % lit)

    def exact_value(self):
        tok, _ = self.lookahead(True)
        if tok in (EOS, COMMA):
            return {''}
        tok, lit = self.consume(True)
        if tok == IDENT:
            return {lit}
        raise SelectorError("found '%s', expected: identifier" % lit)


def _new_requirement(key, op, values):
    errs = []
    if op in ('in', 'notin') and not values:
        errs.append("values: Invalid value: []string{}: for 'in', 'notin' operators, values "
                    "set can't be empty")
    if op in ('gt', 'lt'):
        for i, v in enumerate(values):
            if not re.match(r'[+-]?\d+\Z', v):
                errs.append("values[%d]: Invalid value: %s: for 'Gt', 'Lt' operators, the "
                            "value must be an integer" % (i, _go_quote(v)))
    for i, v in enumerate(values):
        verrs = _label_value_errors(v)
        if verrs:
            errs.append('values[%d][%s]: Invalid value: %s: %s' % (i, key, _go_quote(v),
                                                                  '; '.join(verrs)))
    if errs:
        raise SelectorError(errs[0] if len(errs) == 1 else '[' + ', '.join(errs) + ']')
    return (key, op, frozenset(values))


def _requirement_matcher(key, op, values):
    if op in ('=', '==', 'in'):
        if len(values) == 1:
            (v,) = values
            return lambda ls: ls.get(key) == v
        return lambda ls: key in ls and ls[key] in values
    if op in ('!=', 'notin'):
        return lambda ls: key not in ls or ls[key] not in values
    if op == 'exists':
        return lambda ls: key in ls
    if op == '!':
        return lambda ls: key not in ls
    (v,) = values
    bound = int(v)

    def cmp(ls):
        try:
            x = int(ls[key])
        except (KeyError, ValueError):
            return False
        return x > bound if op == 'gt' else x < bound
    return cmp


def parse_labels(text):
    """A predicate over a labels dict, or None for the empty selector."""
    if not text:
        return None
    reqs = _LabelParser(text).parse()
    if not reqs:
        return None
    matchers = [_requirement_matcher(*r) for r in sorted(reqs, key=lambda r: r[0])]
    if len(matchers) == 1:
        return matchers[0]
    return lambda ls: all(m(ls) for m in matchers)


# --- field selectors (k8s.io/apimachinery/pkg/fields/selector.go) ------------

def _split_terms(s):
    terms = []
    start = 0
    in_slash = False
    for i, c in enumerate(s):
        if in_slash:
            in_slash = False
        elif c == '\\':
            in_slash = True
        elif c == ',':
            terms.append(s[start:i])
            start = i + 1
    terms.append(s[start:])
    return terms


def _split_term(term):
    for i in range(len(term)):
        for op in ('!=', '==', '='):
            if term.startswith(op, i):
                return term[:i], op, term[i + len(op):]
    return None


def _unescape(s):
    out = []
    in_slash = False
    for c in s:
        if in_slash:
            if c in '\\,=':
                out.append(c)
            else:
                raise SelectorError('invalid field selector: invalid escape sequence: \\' + c)
            in_slash = False
            continue
        if c == '\\':
            in_slash = True
        elif c in ',=':
            raise SelectorError('invalid field selector: unescaped character in value: %d'
                                % ord(c))
        else:
            out.append(c)
    if in_slash:
        raise SelectorError('invalid field selector: invalid escape sequence: \\')
    return ''.join(out)


def parse_fields(text, supported, own_conversion=True):
    """A list of (field, op, value) terms, or None for the empty selector.

    supported: the field labels the resource allows; others are rejected with
    "field label not supported: X" as the real conversion functions do, or,
    for a kind without one of its own (own_conversion False: configmaps,
    deployments...), as the default one does: "X" is not a known field
    selector: only "metadata.name", "metadata.namespace".
    """
    if not text:
        return None
    terms = []
    for part in sorted(_split_terms(text)):
        if part == '':
            continue
        t = _split_term(part)
        if t is None:
            raise SelectorError("invalid selector: '%s'; can't understand '%s'" % (text, part))
        lhs, op, rhs = t
        terms.append((lhs, op, _unescape(rhs)))
    for lhs, _, _ in terms:
        if lhs not in supported:
            if not own_conversion:
                raise SelectorError('"%s" is not a known field selector: only '
                                    '"metadata.name", "metadata.namespace"' % lhs)
            raise SelectorError('field label not supported: %s' % lhs)
    return terms or None


def fields_match(terms, fields):
    for lhs, op, value in terms:
        have = fields.get(lhs, '')
        if op == '!=':
            if have == value:
                return False
        elif have != value:
            return False
    return True


def exact_name(terms):
    """The name a metadata.name=X term pins, if any (watch of one object)."""
    for lhs, op, value in terms or ():
        if lhs == 'metadata.name' and op != '!=':
            return value
    return None
