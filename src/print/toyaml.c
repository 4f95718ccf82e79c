#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "json.h"
#include "jsonnum.h"
#include "toyaml.h"

/* kinf's objects nest no deeper (KINF_OBJECT_DEFAULT_MAX_DEPTH). */
#define MAX_DEPTH 512

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
static int plain_scalar(yaml_emitter_t *em, const char *s, size_t len) {
	yaml_event_t ev;
	if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s,
			(int)len, 1, 1, YAML_PLAIN_SCALAR_STYLE)) {
		return -KINF_ENOMEM;
	}
	return emit(em, &ev);
}

/* The code point at s (UTF-8, already validated by the reader); *n its length. */
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

/* One member of an object: its decoded key and its value's bytes. */
struct member {
	const char *key;	/* NUL-terminated (a key may hold a NUL too) */
	size_t key_len;
	const char *value;
	size_t value_len;
	size_t order;		/* as written: the last of equal keys wins */
};

static int cmp_members(const void *pa, const void *pb) {
	const struct member *a = pa, *b = pb;
	const char *ka = a->key, *kb = b->key;
	int c = cmp_keys(&ka, &kb);
	return c ? c : (a->order > b->order) - (a->order < b->order);
}

static bool same_key(const struct member *a, const struct member *b) {
	return a->key_len == b->key_len && memcmp(a->key, b->key, a->key_len) == 0;
}

static int emit_value(yaml_emitter_t *em, struct kinf_json_reader *r);

/*
 * An object: members sorted as go-yaml sorts map keys, each value read
 * again from its bytes. Of equal keys the last one counts, as a Go map
 * decoded from the JSON has it.
 */
static int emit_object(yaml_emitter_t *em, struct kinf_json_reader *r) {
	struct kinf_buf keys = {0};
	struct member *m = NULL;
	size_t n = 0, cap = 0, *key_at = NULL;
	struct kinf_json_span key;
	yaml_event_t ev;
	int rc = kinf_json_object_begin(r);

	while (rc == 0 && (rc = kinf_json_member(r, &key)) == 1) {
		rc = 0;
		if (n == cap) {
			size_t c = cap ? cap * 2 : 16;
			struct member *nm = realloc(m, c * sizeof(*m));
			size_t *nk = realloc(key_at, c * sizeof(*key_at));
			m = nm ? nm : m;
			key_at = nk ? nk : key_at;
			if (!nm || !nk) {
				rc = -KINF_ENOMEM;
				break;
			}
			cap = c;
		}
		key_at[n] = keys.len;
		if (kinf_json_span_decode(&key, &keys) < 0 ||
				kinf_buf_append_char(&keys, '\0') < 0) {
			rc = -KINF_ENOMEM;
			break;
		}
		m[n].key_len = keys.len - key_at[n] - 1;
		m[n].order = n;
		rc = kinf_json_skip_span(r, &m[n].value, &m[n].value_len);
		n++;
	}
	for (size_t i = 0; rc == 0 && i < n; i++) {
		m[i].key = keys.data + key_at[i];	/* keys is complete: no more moves */
	}
	if (rc == 0) {
		if (n > 1) {
			qsort(m, n, sizeof(*m), cmp_members);	/* m is NULL for {} */
		}
		yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
				n ? YAML_BLOCK_MAPPING_STYLE : YAML_FLOW_MAPPING_STYLE);
		rc = emit(em, &ev);
	}
	for (size_t i = 0; rc == 0 && i < n; i++) {
		if (i + 1 < n && same_key(&m[i], &m[i + 1])) {
			continue;
		}
		struct kinf_json_reader sub;
		kinf_json_reader_init(&sub, m[i].value, m[i].value_len, r->max_depth);
		sub.depth = r->depth;
		rc = string_scalar(em, m[i].key, m[i].key_len);
		if (rc == 0) {
			rc = emit_value(em, &sub);
		}
	}
	if (rc == 0) {
		yaml_mapping_end_event_initialize(&ev);
		rc = emit(em, &ev);
	}
	free(m);
	free(key_at);
	kinf_buf_release(&keys);
	return rc;
}

static int emit_value(yaml_emitter_t *em, struct kinf_json_reader *r) {
	struct kinf_buf b = {0};
	yaml_event_t ev;
	const char *s;
	size_t len;
	int rc;

	switch (kinf_json_peek(r)) {
	case KINF_JSON_OBJECT:
		return emit_object(em, r);
	case KINF_JSON_ARRAY: {
		if ((rc = kinf_json_array_begin(r)) < 0) {
			return rc;
		}
		bool empty = kinf_json_peek(r) == KINF_JSON_INVALID && r->p < r->end &&
			*r->p == ']';
		yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
				empty ? YAML_FLOW_SEQUENCE_STYLE : YAML_BLOCK_SEQUENCE_STYLE);
		rc = emit(em, &ev);
		while (rc == 0 && (rc = kinf_json_element(r)) == 1) {
			rc = emit_value(em, r);
		}
		if (rc == 0) {
			yaml_sequence_end_event_initialize(&ev);
			rc = emit(em, &ev);
		}
		return rc;
	}
	case KINF_JSON_STRING:
		if ((rc = kinf_json_string(r, &b)) == 0) {
			rc = string_scalar(em, b.data ? b.data : "", b.len);
		}
		kinf_buf_release(&b);
		return rc;
	case KINF_JSON_NUMBER:
		/* The literal as the server sent it, never through a double. */
		if ((rc = kinf_json_skip_span(r, &s, &len)) < 0) {
			return rc;
		}
		kinf_jsonnum_append_yaml(&b, s, len);
		rc = kinf_buf_error(&b) ? -KINF_ENOMEM : plain_scalar(em, b.data, b.len);
		kinf_buf_release(&b);
		return rc;
	case KINF_JSON_TRUE:
	case KINF_JSON_FALSE:
	case KINF_JSON_NULL:
		if ((rc = kinf_json_skip_span(r, &s, &len)) < 0) {
			return rc;
		}
		return plain_scalar(em, s, len);
	default:
		return kinf_json_skip(r);	/* the error */
	}
}

int kinf_toyaml_write(FILE *out, const char *json, size_t len,
		struct kinf_error *reterr) {
	yaml_emitter_t em;
	yaml_event_t ev;
	struct kinf_json_reader r;
	int rc;

	/* Whole and valid before the first line goes out. */
	if ((rc = kinf_json_validate(json, len, MAX_DEPTH, reterr)) < 0) {
		return rc;
	}
	kinf_json_reader_init(&r, json, len, MAX_DEPTH);
	if (!yaml_emitter_initialize(&em)) {
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
		rc = emit_value(&em, &r);
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
		kinf_error_fill(reterr, -rc, "writing YAML: %s",
				em.problem ? em.problem : kinf_strerror(rc));
	}
	yaml_emitter_delete(&em);
	return rc;
}
