#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "object.h"
#include "selector.h"

enum op { OP_EXISTS, OP_NOT_EXISTS, OP_EQ, OP_NE, OP_IN, OP_NOTIN, OP_GT, OP_LT };

struct requirement {
	char *key;
	enum op op;
	struct kinf_strv values;
	long long number;
};

struct kinf_selector {
	bool fields;
	struct requirement *v;
	size_t n;
};

void kinf_selector_free(struct kinf_selector *sel) {
	if (!sel) {
		return;
	}
	for (size_t i = 0; i < sel->n; i++) {
		free(sel->v[i].key);
		kinf_strv_release(&sel->v[i].values);
	}
	free(sel->v);
	free(sel);
}

static int fail(struct kinf_error *reterr, const char *text, const char *at,
		const char *what) {
	return kinf_error_set(reterr, KINF_EINVAL,
			"invalid selector \"%s\": %s at position %d", text, what,
			(int)(at - text) + 1);
}

static int push(struct kinf_selector *sel, struct requirement *r) {
	struct requirement *v = realloc(sel->v, (sel->n + 1) * sizeof(*v));
	if (!v) {
		return -KINF_ENOMEM;
	}
	sel->v = v;
	sel->v[sel->n++] = *r;
	return 0;
}

/*
 * ---- label selectors: apimachinery's labels.Parse ----
 *
 * Its lexer and its recursive descent, so that what it takes, what it
 * refuses and each error's text are the apiserver's (a 400 of kinf serve
 * carries the text as it stands).
 */

enum tok {
	T_EOS, T_CLOSE, T_COMMA, T_NOT, T_DEQ, T_EQ, T_GT, T_ID, T_IN, T_LT, T_NE, T_NOTIN,
	T_OPEN,
};

/* string2token: every token with a fixed text. */
static const struct {
	const char *text;
	enum tok tok;
} fixed_tokens[] = {
	{ ")", T_CLOSE }, { ",", T_COMMA }, { "!", T_NOT }, { "==", T_DEQ }, { "=", T_EQ },
	{ ">", T_GT }, { "in", T_IN }, { "<", T_LT }, { "!=", T_NE }, { "notin", T_NOTIN },
	{ "(", T_OPEN },
};

static bool fixed_token(const char *s, size_t n, enum tok *ret) {
	for (size_t i = 0; i < sizeof(fixed_tokens) / sizeof(*fixed_tokens); i++) {
		if (strlen(fixed_tokens[i].text) == n && memcmp(fixed_tokens[i].text, s, n) == 0) {
			*ret = fixed_tokens[i].tok;
			return true;
		}
	}
	return false;
}

