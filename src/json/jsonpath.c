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

/* Evaluation ------------------------------------------------------------ */

/*
 * An expression's values are made one at a time, depth first, each handed
 * to a sink before the next is made. client-go walks step by step over
 * sets (each step maps every value of the set to its results, in order);
 * depth first gives the same values in the same order without holding a
 * set, so that the items of a List given one at a time
 * (kinf_jsonpath_execute_list) are trees only while the walk is inside
 * them. The one step that is not per value, a quoted text (client-go's
 * TextNode: the one value, whatever came before), starts the walk: the
 * steps before the last one cannot change what it yields.
 */
struct exec;

struct sink {
	/* 0 for more, 1 for no more (a filter has its answer), <0 an error */
	int (*take)(struct exec *x, json_t *v, void *userdata);
	void *userdata;
};

enum item_state { ITEM_UNSEEN, ITEM_TREE, ITEM_NONE };

struct exec {
	const struct kinf_jsonpath *jp;
	json_t *root;
	/*
	 * A List given item by item: root is its skeleton, whose "items"
	 * is marker, standing for list's items; state says which items
	 * had a tree when asked for (those without are not in the List).
	 */
	const struct kinf_jsonpath_list *list;
	json_t *marker;
	unsigned char *state;
	bool as_json;
	struct kinf_buf *out;
	FILE *file;		/* out goes to it as it grows, or NULL */
};

#define SPILL_BYTES ((size_t)64 << 10)

/* Write out what is made so far (for a file), so that out stays small. */
static int spill(struct exec *x, bool all) {
	int rc = kinf_buf_error(x->out);
	if (rc < 0 || !x->file || (!all && x->out->len < SPILL_BYTES)) {
		return rc;
	}
	if (x->out->len && fwrite(x->out->data, 1, x->out->len, x->file) != x->out->len) {
		return -KINF_EIO;
	}
	kinf_buf_reset(x->out);
	return 0;
}

/* Item i's tree (a new reference), or NULL when it has none. */
static json_t *item_get(struct exec *x, size_t i) {
	if (x->state[i] == ITEM_NONE) {
		return NULL;
	}
	json_t *t = x->list->item(x->list->userdata, i);
	x->state[i] = t ? ITEM_TREE : ITEM_NONE;
	return t;
}

/* Whether item i is in the List: it has a tree (made and dropped the first time). */
static bool item_in_list(struct exec *x, size_t i) {
	if (x->state[i] == ITEM_UNSEEN) {
		json_decref(item_get(x, i));
	}
	return x->state[i] == ITEM_TREE;
}

/*
 * The k-th item of the List from the front (k >= 0) or the back (-1 is
 * the last): its tree, or NULL for none.
 */
static json_t *item_nth(struct exec *x, long k) {
	size_t n = x->list->n;
	/* -(k + 1) for the back: LONG_MIN has no negation */
	size_t want = k >= 0 ? (size_t)k : (size_t)(-(k + 1));
	for (size_t j = 0; j < n; j++) {
		size_t i = k >= 0 ? j : n - 1 - j;
		if (x->state[i] == ITEM_NONE || (want > 0 && x->state[i] == ITEM_TREE)) {
			want -= x->state[i] == ITEM_TREE;
			continue;
		}
		json_t *t = item_get(x, i);
		if (t && want == 0) {
			return t;
		}
		want -= t != NULL;
		json_decref(t);
	}
	return NULL;
}

static int walk(struct exec *x, const struct expr *e, size_t si, json_t *v,
		const struct sink *s);
static int eval(struct exec *x, const struct expr *e, json_t *cur, const struct sink *s);

/* Each item in the List, its tree walked on from step si. */
static int walk_items(struct exec *x, const struct expr *e, size_t si, const struct sink *s) {
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < x->list->n; i++) {
		json_t *t = item_get(x, i);
		if (t) {
			rc = walk(x, e, si, t, s);
			json_decref(t);
		}
	}
	return rc;
}

