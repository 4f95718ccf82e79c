#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gofloat.h"
#include "json.h"
#include "jsonlex.h"
#include "jsonnum.h"

bool kinf_jsonnum_valid(const char *s, size_t len) {
	const char *bad;
	return len > 0 && kinf_jsonlex_number_end(s, s + len, &bad) == s + len;
}

/* No '.' and no exponent: strconv.ParseInt's grammar, given a JSON number. */
static bool int_form(const char *s, size_t len) {
	return !memchr(s, '.', len) && !memchr(s, 'e', len) && !memchr(s, 'E', len);
}

/* An integer literal's int64, or false when it does not fit. */
static bool int64_of(const char *s, size_t len, long long *ret) {
	bool neg = s[0] == '-';
	unsigned long long limit = neg ? (unsigned long long)LLONG_MAX + 1 : LLONG_MAX;
	unsigned long long m = 0;
	for (size_t i = neg; i < len; i++) {
		unsigned d = (unsigned)(s[i] - '0');
		if (m > (limit - d) / 10) {
			return false;
		}
		m = m * 10 + d;
	}
	*ret = neg ? (long long)(0 - m) : (long long)m;
	return true;
}

int kinf_jsonnum_parse(const char *s, size_t len, struct kinf_jsonnum *ret) {
	char small[64];
	long long i;

	if (!kinf_jsonnum_valid(s, len)) {
		return -KINF_EINVAL;
	}
	if (int_form(s, len) && int64_of(s, len, &i)) {
		*ret = (struct kinf_jsonnum){ .type = KINF_JSONNUM_INT, .i = i, .f = (double)i };
		return 0;
	}
	char *text = len < sizeof(small) ? small : malloc(len + 1);
	if (!text) {
		return -KINF_ENOMEM;
	}
	memcpy(text, s, len);
	text[len] = '\0';
	errno = 0;
	double d = strtod(text, NULL);
	int rc = 0;
	/* Go's ParseFloat fails on overflow only; an underflow is 0 or a subnormal. */
	if (errno == ERANGE && isinf(d)) {
		rc = -KINF_ETOOBIG;
	} else {
		*ret = (struct kinf_jsonnum){ .type = KINF_JSONNUM_FLOAT, .f = d };
	}
	if (text != small) {
		free(text);
	}
	return rc;
}

/*
 * A literal taken apart: value = sign 0.D * 10^(exp + adj), where D are
 * the significant digits from the first non-zero one (in the integer and
 * fraction digits, the '.' skipped) and adj counts the integer digits
 * after the leading zeros (negative when the first non-zero digit is in
 * the fraction). exp is the exponent's digits, kept as text: it may have
 * any length.
 */
struct decimal {
	bool neg, zero;
	const char *digits;	/* from the first non-zero digit; may cross the '.' */
	const char *end;	/* the end of the mantissa */
	long long adj;
	bool exp_neg;
	const char *exp;	/* exponent digits, leading zeros skipped */
	size_t exp_len;
};

static void decompose(const char *s, size_t len, struct decimal *d) {
	const char *p = s, *end = s + len;
	long long int_digits = 0, lead = 0;
	bool in_frac = false;

	*d = (struct decimal){ .zero = true };
	if (*p == '-') {
		d->neg = true;
		p++;
	}
	for (; p < end && *p != 'e' && *p != 'E'; p++) {
		if (*p == '.') {
			in_frac = true;
			continue;
		}
		if (d->zero && *p != '0') {
			d->zero = false;
			d->digits = p;
		}
		lead += d->zero;
		int_digits += !in_frac;
	}
	d->end = p;
	d->adj = int_digits - lead;
	if (p < end) {
		p++;
		if (*p == '-' || *p == '+') {
			d->exp_neg = *p == '-';
			p++;
		}
		while (p + 1 < end && *p == '0') {
			p++;
		}
		d->exp = p;
		d->exp_len = (size_t)(end - p);
	}
}

