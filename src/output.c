#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <yaml.h>

#include "jsonpath.h"
#include "output.h"
#include "rfc3339.h"
#include "table.h"
#include "termsafe.h"

int kinf_output_parse_format(const char *s, enum kinf_output_format *ret,
		const char **ret_arg) {
	if (ret_arg) {
		*ret_arg = NULL;
	}
	if (strncmp(s, "jsonpath=", 9) == 0 || strncmp(s, "custom-columns=", 15) == 0) {
		bool jp = s[0] == 'j';
		*ret = jp ? KINF_OUTPUT_JSONPATH : KINF_OUTPUT_CUSTOM_COLUMNS;
		if (ret_arg) {
			*ret_arg = s + (jp ? 9 : 15);
		}
		return 0;
	}
	static const struct { const char *name; enum kinf_output_format f; } formats[] = {
		{ "", KINF_OUTPUT_TABLE }, { "table", KINF_OUTPUT_TABLE },
		{ "wide", KINF_OUTPUT_WIDE }, { "json", KINF_OUTPUT_JSON },
		{ "yaml", KINF_OUTPUT_YAML }, { "name", KINF_OUTPUT_NAME },
	};
	for (size_t i = 0; i < sizeof(formats) / sizeof(*formats); i++) {
		if (strcmp(s, formats[i].name) == 0) {
			*ret = formats[i].f;
			return 0;
		}
	}
	return -KINF_EINVAL;
}

/* YAML ----------------------------------------------------------------- */

static int write_handler(void *data, unsigned char *buffer, size_t size) {
	return fwrite(buffer, 1, size, (FILE *)data) == size;
}

static bool is_digit(char c) {
	return c >= '0' && c <= '9';
}

/* How many of s[0..len) are in set, from the start. */
static size_t span_of(const char *s, size_t len, const char *set) {
	size_t i = 0;
	while (i < len && s[i] && strchr(set, s[i])) {
		i++;
	}
	return i;
}

/* 1 or 2 digits at *i (advanced); false when none. */
static bool digits12(const char *s, size_t len, size_t *i) {
	if (*i >= len || !is_digit(s[*i])) {
		return false;
	}
	(*i)++;
	if (*i < len && is_digit(s[*i])) {
		(*i)++;
	}
	return true;
}

/*
 * A YAML 1.1 timestamp (PyYAML's pattern, also every form go-yaml v2
 * accepts): YYYY-M-D, optionally followed by T, t or blanks and
 * H:MM:SS[.frac][blanks][Z|+-H[:MM]].
 */
static bool is_timestamp(const char *s, size_t len) {
	size_t i = 0;
	if (len < 8 || span_of(s, len, "0123456789") != 4 || s[4] != '-') {
		return false;
	}
	i = 5;
	if (!digits12(s, len, &i) || i >= len || s[i++] != '-' || !digits12(s, len, &i)) {
		return false;
	}
	if (i == len) {
		return true;
	}
	if (s[i] == 'T' || s[i] == 't') {
		i++;
	} else if (s[i] == ' ' || s[i] == '\t') {
		i += span_of(s + i, len - i, " \t");
	} else {
		return false;
	}
	if (!digits12(s, len, &i) || i >= len || s[i++] != ':' || !digits12(s, len, &i) ||
			i >= len || s[i++] != ':' || !digits12(s, len, &i)) {
		return false;
	}
	if (i < len && s[i] == '.') {
		i++;
		i += span_of(s + i, len - i, "0123456789");
	}
	i += span_of(s + i, len - i, " \t");
	if (i == len) {
		return true;
	}
	if (s[i] == 'Z') {
		return i + 1 == len;
	}
	if (s[i] != '+' && s[i] != '-') {
		return false;
	}
	i++;
	if (!digits12(s, len, &i)) {
		return false;
	}
	if (i < len && s[i] == ':') {
		i++;
		if (i + 2 != len || !is_digit(s[i]) || !is_digit(s[i + 1])) {
			return false;
		}
		return true;
	}
	return i == len;
}

/*
 * A number to some YAML reader: the union of YAML 1.1's int and float
 * (PyYAML: 0b, 0 octal, 0x, sexagesimal, '_' separators, a float needing
 * only a '.'), YAML 1.2's core schema (0o, 0x, 1e3) and go-yaml v2's (Go's
 * 0X/0O/0B prefixes, every '_' dropped).
 */
static bool is_number(const char *s, size_t len) {
	size_t i = 0, n;
	if (len && (s[0] == '+' || s[0] == '-')) {
		i++;
	}
	if (i == len) {
		return false;
	}
	if (len - i > 2 && s[i] == '0' && strchr("xXoObB", s[i + 1]) && s[i + 1]) {
		const char *set = s[i + 1] == 'x' || s[i + 1] == 'X' ? "0123456789abcdefABCDEF_" :
			s[i + 1] == 'o' || s[i + 1] == 'O' ? "01234567_" : "01_";
		return span_of(s + i + 2, len - i - 2, set) == len - i - 2;
	}
	if (!is_digit(s[i]) && s[i] != '.') {
		return false;
	}
	/* Sexagesimal: [0-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)? */
	n = span_of(s + i, len - i, "0123456789_");
	if (is_digit(s[i]) && i + n < len && s[i + n] == ':') {
		i += n;
		while (i < len && s[i] == ':') {
			i++;
			if (i + 1 < len && s[i] >= '0' && s[i] <= '5' && is_digit(s[i + 1])) {
				i += 2;
			} else if (i < len && is_digit(s[i])) {
				i++;
			} else {
				return false;
			}
		}
		if (i < len && s[i] == '.') {
			i++;
			i += span_of(s + i, len - i, "0123456789_");
		}
		return i == len;
	}
	/* [0-9_]*(\.[0-9_]*)?([eE][-+]?[0-9]+)? with a digit or '_' somewhere */
	size_t body = n;
	i += n;
	if (i < len && s[i] == '.') {
		i++;
		n = span_of(s + i, len - i, "0123456789_");
		body += n;
		i += n;
	}
	if (!body) {
		return false;
	}
	if (i < len && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < len && (s[i] == '+' || s[i] == '-')) {
			i++;
		}
		n = span_of(s + i, len - i, "0123456789");
		if (!n) {
			return false;
		}
		i += n;
	}
	return i == len;
}

/*
 * Whether a plain scalar s would be read as something other than this
 * string by a YAML 1.1 reader (PyYAML, go-yaml v2 as kubectl uses it) or a
 * YAML 1.2 one: null, booleans, numbers, timestamps, the merge key.
 */
static bool plain_is_not_string(const char *s, size_t len) {
	static const char *const words[] = {
		"", "~", "null", "Null", "NULL", "true", "True", "TRUE", "false",
		"False", "FALSE", "yes", "Yes", "YES", "no", "No", "NO", "on", "On",
		"ON", "off", "Off", "OFF", "y", "Y", "n", "N", ".inf", ".Inf",
		".INF", "-.inf", "-.Inf", "-.INF", "+.inf", "+.Inf", "+.INF", ".nan",
		".NaN", ".NAN", "<<", "=",
	};
	if (len > 6) {
		return is_number(s, len) || is_timestamp(s, len);
	}
	for (size_t i = 0; i < sizeof(words) / sizeof(*words); i++) {
		if (strlen(words[i]) == len && memcmp(s, words[i], len) == 0) {
			return true;
		}
	}
	return is_number(s, len);
}

