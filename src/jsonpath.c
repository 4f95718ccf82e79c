#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gofloat.h"
#include "gojson.h"
#include "hex.h"
#include "jsonnum.h"
#include "jsonpath.h"

/*
 * A template is a list of nodes: text, an expression (a chain of steps), or
 * range/end around a sub-list. Steps select from a set of current values to
 * a new set, as client-go's jsonpath walks reflect values.
 */
/*
 * STEP_LITERAL: a number or true/false, in place of each current value
 * (client-go's IntNode, FloatNode, BoolNode); STEP_TEXT: a quoted string,
 * the one value whatever came before (TextNode).
 */
enum step_kind { STEP_FIELD, STEP_ALL, STEP_INDEX, STEP_SLICE, STEP_RECURSIVE, STEP_FILTER,
	STEP_LITERAL, STEP_TEXT };
enum cmp_op { CMP_EXISTS, CMP_EQ, CMP_NE, CMP_LT, CMP_GT, CMP_LE, CMP_GE };

struct step {
	enum step_kind kind;
	char *name;		/* FIELD; RECURSIVE (name after ..) */
	long index;		/* INDEX */
	long start, end;	/* SLICE; end LONG_MAX = to the end */
	bool has_start, has_end;
	/* FILTER: @.path OP literal */
	struct expr *filter_path;
	enum cmp_op op;
	json_t *literal;	/* FILTER; LITERAL; TEXT */
};

struct expr {
	struct step *steps;
	size_t n;
	bool from_root;		/* $ */
};

enum node_kind { NODE_TEXT, NODE_EXPR, NODE_RANGE, NODE_END };

struct node {
	enum node_kind kind;
	char *text;
	struct expr *expr;
};

struct kinf_jsonpath {
	struct node *nodes;
	size_t n;
};

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
		kinf_error_set(ps->err, KINF_ENOMEM, "out of memory");
		return NULL;
	}
	if (*ps->p != q) {
		kinf_buf_release(&b);
		perr(ps, "unterminated string");
		return NULL;
	}
	ps->p++;
	json_t *s = json_stringn(b.data, b.len);
	kinf_buf_release(&b);
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
	struct parser ps = { .start = template, .p = template, .err = reterr };
	int depth = 0;
	int rc = 0;

	if (!jp) {
		return -KINF_ENOMEM;
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
			if ((rc = push_node(jp, &n)) < 0) {
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
				rc = -KINF_EINVAL;
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
	return rc < 0 ? rc : -KINF_EINVAL;
}

/* Evaluation ------------------------------------------------------------ */

static void recurse(json_t *v, const char *name, json_t *out) {
	const char *k;
	json_t *child;
	size_t i;
	if (json_is_object(v)) {
		if (name) {
			json_t *hit = json_object_get(v, name);
			if (hit) {
				json_array_append(out, hit);
			}
		} else {
			json_object_foreach(v, k, child) {
				json_array_append(out, child);
			}
		}
		json_object_foreach(v, k, child) {
			recurse(child, name, out);
		}
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, child) {
			if (!name) {
				json_array_append(out, child);
			}
			recurse(child, name, out);
		}
	}
}

static json_t *eval_expr(const struct expr *e, json_t *cur, json_t *root);

static int compare(json_t *a, json_t *b) {
	if (json_is_number(a) && json_is_number(b)) {
		return kinf_jsonnum_cmp_json(a, b);
	}
	if (json_is_string(a) && json_is_string(b)) {
		return strcmp(json_string_value(a), json_string_value(b));
	}
	return json_equal(a, b) ? 0 : 2;
}

static bool filter_ok(const struct step *s, json_t *item, json_t *root) {
	json_t *vals = eval_expr(s->filter_path, item, root);
	bool ok = false;
	size_t i;
	json_t *v;
	json_array_foreach(vals, i, v) {
		int c;
		switch (s->op) {
		case CMP_EXISTS: ok = true; break;
		case CMP_EQ: ok = compare(v, s->literal) == 0; break;
		case CMP_NE: ok = compare(v, s->literal) != 0; break;
		case CMP_LT: c = compare(v, s->literal); ok = c == -1; break;
		case CMP_GT: c = compare(v, s->literal); ok = c == 1; break;
		case CMP_LE: c = compare(v, s->literal); ok = c == -1 || c == 0; break;
		case CMP_GE: c = compare(v, s->literal); ok = c == 1 || c == 0; break;
		}
		if (ok) {
			break;
		}
	}
	json_decref(vals);
	return ok;
}