/*
 * (exp_a - exp_b) for two exponents of any length, saturated at +-LIMIT:
 * once the running difference passes it, the digits left only make it
 * larger, so its sign is known.
 */
#define EXP_LIMIT (1LL << 50)

static long long exp_diff(const struct decimal *a, const struct decimal *b) {
	size_t n = a->exp_len > b->exp_len ? a->exp_len : b->exp_len;
	long long d = 0;
	for (size_t i = 0; i < n; i++) {
		int da = i + a->exp_len >= n ? a->exp[i + a->exp_len - n] - '0' : 0;
		int db = i + b->exp_len >= n ? b->exp[i + b->exp_len - n] - '0' : 0;
		d = d * 10 + (a->exp_neg ? -da : da) - (b->exp_neg ? -db : db);
		if (d > EXP_LIMIT || d < -EXP_LIMIT) {
			return d > 0 ? EXP_LIMIT : -EXP_LIMIT;
		}
	}
	return d;
}

/* The next significant digit at *p (skipping the '.'), '0' past the end. */
static char next_digit(const char **p, const char *end) {
	if (*p < end && **p == '.') {
		(*p)++;
	}
	return *p < end ? *(*p)++ : '0';
}

/* |a| against |b|, both non-zero. */
static int cmp_magnitude(const struct decimal *a, const struct decimal *b) {
	long long e = exp_diff(a, b) + (a->adj - b->adj);
	if (e != 0) {
		return e < 0 ? -1 : 1;
	}
	const char *p = a->digits, *q = b->digits;
	while (p < a->end || q < b->end) {
		char x = next_digit(&p, a->end), y = next_digit(&q, b->end);
		if (x != y) {
			return x < y ? -1 : 1;
		}
	}
	return 0;
}

int kinf_jsonnum_cmp(const char *a, size_t alen, const char *b, size_t blen) {
	struct decimal x, y;
	decompose(a, alen, &x);
	decompose(b, blen, &y);
	int sx = x.zero ? 0 : x.neg ? -1 : 1;
	int sy = y.zero ? 0 : y.neg ? -1 : 1;
	if (sx != sy) {
		return sx < sy ? -1 : 1;
	}
	if (sx == 0) {
		return 0;
	}
	return sx * cmp_magnitude(&x, &y);
}

/* An int64 against a float64 (not NaN), exactly. */
static int cmp_int_float(long long i, double d) {
	if (d >= 9223372036854775808.0) {
		return -1;
	}
	if (d < -9223372036854775808.0) {
		return 1;
	}
	long long t = (long long)d;	/* exact: |d| < 2^63, truncated */
	if (i != t) {
		return i < t ? -1 : 1;
	}
	double frac = d - (double)t;
	return frac > 0 ? -1 : frac < 0 ? 1 : 0;
}

int kinf_jsonnum_cmp_json(const json_t *a, const json_t *b) {
	if (json_is_integer(a) && json_is_integer(b)) {
		json_int_t x = json_integer_value(a), y = json_integer_value(b);
		return x < y ? -1 : x > y;
	}
	if (json_is_integer(a) && json_is_real(b)) {
		return cmp_int_float(json_integer_value(a), json_real_value(b));
	}
	if (json_is_real(a) && json_is_integer(b)) {
		return -cmp_int_float(json_integer_value(b), json_real_value(a));
	}
	double x = json_number_value(a), y = json_number_value(b);
	return x < y ? -1 : x > y;
}

char *kinf_jsonnum_format_value(const struct kinf_jsonnum *v,
		char buf[KINF_JSONNUM_SIZE]) {
	if (v->type == KINF_JSONNUM_INT) {
		snprintf(buf, KINF_JSONNUM_SIZE, "%lld", v->i);
		return buf;
	}
	char g[KINF_GOFLOAT_SIZE];
	snprintf(buf, KINF_JSONNUM_SIZE, "%s", kinf_gofloat_format(v->f, g));
	return buf;
}

