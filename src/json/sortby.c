#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "jsonnum.h"
#include "jsonpath.h"
#include "sortby.h"

int kinf_sortby_check(const char *field, struct kinf_error *reterr) {
	json_t *empty = json_object();
	json_t *v = empty ? kinf_jsonpath_values(field, empty, reterr) : NULL;
	int rc = v ? 0 : empty ? -KINF_EINVAL : kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	json_decref(v);
	json_decref(empty);
	return rc;
}

json_t *kinf_sortby_key(const char *field, json_t *data) {
	json_t *values = kinf_jsonpath_values(field, data, NULL);
	json_t *first = json_incref(json_array_get(values, 0));
	json_decref(values);
	return first;
}

static bool is_digit(char c) {
	return c >= '0' && c <= '9';
}

/*
 * A Kubernetes quantity's amount, exactly: sign * digits * 10^exp10, the
 * digits without leading zeros ("" for zero).
 */
struct quantity {
	int sign;
	struct kinf_buf digits;
	long long exp10;
};

static int cmp_quantity(const struct quantity *a, const struct quantity *b);

/* digits *= 2 (a decimal string, most significant first). */
static void digits_double(struct kinf_buf *d) {
	int carry = 0;
	for (size_t i = d->len; i-- > 0; ) {
		int v = (d->data[i] - '0') * 2 + carry;
		d->data[i] = (char)('0' + v % 10);
		carry = v / 10;
	}
	if (carry) {
		kinf_buf_put(d, "0", 1);
		if (!kinf_buf_error(d)) {
			memmove(d->data + 1, d->data, d->len - 1);
			d->data[0] = (char)('0' + carry);
		}
	}
}

/* The suffix of a quantity: base 10 or 2 and its exponent; false if none. */
static bool quantity_suffix(const char *s, int *ret_base, long long *ret_exp) {
	static const struct { const char *s; int base, exp; } suffixes[] = {
		{ "", 10, 0 }, { "n", 10, -9 }, { "u", 10, -6 }, { "m", 10, -3 },
		{ "k", 10, 3 }, { "M", 10, 6 }, { "G", 10, 9 }, { "T", 10, 12 },
		{ "P", 10, 15 }, { "E", 10, 18 }, { "Ki", 2, 10 }, { "Mi", 2, 20 },
		{ "Gi", 2, 30 }, { "Ti", 2, 40 }, { "Pi", 2, 50 }, { "Ei", 2, 60 },
	};
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(*suffixes); i++) {
		if (strcmp(s, suffixes[i].s) == 0) {
			*ret_base = suffixes[i].base;
			*ret_exp = suffixes[i].exp;
			return true;
		}
	}
	if ((s[0] == 'e' || s[0] == 'E') && s[1]) {
		/* strconv.ParseInt(s[1:], 10, 64), then int32() as Go converts it */
		const char *p = s + 1 + (s[1] == '+' || s[1] == '-');
		if (!*p) {
			return false;
		}
		for (const char *q = p; *q; q++) {
			if (!is_digit(*q)) {
				return false;
			}
		}
		errno = 0;
		long long v = strtoll(s + 1, NULL, 10);
		if (errno) {
			return false;
		}
		*ret_base = 10;
		*ret_exp = (int32_t)(uint32_t)(unsigned long long)v;
		return true;
	}
	return false;
}

/*
 * resource.ParseQuantity: false when str is not a quantity; else its
 * amount, rounded up (away from zero) to 1e-9 and, for binary suffixes,
 * capped at 2^63-1 in magnitude, as the parser leaves it.
 */