static json_t *eval_expr(const struct expr *e, json_t *cur, json_t *root) {
	json_t *set = json_array();
	json_array_append(set, e->from_root ? root : cur);
	for (size_t si = 0; si < e->n; si++) {
		const struct step *s = &e->steps[si];
		json_t *next = json_array();
		size_t i;
		json_t *v;
		if (s->kind == STEP_TEXT) {
			json_array_append(next, s->literal);
			json_decref(set);
			set = next;
			continue;
		}
		json_array_foreach(set, i, v) {
			switch (s->kind) {
			case STEP_TEXT:
				break;
			case STEP_LITERAL:
				json_array_append(next, s->literal);
				break;
			case STEP_FIELD: {
				json_t *f = json_object_get(v, s->name);
				if (f) {
					json_array_append(next, f);
				}
				break;
			}
			case STEP_ALL: {
				const char *k;
				json_t *c;
				size_t j;
				if (json_is_array(v)) {
					json_array_foreach(v, j, c) {
						json_array_append(next, c);
					}
				} else if (json_is_object(v)) {
					json_object_foreach(v, k, c) {
						json_array_append(next, c);
					}
				}
				break;
			}
			case STEP_INDEX: {
				long n = (long)json_array_size(v);
				long idx = s->index < 0 ? n + s->index : s->index;
				if (json_is_array(v) && idx >= 0 && idx < n) {
					json_array_append(next, json_array_get(v, (size_t)idx));
				}
				break;
			}
			case STEP_SLICE: {
				long n = (long)json_array_size(v);
				long a = s->has_start ? s->start : 0, b = s->has_end ? s->end : n;
				if (a < 0) {
					a += n;
				}
				if (b < 0) {
					b += n;
				}
				if (a < 0) {
					a = 0;
				}
				if (b > n) {
					b = n;
				}
				for (long j = a; j < b; j++) {
					json_array_append(next, json_array_get(v, (size_t)j));
				}
				break;
			}
			case STEP_RECURSIVE:
				recurse(v, s->name, next);
				break;
			case STEP_FILTER: {
				size_t j;
				json_t *c;
				if (json_is_array(v)) {
					json_array_foreach(v, j, c) {
						if (filter_ok(s, c, root)) {
							json_array_append(next, c);
						}
					}
				}
				break;
			}
			}
		}
		json_decref(set);
		set = next;
	}
	return set;
}

int kinf_jsonpath_print_value(json_t *v, struct kinf_buf *out) {
	if (json_is_string(v)) {
		return kinf_buf_append(out, json_string_value(v), json_string_length(v));
	}
	if (json_is_real(v)) {
		char num[KINF_GOFLOAT_SIZE];
		kinf_gofloat_format(json_real_value(v), num);
		return kinf_buf_append_str(out, num);
	}
	/* Maps and lists as encoding/json writes them (floats in Go's form, not %.17g). */
	return kinf_gojson_append(out, v);
}

int kinf_jsonpath_print_values(json_t *values, struct kinf_buf *out) {
	size_t i;
	json_t *v;
	json_array_foreach(values, i, v) {
		int rc;
		if ((i > 0 && (rc = kinf_buf_append_char(out, ' ')) < 0) ||
				(rc = kinf_jsonpath_print_value(v, out)) < 0) {
			return rc;
		}
	}
	return 0;
}

/*
 * One node's results, as JSON (jsonpath-as-json): client-go's PrintResults
 * with outputJSON, json.MarshalIndent of the array of them and a newline.
 */
static int print_json_results(json_t *vals, struct kinf_buf *out) {
	int rc = vals ? kinf_gojson_append_indent(out, vals, "    ") : -KINF_ENOMEM;
	return rc == 0 ? kinf_buf_append_char(out, '\n') : rc;
}