static int emit(yaml_emitter_t *em, yaml_event_t *ev) {
	return yaml_emitter_emit(em, ev) ? 0 : -KINF_EIO;
}

/*
 * A string as go-yaml v2 (kubectl) writes it: a literal block ("|", "|-",
 * "|+") when it has a line break, double-quoted when plain it would read
 * as something else, plain otherwise. libyaml then falls back as go-yaml's
 * port of it does: single quotes where plain is not allowed (indicators,
 * leading or trailing spaces, ": ", " #"), double quotes where neither a
 * block nor single quotes can hold the text (a key, special characters).
 */
static int string_scalar(yaml_emitter_t *em, const char *s, size_t len) {
	yaml_event_t ev;
	yaml_scalar_style_t style = YAML_ANY_SCALAR_STYLE;
	if (memchr(s, '\n', len)) {
		style = YAML_LITERAL_SCALAR_STYLE;
	} else if (plain_is_not_string(s, len)) {
		style = YAML_DOUBLE_QUOTED_SCALAR_STYLE;
	}
	if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)len,
			1, 1, style)) {
		return -KINF_ENOMEM;
	}
	return emit(em, &ev);
}

/* A number, boolean or null: always plain. */
static int plain_scalar(yaml_emitter_t *em, const char *s) {
	yaml_event_t ev;
	if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s,
			(int)strlen(s), 1, 1, YAML_PLAIN_SCALAR_STYLE)) {
		return -KINF_ENOMEM;
	}
	return emit(em, &ev);
}

/*
 * A float as kubectl writes it: a whole number in int64's range as an
 * integer (encoding/json writes it so and go-yaml reads an int), else as
 * Go's strconv.FormatFloat(f, 'g', -1, 64) (the
 * shortest digits that read back the same; an exponent below 1e-4 and from
 * 1e6 on), with ".0" before a bare exponent so that YAML 1.1 readers, whose
 * floats need a '.', read a float too.
 */
static void format_float(double d, char *buf, size_t size) {
	char e[40];
	int prec;

	/* kubectl writes JSON first: a whole number then reads back as an int. */
	if (d == (double)(long long)d && d >= -9.2e18 && d <= 9.2e18) {
		snprintf(buf, size, "%lld", (long long)d);
		return;
	}
	for (prec = 1; prec < 17; prec++) {
		snprintf(e, sizeof(e), "%.*e", prec - 1, d);
		if (strtod(e, NULL) == d) {
			break;
		}
	}
	snprintf(e, sizeof(e), "%.*e", prec - 1, d);
	int exp = atoi(strchr(e, 'e') + 1);
	if (exp < -4 || exp >= 6) {
		char *x = strchr(e, 'e');
		if (!memchr(e, '.', (size_t)(x - e))) {
			snprintf(buf, size, "%.*s.0%s", (int)(x - e), e, x);
		} else {
			snprintf(buf, size, "%s", e);
		}
		return;
	}
	int decimals = prec - 1 - exp;
	snprintf(buf, size, "%.*f", decimals > 0 ? decimals : 0, d);
}

/* The code point at s (UTF-8, already validated by jansson); *n its length. */
static unsigned long rune_at(const unsigned char *s, size_t *n) {
	if (s[0] < 0x80) {
		*n = 1;
		return s[0];
	}
	if (s[0] < 0xe0) {
		*n = 2;
		return (s[0] & 0x1fUL) << 6 | (s[1] & 0x3f);
	}
	if (s[0] < 0xf0) {
		*n = 3;
		return (s[0] & 0x0fUL) << 12 | (s[1] & 0x3fUL) << 6 | (s[2] & 0x3f);
	}
	*n = 4;
	return (s[0] & 0x07UL) << 18 | (s[1] & 0x3fUL) << 12 | (s[2] & 0x3fUL) << 6 |
		(s[3] & 0x3f);
}

/*
 * Go's unicode.IsLetter: exact for ASCII and Latin-1, and beyond that
 * every code point except the usual blocks of marks, punctuation,
 * symbols, emoji and private use.
 */
static bool rune_is_letter(unsigned long r) {
	if (r < 0x80) {
		return (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z');
	}
	if (r < 0xc0) {
		return r == 0xaa || r == 0xb5 || r == 0xba;
	}
	if (r < 0x300) {
		return r != 0xd7 && r != 0xf7 && !(r >= 0x2c2 && r <= 0x2c5) &&
			!(r >= 0x2d2 && r <= 0x2df) && !(r >= 0x2e5 && r <= 0x2eb) &&
			r != 0x2ed && !(r >= 0x2ef && r <= 0x2ff);
	}
	return !(r <= 0x36f || (r >= 0x2000 && r <= 0x2bff) ||
		(r >= 0x3000 && r <= 0x3004) || (r >= 0x3007 && r <= 0x303f) ||
		(r >= 0xd800 && r <= 0xf8ff) || (r >= 0xfe00 && r <= 0xfe6f) ||
		r == 0xfeff || (r >= 0xff00 && r <= 0xff20) ||
		(r >= 0xff3b && r <= 0xff40) || (r >= 0xff5b && r <= 0xff65) ||
		(r >= 0xfff0 && r <= 0xffff) || (r >= 0x1f000 && r <= 0x1faff) ||
		r >= 0xe0000);
}

/*
 * Map keys in go-yaml v2's order (kubectl's, sorter.go keyList.Less): rune
 * by rune; between two letters the lower code point first, a non-letter
 * before a letter, and otherwise runs of digits compared as numbers ("v9"
 * before "v10"), as Go's int64 does (wrapping past 2^63).
 */
static int cmp_keys(const void *pa, const void *pb) {
	const unsigned char *a = *(const unsigned char *const *)pa;
	const unsigned char *b = *(const unsigned char *const *)pb;
	size_t i = 0, j = 0;
	while (a[i] && b[j]) {
		size_t na, nb;
		unsigned long ra = rune_at(a + i, &na), rb = rune_at(b + j, &nb);
		if (ra == rb) {
			i += na;
			j += nb;
			continue;
		}
		bool al = rune_is_letter(ra), bl = rune_is_letter(rb);
		if (al && bl) {
			return ra < rb ? -1 : 1;
		}
		if (al || bl) {
			return bl ? -1 : 1;
		}
		/* Same prefix so far: i == j here. */
		uint64_t an = 0, bn = 0;
		size_t ai, bi;
		if (ra == '0' || rb == '0') {
			for (size_t k = i; k-- > 0 && is_digit((char)a[k]);) {
				if (a[k] != '0') {
					an = bn = 1;
					break;
				}
			}
		}
		for (ai = i; is_digit((char)a[ai]); ai++) {
			an = an * 10 + (uint64_t)(a[ai] - '0');
		}
		for (bi = j; is_digit((char)b[bi]); bi++) {
			bn = bn * 10 + (uint64_t)(b[bi] - '0');
		}
		if (an != bn) {
			return (int64_t)an < (int64_t)bn ? -1 : 1;
		}
		if (ai - i != bi - j) {
			return ai - i < bi - j ? -1 : 1;
		}
		return ra < rb ? -1 : 1;
	}
	return a[i] ? 1 : b[j] ? -1 : 0;
}

static int emit_value(yaml_emitter_t *em, json_t *v) {
	yaml_event_t ev;
	char num[64];
	int rc;

	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		size_t n = json_object_size(v), i = 0;
		const char **keys = malloc((n ? n : 1) * sizeof(*keys));
		const char *k;
		json_t *child;
		if (!keys) {
			return -KINF_ENOMEM;
		}
		json_object_foreach(v, k, child) {
			keys[i++] = k;
		}
		qsort(keys, n, sizeof(*keys), cmp_keys);
		yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
				n ? YAML_BLOCK_MAPPING_STYLE : YAML_FLOW_MAPPING_STYLE);
		rc = emit(em, &ev);
		for (i = 0; rc == 0 && i < n; i++) {
			rc = string_scalar(em, keys[i], strlen(keys[i]));
			if (rc == 0) {
				rc = emit_value(em, json_object_get(v, keys[i]));
			}
		}
		free(keys);
		if (rc == 0) {
			yaml_mapping_end_event_initialize(&ev);
			rc = emit(em, &ev);
		}
		return rc;
	}
	case JSON_ARRAY: {
		size_t i;
		json_t *child;
		yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
				json_array_size(v) ? YAML_BLOCK_SEQUENCE_STYLE : YAML_FLOW_SEQUENCE_STYLE);
		rc = emit(em, &ev);
		json_array_foreach(v, i, child) {
			if (rc == 0) {
				rc = emit_value(em, child);
			}
		}
		if (rc == 0) {
			yaml_sequence_end_event_initialize(&ev);
			rc = emit(em, &ev);
		}
		return rc;
	}
	case JSON_STRING:
		return string_scalar(em, json_string_value(v), json_string_length(v));
	case JSON_INTEGER:
		snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return plain_scalar(em, num);
	case JSON_REAL:
		format_float(json_real_value(v), num, sizeof(num));
		return plain_scalar(em, num);
	case JSON_TRUE:
		return plain_scalar(em, "true");
	case JSON_FALSE:
		return plain_scalar(em, "false");
	case JSON_NULL:
		return plain_scalar(em, "null");
	}
	return -KINF_EINVAL;
}

