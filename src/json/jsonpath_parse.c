#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "gofloat.h"
#include "gojson.h"
#include "hex.h"
#include "json.h"
#include "jsonnum.h"
#include "jsonpath.h"
#include "jsonpath_int.h"

/* Parsing -------------------------------------------------------------- */

static void expr_free(struct expr *e);

static void step_release(struct step *s) {
	free(s->name);
	expr_free(s->filter_path);
	json_decref(s->literal);
}

static void expr_free(struct expr *e) {
	if (!e) {
		return;
	}
	for (size_t i = 0; i < e->n; i++) {
		step_release(&e->steps[i]);
	}
	free(e->steps);
	free(e);
}

void kinf_jsonpath_free(struct kinf_jsonpath *jp) {
	if (!jp) {
		return;
	}
	for (size_t i = 0; i < jp->n; i++) {
		free(jp->nodes[i].text);
		expr_free(jp->nodes[i].expr);
	}
	free(jp->nodes);
	free(jp);
}

struct parser {
	const char *start;
	const char *p;
	struct kinf_error *err;
};

static int perr(struct parser *ps, const char *what) {
	return kinf_error_set(ps->err, KINF_EINVAL, "jsonpath \"%s\": %s at position %d",
			ps->start, what, (int)(ps->p - ps->start) + 1);
}

static void ws(struct parser *ps) {
	while (*ps->p == ' ' || *ps->p == '\t') {
		ps->p++;
	}
}

static int push_step(struct expr *e, const struct step *s) {
	struct step *v = realloc(e->steps, (e->n + 1) * sizeof(*v));
	if (!v) {
		return -KINF_ENOMEM;
	}
	e->steps = v;
	e->steps[e->n++] = *s;
	return 0;
}

/* client-go's isAlphaNumeric, with any non-ASCII byte taken for a letter. */
static bool ident_start(char c) {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
		(unsigned char)c >= 0x80;
}

/* client-go's isTerminator: what ends a field name (besides the stop set). */
static bool field_end(char c, const char *stop) {
	return c == '\0' || strchr(" \t\r\n.,[]$@{}", c) || strchr(stop, c);
}

/*
 * A field name as client-go's parseField scans it: up to a terminator, a
 * backslash taking the next character whatever it is ("app\.kubernetes\.io"),
 * then every backslash dropped (so "\\" stands for nothing). ret_raw_star is
 * set for an unescaped "*". NULL for out of memory.
 */
static char *scan_field(struct parser *ps, const char *stop, bool *ret_raw_star) {
	struct kinf_buf b = {0};
	const char *s = ps->p;
	int rc = 0;
	while (rc == 0 && !field_end(*ps->p, stop)) {
		if (*ps->p == '\\') {
			ps->p++;
			if (!*ps->p) {
				break;
			}
			if (*ps->p != '\\') {
				rc = kinf_buf_append_char(&b, *ps->p);
			}
			ps->p++;
			continue;
		}
		rc = kinf_buf_append_char(&b, *ps->p++);
	}
	*ret_raw_star = ps->p - s == 1 && *s == '*';
	if (rc < 0) {
		kinf_buf_release(&b);
		return NULL;
	}
	return kinf_buf_take(&b);
}

/*
 * One escape after a backslash inside quotes q, as Go's strconv.UnquoteChar
 * (client-go's UnquoteExtend) takes them: \a \b \f \n \r \t \v \\, the
 * enclosing quote, \xHH, \uHHHH, \UHHHHHHHH and three octal digits.
 */