void kinf_jsonnum_append_yaml(struct kinf_buf *out, const char *s, size_t len) {
	const char *e = s;
	while (e < s + len && *e != 'e' && *e != 'E') {
		e++;
	}
	if (e == s + len) {
		kinf_buf_put(out, s, len);
		return;
	}
	kinf_buf_put(out, s, (size_t)(e - s));
	if (!memchr(s, '.', (size_t)(e - s))) {
		kinf_buf_puts(out, ".0");
	}
	kinf_buf_putc(out, *e++);
	if (e < s + len && *e != '+' && *e != '-') {
		kinf_buf_putc(out, '+');
	}
	kinf_buf_put(out, e, (size_t)(s + len - e));
}

/*
 * The text again with ".0" after every integer literal past int64, so that
 * jansson reads it as a real: the same float64 Go reads for it. A number
 * beyond float64 fails, naming its field.
 */
struct rewrite {
	struct kinf_json_reader r;
	const char *copied;	/* input up to here is in out */
	struct kinf_buf out;
	struct kinf_buf path;
	struct kinf_error *err;
};

static int rewrite_value(struct rewrite *w);

static void path_truncate(struct kinf_buf *path, size_t len) {
	path->len = len;
	if (path->data) {
		path->data[len] = '\0';
	}
}

static int rewrite_number(struct rewrite *w) {
	const char *s;
	size_t len;
	struct kinf_jsonnum v;
	int rc = kinf_json_skip_span(&w->r, &s, &len);
	if (rc < 0) {
		return rc;
	}
	rc = kinf_jsonnum_parse(s, len, &v);
	if (rc == -KINF_ETOOBIG) {
		const char *path = w->path.len ? w->path.data : "";
		return kinf_error_set(w->err, KINF_ETOOBIG, "%s%s%snumber %.*s%s is beyond float64's range",
				path[0] ? "field " : "", path, path[0] ? ": " : "", len > 40 ? 40 : (int)len, s,
				len > 40 ? "..." : "");
	}
	if (rc < 0) {
		return kinf_error_set(w->err, -rc, "%s", kinf_strerror(rc));
	}
	if (v.type == KINF_JSONNUM_FLOAT && int_form(s, len)) {
		kinf_buf_put(&w->out, w->copied, (size_t)(s + len - w->copied));
		kinf_buf_puts(&w->out, ".0");
		w->copied = s + len;
	}
	return 0;
}

static int rewrite_value(struct rewrite *w) {
	struct kinf_json_span key;
	size_t saved = w->path.len;
	int rc;

	switch (kinf_json_peek(&w->r)) {
	case KINF_JSON_OBJECT:
		if ((rc = kinf_json_object_begin(&w->r)) < 0) {
			return rc;
		}
		while ((rc = kinf_json_member(&w->r, &key)) == 1) {
			struct kinf_buf name = {0};
			if (kinf_json_span_decode(&key, &name) < 0) {
				kinf_buf_release(&name);
				return kinf_error_set(w->err, KINF_ENOMEM, "out of memory");
			}
			kinf_json_path_append_key(&w->path, name.data ? name.data : "", name.len);
			kinf_buf_release(&name);
			rc = rewrite_value(w);
			path_truncate(&w->path, saved);
			if (rc < 0) {
				return rc;
			}
		}
		return rc;
	case KINF_JSON_ARRAY:
		if ((rc = kinf_json_array_begin(&w->r)) < 0) {
			return rc;
		}
		for (size_t i = 0; (rc = kinf_json_element(&w->r)) == 1; i++) {
			kinf_buf_putf(&w->path, "[%zu]", i);
			rc = rewrite_value(w);
			path_truncate(&w->path, saved);
			if (rc < 0) {
				return rc;
			}
		}
		return rc;
	case KINF_JSON_NUMBER:
		return rewrite_number(w);
	default:
		return kinf_json_skip(&w->r);
	}
}