int kinf_output_yaml(FILE *out, const char *json, size_t len,
		struct kinf_error *reterr) {
	yaml_emitter_t em;
	yaml_event_t ev;
	json_error_t jerr;
	const size_t flags = JSON_REJECT_DUPLICATES | JSON_DECODE_ANY | JSON_ALLOW_NUL;
	json_t *root = json_loadb(json, len, flags, &jerr);
	int rc;

	if (!root && json_error_code(&jerr) == json_error_numeric_overflow) {
		/*
		 * An integer past int64 (a custom resource may hold one): every
		 * number as a double then, as go-yaml reads one past uint64;
		 * format_float() writes whole ones as integers again, exact up
		 * to 2^53. Better than no YAML at all.
		 */
		root = json_loadb(json, len, flags | JSON_DECODE_INT_AS_REAL, &jerr);
	}
	if (!root) {
		return kinf_error_set(reterr, KINF_EJSON, "line %d: %s", jerr.line, jerr.text);
	}
	if (!yaml_emitter_initialize(&em)) {
		json_decref(root);
		return -KINF_ENOMEM;
	}
	yaml_emitter_set_output(&em, write_handler, out);
	yaml_emitter_set_unicode(&em, 1);
	yaml_emitter_set_width(&em, 80);
	yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
	rc = emit(&em, &ev);
	if (rc == 0) {
		yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1);
		rc = emit(&em, &ev);
	}
	if (rc == 0) {
		rc = emit_value(&em, root);
	}
	if (rc == 0) {
		yaml_document_end_event_initialize(&ev, 1);
		rc = emit(&em, &ev);
	}
	/*
	 * No stream end: after a "|+" block libyaml would end the stream with
	 * "...", which go-yaml (kubectl) does not write; the document is
	 * complete without it, and "---" separates the next one.
	 */
	if (rc == 0 && !yaml_emitter_flush(&em)) {
		rc = -KINF_EIO;
	}
	if (rc < 0) {
		kinf_error_set(reterr, -rc, "writing YAML: %s",
				em.problem ? em.problem : kinf_strerror(rc));
	}
	yaml_emitter_delete(&em);
	json_decref(root);
	return rc;
}

/* Tables --------------------------------------------------------------- */

#define TAB_MINWIDTH 6
#define TAB_PADDING 3

struct kinf_table {
	size_t n_columns;
	size_t *widths;
	struct kinf_strv cells;		/* row-major, escaped (termsafe.h) */
	size_t color_column;		/* of the next row, with color */
	const char *color;
};

struct kinf_table *kinf_table_new(size_t n_columns) {
	struct kinf_table *t = calloc(1, sizeof(*t));
	if (!t) {
		return NULL;
	}
	t->n_columns = n_columns;
	t->widths = calloc(n_columns ? n_columns : 1, sizeof(*t->widths));
	if (!t->widths) {
		free(t);
		return NULL;
	}
	return t;
}

void kinf_table_free(struct kinf_table *t) {
	if (t) {
		kinf_strv_release(&t->cells);
		free(t->widths);
		free(t);
	}
}