static int unescape(struct parser *ps, char q, struct kinf_buf *b) {
	static const char simple[] = "a\ab\bf\fn\nr\rt\tv\v\\\\";
	char c = *ps->p;
	const char *hit = c ? strchr(simple, c) : NULL;
	if (hit && (hit - simple) % 2 == 0) {
		ps->p++;
		return kinf_buf_append_char(b, hit[1]);
	}
	if (c == q) {
		ps->p++;
		return kinf_buf_append_char(b, c);
	}
	if (c == 'x' || c == 'u' || c == 'U') {
		int n = c == 'x' ? 2 : c == 'u' ? 4 : 8;
		unsigned long r = 0;
		for (int i = 1; i <= n; i++) {
			int h = kinf_hex_value(ps->p[i]);
			if (h < 0) {
				return perr(ps, "invalid escape in string");
			}
			r = r * 16 + (unsigned long)h;
		}
		if (c != 'x' && (r > 0x10ffff || (r >= 0xd800 && r < 0xe000))) {
			return perr(ps, "invalid escape in string");
		}
		ps->p += n + 1;
		if (c == 'x') {
			return kinf_buf_append_char(b, (char)r);
		}
		return kinf_buf_append_utf8(b, r);
	}
	if (c >= '0' && c <= '7') {
		unsigned r = 0;
		for (int i = 0; i < 3; i++) {
			if (ps->p[i] < '0' || ps->p[i] > '7') {
				return perr(ps, "invalid escape in string");
			}
			r = r * 8 + (unsigned)(ps->p[i] - '0');
		}
		if (r > 0377) {
			return perr(ps, "invalid escape in string");
		}
		ps->p += 3;
		return kinf_buf_append_char(b, (char)r);
	}
	return perr(ps, "invalid escape in string");
}

/* A quoted string 'x' or "x" at ps->p; returns a JSON string. */
static json_t *parse_quoted(struct parser *ps) {
	char q = *ps->p++;
	struct kinf_buf b = {0};
	int rc = kinf_buf_append_str(&b, "");
	while (rc == 0 && *ps->p && *ps->p != q && *ps->p != '\n' && *ps->p != '\r') {
		if (*ps->p == '\\') {
			ps->p++;
			if (unescape(ps, q, &b) < 0) {
				kinf_buf_release(&b);
				return NULL;
			}
			continue;
		}
		rc = kinf_buf_append_char(&b, *ps->p++);
	}
	if (rc < 0) {
		kinf_buf_release(&b);
		kinf_error_fill(ps->err, KINF_ENOMEM, "out of memory");
		return NULL;
	}
	if (*ps->p != q) {
		kinf_buf_release(&b);
		perr(ps, "unterminated string");
		return NULL;
	}
	ps->p++;
	/* jansson refuses invalid UTF-8 and fails when memory runs out: which? */
	bool utf8 = kinf_json_utf8_valid(b.data ? b.data : "", b.len);
	json_t *s = json_stringn(b.data ? b.data : "", b.len);
	kinf_buf_release(&b);
	if (!s && utf8) {
		kinf_error_fill(ps->err, KINF_ENOMEM, "out of memory");
		return NULL;
	}
	if (!s) {
		perr(ps, "the string is not valid UTF-8");
	}
	return s;
}

static json_t *parse_literal(struct parser *ps) {
	ws(ps);
	if (*ps->p == '"' || *ps->p == '\'') {
		return parse_quoted(ps);
	}
	const char *s = ps->p;
	while (*ps->p && *ps->p != ')' && *ps->p != ']' && *ps->p != ' ') {
		ps->p++;
	}
	json_t *v = kinf_jsonnum_load(s, (size_t)(ps->p - s), JSON_DECODE_ANY, NULL);
	if (!v) {
		perr(ps, "a number, true, false, null or a quoted string expected");
	}
	return v;
}

/*
 * A number as client-go's parseNumber reads it: an optional sign, then
 * digits and dots; an int when strconv.Atoi takes it, else a float when
 * ParseFloat does ("1.", "+.5", and integers beyond int64), else an error.
 */