/* [a:b] of the List's items, as [a:b] of an array of them. */
static int slice_items(struct exec *x, const struct step *st, const struct expr *e,
		size_t si, const struct sink *s) {
	long a = st->has_start ? st->start : 0, b = st->has_end ? st->end : LONG_MAX;
	int rc = 0;
	if (a < 0 || b < 0) {
		/* From the end: how many there are first. */
		long n = 0;
		for (size_t i = 0; i < x->list->n; i++) {
			n += item_in_list(x, i);
		}
		a = a < 0 ? (a + n < 0 ? 0 : a + n) : a;
		b = b < 0 ? b + n : b;
	}
	long j = 0;
	for (size_t i = 0; rc == 0 && i < x->list->n && j < b; i++) {
		if (x->state[i] == ITEM_NONE || (j < a && x->state[i] == ITEM_TREE)) {
			j += x->state[i] == ITEM_TREE;
			continue;
		}
		json_t *t = item_get(x, i);
		if (t && j >= a) {
			rc = walk(x, e, si, t, s);
		}
		j += t != NULL;
		json_decref(t);
	}
	return rc;
}

static int compare(json_t *a, json_t *b) {
	if (json_is_number(a) && json_is_number(b)) {
		return kinf_jsonnum_cmp_json(a, b);
	}
	if (json_is_string(a) && json_is_string(b)) {
		return strcmp(json_string_value(a), json_string_value(b));
	}
	return json_equal(a, b) ? 0 : 2;
}

/* A filter's sink: 1 (no more) at the first value that passes. */
static int take_filter(struct exec *x, json_t *v, void *userdata) {
	const struct step *s = userdata;
	int c = s->op == CMP_EXISTS ? 0 : compare(v, s->literal);
	(void)x;
	switch (s->op) {
	case CMP_EXISTS: return 1;
	case CMP_EQ: return c == 0;
	case CMP_NE: return c != 0;
	case CMP_LT: return c == -1;
	case CMP_GT: return c == 1;
	case CMP_LE: return c == -1 || c == 0;
	case CMP_GE: return c == 1 || c == 0;
	}
	return 0;
}

/* Whether item passes the filter step s: 1, 0, or <0 for an error. */
static int filter_ok(struct exec *x, const struct step *s, json_t *item) {
	struct sink test = { take_filter, (void *)s };
	return eval(x, s->filter_path, item, &test);
}

/* The elements of v that pass the filter, walked on from step si. */
static int filter(struct exec *x, const struct step *st, json_t *v, const struct expr *e,
		size_t si, const struct sink *s) {
	int rc = 0;
	if (v == x->marker) {
		for (size_t i = 0; rc == 0 && i < x->list->n; i++) {
			json_t *t = item_get(x, i);
			if (t && (rc = filter_ok(x, st, t)) == 1) {
				rc = walk(x, e, si, t, s);
			}
			json_decref(t);
		}
		return rc;
	}
	size_t j;
	json_t *c;
	json_array_foreach(v, j, c) {
		if ((rc = filter_ok(x, st, c)) == 1) {
			rc = walk(x, e, si, c, s);
		}
		if (rc != 0) {
			break;
		}
	}
	return rc;
}

/*
 * .. (name NULL) or ..name below v: in an object its values (or its name
 * member) first, then what is below each; in an array each element, then
 * what is below it.
 */
static int recurse(struct exec *x, json_t *v, const char *name, const struct expr *e,
		size_t si, const struct sink *s) {
	const char *k;
	json_t *child;
	size_t i;
	int rc = 0;
	if (v == x->marker) {
		for (i = 0; rc == 0 && i < x->list->n; i++) {
			json_t *t = item_get(x, i);
			if (t && !name) {
				rc = walk(x, e, si, t, s);
			}
			if (t && rc == 0) {
				rc = recurse(x, t, name, e, si, s);
			}
			json_decref(t);
		}
	} else if (json_is_object(v)) {
		if (name) {
			json_t *hit = json_object_get(v, name);
			rc = hit ? walk(x, e, si, hit, s) : 0;
		} else {
			json_object_foreach(v, k, child) {
				if ((rc = walk(x, e, si, child, s)) != 0) {
					return rc;
				}
			}
		}
		json_object_foreach(v, k, child) {
			if (rc != 0 || (rc = recurse(x, child, name, e, si, s)) != 0) {
				return rc;
			}
		}
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, child) {
			if ((!name && (rc = walk(x, e, si, child, s)) != 0) ||
					(rc = recurse(x, child, name, e, si, s)) != 0) {
				return rc;
			}
		}
	}
	return rc;
}