/* Display width: UTF-8 code points, not bytes; ANSI colour codes are free. */
static size_t display_width(const char *s) {
	size_t n = 0;
	for (; *s; s++) {
		if (*s == '\033' && s[1] == '[') {
			s += 2;
			while (*s && !((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z'))) {
				s++;
			}
			if (!*s) {
				break;
			}
			continue;
		}
		n += ((unsigned char)*s & 0xc0) != 0x80;
	}
	return n;
}

static void widen(struct kinf_table *t, const char *const *cells) {
	for (size_t i = 0; i < t->n_columns; i++) {
		size_t w = display_width(cells[i] ? cells[i] : "<none>") + TAB_PADDING;
		if (w < TAB_MINWIDTH) {
			w = TAB_MINWIDTH;
		}
		if (w > t->widths[i]) {
			t->widths[i] = w;
		}
	}
}

/*
 * The cells as they are printed, appended to ret: escaped for the
 * terminal (a name holding ESC or a newline must not draw or add a line),
 * then the color asked for with kinf_table_color_next() around its cell.
 */
static int escape_row(struct kinf_table *t, const char *const *cells,
		struct kinf_strv *ret) {
	const char *color = t->color;
	t->color = NULL;
	for (size_t i = 0; i < t->n_columns; i++) {
		const char *c = cells[i] ? cells[i] : "<none>";
		size_t len = strlen(c);
		int rc;
		if (color && i == t->color_column) {
			struct kinf_buf b = {0};
			rc = kinf_buf_append_str(&b, color) < 0 ||
				kinf_termsafe_append(&b, c, len) < 0 ||
				kinf_buf_append_str(&b, "\033[0m") < 0 ? -KINF_ENOMEM :
				kinf_strv_push_take(ret, kinf_buf_take(&b));
			kinf_buf_release(&b);
		} else if (kinf_termsafe_needed(c, len)) {
			struct kinf_buf b = {0};
			rc = kinf_termsafe_append(&b, c, len) < 0 ? -KINF_ENOMEM :
				kinf_strv_push_take(ret, kinf_buf_take(&b));
			kinf_buf_release(&b);
		} else {
			rc = kinf_strv_push(ret, c, len);
		}
		if (rc < 0) {
			return rc;
		}
	}
	return 0;
}

void kinf_table_color_next(struct kinf_table *t, size_t column, const char *sgr) {
	t->color_column = column;
	t->color = sgr;
}

int kinf_table_add_row(struct kinf_table *t, const char *const *cells) {
	size_t first = t->cells.n;
	int rc = escape_row(t, cells, &t->cells);
	if (rc < 0) {
		return rc;
	}
	widen(t, (const char *const *)t->cells.v + first);
	return 0;
}

static int print_cells(const struct kinf_table *t, const char *const *cells, FILE *out) {
	for (size_t i = 0; i < t->n_columns; i++) {
		const char *c = cells[i] ? cells[i] : "<none>";
		fputs(c, out);
		if (i + 1 < t->n_columns) {
			for (size_t w = display_width(c); w < t->widths[i]; w++) {
				fputc(' ', out);
			}
		}
	}
	fputc('\n', out);
	return ferror(out) ? -KINF_EIO : 0;
}

int kinf_table_print(struct kinf_table *t, FILE *out) {
	size_t rows = t->n_columns ? t->cells.n / t->n_columns : 0;
	for (size_t r = 0; r < rows; r++) {
		int rc = print_cells(t, (const char *const *)t->cells.v + r * t->n_columns, out);
		if (rc < 0) {
			return rc;
		}
	}
	return 0;
}

int kinf_table_flush(struct kinf_table *t, FILE *out) {
	int rc = kinf_table_print(t, out);
	kinf_strv_reset(&t->cells);
	return rc;
}

void kinf_table_widen(struct kinf_table *t, const char *const *cells) {
	struct kinf_strv esc = {0};
	const char *color = t->color;
	t->color = NULL;
	if (escape_row(t, cells, &esc) == 0) {
		widen(t, (const char *const *)esc.v);
	}
	t->color = color;
	kinf_strv_release(&esc);
}

int kinf_table_print_row(struct kinf_table *t, const char *const *cells, FILE *out) {
	struct kinf_strv esc = {0};
	int rc = escape_row(t, cells, &esc);
	if (rc == 0) {
		widen(t, (const char *const *)esc.v);
		rc = print_cells(t, (const char *const *)esc.v, out);
	}
	kinf_strv_release(&esc);
	return rc;
}

static char *upper(const char *s) {
	char *u = strdup(s);
	for (char *p = u; p && *p; p++) {
		if (*p >= 'a' && *p <= 'z') {
			*p = (char)(*p - 'a' + 'A');
		}
	}
	return u;
}

/* A cell as kubectl prints it: fmt's %v of the decoded JSON value. */
static char *cell_text(json_t *v) {
	char num[64];
	switch (json_typeof(v)) {
	case JSON_STRING:
		return strdup(json_string_value(v));
	case JSON_INTEGER:
		snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return strdup(num);
	case JSON_REAL:
		snprintf(num, sizeof(num), "%g", json_real_value(v));
		return strdup(num);
	case JSON_TRUE:
		return strdup("true");
	case JSON_FALSE:
		return strdup("false");
	case JSON_NULL:
		return strdup("<none>");
	default:
		return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	}
}

/* A row's "cells" as a jansson array, or NULL. The pager keeps rows as just their cells. */
static json_t *row_cells(const struct kinf_table_row *row) {
	json_t *whole = json_loadb(row->json, row->len, 0, NULL);
	json_t *cells = json_incref(json_object_get(whole, "cells"));
	json_decref(whole);
	return cells;
}

int kinf_output_server_table(FILE *out, const char *columns_json,
		const struct kinf_table_row *rows, size_t n_rows, bool wide,
		bool with_namespace, bool no_headers, struct kinf_error *reterr) {
	return kinf_output_server_table_kind(out, columns_json, rows, n_rows, wide,
			with_namespace, no_headers, NULL, NULL, reterr);
}

int kinf_output_server_table_kind(FILE *out, const char *columns_json,
		const struct kinf_table_row *rows, size_t n_rows, bool wide,
		bool with_namespace, bool no_headers, const char *name_prefix,
		const char *const *contexts, struct kinf_error *reterr) {
	json_error_t jerr;
	json_t *cols = json_loads(columns_json ? columns_json : "[]", 0, &jerr);
	struct kinf_table *t = NULL;
	struct kinf_strv cells = {0};
	size_t *shown = NULL, n_shown = 0;
	int rc = 0;

	if (!json_is_array(cols)) {
		rc = kinf_error_set(reterr, KINF_EJSON, "table columns: %s", jerr.text);
		goto out;
	}
	shown = calloc(json_array_size(cols) + 1, sizeof(*shown));
	if (!shown) {
		rc = -KINF_ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < json_array_size(cols); i++) {
		json_t *c = json_array_get(cols, i);
		if (wide || json_integer_value(json_object_get(c, "priority")) == 0) {
			shown[n_shown++] = i;
		}
	}
	t = kinf_table_new(n_shown + (with_namespace ? 1 : 0) + (contexts ? 1 : 0));
	if (!t) {
		rc = -KINF_ENOMEM;
		goto out;
	}
	if (!no_headers) {
		if (contexts) {
			kinf_strv_push_str(&cells, "CONTEXT");
		}
		if (with_namespace) {
			kinf_strv_push_str(&cells, "NAMESPACE");
		}
		for (size_t i = 0; i < n_shown; i++) {
			const char *name = json_string_value(json_object_get(
					json_array_get(cols, shown[i]), "name"));
			kinf_strv_push_take(&cells, upper(name ? name : ""));
		}
		if ((rc = kinf_table_add_row(t, (const char *const *)cells.v)) < 0) {
			goto out;
		}
	}
	for (size_t r = 0; r < n_rows; r++) {
		json_t *rc_cells = row_cells(&rows[r]);
		kinf_strv_reset(&cells);
		if (contexts) {
			kinf_strv_push_str(&cells, contexts[r] ? contexts[r] : "");
		}
		if (with_namespace) {
			/* The key is namespace/name (the pager read it from the row's object). */
			const char *slash = strchr(rows[r].key, '/');
			kinf_strv_push(&cells, rows[r].key, slash ? (size_t)(slash - rows[r].key) : 0);
		}
		for (size_t i = 0; i < n_shown; i++) {
			json_t *v = json_array_get(rc_cells, shown[i]);
			char *text = v ? cell_text(v) : strdup("");
			const char *format = json_string_value(json_object_get(
					json_array_get(cols, shown[i]), "format"));
			if (text && name_prefix && format && strcmp(format, "name") == 0) {
				/* kubectl get pods,svc: kind/name in NAME. */
				size_t lp = strlen(name_prefix), lt = strlen(text);
				char *both = malloc(lp + lt + 1);
				if (both) {
					memcpy(both, name_prefix, lp);
					memcpy(both + lp, text, lt + 1);
				}
				free(text);
				text = both;
			}
			kinf_strv_push_take(&cells, text);
		}
		json_decref(rc_cells);
		if (cells.n != t->n_columns) {
			rc = -KINF_ENOMEM;
			goto out;
		}
		if ((rc = kinf_table_add_row(t, (const char *const *)cells.v)) < 0) {
			goto out;
		}
	}
	rc = kinf_table_print(t, out);
out:
	kinf_strv_release(&cells);
	kinf_table_free(t);
	free(shown);
	json_decref(cols);
	return rc;
}

/* Durations ------------------------------------------------------------ */

void kinf_human_duration(long long s, char *buf, size_t size) {
	/* apimachinery/pkg/util/duration.HumanDuration */
	if (s < -1) {
		snprintf(buf, size, "<invalid>");
	} else if (s < 0) {
		snprintf(buf, size, "0s");
	} else if (s < 60 * 2) {
		snprintf(buf, size, "%llds", s);
	} else if (s < 60 * 10) {
		long long m = s / 60, sec = s % 60;
		if (sec == 0) {
			snprintf(buf, size, "%lldm", m);
		} else {
			snprintf(buf, size, "%lldm%llds", m, sec);
		}
	} else if (s < 60 * 60 * 3) {
		snprintf(buf, size, "%lldm", s / 60);
	} else if (s < 60 * 60 * 8) {
		long long h = s / 3600, m = (s / 60) % 60;
		if (m == 0) {
			snprintf(buf, size, "%lldh", h);
		} else {
			snprintf(buf, size, "%lldh%lldm", h, m);
		}
	} else if (s < 60 * 60 * 48) {
		snprintf(buf, size, "%lldh", s / 3600);
	} else if (s < 60 * 60 * 24 * 8) {
		long long d = s / 86400, h = (s / 3600) % 24;
		if (h == 0) {
			snprintf(buf, size, "%lldd", d);
		} else {
			snprintf(buf, size, "%lldd%lldh", d, h);
		}
	} else if (s < 60LL * 60 * 24 * 365 * 2) {
		snprintf(buf, size, "%lldd", s / 86400);
	} else if (s < 60LL * 60 * 24 * 365 * 8) {
		long long dy = (s / 86400) % 365, y = s / (86400LL * 365);
		if (dy == 0) {
			snprintf(buf, size, "%lldy", y);
		} else {
			snprintf(buf, size, "%lldy%lldd", y, dy);
		}
	} else {
		snprintf(buf, size, "%lldy", s / (86400LL * 365));
	}
}

/* Local columns ------------------------------------------------------- */

#include "object.h"

static int push_age(struct kinf_strv *ret, const struct kinf_object *obj) {
	char age[32];
	long long s = kinf_rfc3339_seconds_since(kinf_object_creation_timestamp(obj));
	if (s < 0 && !kinf_object_creation_timestamp(obj)[0]) {
		snprintf(age, sizeof(age), "<unknown>");
	} else {
		kinf_human_duration(s, age, sizeof(age));
	}
	return kinf_strv_push_str(ret, age);
}

static const char *str_at(json_t *o, const char *a, const char *b) {
	json_t *v = json_object_get(o, a);
	if (b) {
		v = json_object_get(v, b);
	}
	return json_string_value(v);
}

/* The later of two RFC 3339 UTC timestamps (they compare as strings). */
static const char *later(const char *a, const char *b) {
	if (!b || !b[0]) {
		return a;
	}
	return !a || strcmp(b, a) > 0 ? b : a;
}

/* kubectl's printPod status logic, without the sidecar refinements. */
static void pod_columns(json_t *pod, struct kinf_strv *ret) {
	json_t *spec = json_object_get(pod, "spec");
	json_t *status = json_object_get(pod, "status");
	json_t *cs = json_object_get(status, "containerStatuses");
	json_t *ics = json_object_get(status, "initContainerStatuses");
	size_t total = json_array_size(json_object_get(spec, "containers"));
	size_t ready = 0, i;
	long long restarts = 0;
	char reason[128], buf[64];
	const char *phase = str_at(status, "phase", NULL);
	const char *sreason = str_at(status, "reason", NULL);
	const char *last_restart = NULL;	/* the latest lastState.terminated.finishedAt */
	json_t *c;

	snprintf(reason, sizeof(reason), "%s", sreason ? sreason : phase ? phase : "Unknown");
	bool initializing = false;
	json_array_foreach(ics, i, c) {
		restarts += json_integer_value(json_object_get(c, "restartCount"));
		last_restart = later(last_restart, str_at(json_object_get(c, "lastState"),
				"terminated", "finishedAt"));
		json_t *st = json_object_get(c, "state");
		json_t *term = json_object_get(st, "terminated");
		json_t *wait = json_object_get(st, "waiting");
		if (term && json_integer_value(json_object_get(term, "exitCode")) == 0) {
			continue;
		}
		if (term) {
			const char *r = str_at(term, "reason", NULL);
			if (r) {
				snprintf(reason, sizeof(reason), "Init:%s", r);
			} else {
				snprintf(reason, sizeof(reason), "Init:ExitCode:%lld",
						(long long)json_integer_value(json_object_get(term, "exitCode")));
			}
		} else if (wait && str_at(wait, "reason", NULL) &&
				strcmp(str_at(wait, "reason", NULL), "PodInitializing") != 0) {
			snprintf(reason, sizeof(reason), "Init:%s", str_at(wait, "reason", NULL));
		} else {
			snprintf(reason, sizeof(reason), "Init:%zu/%zu", i,
					json_array_size(json_object_get(spec, "initContainers")));
		}
		initializing = true;
		break;
	}
	if (!initializing) {
		bool has_running = false;
		for (size_t k = json_array_size(cs); k-- > 0;) {
			c = json_array_get(cs, k);
			restarts += json_integer_value(json_object_get(c, "restartCount"));
			last_restart = later(last_restart, str_at(json_object_get(c, "lastState"),
					"terminated", "finishedAt"));
			json_t *st = json_object_get(c, "state");
			json_t *term = json_object_get(st, "terminated");
			const char *wr = str_at(st, "waiting", "reason");
			if (wr && wr[0]) {
				snprintf(reason, sizeof(reason), "%s", wr);
			} else if (term && str_at(term, "reason", NULL)) {
				snprintf(reason, sizeof(reason), "%s", str_at(term, "reason", NULL));
			} else if (term) {
				long long sig = json_integer_value(json_object_get(term, "signal"));
				if (sig) {
					snprintf(reason, sizeof(reason), "Signal:%lld", sig);
				} else {
					snprintf(reason, sizeof(reason), "ExitCode:%lld",
							(long long)json_integer_value(json_object_get(term, "exitCode")));
				}
			} else if (json_is_true(json_object_get(c, "ready")) &&
					json_object_get(st, "running")) {
				has_running = true;
				ready++;
			}
		}
		if (strcmp(reason, "Completed") == 0 && has_running) {
			snprintf(reason, sizeof(reason), "Running");
		}
	}
	if (json_object_get(json_object_get(pod, "metadata"), "deletionTimestamp") &&
			strcmp(reason, "NodeLost") != 0) {
		snprintf(reason, sizeof(reason), "Terminating");
	}
	snprintf(buf, sizeof(buf), "%zu/%zu", ready, total);
	kinf_strv_push_str(ret, buf);
	kinf_strv_push_str(ret, reason);
	long long since = restarts && last_restart ? kinf_rfc3339_seconds_since(last_restart) : -1;
	if (since >= 0) {
		/* kubectl 1.22+: "2 (19d ago)" */
		char age[32];
		kinf_human_duration(since, age, sizeof(age));
		snprintf(buf, sizeof(buf), "%lld (%s ago)", restarts, age);
	} else {
		snprintf(buf, sizeof(buf), "%lld", restarts);
	}
	kinf_strv_push_str(ret, buf);
}

int kinf_output_object_columns(const char *kind, const struct kinf_object *obj,
		struct kinf_strv *ret) {
	static const struct {
		const char *kind;
		const char *headers[6];
	} layouts[] = {
		{ "Pod", { "NAME", "READY", "STATUS", "RESTARTS", "AGE", NULL } },
		{ "Deployment", { "NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", NULL } },
		{ "Node", { "NAME", "STATUS", "ROLES", "AGE", "VERSION", NULL } },
		{ "Namespace", { "NAME", "STATUS", "AGE", NULL } },
		{ "ConfigMap", { "NAME", "DATA", "AGE", NULL } },
		{ "", { "NAME", "AGE", NULL } },
	};
	size_t li = 0;
	while (layouts[li].kind[0] && strcmp(layouts[li].kind, kind ? kind : "") != 0) {
		li++;
	}
	if (!obj) {
		for (size_t i = 0; layouts[li].headers[i]; i++) {
			int rc = kinf_strv_push_str(ret, layouts[li].headers[i]);
			if (rc < 0) {
				return rc;
			}
		}
		return 0;
	}
	size_t len;
	const char *json = kinf_object_json(obj, &len);
	json_t *root = json_loadb(json, len, 0, NULL);
	if (!root) {
		return -KINF_EJSON;
	}
	char buf[64];
	kinf_strv_push_str(ret, kinf_object_name(obj));
	const char *k = layouts[li].kind;
	json_t *status = json_object_get(root, "status");
	if (strcmp(k, "Pod") == 0) {
		pod_columns(root, ret);
		push_age(ret, obj);
	} else if (strcmp(k, "Deployment") == 0) {
		long long want = json_integer_value(json_object_get(json_object_get(root, "spec"), "replicas"));
		snprintf(buf, sizeof(buf), "%lld/%lld",
				(long long)json_integer_value(json_object_get(status, "readyReplicas")), want);
		kinf_strv_push_str(ret, buf);
		snprintf(buf, sizeof(buf), "%lld", (long long)json_integer_value(json_object_get(status, "updatedReplicas")));
		kinf_strv_push_str(ret, buf);
		snprintf(buf, sizeof(buf), "%lld", (long long)json_integer_value(json_object_get(status, "availableReplicas")));
		kinf_strv_push_str(ret, buf);
		push_age(ret, obj);
	} else if (strcmp(k, "Node") == 0) {
		const char *ready = "Unknown";
		size_t i;
		json_t *c;
		json_array_foreach(json_object_get(status, "conditions"), i, c) {
			if (str_at(c, "type", NULL) && strcmp(str_at(c, "type", NULL), "Ready") == 0) {
				const char *st = str_at(c, "status", NULL);
				ready = st && strcmp(st, "True") == 0 ? "Ready" : "NotReady";
			}
		}
		kinf_strv_push_str(ret, ready);
		struct kinf_buf roles = {0};
		size_t n;
		const struct kinf_label *labels = kinf_object_labels(obj, &n);
		for (size_t j = 0; j < n; j++) {
			if (strncmp(labels[j].key, "node-role.kubernetes.io/", 24) == 0) {
				kinf_buf_printf(&roles, "%s%s", roles.len ? "," : "", labels[j].key + 24);
			}
		}
		kinf_strv_push_str(ret, roles.len ? roles.data : "<none>");
		kinf_buf_release(&roles);
		push_age(ret, obj);
		const char *v = str_at(json_object_get(status, "nodeInfo"), "kubeletVersion", NULL);
		kinf_strv_push_str(ret, v ? v : "");
	} else if (strcmp(k, "Namespace") == 0) {
		const char *phase = str_at(status, "phase", NULL);
		kinf_strv_push_str(ret, phase ? phase : "");
		push_age(ret, obj);
	} else if (strcmp(k, "ConfigMap") == 0) {
		snprintf(buf, sizeof(buf), "%zu", json_object_size(json_object_get(root, "data")) +
				json_object_size(json_object_get(root, "binaryData")));
		kinf_strv_push_str(ret, buf);
		push_age(ret, obj);
	} else {
		push_age(ret, obj);
	}
	json_decref(root);
	return 0;
}

/* A string field, or dflt when it is missing or empty. */
static const char *str_or(json_t *o, const char *key, const char *dflt) {
	const char *v = json_string_value(json_object_get(o, key));
	return v && v[0] ? v : dflt;
}

static int cmp_str(const void *a, const void *b) {
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * metav1.FormatLabelSelector: the requirements sorted by key, matchLabels
 * as key=value, expressions as "key in (a,b)", "key notin (a,b)", "key"
 * and "!key"; "<none>" for none.
 */
static void format_label_selector(json_t *sel, struct kinf_buf *out) {
	struct kinf_strv reqs = {0};
	const char *key;
	json_t *v;
	size_t i;

	json_object_foreach(json_object_get(sel, "matchLabels"), key, v) {
		struct kinf_buf b = {0};
		kinf_buf_printf(&b, "%s=%s", key, json_string_value(v) ? json_string_value(v) : "");
		kinf_strv_push_str(&reqs, b.data ? b.data : "");
		kinf_buf_release(&b);
	}
	json_array_foreach(json_object_get(sel, "matchExpressions"), i, v) {
		const char *k = str_or(v, "key", "");
		const char *op = str_or(v, "operator", "");
		struct kinf_buf b = {0};
		if (strcmp(op, "Exists") == 0) {
			kinf_buf_append_str(&b, k);
		} else if (strcmp(op, "DoesNotExist") == 0) {
			kinf_buf_printf(&b, "!%s", k);
		} else {
			struct kinf_strv vals = {0};
			size_t j;
			json_t *x;
			json_array_foreach(json_object_get(v, "values"), j, x) {
				kinf_strv_push_str(&vals, json_string_value(x) ? json_string_value(x) : "");
			}
			if (vals.n) {
				qsort(vals.v, vals.n, sizeof(*vals.v), cmp_str);
			}
			kinf_buf_printf(&b, "%s %s (", k, strcmp(op, "NotIn") == 0 ? "notin" : "in");
			for (j = 0; j < vals.n; j++) {
				kinf_buf_printf(&b, "%s%s", j ? "," : "", vals.v[j]);
			}
			kinf_buf_append_str(&b, ")");
			kinf_strv_release(&vals);
		}
		kinf_strv_push_str(&reqs, b.data ? b.data : "");
		kinf_buf_release(&b);
	}
	if (reqs.n) {
		qsort(reqs.v, reqs.n, sizeof(*reqs.v), cmp_str);
	}
	for (i = 0; i < reqs.n; i++) {
		kinf_buf_printf(out, "%s%s", i ? "," : "", reqs.v[i]);
	}
	if (reqs.n == 0) {
		kinf_buf_append_str(out, "<none>");
	}
	kinf_strv_release(&reqs);
}

int kinf_output_object_wide_columns(const char *kind, const struct kinf_object *obj,
		struct kinf_strv *ret) {
	static const struct {
		const char *kind;
		const char *headers[6];
	} layouts[] = {
		{ "Pod", { "IP", "NODE", "NOMINATED NODE", "READINESS GATES", NULL } },
		{ "Deployment", { "CONTAINERS", "IMAGES", "SELECTOR", NULL } },
		{ "Node", { "INTERNAL-IP", "EXTERNAL-IP", "OS-IMAGE", "KERNEL-VERSION",
			"CONTAINER-RUNTIME", NULL } },
	};
	size_t li, n_layouts = sizeof(layouts) / sizeof(*layouts);
	for (li = 0; li < n_layouts && strcmp(layouts[li].kind, kind ? kind : "") != 0; li++) {
	}
	if (li == n_layouts) {
		return 0;
	}
	if (!obj) {
		for (size_t i = 0; layouts[li].headers[i]; i++) {
			int rc = kinf_strv_push_str(ret, layouts[li].headers[i]);
			if (rc < 0) {
				return rc;
			}
		}
		return 0;
	}
	size_t len;
	const char *json = kinf_object_json(obj, &len);
	json_t *root = json_loadb(json, len, 0, NULL);
	if (!root) {
		return -KINF_EJSON;
	}
	json_t *spec = json_object_get(root, "spec");
	json_t *status = json_object_get(root, "status");
	struct kinf_buf b = {0};
	size_t i;
	json_t *c;
	if (li == 0) {
		kinf_strv_push_str(ret, str_or(status, "podIP", "<none>"));
		kinf_strv_push_str(ret, str_or(spec, "nodeName", "<none>"));
		kinf_strv_push_str(ret, str_or(status, "nominatedNodeName", "<none>"));
		json_t *gates = json_object_get(spec, "readinessGates");
		if (json_array_size(gates) == 0) {
			kinf_strv_push_str(ret, "<none>");
		} else {
			size_t ready = 0;
			json_t *g;
			json_array_foreach(gates, i, g) {
				const char *type = str_or(g, "conditionType", "");
				size_t j;
				json_array_foreach(json_object_get(status, "conditions"), j, c) {
					if (strcmp(str_or(c, "type", ""), type) == 0 &&
							strcmp(str_or(c, "status", ""), "True") == 0) {
						ready++;
						break;
					}
				}
			}
			kinf_buf_printf(&b, "%zu/%zu", ready, json_array_size(gates));
			kinf_strv_push_str(ret, b.data);
		}
	} else if (li == 1) {
		json_t *containers = json_object_get(json_object_get(json_object_get(spec,
				"template"), "spec"), "containers");
		json_array_foreach(containers, i, c) {
			kinf_buf_printf(&b, "%s%s", i ? "," : "", str_or(c, "name", ""));
		}
		kinf_strv_push_str(ret, b.len ? b.data : "");
		kinf_buf_reset(&b);
		json_array_foreach(containers, i, c) {
			kinf_buf_printf(&b, "%s%s", i ? "," : "", str_or(c, "image", ""));
		}
		kinf_strv_push_str(ret, b.len ? b.data : "");
		kinf_buf_reset(&b);
		json_t *sel = json_object_get(spec, "selector");
		if (sel) {
			format_label_selector(sel, &b);
		}
		kinf_strv_push_str(ret, b.len ? b.data : "<none>");
	} else {
		const char *types[] = { "InternalIP", "ExternalIP" };
		for (size_t t = 0; t < 2; t++) {
			const char *addr = "<none>";
			json_array_foreach(json_object_get(status, "addresses"), i, c) {
				if (strcmp(str_or(c, "type", ""), types[t]) == 0) {
					addr = str_or(c, "address", "<none>");
					break;
				}
			}
			kinf_strv_push_str(ret, addr);
		}
		json_t *info = json_object_get(status, "nodeInfo");
		kinf_strv_push_str(ret, str_or(info, "osImage", "<unknown>"));
		kinf_strv_push_str(ret, str_or(info, "kernelVersion", "<unknown>"));
		kinf_strv_push_str(ret, str_or(info, "containerRuntimeVersion", "<unknown>"));
	}
	kinf_buf_release(&b);
	json_decref(root);
	return 0;
}

/* Diff ------------------------------------------------------------------ */

struct diff_ctx {
	bool all;
	bool as_json;
	const char *indent;
	struct kinf_buf *out;
	json_t *changes;
	struct kinf_buf path;
};

static char *compact_value(json_t *v) {
	if (!v) {
		return strdup("<none>");
	}
	return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
}

static void add_change(struct diff_ctx *c, json_t *old, json_t *new) {
	const char *path = c->path.len ? c->path.data : ".";
	if (c->as_json) {
		json_t *ch = json_object();
		json_object_set_new(ch, "path", json_string(path));
		if (old) {
			json_object_set(ch, "old", old);
		}
		if (new) {
			json_object_set(ch, "new", new);
		}
		json_array_append_new(c->changes, ch);
		return;
	}
	/* The text form is for a terminal: keys and values escaped (termsafe.h). */
	char *o = compact_value(old), *n = compact_value(new);
	kinf_buf_append_str(c->out, c->indent);
	kinf_termsafe_append(c->out, path, strlen(path));
	kinf_buf_append_str(c->out, ": ");
	kinf_termsafe_append(c->out, o ? o : "", o ? strlen(o) : 0);
	kinf_buf_append_str(c->out, " \xe2\x86\x92 ");
	kinf_termsafe_append(c->out, n ? n : "", n ? strlen(n) : 0);
	kinf_buf_append_char(c->out, '\n');
	free(o);
	free(n);
}

static bool path_needs_brackets(const char *key) {
	for (const char *p = key; *p; p++) {
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
				(*p >= '0' && *p <= '9') || *p == '_' || *p == '-')) {
			return true;
		}
	}
	return !key[0];
}

static void diff_values(struct diff_ctx *c, json_t *old, json_t *new);

static void diff_member(struct diff_ctx *c, const char *key, json_t *old, json_t *new) {
	size_t saved = c->path.len;
	if (!c->all && saved == 9 && strcmp(c->path.data, ".metadata") == 0 &&
			(strcmp(key, "managedFields") == 0 || strcmp(key, "resourceVersion") == 0)) {
		return;
	}
	if (path_needs_brackets(key)) {
		kinf_buf_printf(&c->path, "['%s']", key);
	} else {
		kinf_buf_printf(&c->path, ".%s", key);
	}
	diff_values(c, old, new);
	c->path.len = saved;
	c->path.data[saved] = '\0';
}

static void diff_values(struct diff_ctx *c, json_t *old, json_t *new) {
	if (old && new && json_is_object(old) && json_is_object(new)) {
		const char *k;
		json_t *v;
		struct kinf_strv keys = {0};
		json_object_foreach(old, k, v) {
			kinf_strv_push_str(&keys, k);
		}
		json_object_foreach(new, k, v) {
			if (!json_object_get(old, k)) {
				kinf_strv_push_str(&keys, k);
			}
		}
		kinf_strv_sort(&keys);
		for (size_t i = 0; i < keys.n; i++) {
			diff_member(c, keys.v[i], json_object_get(old, keys.v[i]),
					json_object_get(new, keys.v[i]));
		}
		kinf_strv_release(&keys);
		return;
	}
	if (old && new && json_is_array(old) && json_is_array(new) &&
			json_array_size(old) == json_array_size(new)) {
		for (size_t i = 0; i < json_array_size(old); i++) {
			size_t saved = c->path.len;
			kinf_buf_printf(&c->path, "[%zu]", i);
			diff_values(c, json_array_get(old, i), json_array_get(new, i));
			c->path.len = saved;
			c->path.data[saved] = '\0';
		}
		return;
	}
	if (old && new && json_equal(old, new)) {
		return;
	}
	add_change(c, old, new);
}

int kinf_output_diff(const char *old_json, size_t old_len, const char *new_json,
		size_t new_len, bool all, bool as_json, const char *indent,
		struct kinf_buf *out) {
	json_t *old = json_loadb(old_json, old_len, 0, NULL);
	json_t *new = json_loadb(new_json, new_len, 0, NULL);
	struct diff_ctx c = { .all = all, .as_json = as_json, .indent = indent, .out = out };
	int rc = 0;

	if (!old || !new) {
		rc = -KINF_EJSON;
		goto out;
	}
	kinf_buf_append_str(&c.path, "");
	if (as_json) {
		c.changes = json_array();
	}
	diff_values(&c, old, new);
	if (as_json) {
		char *s = json_dumps(c.changes, JSON_COMPACT);
		if (!s || kinf_buf_append_str(out, s) < 0) {
			rc = -KINF_ENOMEM;
		}
		free(s);
		json_decref(c.changes);
	}
out:
	kinf_buf_release(&c.path);
	json_decref(old);
	json_decref(new);
	return rc;
}

/* Custom columns --------------------------------------------------------- */

void kinf_custom_columns_free(struct kinf_custom_columns *cc) {
	if (!cc) {
		return;
	}
	for (size_t i = 0; i < cc->n; i++) {
		free(cc->names[i]);
		free(cc->paths[i]);
	}
	free(cc->names);
	free(cc->paths);
	free(cc);
}

int kinf_custom_columns_parse(const char *spec, struct kinf_custom_columns **ret,
		struct kinf_error *reterr) {
	struct kinf_custom_columns *cc = calloc(1, sizeof(*cc));
	char *copy = strdup(spec);
	char *save = NULL;
	int rc = 0;

	if (!cc || !copy) {
		free(cc);
		free(copy);
		return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	}
	if (!spec[0]) {
		rc = kinf_error_set(reterr, KINF_EINVAL,
				"custom-columns format specified but no custom columns given");
	}
	for (char *tok = strtok_r(copy, ",", &save); rc == 0 && tok; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':');
		if (!colon || colon == tok) {
			rc = kinf_error_set(reterr, KINF_EINVAL,
					"unexpected custom-columns spec: %s, expected <header>:<json-path-expr>", tok);
			break;
		}
		*colon = '\0';
		json_t *probe = kinf_jsonpath_values(colon + 1, NULL, reterr);
		if (!probe) {
			rc = -KINF_EINVAL;
			break;
		}
		json_decref(probe);
		char **names = realloc(cc->names, (cc->n + 1) * sizeof(*names));
		if (names) {
			cc->names = names;
		}
		char **paths = realloc(cc->paths, (cc->n + 1) * sizeof(*paths));
		if (paths) {
			cc->paths = paths;
		}
		if (!names || !paths) {
			rc = kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
			break;
		}
		cc->names[cc->n] = strdup(tok);
		cc->paths[cc->n] = strdup(colon + 1);
		cc->n++;
	}
	free(copy);
	if (rc < 0) {
		kinf_custom_columns_free(cc);
		return rc;
	}
	*ret = cc;
	return 0;
}