/*
 * jansson drops a byte of a string when its buffer cannot grow (its lexer
 * ignores that failure) and still returns the document: a parse during
 * which one of its allocations failed is not trusted. Its allocator is
 * malloc, counting failures per thread (jansson allocates in the caller's).
 */
static _Thread_local unsigned long json_alloc_failures;

static void *json_alloc(size_t size) {
	void *p = malloc(size);
	if (!p) {
		json_alloc_failures++;
	}
	return p;
}

__attribute__((constructor)) static void json_alloc_init(void) {
	json_set_alloc_funcs(json_alloc, free);
}

/* KINF_ENOMEM or KINF_EJSON: see kinf_jsonnum_load_error(). */
static int load_error_code(const char *json, size_t len, size_t flags,
		const json_error_t *jerr) {
	enum json_error_code code = json_error_code(jerr);
	/* What jansson refuses in valid JSON by design is the text's fault. */
	bool by_design = code == json_error_invalid_utf8 || code == json_error_null_character ||
		code == json_error_null_byte_in_key || code == json_error_duplicate_key ||
		code == json_error_numeric_overflow || code == json_error_stack_overflow;
	size_t at = 0;
	while (at < len && (json[at] == ' ' || json[at] == '\t' || json[at] == '\n' ||
			json[at] == '\r')) {
		at++;
	}
	bool container = at < len && (json[at] == '{' || json[at] == '[');
	if (code == json_error_out_of_memory || (!by_design &&
			((flags & JSON_DECODE_ANY) || container) &&
			kinf_json_validate(json, len, 2048, NULL) == 0)) {
		return KINF_ENOMEM;
	}
	return KINF_EJSON;
}

static void load_error_fill(struct kinf_error *reterr, int code, const json_error_t *jerr) {
	if (code == KINF_ENOMEM) {
		kinf_error_fill(reterr, code, "out of memory");
	} else {
		kinf_error_fill(reterr, code, "line %d, column %d: %s", jerr->line, jerr->column,
				jerr->text);
	}
}

int kinf_jsonnum_load_error(const char *json, size_t len, size_t flags,
		const json_error_t *jerr, struct kinf_error *reterr) {
	int code = load_error_code(json, len, flags, jerr);
	load_error_fill(reterr, code, jerr);
	return -code;
}

json_t *kinf_jsonnum_load(const char *json, size_t len, size_t flags,
		struct kinf_error *reterr) {
	json_error_t jerr = {0};	/* (jansson leaves the code alone when an allocation fails) */
	unsigned long failures = json_alloc_failures;
	json_t *root = json_loadb(json, len, flags, &jerr);
	if (root && json_alloc_failures != failures) {
		json_decref(root);	/* maybe a string short of a byte */
		kinf_error_fill(reterr, KINF_ENOMEM, "out of memory");
		return NULL;
	}
	if (root || json_error_code(&jerr) != json_error_numeric_overflow) {
		if (!root) {
			load_error_fill(reterr, load_error_code(json, len, flags, &jerr), &jerr);
		}
		return root;
	}
	struct rewrite w = { .copied = json, .err = reterr };
	/* jansson's own limit (JSON_PARSER_MAX_DEPTH) already held. */
	kinf_json_reader_init(&w.r, json, len, 2048);
	kinf_buf_puts(&w.path, "");
	int rc = rewrite_value(&w);
	if (rc == -KINF_EJSON) {
		kinf_json_reader_error(&w.r, reterr);
	}
	kinf_buf_put(&w.out, w.copied, (size_t)(json + len - w.copied));
	if (rc == 0 && (kinf_buf_error(&w.out) || kinf_buf_error(&w.path))) {
		rc = kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	}
	if (rc == 0) {
		memset(&jerr, 0, sizeof(jerr));
		root = json_loadb(w.out.data, w.out.len, flags, &jerr);
		if (!root) {
			load_error_fill(reterr, load_error_code(w.out.data, w.out.len, flags, &jerr),
					&jerr);
		}
	}
	kinf_buf_release(&w.out);
	kinf_buf_release(&w.path);
	return root;
}