/* Step si of e and the rest on v: every value they reach, to s. */
static int walk(struct exec *x, const struct expr *e, size_t si, json_t *v,
		const struct sink *s) {
	if (si == e->n) {
		return s->take(x, v, s->userdata);
	}
	const struct step *st = &e->steps[si];
	const char *k;
	json_t *c;
	size_t j;
	int rc = 0;
	switch (st->kind) {
	case STEP_TEXT:
	case STEP_LITERAL:
		return walk(x, e, si + 1, st->literal, s);
	case STEP_FIELD:
		c = json_object_get(v, st->name);
		return c ? walk(x, e, si + 1, c, s) : 0;
	case STEP_ALL:
		if (v == x->marker) {
			return walk_items(x, e, si + 1, s);
		}
		if (json_is_array(v)) {
			json_array_foreach(v, j, c) {
				if ((rc = walk(x, e, si + 1, c, s)) != 0) {
					break;
				}
			}
		} else if (json_is_object(v)) {
			json_object_foreach(v, k, c) {
				if ((rc = walk(x, e, si + 1, c, s)) != 0) {
					break;
				}
			}
		}
		return rc;
	case STEP_INDEX: {
		if (v == x->marker) {
			json_t *t = item_nth(x, st->index);
			rc = t ? walk(x, e, si + 1, t, s) : 0;
			json_decref(t);
			return rc;
		}
		long n = (long)json_array_size(v);
		long idx = st->index < 0 ? n + st->index : st->index;
		if (json_is_array(v) && idx >= 0 && idx < n) {
			rc = walk(x, e, si + 1, json_array_get(v, (size_t)idx), s);
		}
		return rc;
	}
	case STEP_SLICE: {
		if (v == x->marker) {
			return slice_items(x, st, e, si + 1, s);
		}
		long n = (long)json_array_size(v);
		long a = st->has_start ? st->start : 0, b = st->has_end ? st->end : n;
		a = a < 0 ? a + n : a;
		b = b < 0 ? b + n : b;
		a = a < 0 ? 0 : a;
		b = b > n ? n : b;
		for (long i = a; rc == 0 && i < b; i++) {
			rc = walk(x, e, si + 1, json_array_get(v, (size_t)i), s);
		}
		return rc;
	}
	case STEP_RECURSIVE:
		return recurse(x, v, st->name, e, si + 1, s);
	case STEP_FILTER:
		return v == x->marker || json_is_array(v) ? filter(x, st, v, e, si + 1, s) : 0;
	}
	return 0;
}

static int eval(struct exec *x, const struct expr *e, json_t *cur, const struct sink *s) {
	size_t si = e->n;
	while (si > 0 && e->steps[si - 1].kind != STEP_TEXT) {
		si--;
	}
	json_t *start = si > 0 ? e->steps[si - 1].literal : e->from_root ? x->root : cur;
	return start ? walk(x, e, si, start, s) : 0;
}

/* indent NULL: compact, on one line. */
static void newline(struct kinf_buf *out, const char *indent, int depth) {
	if (indent) {
		kinf_buf_putc(out, '\n');
		for (int i = 0; i < depth; i++) {
			kinf_buf_puts(out, indent);
		}
	}
}

static int put_json(struct exec *x, json_t *v, const char *indent, int depth);

/* The List's items as a JSON array, made an item at a time. */
static int put_items(struct exec *x, const char *indent, int depth) {
	size_t k = 0;
	int rc = 0;
	kinf_buf_putc(x->out, '[');
	for (size_t i = 0; rc == 0 && i < x->list->n; i++) {
		json_t *t = item_get(x, i);
		if (t) {
			kinf_buf_puts(x->out, k++ ? "," : "");
			newline(x->out, indent, depth + 1);
			rc = kinf_gojson_append_at(x->out, t, indent, depth + 1);
			rc = rc < 0 ? rc : spill(x, false);
			json_decref(t);
		}
	}
	if (k) {
		newline(x->out, indent, depth);
	}
	kinf_buf_putc(x->out, ']');
	return rc;
}