/* Go's fmt %v of a value decoded into interface{} (maps sorted by key). */
static void go_value(json_t *v, struct kinf_buf *out) {
	size_t i;
	json_t *c;
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		struct kinf_strv keys = {0};
		const char *k;
		json_object_foreach(v, k, c) {
			kinf_strv_push_str(&keys, k);
		}
		kinf_strv_sort(&keys);
		kinf_buf_append_str(out, "map[");
		for (i = 0; i < keys.n; i++) {
			kinf_buf_printf(out, "%s%s:", i ? " " : "", keys.v[i]);
			go_value(json_object_get(v, keys.v[i]), out);
		}
		kinf_buf_append_char(out, ']');
		kinf_strv_release(&keys);
		break;
	}
	case JSON_ARRAY:
		kinf_buf_append_char(out, '[');
		json_array_foreach(v, i, c) {
			if (i) {
				kinf_buf_append_char(out, ' ');
			}
			go_value(c, out);
		}
		kinf_buf_append_char(out, ']');
		break;
	case JSON_NULL:
		kinf_buf_append_str(out, "<nil>");
		break;
	default:
		kinf_jsonpath_print_value(v, out);
		break;
	}
}

int kinf_custom_columns_cells(const struct kinf_custom_columns *cc, json_t *obj,
		struct kinf_strv *ret) {
	for (size_t i = 0; i < cc->n; i++) {
		json_t *vals = kinf_jsonpath_values(cc->paths[i], obj, NULL);
		struct kinf_buf b = {0};
		size_t j;
		json_t *v;
		json_array_foreach(vals, j, v) {
			if (j) {
				kinf_buf_append_char(&b, ',');
			}
			go_value(v, &b);
		}
		size_t found = json_array_size(vals);
		json_decref(vals);
		int rc = kinf_strv_push_take(ret, found ? kinf_buf_take(&b) : strdup("<none>"));
		kinf_buf_release(&b);
		if (rc < 0) {
			return rc;
		}
	}
	return 0;
}