static bool parse_quantity(const char *str, struct quantity *q) {
	const char *p = str, *end = str + strlen(str);
	*q = (struct quantity){ .sign = 1 };
	if (p == end) {
		return false;
	}
	if (*p == '-' || *p == '+') {
		q->sign = *p == '-' ? -1 : 1;
		p++;
	}
	while (p < end && *p == '0') {
		p++;
	}
	const char *num = p;
	while (p < end && is_digit(*p)) {
		p++;
	}
	size_t num_len = (size_t)(p - num);
	const char *denom = p;
	size_t denom_len = 0;
	if (p < end && *p == '.') {
		denom = ++p;
		while (p < end && is_digit(*p)) {
			p++;
		}
		denom_len = (size_t)(p - denom);
	}
	const char *suffix = p;
	while (p < end && strchr("eEinumkKMGTP", *p)) {
		p++;
	}
	if (p < end && (*p == '-' || *p == '+')) {
		p++;
	}
	while (p < end && is_digit(*p)) {
		p++;
	}
	int base;
	long long exp;
	if (p < end || !quantity_suffix(suffix, &base, &exp)) {
		return false;
	}
	/* digits = num denom, leading zeros dropped; exp10 = -len(denom) */
	kinf_buf_put(&q->digits, num, num_len);
	kinf_buf_put(&q->digits, denom, denom_len);
	kinf_buf_put(&q->digits, "", 0);	/* allocated, even when empty */
	size_t lead = 0;
	while (lead < q->digits.len && q->digits.data[lead] == '0') {
		lead++;
	}
	if (kinf_buf_error(&q->digits)) {
		kinf_buf_release(&q->digits);
		return false;
	}
	memmove(q->digits.data, q->digits.data + lead, q->digits.len - lead);
	q->digits.len -= lead;
	q->exp10 = -(long long)denom_len;
	if (base == 10) {
		q->exp10 += exp;
	} else {
		for (long long i = 0; i < exp; i++) {
			digits_double(&q->digits);
		}
	}
	/* Rounded up to nano (inf.RoundUp: away from zero). */
	if (q->exp10 < -9 && q->digits.len) {
		long long cut = -9 - q->exp10;
		bool dropped = false;
		size_t keep = cut >= (long long)q->digits.len ? 0 : q->digits.len - (size_t)cut;
		for (size_t i = keep; i < q->digits.len; i++) {
			dropped |= q->digits.data[i] != '0';
		}
		q->digits.len = keep;
		q->exp10 = -9;
		if (dropped) {
			/* + 1 at the last kept digit */
			size_t i = q->digits.len;
			while (i > 0 && q->digits.data[i - 1] == '9') {
				q->digits.data[--i] = '0';
			}
			if (i > 0) {
				q->digits.data[i - 1]++;
			} else {
				kinf_buf_put(&q->digits, "0", 1);
				if (!kinf_buf_error(&q->digits)) {
					memmove(q->digits.data + 1, q->digits.data, q->digits.len - 1);
					q->digits.data[0] = '1';
				}
			}
		}
	}
	if (kinf_buf_error(&q->digits)) {
		kinf_buf_release(&q->digits);
		return false;
	}
	/* Trailing zeros into the exponent: one form per amount. */
	while (q->digits.len && q->digits.data[q->digits.len - 1] == '0') {
		q->digits.len--;
		q->exp10++;
	}
	if (q->digits.len == 0) {
		q->sign = 0;
	}
	if (base == 2 && q->sign) {
		/* At most math.MaxInt64 in magnitude (the parser's maxAllowed). */
		static const char max[] = "9223372036854775807";
		struct quantity cap = { .sign = q->sign, .exp10 = 0,
			.digits = { .data = (char *)max, .len = sizeof(max) - 1 } };
		if (cmp_quantity(q, &cap) * q->sign > 0) {
			kinf_buf_reset(&q->digits);
			kinf_buf_puts(&q->digits, max);
			q->exp10 = 0;
			if (kinf_buf_error(&q->digits)) {
				kinf_buf_release(&q->digits);
				return false;
			}
		}
	}
	return true;
}

static int cmp_quantity(const struct quantity *a, const struct quantity *b) {
	if (a->sign != b->sign) {
		return a->sign < b->sign ? -1 : 1;
	}
	if (a->sign == 0) {
		return 0;
	}
	/* The magnitudes: the place of the first digit, then the digits. */
	long long ta = (long long)a->digits.len + a->exp10, tb = (long long)b->digits.len + b->exp10;
	int c = ta < tb ? -1 : ta > tb ? 1 : 0;
	for (size_t i = 0; c == 0 && (i < a->digits.len || i < b->digits.len); i++) {
		char da = i < a->digits.len ? a->digits.data[i] : '0';
		char db = i < b->digits.len ? b->digits.data[i] : '0';
		c = da < db ? -1 : da > db ? 1 : 0;
	}
	return a->sign * c;
}