static json_t *parse_number(struct parser *ps) {
	const char *s = ps->p, *q = s;
	size_t digits = 0, dots = 0;
	if (*q == '+' || *q == '-') {
		q++;
	}
	for (; (*q >= '0' && *q <= '9') || *q == '.'; q++) {
		*q == '.' ? dots++ : digits++;
	}
	char *text = strndup(s, (size_t)(q - s));
	json_t *v = NULL;
	if (!text) {
		return NULL;
	}
	if (digits > 0 && dots == 0) {
		errno = 0;
		long long n = strtoll(text, NULL, 10);
		v = errno == ERANGE ? json_real(strtod(text, NULL)) : json_integer(n);
	} else if (digits > 0 && dots == 1) {
		v = json_real(strtod(text, NULL));
	} else {
		struct kinf_buf what = {0};
		perr(ps, kinf_buf_printf(&what, "cannot parse number %s", text) == 0 ?
				what.data : "cannot parse number");
		kinf_buf_release(&what);
		free(text);
		return NULL;
	}
	free(text);
	ps->p = q;
	return v;
}

static struct expr *parse_path(struct parser *ps, const char *stop);

/*
 * ['KEY'] as client-go reads it: KEY is parsed as ".KEY", so dots in it
 * separate fields (['a.b'] is .a.b) unless escaped (['a\\.b']). kinf takes
 * ["KEY"] the same way.
 */
static int parse_dict_key(struct parser *ps, struct expr *e) {
	char q = *ps->p++;
	const char *close = strchr(ps->p, q);
	struct kinf_buf sub = {0};
	struct expr *se = NULL;
	int rc = 0;

	if (!close) {
		return perr(ps, "unterminated string");
	}
	if (kinf_buf_append_char(&sub, '.') < 0 ||
			kinf_buf_append(&sub, ps->p, (size_t)(close - ps->p)) < 0) {
		kinf_buf_release(&sub);
		return -KINF_ENOMEM;
	}
	struct parser sp = { .start = sub.data, .p = sub.data, .err = ps->err };
	se = parse_path(&sp, "");
	if (!se) {
		rc = -KINF_EINVAL;
	} else if (*sp.p) {
		rc = perr(ps, "a field path expected in ['...']");
	} else {
		for (size_t i = 0; i < se->n && rc == 0; i++) {
			if ((rc = push_step(e, &se->steps[i])) == 0) {
				memset(&se->steps[i], 0, sizeof(se->steps[i]));
			}
		}
	}
	expr_free(se);
	kinf_buf_release(&sub);
	if (rc < 0) {
		return rc;
	}
	ps->p = close + 1;
	ws(ps);
	if (*ps->p != ']') {
		return perr(ps, "']' expected");
	}
	ps->p++;
	return 0;
}