static int run_nodes(const struct kinf_jsonpath *jp, size_t from, size_t to,
		json_t *cur, json_t *root, bool as_json, struct kinf_buf *out) {
	int rc = 0;
	for (size_t i = from; rc == 0 && i < to; i++) {
		const struct node *n = &jp->nodes[i];
		if (n->kind == NODE_TEXT && as_json) {
			json_t *vals = json_pack("[s]", n->text);
			rc = print_json_results(vals, out);
			json_decref(vals);
		} else if (n->kind == NODE_TEXT) {
			rc = kinf_buf_append_str(out, n->text);
		} else if (n->kind == NODE_EXPR) {
			json_t *vals = eval_expr(n->expr, cur, root);
			rc = as_json ? print_json_results(vals, out) :
				kinf_jsonpath_print_values(vals, out);
			json_decref(vals);
		} else if (n->kind == NODE_RANGE) {
			/* Find the matching end. */
			size_t depth = 1, end = i + 1;
			for (; end < to; end++) {
				if (jp->nodes[end].kind == NODE_RANGE) {
					depth++;
				} else if (jp->nodes[end].kind == NODE_END && --depth == 0) {
					break;
				}
			}
			json_t *vals = eval_expr(n->expr, cur, root);
			size_t j;
			json_t *v;
			json_array_foreach(vals, j, v) {
				if ((rc = run_nodes(jp, i + 1, end, v, root, as_json, out)) < 0) {
					break;
				}
			}
			json_decref(vals);
			i = end;
		}
	}
	return rc;
}

static int execute(const struct kinf_jsonpath *jp, json_t *data, bool as_json,
		struct kinf_buf *out, struct kinf_error *reterr) {
	int rc = run_nodes(jp, 0, jp->n, data, data, as_json, out);
	if (rc < 0) {
		return kinf_error_set(reterr, -rc, "out of memory");
	}
	return 0;
}

int kinf_jsonpath_execute(const struct kinf_jsonpath *jp, json_t *data,
		struct kinf_buf *out, struct kinf_error *reterr) {
	return execute(jp, data, false, out, reterr);
}

int kinf_jsonpath_execute_json(const struct kinf_jsonpath *jp, json_t *data,
		struct kinf_buf *out, struct kinf_error *reterr) {
	return execute(jp, data, true, out, reterr);
}

json_t *kinf_jsonpath_find(const struct kinf_jsonpath *jp, json_t *data) {
	if (jp->n != 1 || jp->nodes[0].kind != NODE_EXPR) {
		return NULL;
	}
	return eval_expr(jp->nodes[0].expr, data, data);
}

json_t *kinf_jsonpath_values(const char *expression, json_t *data,
		struct kinf_error *reterr) {
	struct kinf_buf t = {0};
	struct kinf_jsonpath *jp = NULL;
	json_t *out = NULL;

	/*
	 * kubectl's RelaxedJSONPathExpression: "a.b", ".a.b", "{a.b}" and
	 * "{.a.b}" all mean {.a.b} (one leading dot dropped, one added:
	 * "..a" stays recursive), and a brace inside is refused.
	 */
	size_t len = strlen(expression);
	const char *inner = expression;
	if (len >= 2 && expression[0] == '{' && expression[len - 1] == '}') {
		inner++;
		len -= 2;
	}
	if (len == 0 || memchr(inner, '{', len) || memchr(inner, '}', len)) {
		kinf_error_set(reterr, KINF_EINVAL, "unexpected path string \"%s\", expected a "
				"'name1.name2' or '.name1.name2' or '{name1.name2}' or "
				"'{.name1.name2}'", expression);
		return NULL;
	}
	if (len > 1 && *inner == '.') {
		inner++;
		len--;
	}
	if (kinf_buf_printf(&t, "{.%.*s}", (int)len, inner) < 0) {
		kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	} else if (kinf_jsonpath_parse(t.data, &jp, reterr) == 0 &&
			!(out = kinf_jsonpath_find(jp, data))) {
		kinf_error_set(reterr, KINF_EINVAL, "\"%s\": one expression expected", expression);
	}
	kinf_jsonpath_free(jp);
	kinf_buf_release(&t);
	return out;
}