/*
 * v as encoding/json writes it, at depth (gojson.h), the List and its
 * items too: the skeleton's members in Go's (sorted) order.
 */
static int put_json(struct exec *x, json_t *v, const char *indent, int depth) {
	if (!x->marker || (v != x->root && v != x->marker)) {
		return kinf_gojson_append_at(x->out, v, indent, depth);
	}
	if (v == x->marker) {
		return put_items(x, indent, depth);
	}
	static const char *const keys[] = { "apiVersion", "items", "kind", "metadata" };
	int rc = 0;
	kinf_buf_putc(x->out, '{');
	for (size_t i = 0; rc == 0 && i < sizeof(keys) / sizeof(*keys); i++) {
		kinf_buf_puts(x->out, i ? "," : "");
		newline(x->out, indent, depth + 1);
		kinf_buf_putf(x->out, "\"%s\"%s", keys[i], indent ? ": " : ":");
		rc = put_json(x, json_object_get(v, keys[i]), indent, depth + 1);
	}
	newline(x->out, indent, depth);
	kinf_buf_putc(x->out, '}');
	return rc;
}

/* An expression's values as kubectl's JSONPath printer shows them, a space between. */
static int take_print(struct exec *x, json_t *v, void *userdata) {
	size_t *count = userdata;
	if ((*count)++) {
		kinf_buf_putc(x->out, ' ');
	}
	int rc = x->marker && (v == x->root || v == x->marker) ? put_json(x, v, NULL, 0) :
		kinf_jsonpath_print_value(v, x->out);
	return rc < 0 ? rc : spill(x, false);
}

/*
 * jsonpath-as-json: an expression's values (client-go's PrintResults with
 * outputJSON) as json.MarshalIndent of the array of them, "    " a level.
 */
static int take_print_json(struct exec *x, json_t *v, void *userdata) {
	size_t *count = userdata;
	kinf_buf_putc(x->out, (*count)++ ? ',' : '[');
	newline(x->out, "    ", 1);
	int rc = put_json(x, v, "    ", 1);
	return rc < 0 ? rc : spill(x, false);
}

static int end_print_json(struct exec *x, size_t count) {
	kinf_buf_puts(x->out, count ? "\n]\n" : "[]\n");
	return spill(x, false);
}

static int run_nodes(struct exec *x, size_t from, size_t to, json_t *cur);

/* A range's body, for each value its expression reaches. */
struct range {
	size_t from, to;	/* the body's nodes */
};

static int take_range(struct exec *x, json_t *v, void *userdata) {
	const struct range *r = userdata;
	return run_nodes(x, r->from, r->to, v);
}

static int run_nodes(struct exec *x, size_t from, size_t to, json_t *cur) {
	const struct kinf_jsonpath *jp = x->jp;
	int rc = 0;
	for (size_t i = from; rc == 0 && i < to; i++) {
		const struct node *n = &jp->nodes[i];
		size_t count = 0;
		if (n->kind == NODE_TEXT && x->as_json) {
			json_t *text = json_string(n->text);
			struct sink print = { take_print_json, &count };
			rc = text ? print.take(x, text, &count) : -KINF_ENOMEM;
			rc = rc < 0 ? rc : end_print_json(x, count);
			json_decref(text);
		} else if (n->kind == NODE_TEXT) {
			kinf_buf_puts(x->out, n->text);
			rc = spill(x, false);
		} else if (n->kind == NODE_EXPR) {
			struct sink print = { x->as_json ? take_print_json : take_print, &count };
			rc = eval(x, n->expr, cur, &print);
			rc = rc < 0 || !x->as_json ? rc : end_print_json(x, count);
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
			struct range r = { i + 1, end };
			struct sink body = { take_range, &r };
			rc = eval(x, n->expr, cur, &body);
			i = end;
		}
	}
	return rc;
}