static int parse_bracket(struct parser *ps, struct expr *e) {
	struct step s = {0};
	ps->p++;	/* [ */
	ws(ps);
	if (*ps->p == '*') {
		ps->p++;
		s.kind = STEP_ALL;
	} else if (*ps->p == '\'' || *ps->p == '"') {
		return parse_dict_key(ps, e);
	} else if (*ps->p == '?') {
		ps->p++;
		ws(ps);
		if (*ps->p != '(') {
			return perr(ps, "'(' expected after '?'");
		}
		ps->p++;
		ws(ps);
		if (*ps->p != '@') {
			return perr(ps, "'@' expected in filter");
		}
		ps->p++;
		s.kind = STEP_FILTER;
		s.filter_path = parse_path(ps, "=!<>) ");
		if (!s.filter_path) {
			return -KINF_EINVAL;
		}
		ws(ps);
		static const struct { const char *tok; enum cmp_op op; } ops[] = {
			{ "==", CMP_EQ }, { "!=", CMP_NE }, { "<=", CMP_LE }, { ">=", CMP_GE },
			{ "<", CMP_LT }, { ">", CMP_GT },
		};
		s.op = CMP_EXISTS;
		for (size_t i = 0; i < sizeof(ops) / sizeof(*ops); i++) {
			size_t n = strlen(ops[i].tok);
			if (strncmp(ps->p, ops[i].tok, n) == 0) {
				s.op = ops[i].op;
				ps->p += n;
				break;
			}
		}
		if (s.op != CMP_EXISTS) {
			s.literal = parse_literal(ps);
			if (!s.literal) {
				step_release(&s);
				return -KINF_EINVAL;
			}
		}
		ws(ps);
		if (*ps->p != ')') {
			step_release(&s);
			return perr(ps, "')' expected to end the filter");
		}
		ps->p++;
	} else {
		char *end;
		long a = strtol(ps->p, &end, 10);
		bool has_a = end != ps->p;
		ps->p = end;
		ws(ps);
		if (*ps->p == ':') {
			ps->p++;
			long b = strtol(ps->p, &end, 10);
			s.kind = STEP_SLICE;
			s.start = a;
			s.has_start = has_a;
			s.end = b;
			s.has_end = end != ps->p;
			ps->p = end;
		} else if (has_a) {
			s.kind = STEP_INDEX;
			s.index = a;
		} else {
			return perr(ps, "an index, '*', a slice, a quoted name or a filter expected");
		}
	}
	ws(ps);
	if (*ps->p != ']') {
		step_release(&s);
		return perr(ps, "']' expected");
	}
	ps->p++;
	if (push_step(e, &s) < 0) {
		step_release(&s);
		return -KINF_ENOMEM;
	}
	return 0;
}

/* Steps until a character in stop (or '}' / end of input). */
static struct expr *parse_path(struct parser *ps, const char *stop) {
	struct expr *e = calloc(1, sizeof(*e));
	if (!e) {
		return NULL;
	}
	if (*ps->p == '$') {
		e->from_root = true;
		ps->p++;
	}
	while (*ps->p && *ps->p != '}' && !strchr(stop, *ps->p)) {
		struct step s = {0};
		bool star = false;
		if (*ps->p == ' ' || *ps->p == '\t') {
			ps->p++;	/* client-go skips spaces inside an action */
			continue;
		}
		if (ps->p[0] == '.' && ps->p[1] == '.') {
			ps->p += 2;
			s.kind = STEP_RECURSIVE;
			if (*ps->p == '*') {
				ps->p++;
			} else if (!field_end(*ps->p, stop)) {
				if (!(s.name = scan_field(ps, stop, &star))) {
					expr_free(e);
					return NULL;
				}
			}
		} else if (*ps->p == '.') {
			ps->p++;
			if (*ps->p == '[' || *ps->p == '}' || !*ps->p) {
				continue;	/* "." alone is the current value */
			}
			if (field_end(*ps->p, stop)) {
				perr(ps, "a field name expected after '.'");
				expr_free(e);
				return NULL;
			}
			if (!(s.name = scan_field(ps, stop, &star))) {
				expr_free(e);
				return NULL;
			}
			s.kind = STEP_FIELD;
			if (star) {
				s.kind = STEP_ALL;
				free(s.name);
				s.name = NULL;
			}
		} else if (*ps->p == '[') {
			if (parse_bracket(ps, e) < 0) {
				expr_free(e);
				return NULL;
			}
			continue;
		} else if (*ps->p == '"' || *ps->p == '\'') {
			s.kind = STEP_TEXT;
			if (!(s.literal = parse_quoted(ps))) {
				expr_free(e);
				return NULL;
			}
		} else if (*ps->p == '+' || *ps->p == '-' || (*ps->p >= '0' && *ps->p <= '9')) {
			s.kind = STEP_LITERAL;
			if (!(s.literal = parse_number(ps))) {
				expr_free(e);
				return NULL;
			}
		} else if (ident_start(*ps->p)) {
			/*
			 * An identifier: true and false are literals; client-go
			 * knows no other outside {range} and {end}, so
			 * "{metadata.name}" fails as it fails in kubectl
			 * (custom-columns and --for add the dot, as kubectl does).
			 */
			const char *id = ps->p;
			while (!field_end(*ps->p, stop)) {
				ps->p++;
			}
			size_t len = (size_t)(ps->p - id);
			if ((len == 4 && strncmp(id, "true", 4) == 0) ||
					(len == 5 && strncmp(id, "false", 5) == 0)) {
				s.kind = STEP_LITERAL;
				s.literal = json_boolean(len == 4);
			} else {
				struct kinf_buf what = {0};
				bool have_what = kinf_buf_printf(&what, "unrecognized identifier %.*s",
						(int)len, id) == 0;
				ps->p = id;
				perr(ps, have_what ? what.data : "unrecognized identifier");
				kinf_buf_release(&what);
				expr_free(e);
				return NULL;
			}
		} else {
			perr(ps, "unexpected character");
			expr_free(e);
			return NULL;
		}
		if (push_step(e, &s) < 0) {
			step_release(&s);
			expr_free(e);
			return NULL;
		}
	}
	return e;
}