int kinf_sortby_compare_strings(const char *a, const char *b) {
	struct quantity qa, qb;
	if (parse_quantity(a, &qa)) {
		if (parse_quantity(b, &qb)) {
			int c = cmp_quantity(&qa, &qb);
			kinf_buf_release(&qa.digits);
			kinf_buf_release(&qb.digits);
			return c;
		}
		kinf_buf_release(&qa.digits);
	}
	/* byte-wise, as Go compares strings */
	int c = strcmp(a, b);
	return c < 0 ? -1 : c > 0;
}

int kinf_sortby_compare_numbers(json_t *a, json_t *b) {
	return kinf_jsonnum_cmp_json(a, b);	/* the one home of number order */
}

static const char *type_name(json_t *v) {
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "a map";
	case JSON_ARRAY: return "a list";
	case JSON_STRING: return "a string";
	case JSON_INTEGER:
	case JSON_REAL: return "a number";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean";
	default: return "null";
	}
}

/* The order of two keys; -2 (with reterr) when they cannot be compared. */
static int cmp_keys(json_t *a, json_t *b, const char *field, struct kinf_error *reterr) {
	if (!a || !b) {
		return !a && !b ? 0 : !a ? -1 : 1;	/* missing first */
	}
	if (json_is_null(a) || json_is_null(b)) {
		return json_is_null(a) && json_is_null(b) ? 0 : json_is_null(a) ? -1 : 1;
	}
	if (json_is_string(a) && json_is_string(b)) {
		return kinf_sortby_compare_strings(json_string_value(a), json_string_value(b));
	}
	if (json_is_number(a) && json_is_number(b)) {
		return kinf_sortby_compare_numbers(a, b);
	}
	kinf_error_fill(reterr, KINF_EINVAL, "%s is not sortable: it holds %s and %s",
			field, type_name(a), json_is_boolean(a) && json_is_boolean(b) ?
			"a boolean (kubectl does not sort those either)" : type_name(b));
	return -2;
}

int kinf_sortby_sort(const char *field, struct kinf_sortby_item *items, size_t n,
		struct kinf_error *reterr) {
	bool found = false;
	for (size_t i = 0; i < n; i++) {
		found |= items[i].key != NULL;
	}
	if (n > 0 && !found) {
		/* kubectl's words, with the relaxed form of the path */
		size_t len = strlen(field);
		const char *in = field;
		if (len >= 2 && field[0] == '{' && field[len - 1] == '}') {
			in++;
			len -= 2;
		}
		if (len > 1 && in[0] == '.') {
			in++;
			len--;
		}
		return kinf_error_set(reterr, KINF_EINVAL, "couldn't find any field with path "
				"\"{.%.*s}\" in the list of objects", (int)len, in);
	}
	/*
	 * A merge sort, stable, between two copies: it stops at the first pair
	 * that cannot be compared, items untouched.
	 */
	struct kinf_sortby_item *buf = n > 1 ? malloc(2 * n * sizeof(*buf)) : NULL;
	if (n > 1 && !buf) {
		return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	}
	int rc = 0;
	struct kinf_sortby_item *src = buf, *dst = buf ? buf + n : NULL;
	if (buf) {
		memcpy(src, items, n * sizeof(*items));
	}
	for (size_t width = 1; rc == 0 && width < n; width *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * width) {
			size_t mid = lo + width < n ? lo + width : n;
			size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
			size_t i = lo, j = mid, k = lo;
			while (i < mid && j < hi) {
				int c = cmp_keys(src[j].key, src[i].key, field, reterr);
				if (c == -2) {
					rc = -KINF_EINVAL;
					break;
				}
				dst[k++] = c < 0 ? src[j++] : src[i++];
			}
			if (rc < 0) {
				break;
			}
			while (i < mid) {
				dst[k++] = src[i++];
			}
			while (j < hi) {
				dst[k++] = src[j++];
			}
		}
		struct kinf_sortby_item *t = src;
		src = dst;
		dst = t;
	}
	if (rc == 0 && buf) {
		memcpy(items, src, n * sizeof(*items));
	}
	free(buf);
	return rc;
}