static bool is_space(char c) {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static bool is_special(char c) {
	return c && strchr("=!(),><", c);
}

struct item {
	enum tok tok;
	const char *lit;	/* into the text */
	size_t len;
};

/*
 * Lexer.Lex over all of text into ret (the last T_EOS): a special symbol
 * is the longest run of them that is a token ("===" is "==" then "="), an
 * identifier or keyword runs to a space or a special symbol.
 */
static int scan(const char *text, struct item **ret, size_t *ret_n) {
	struct item *v = NULL;
	size_t n = 0;
	const char *p = text;
	for (;;) {
		struct item it = { T_EOS, p, 0 };
		while (is_space(*p)) {
			p++;
		}
		it.lit = p;
		if (is_special(*p)) {
			size_t len = 0, best = 0;
			while (is_special(p[len])) {
				enum tok t;
				len++;
				if (fixed_token(p, len, &t)) {
					it.tok = t;
					best = len;
				} else if (best) {
					break;
				}
			}
			it.len = best;	/* every special symbol alone is a token: best > 0 */
		} else if (*p) {
			while (p[it.len] && !is_special(p[it.len]) && !is_space(p[it.len])) {
				it.len++;
			}
			if (!fixed_token(p, it.len, &it.tok)) {
				it.tok = T_ID;
			}
		}
		p += it.len;
		struct item *grown = realloc(v, (n + 1) * sizeof(*v));
		if (!grown) {
			free(v);
			return -KINF_ENOMEM;
		}
		v = grown;
		v[n++] = it;
		if (it.tok == T_EOS) {
			break;
		}
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

struct parser {
	const struct item *items;
	size_t at;
	struct kinf_buf *err;	/* the error's text, once there is one */
};

/* The next token; in a value's place "in" and "notin" are identifiers. */
static const struct item *lookahead(struct parser *ps, bool values, enum tok *ret) {
	const struct item *it = &ps->items[ps->at];
	*ret = values && (it->tok == T_IN || it->tok == T_NOTIN) ? T_ID : it->tok;
	return it;
}

static const struct item *consume(struct parser *ps, bool values, enum tok *ret) {
	const struct item *it = lookahead(ps, values, ret);
	if (it->tok != T_EOS) {
		ps->at++;
	}
	return it;
}

/* Go's %q of s: quotes, and escapes for quotes, backslashes and control bytes. */
static void go_quote(struct kinf_buf *b, const char *s, size_t n) {
	kinf_buf_putc(b, '"');
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		const char *esc = c == '"' ? "\\\"" : c == '\\' ? "\\\\" : c == '\n' ? "\\n" :
			c == '\t' ? "\\t" : c == '\r' ? "\\r" : c == '\a' ? "\\a" : c == '\b' ? "\\b" :
			c == '\f' ? "\\f" : c == '\v' ? "\\v" : NULL;
		if (esc) {
			kinf_buf_puts(b, esc);
		} else if (c < 0x20 || c == 0x7f) {
			kinf_buf_putf(b, "\\x%02x", c);
		} else {
			kinf_buf_putc(b, (char)c);
		}
	}
	kinf_buf_putc(b, '"');
}

/* validation.RegexError with its examples, as IsQualifiedName and IsValidLabelValue word it. */
#define QNAME_FMT "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
#define QNAME_MSG "must consist of alphanumeric characters, '-', '_' or '.', and must start " \
	"and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', " \
	"regex used for validation is '" QNAME_FMT "')"
#define VALUE_MSG "a valid label must be an empty string or consist of alphanumeric " \
	"characters, '-', '_' or '.', and must start and end with an alphanumeric character " \
	"(e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(" \
	QNAME_FMT ")?')"
#define DNS1123_FMT "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
#define SUBDOMAIN_MSG "a lowercase RFC 1123 subdomain must consist of lower case " \
	"alphanumeric characters, '-' or '.', and must start and end with an alphanumeric " \
	"character (e.g. 'example.com', regex used for validation is '" DNS1123_FMT "(\\." \
	DNS1123_FMT ")*')"

static bool is_alnum(char c) {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* ^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$ */
static bool qualified_name_ok(const char *s, size_t n) {
	if (n == 0 || !is_alnum(s[0]) || !is_alnum(s[n - 1])) {
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.') {
			return false;
		}
	}
	return true;
}

/* ^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$ */
static bool subdomain_ok(const char *s, size_t n) {
	size_t start = 0;
	for (size_t i = 0; i <= n; i++) {
		if (i < n && s[i] != '.') {
			bool lower = (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9');
			if (!lower && s[i] != '-') {
				return false;
			}
			continue;
		}
		if (i == start || s[start] == '-' || s[i - 1] == '-') {
			return false;
		}
		start = i + 1;
	}
	return true;
}

/* validation.IsQualifiedName's complaints about key, joined with "; " into b (none: ok). */
static void key_problems(const char *k, size_t n, struct kinf_buf *b) {
	const char *slash = memchr(k, '/', n);
	const char *name = k;
	size_t name_n = n;
	if (slash && memchr(slash + 1, '/', n - (size_t)(slash + 1 - k))) {
		kinf_buf_puts(b, "a qualified name " QNAME_MSG " with an optional DNS subdomain "
				"prefix and '/' (e.g. 'example.com/MyName')");
		return;
	}
	if (slash) {
		size_t pn = (size_t)(slash - k);
		name = slash + 1;
		name_n = n - pn - 1;
		if (pn == 0) {
			kinf_buf_puts(b, "prefix part must be non-empty");
		} else {
			if (pn > 253) {
				kinf_buf_puts(b, "prefix part must be no more than 253 characters");
			}
			if (!subdomain_ok(k, pn)) {
				kinf_buf_putf(b, "%sprefix part " SUBDOMAIN_MSG, b->len ? "; " : "");
			}
		}
	}
	if (name_n == 0) {
		kinf_buf_putf(b, "%sname part must be non-empty", b->len ? "; " : "");
	} else if (name_n > 63) {
		kinf_buf_putf(b, "%sname part must be no more than 63 characters", b->len ? "; " : "");
	}
	if (!qualified_name_ok(name, name_n)) {
		kinf_buf_putf(b, "%sname part " QNAME_MSG, b->len ? "; " : "");
	}
}

/* validation.IsValidLabelValue's complaints, as key_problems(). */
static void value_problems(const char *v, struct kinf_buf *b) {
	size_t n = strlen(v);
	if (n > 63) {
		kinf_buf_puts(b, "must be no more than 63 characters");
	}
	if (n && !qualified_name_ok(v, n)) {
		kinf_buf_putf(b, "%s" VALUE_MSG, b->len ? "; " : "");
	}
}

/* A field.Error: "PATH: Invalid value: \"v\": detail". */
static void invalid(struct kinf_buf *out, const char *path, const char *v, size_t n,
		const char *detail) {
	kinf_buf_putf(out, "%s: Invalid value: ", path);
	go_quote(out, v, n);
	kinf_buf_putf(out, ": %s", detail);
}

static int syntax(struct parser *ps, const char *fmt, const struct item *it) {
	kinf_buf_putf(ps->err, fmt, (int)it->len, it->lit);
	return -KINF_EINVAL;
}

/*
 * NewRequirement's checks of the values (sorted, once each): Gt and Lt
 * take an integer, every value a label value's syntax. Several problems
 * are aggregated as Go aggregates them: "[a, b]".
 */
static int check_values(struct parser *ps, struct requirement *r) {
	struct kinf_strv errs = {0};
	for (size_t i = 0; i < r->values.n; i++) {
		const char *v = r->values.v[i];
		struct kinf_buf e = {0}, path = {0};
		char *end;
		kinf_buf_putf(&path, "values[%zu]", i);
		if (r->op == OP_GT || r->op == OP_LT) {
			/* strconv.ParseInt(v, 10, 64) */
			errno = 0;
			r->number = strtoll(v, &end, 10);
			if (!v[0] || *end || errno == ERANGE) {
				invalid(&e, path.data ? path.data : "", v, strlen(v),
						"for 'Gt', 'Lt' operators, the value must be an integer");
				kinf_strv_put_take(&errs, kinf_buf_take(&e));
			}
		}
		struct kinf_buf detail = {0};
		value_problems(v, &detail);
		if (detail.len) {
			kinf_buf_putf(&path, "[%s]", r->key);
			invalid(&e, path.data ? path.data : "", v, strlen(v), detail.data);
			kinf_strv_put_take(&errs, kinf_buf_take(&e));
		}
		kinf_buf_release(&detail);
		kinf_buf_release(&path);
		kinf_buf_release(&e);
	}
	if (errs.n == 1) {
		kinf_buf_puts(ps->err, errs.v[0]);
	} else if (errs.n > 1) {
		kinf_buf_putc(ps->err, '[');
		for (size_t i = 0; i < errs.n; i++) {
			kinf_buf_putf(ps->err, "%s%s", i ? ", " : "", errs.v[i]);
		}
		kinf_buf_putc(ps->err, ']');
	}
	int rc = kinf_strv_error(&errs) ? -KINF_ENOMEM : errs.n ? -KINF_EINVAL : 0;
	kinf_strv_release(&errs);
	return rc;
}

static int cmp_value(const void *a, const void *b) {
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A value set: sets.String's List(), sorted and each once. */
static void add_value(struct requirement *r, const char *v, size_t n) {
	for (size_t i = 0; i < r->values.n; i++) {
		if (strlen(r->values.v[i]) == n && memcmp(r->values.v[i], v, n) == 0) {
			return;
		}
	}
	kinf_strv_put(&r->values, v, n);
}

/* parseValues and parseIdentifiersList: "(a,b)", "()" (one empty value), "(,a)"... */
static int parse_set(struct parser *ps, struct requirement *r) {
	enum tok t;
	const struct item *it = consume(ps, true, &t);
	if (t != T_OPEN) {
		return syntax(ps, "found '%.*s' expected: '('", it);
	}
	it = lookahead(ps, true, &t);
	if (t == T_CLOSE) {
		consume(ps, true, &t);
		add_value(r, "", 0);
		return 0;
	}
	if (t != T_ID && t != T_COMMA) {
		return syntax(ps, "found '%.*s', expected: ',', ')' or identifier", it);
	}
	for (;;) {
		it = consume(ps, true, &t);
		if (t == T_ID) {
			add_value(r, it->lit, it->len);
			const struct item *next = lookahead(ps, true, &t);
			if (t == T_CLOSE) {
				break;
			}
			if (t != T_COMMA) {
				return syntax(ps, "found '%.*s', expected: ',' or ')'", next);
			}
		} else if (t == T_COMMA) {
			if (r->values.n == 0) {
				add_value(r, "", 0);	/* "(," */
			}
			lookahead(ps, true, &t);
			if (t == T_CLOSE) {
				add_value(r, "", 0);	/* ",)" */
				break;
			}
			if (t == T_COMMA) {
				consume(ps, true, &t);
				add_value(r, "", 0);	/* ",," */
			}
		} else {
			return syntax(ps, "found '%.*s', expected: ',', or identifier", it);
		}
	}
	consume(ps, true, &t);	/* the ')' seen */
	return 0;
}

/* parseRequirement into r: 0, or -KINF_EINVAL with the error in ps->err. */
static int parse_requirement(struct parser *ps, struct requirement *r) {
	enum tok t;
	const struct item *it = consume(ps, true, &t);
	bool not_exists = t == T_NOT;
	if (not_exists) {
		it = consume(ps, true, &t);
	}
	if (t != T_ID) {
		return syntax(ps, "found '%.*s', expected: identifier", it);
	}
	struct kinf_buf problems = {0};
	key_problems(it->lit, it->len, &problems);
	if (problems.len) {
		invalid(ps->err, "<nil>", it->lit, it->len, problems.data);
		kinf_buf_release(&problems);
		return -KINF_EINVAL;
	}
	kinf_buf_release(&problems);
	if (!(r->key = strndup(it->lit, it->len))) {
		return -KINF_ENOMEM;
	}
	lookahead(ps, true, &t);
	if (not_exists || t == T_EOS || t == T_COMMA) {
		r->op = not_exists ? OP_NOT_EXISTS : OP_EXISTS;
		return 0;
	}
	it = consume(ps, false, &t);
	switch (t) {
	case T_IN: r->op = OP_IN; break;
	case T_NOTIN: r->op = OP_NOTIN; break;
	case T_EQ: case T_DEQ: r->op = OP_EQ; break;
	case T_NE: r->op = OP_NE; break;
	case T_GT: r->op = OP_GT; break;
	case T_LT: r->op = OP_LT; break;
	default:
		return syntax(ps, "found '%.*s', expected: in, notin, =, ==, !=, gt, lt", it);
	}
	int rc;
	if (r->op == OP_IN || r->op == OP_NOTIN) {
		rc = parse_set(ps, r);
	} else {
		/* parseExactValue: nothing before ',' or the end is "" */
		lookahead(ps, true, &t);
		rc = 0;
		if (t == T_EOS || t == T_COMMA) {
			add_value(r, "", 0);
		} else if ((it = consume(ps, true, &t)) && t == T_ID) {
			add_value(r, it->lit, it->len);
		} else {
			rc = syntax(ps, "found '%.*s', expected: identifier", it);
		}
	}
	if (rc == 0 && kinf_strv_error(&r->values)) {
		rc = -KINF_ENOMEM;
	}
	if (rc == 0 && r->values.n) {
		qsort(r->values.v, r->values.n, sizeof(*r->values.v), cmp_value);
	}
	return rc < 0 ? rc : check_values(ps, r);
}

/* Parser.parse: requirements separated by ',', each error worded as the apiserver's. */
static int parse_labels(const char *text, struct kinf_selector *sel,
		struct kinf_error *reterr) {
	struct item *items = NULL;
	struct kinf_buf err = {0};
	size_t n;
	int rc = scan(text, &items, &n);
	struct parser ps = { items, 0, &err };
	while (rc == 0) {
		enum tok t;
		const struct item *it = lookahead(&ps, true, &t);
		if (t == T_EOS) {
			break;
		}
		if (t != T_ID && t != T_NOT) {
			rc = syntax(&ps, "found '%.*s', expected: !, identifier, or 'end of string'", it);
			break;
		}
		struct requirement r = {0};
		rc = parse_requirement(&ps, &r);
		if (rc == -KINF_EINVAL) {
			struct kinf_buf why = err;
			memset(&err, 0, sizeof(err));
			kinf_buf_putf(&err, "unable to parse requirement: %s", why.data ? why.data : "");
			kinf_buf_release(&why);
		}
		if (rc < 0 || (rc = push(sel, &r)) < 0) {
			free(r.key);
			kinf_strv_release(&r.values);
			break;
		}
		it = consume(&ps, true, &t);
		if (t == T_EOS) {
			break;
		}
		if (t != T_COMMA) {
			rc = syntax(&ps, "found '%.*s', expected: ',' or 'end of string'", it);
			break;
		}
		it = lookahead(&ps, true, &t);
		if (t != T_ID && t != T_NOT) {
			rc = syntax(&ps, "found '%.*s', expected: identifier after ','", it);
		}
	}
	free(items);
	if (rc == -KINF_EINVAL || (rc == 0 && kinf_buf_error(&err))) {
		rc = kinf_buf_error(&err) ? kinf_error_set(reterr, KINF_ENOMEM, "out of memory") :
			kinf_error_set(reterr, KINF_EINVAL, "%s", err.data ? err.data : "");
	} else if (rc < 0) {
		rc = kinf_error_set(reterr, -rc, "%s", kinf_strerror(rc));
	}
	kinf_buf_release(&err);
	return rc;
}

/* fields.ParseSelector: backslash escapes ',', '=', '!' and '\' in values. */
static int parse_fields(const char *text, struct kinf_selector *sel,
		struct kinf_error *reterr) {
	const char *p = text;
	while (*p) {
		struct requirement r = {0};
		struct kinf_buf key = {0}, val = {0};
		const char *start = p;
		while (*p && *p != '=' && *p != '!' && *p != ',') {
			p++;
		}
		if (kinf_buf_append(&key, start, (size_t)(p - start)) < 0) {
			return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
		}
		if (p[0] == '!' && p[1] == '=') {
			r.op = OP_NE;
			p += 2;
		} else if (p[0] == '=' && p[1] == '=') {
			r.op = OP_EQ;
			p += 2;
		} else if (p[0] == '=') {
			r.op = OP_EQ;
			p++;
		} else {
			kinf_buf_release(&key);
			return fail(reterr, text, p, "'=', '==' or '!=' expected");
		}
		int checked = key.len ? kinf_object_field_path_check(key.data, NULL) : -KINF_EINVAL;
		if (checked < 0) {
			kinf_buf_release(&key);
			return checked == -KINF_ENOMEM ?
				kinf_error_set(reterr, KINF_ENOMEM, "out of memory") :
				fail(reterr, text, start, "invalid field path");
		}
		int rc = kinf_buf_append_str(&val, "");
		while (rc == 0 && *p && *p != ',') {
			if (*p == '\\' && (p[1] == ',' || p[1] == '=' || p[1] == '!' || p[1] == '\\')) {
				p++;
			} else if (*p == '=' || (*p == '!' && p[1] == '=')) {
				kinf_buf_release(&key);
				kinf_buf_release(&val);
				return fail(reterr, text, p, "unescaped operator in value");
			}
			rc = kinf_buf_append_char(&val, *p++);
		}
		r.key = kinf_buf_take(&key);
		if (rc < 0 || !r.key || kinf_strv_push_take(&r.values, kinf_buf_take(&val)) < 0 ||
				push(sel, &r) < 0) {
			kinf_buf_release(&val);
			free(r.key);
			kinf_strv_release(&r.values);
			return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
		}
		if (*p == ',') {
			p++;
			if (!*p) {
				return fail(reterr, text, p, "requirement expected after ','");
			}
		}
	}
	return 0;
}

static int parse(const char *text, bool fields, struct kinf_selector **ret,
		struct kinf_error *reterr) {
	struct kinf_selector *sel = calloc(1, sizeof(*sel));
	if (!sel) {
		return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	}
	sel->fields = fields;
	int rc = text && text[0] ? (fields ? parse_fields(text, sel, reterr) :
			parse_labels(text, sel, reterr)) : 0;
	if (rc < 0) {
		kinf_selector_free(sel);
		return rc;
	}
	*ret = sel;
	return 0;
}

int kinf_label_selector_parse(const char *text, struct kinf_selector **ret,
		struct kinf_error *reterr) {
	return parse(text, false, ret, reterr);
}

int kinf_field_selector_parse(const char *text, struct kinf_selector **ret,
		struct kinf_error *reterr) {
	return parse(text, true, ret, reterr);
}

/* 1, 0, or -KINF_ENOMEM when the field's values could not be read. */
static int field_matches(const struct requirement *r, const struct kinf_object *obj) {
	const char *want = r->values.v[0];
	bool eq;
	if (strcmp(r->key, "metadata.name") == 0) {
		eq = strcmp(kinf_object_name(obj), want) == 0;
	} else if (strcmp(r->key, "metadata.namespace") == 0) {
		eq = strcmp(kinf_object_namespace(obj), want) == 0;
	} else {
		struct kinf_strv vals = {0};
		int rc = kinf_object_field_values(obj, r->key, &vals, NULL);
		if (rc < 0) {
			/* Never "absent" for want of memory: that would be a wrong match. */
			kinf_strv_release(&vals);
			return rc;
		}
		/* An absent field compares as "" (the server's field sets). */
		eq = vals.n ? kinf_strv_contains(&vals, want) : want[0] == '\0';
		kinf_strv_release(&vals);
	}
	return r->op == OP_EQ ? eq : !eq;
}

static bool label_matches(const struct requirement *r, const struct kinf_object *obj) {
	const char *v = kinf_object_label(obj, r->key);
	switch (r->op) {
	case OP_EXISTS: return v != NULL;
	case OP_NOT_EXISTS: return v == NULL;
	case OP_EQ:
	case OP_IN: return v && kinf_strv_contains(&r->values, v);
	case OP_NE:
	case OP_NOTIN: return !v || !kinf_strv_contains(&r->values, v);
	case OP_GT:
	case OP_LT: {
		if (!v) {
			return false;
		}
		char *end;
		long long n = strtoll(v, &end, 10);
		if (!v[0] || *end) {
			return false;
		}
		return r->op == OP_GT ? n > r->number : n < r->number;
	}
	}
	return false;
}

int kinf_selector_match(const struct kinf_selector *sel, const struct kinf_object *obj) {
	if (!sel) {
		return 1;
	}
	for (size_t i = 0; i < sel->n; i++) {
		int m = sel->fields ? field_matches(&sel->v[i], obj) : label_matches(&sel->v[i], obj);
		if (m <= 0) {
			return m;
		}
	}
	return 1;
}