static int push_node(struct kinf_jsonpath *jp, const struct node *n) {
	struct node *v = realloc(jp->nodes, (jp->n + 1) * sizeof(*v));
	if (!v) {
		return -KINF_ENOMEM;
	}
	jp->nodes = v;
	jp->nodes[jp->n++] = *n;
	return 0;
}

int kinf_jsonpath_parse(const char *template, struct kinf_jsonpath **ret,
		struct kinf_error *reterr) {
	struct kinf_jsonpath *jp = calloc(1, sizeof(*jp));
	/* The parser's own: a failure it said nothing about was memory's. */
	struct kinf_error perr_ = {0};
	struct parser ps = { .start = template, .p = template, .err = &perr_ };
	int depth = 0;
	int rc = 0;

	if (!jp) {
		return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	}
	while (*ps.p) {
		struct node n = {0};
		if (*ps.p != '{') {
			const char *s = ps.p;
			while (*ps.p && *ps.p != '{') {
				ps.p++;
			}
			n.kind = NODE_TEXT;
			n.text = strndup(s, (size_t)(ps.p - s));
			if (!n.text || (rc = push_node(jp, &n)) < 0) {
				rc = -KINF_ENOMEM;
				free(n.text);
				goto fail;
			}
			continue;
		}
		ps.p++;
		ws(&ps);
		if (strncmp(ps.p, "range", 5) == 0 && (ps.p[5] == ' ' || ps.p[5] == '.')) {
			ps.p += 5;
			ws(&ps);
			n.kind = NODE_RANGE;
			depth++;
		} else if (strncmp(ps.p, "end", 3) == 0 && (ps.p[3] == '}' || ps.p[3] == ' ')) {
			ps.p += 3;
			ws(&ps);
			if (--depth < 0) {
				rc = perr(&ps, "{end} without {range}");
				goto fail;
			}
			n.kind = NODE_END;
		} else {
			n.kind = NODE_EXPR;
		}
		if (n.kind != NODE_END) {
			n.expr = parse_path(&ps, "");
			if (!n.expr) {
				rc = perr_.code ? -perr_.code : -KINF_ENOMEM;
				goto fail;
			}
		}
		ws(&ps);
		if (*ps.p != '}') {
			expr_free(n.expr);
			rc = perr(&ps, "'}' expected");
			goto fail;
		}
		ps.p++;
		if ((rc = push_node(jp, &n)) < 0) {
			expr_free(n.expr);
			goto fail;
		}
	}
	if (depth != 0) {
		rc = perr(&ps, "{range} without {end}");
		goto fail;
	}
	*ret = jp;
	return 0;
fail:
	kinf_jsonpath_free(jp);
	if (rc == -KINF_ENOMEM) {
		return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	}
	if (reterr) {
		*reterr = perr_;
	}
	return rc < 0 ? rc : -KINF_EINVAL;
}