static int finish(struct exec *x, int rc, struct kinf_error *reterr) {
	if (rc == 0) {
		rc = spill(x, true);
	}
	if (rc == -KINF_EIO) {
		return kinf_error_set(reterr, KINF_EIO, "writing output: %s", strerror(errno));
	}
	return rc < 0 ? kinf_error_set(reterr, -rc, "out of memory") : 0;
}

static int execute(const struct kinf_jsonpath *jp, json_t *data, bool as_json,
		struct kinf_buf *out, struct kinf_error *reterr) {
	struct exec x = { .jp = jp, .root = data, .as_json = as_json, .out = out };
	return finish(&x, run_nodes(&x, 0, jp->n, data), reterr);
}

int kinf_jsonpath_execute(const struct kinf_jsonpath *jp, json_t *data,
		struct kinf_buf *out, struct kinf_error *reterr) {
	return execute(jp, data, false, out, reterr);
}

int kinf_jsonpath_execute_json(const struct kinf_jsonpath *jp, json_t *data,
		struct kinf_buf *out, struct kinf_error *reterr) {
	return execute(jp, data, true, out, reterr);
}

int kinf_jsonpath_execute_list(const struct kinf_jsonpath *jp,
		const struct kinf_jsonpath_list *list, bool as_json, FILE *out,
		struct kinf_error *reterr) {
	struct kinf_buf text = {0};
	json_t *marker = json_array();
	/* The List kubectl runs a template over, its items aside. */
	json_t *skeleton = marker ? json_pack("{s:s,s:O,s:s,s:{s:s}}", "apiVersion", "v1",
			"items", marker, "kind", "List", "metadata", "resourceVersion", "") : NULL;
	struct exec x = {
		.jp = jp, .root = skeleton, .list = list, .marker = marker,
		.state = calloc(list->n + 1, 1), .as_json = as_json, .out = &text, .file = out,
	};
	int rc = skeleton && x.state ? run_nodes(&x, 0, jp->n, skeleton) : -KINF_ENOMEM;
	rc = finish(&x, rc, reterr);
	/* Items the template did not reach are asked for too: the caller hears of each. */
	for (size_t i = 0; rc == 0 && i < list->n; i++) {
		(void)item_in_list(&x, i);
	}
	free(x.state);
	json_decref(skeleton);
	json_decref(marker);
	kinf_buf_release(&text);
	return rc;
}

/* Collects every value reached (kinf_jsonpath_find). */
static int take_collect(struct exec *x, json_t *v, void *userdata) {
	(void)x;
	return json_array_append(userdata, v) < 0 ? -KINF_ENOMEM : 0;
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

json_t *kinf_jsonpath_find(const struct kinf_jsonpath *jp, json_t *data) {
	if (jp->n != 1 || jp->nodes[0].kind != NODE_EXPR) {
		return NULL;
	}
	struct exec x = { .jp = jp, .root = data };
	struct sink collect = { take_collect, json_array() };
	if (collect.userdata && eval(&x, jp->nodes[0].expr, data, &collect) < 0) {
		json_decref(collect.userdata);
		collect.userdata = NULL;
	}
	return collect.userdata;
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
		kinf_error_fill(reterr, KINF_EINVAL, "unexpected path string \"%s\", expected a "
				"'name1.name2' or '.name1.name2' or '{name1.name2}' or "
				"'{.name1.name2}'", expression);
		return NULL;
	}
	if (len > 1 && *inner == '.') {
		inner++;
		len--;
	}
	if (kinf_buf_printf(&t, "{.%.*s}", (int)len, inner) < 0) {
		kinf_error_fill(reterr, KINF_ENOMEM, "out of memory");
	} else if (kinf_jsonpath_parse(t.data, &jp, reterr) == 0 &&
			!(out = kinf_jsonpath_find(jp, data))) {
		if (jp->n == 1 && jp->nodes[0].kind == NODE_EXPR) {
			kinf_error_fill(reterr, KINF_ENOMEM, "out of memory");
		} else {
			kinf_error_fill(reterr, KINF_EINVAL, "\"%s\": one expression expected",
					expression);
		}
	}
	kinf_jsonpath_free(jp);
	kinf_buf_release(&t);
	return out;
}
