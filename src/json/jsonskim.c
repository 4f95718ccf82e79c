/*
 * Skimming a compact JSON value 64 bytes at a time (after simdjson's stage
 * one): for each block, bit masks of the quotes, backslashes, brackets,
 * colons, commas and of the bytes no compact value has outside strings.
 * From them, with carries from the block before:
 *   - escaped bytes (after an odd run of backslashes), then the quotes that
 *     open and close strings, and so which bytes are inside strings;
 *   - every byte outside strings is an operator ({}[]:,) or part of a
 *     scalar (number, true, false, null); anything else (white space, a
 *     control or non-ASCII byte, a backslash) gives up;
 *   - which class of byte may follow which: '{' a key or '}', '[' a value
 *     or ']', ':' and ',' a value, a closing quote ':' ',' '}' or ']', a
 *     closing bracket ',' '}' or ']', a scalar byte another or ',' '}' ']'.
 * Then one loop over the operators alone matches brackets and checks that
 * object members alternate key ':' value ',' (a 64-level bit stack), and
 * each scalar is checked whole. Strings are never walked byte by byte:
 * their bytes only have to be printable ASCII (checked in the masks) and
 * their escapes one of \" \\ \/ \b \f \n \r \t or \u and four hex digits
 * outside the surrogates.
 *
 * Pod JSON is mostly short keys and managedFields' small objects, where the
 * byte-at-a-time validator pays a branch per token; here the strings cost
 * nothing past their bits and the branches are per operator.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "jsonlex.h"
#include "jsonskim.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define SKIM_X86 1
#endif

static atomic_bool skim_on;

#ifdef SKIM_X86

struct masks {
	uint64_t quote, bslash, bad, lbrace, rbrace, lbrack, rbrack, colon, comma;
};

__attribute__((target("avx2")))
static void block_masks(const unsigned char *b, struct masks *m) {
	__m256i lo = _mm256_loadu_si256((const __m256i *)(const void *)b);
	__m256i hi = _mm256_loadu_si256((const __m256i *)(const void *)(b + 32));
#define EQ(c) ((uint64_t)(uint32_t)_mm256_movemask_epi8( \
			_mm256_cmpeq_epi8(lo, _mm256_set1_epi8(c))) | \
		(uint64_t)(uint32_t)_mm256_movemask_epi8( \
			_mm256_cmpeq_epi8(hi, _mm256_set1_epi8(c))) << 32)
	m->quote = EQ('"');
	m->bslash = EQ('\\');
	m->lbrace = EQ('{');
	m->rbrace = EQ('}');
	m->lbrack = EQ('[');
	m->rbrack = EQ(']');
	m->colon = EQ(':');
	m->comma = EQ(',');
#undef EQ
	/* Signed: below 0x20 are control bytes, negative are non-ASCII ones. */
	const __m256i space = _mm256_set1_epi8(0x20);
	m->bad = (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpgt_epi8(space, lo)) |
		(uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpgt_epi8(space, hi)) << 32;
}

/* Bit i: the XOR of bits 0..i (inside a string from its opening quote). */
static inline uint64_t prefix_xor(uint64_t x) {
	x ^= x << 1;
	x ^= x << 2;
	x ^= x << 4;
	x ^= x << 8;
	x ^= x << 16;
	x ^= x << 32;
	return x;
}

/* The scalar at p is whole and valid, and followed by ',' '}' or ']'. */
static bool scalar_ok(const unsigned char *p, const unsigned char *end) {
	size_t n;
	size_t left = (size_t)(end - p);
	if (*p == 't') {
		n = left >= 4 && memcmp(p, "true", 4) == 0 ? 4 : 0;
	} else if (*p == 'f') {
		n = left >= 5 && memcmp(p, "false", 5) == 0 ? 5 : 0;
	} else if (*p == 'n') {
		n = left >= 4 && memcmp(p, "null", 4) == 0 ? 4 : 0;
	} else {
		const char *bad;
		const char *q = kinf_jsonlex_number_end((const char *)p, (const char *)end, &bad);
		n = q ? (size_t)(q - (const char *)p) : 0;
	}
	return n && n < left && (p[n] == ',' || p[n] == '}' || p[n] == ']');
}

static bool is_hex(unsigned char c) {
	return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

/* The escape whose letter is at p (after the backslash). */
static bool escape_ok(const unsigned char *p, const unsigned char *end) {
	switch (*p) {
	case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
		return true;
	case 'u':
		/* \u003c and the like (Go escapes <, >, &); surrogates: careful path. */
		return end - p > 4 && is_hex(p[1]) && is_hex(p[2]) && is_hex(p[3]) &&
			is_hex(p[4]) && !((p[1] | 0x20) == 'd' && p[2] >= '8');
	default:
		return false;
	}
}

#define MAX_SKIM_DEPTH 64

__attribute__((target("avx2")))
static const char *skim(const char *start, const char *stop, unsigned room) {
	const unsigned char *p = (const unsigned char *)start;
	const unsigned char *end = (const unsigned char *)stop;
	unsigned char tail[64];
	/* Carried from the block before: the state at its last byte. */
	uint64_t in_string = 0;		/* all ones when it ended inside a string */
	uint64_t escaped_next = 0;	/* 1 when its last byte escapes our first */
	uint64_t c_lbrace = 0, c_lbrack = 0, c_sep = 0, c_close_q = 0, c_close = 0,
		 c_scalar = 0;
	/* Open containers: bit k set for an object at depth k + 1. */
	uint64_t objects = *p == '{';
	unsigned depth = 1;		/* the opening bracket at p, taken here */
	bool want_colon = *p == '{';	/* in an object, after its '{' or a ',' */
	uint64_t first_skip = ~UINT64_C(1);	/* so the loop never sees depth 0 */

	/*
	 * An empty {} or [] adds one level for a moment: leaving it out of the
	 * operator loop is safe when the reader allows a level more than the
	 * bit stack holds.
	 */
	bool skip_empty = room > MAX_SKIM_DEPTH;
	if (room > MAX_SKIM_DEPTH) {
		room = MAX_SKIM_DEPTH;
	}
	if (room == 0) {
		return NULL;
	}
	for (const unsigned char *b = p;; b += 64) {
		size_t left = (size_t)(end - b);
		const unsigned char *blk = b;
		if (left == 0) {
			return NULL;
		}
		if (left < 64) {
			memcpy(tail, b, left);
			memset(tail + left, 0x01, 64 - left);	/* bad bytes: never valid */
			blk = tail;
		}
		struct masks m;
		block_masks(blk, &m);

		/* Escapes: each unescaped backslash escapes the byte after it. */
		uint64_t escaped = escaped_next;
		uint64_t starts = m.bslash & ~escaped;
		escaped_next = 0;
		while (starts) {
			int i = __builtin_ctzll(starts);
			if (i == 63) {
				escaped_next = 1;
				break;
			}
			escaped |= UINT64_C(2) << i;
			starts &= ~(UINT64_C(3) << i);
		}
		uint64_t quote = m.quote & ~escaped;
		uint64_t inside = prefix_xor(quote) ^ in_string;
		in_string = 0 - (inside >> 63);
		uint64_t open_q = quote & inside, close_q = quote & ~inside;
		uint64_t outside = ~(inside | close_q);

		uint64_t lbrace = m.lbrace & outside, rbrace = m.rbrace & outside;
		uint64_t lbrack = m.lbrack & outside, rbrack = m.rbrack & outside;
		uint64_t colon = m.colon & outside, comma = m.comma & outside;
		uint64_t ops = lbrace | rbrace | lbrack | rbrack | colon | comma;
		uint64_t scalar = outside & ~ops;
		uint64_t value_start = open_q | lbrace | lbrack | scalar;
		/* Where a scalar starts: the byte before is no scalar byte. */
		uint64_t scalar_starts = scalar & ~((scalar << 1) | c_scalar);
		uint64_t closers = rbrace | rbrack;

		/* Which class may follow which, the first byte's predecessor carried. */
		uint64_t bad = m.bad | (m.bslash & outside);
		bad |= ((lbrace << 1) | c_lbrace) & ~(open_q | rbrace);
		bad |= ((lbrack << 1) | c_lbrack) & ~(value_start | rbrack);
		bad |= (((colon | comma) << 1) | c_sep) & ~value_start;
		bad |= ((close_q << 1) | c_close_q) & ~(colon | comma | closers);
		bad |= ((closers << 1) | c_close) & ~(comma | closers);
		bad |= ((scalar << 1) | c_scalar) & ~(scalar | comma | closers);
		c_lbrace = lbrace >> 63;
		c_lbrack = lbrack >> 63;
		c_sep = (colon | comma) >> 63;
		c_close_q = close_q >> 63;
		c_close = closers >> 63;
		c_scalar = scalar >> 63;

		/* Brackets and members, operator by operator, up to the end. */
		uint64_t valid = ~UINT64_C(0);
		int last = -1;
		/*
		 * Empty objects and arrays (managedFields is full of "f:x":{})
		 * need no loop step: the class checks above already place them
		 * where a value goes. Not the value's own opening bracket.
		 */
		uint64_t walk = ops & first_skip;
		if (skip_empty) {
			uint64_t empty = ((lbrace & (rbrace >> 1)) | (lbrack & (rbrack >> 1))) & first_skip;
			walk &= ~(empty | (empty << 1));
		}
		for (uint64_t w = walk; w; w &= w - 1) {
			int i = __builtin_ctzll(w);
			bool in_object = objects >> (depth - 1) & 1;
			switch (blk[i]) {
			case '{':
			case '[':
				/* Too deep, or where an object wants a key (after a ','). */
				if (depth >= room || (in_object && want_colon)) {
					return NULL;
				}
				if (blk[i] == '{') {
					objects |= UINT64_C(1) << depth;
				} else {
					objects &= ~(UINT64_C(1) << depth);
				}
				depth++;
				want_colon = blk[i] == '{';
				break;
			case '}':
				/* An empty object is the only one that ends wanting a key. */
				if (!in_object || (want_colon && b[i - 1] != '{')) {
					return NULL;
				}
				depth--;
				want_colon = false;
				break;
			case ']':
				if (in_object) {
					return NULL;
				}
				depth--;
				want_colon = false;
				break;
			case ':':
				if (!in_object || !want_colon) {
					return NULL;
				}
				want_colon = false;
				break;
			default:	/* ',' */
				if (in_object) {
					if (want_colon) {
						return NULL;
					}
					want_colon = true;
				}
				break;
			}
			if (depth == 0) {
				last = i;
				valid = i == 63 ? ~UINT64_C(0) : (UINT64_C(2) << i) - 1;
				break;
			}
		}
		first_skip = ~UINT64_C(0);
		if (bad & valid) {
			return NULL;
		}
		for (uint64_t e = escaped & valid & inside; e; e &= e - 1) {
			if (!escape_ok(b + __builtin_ctzll(e), end)) {
				return NULL;
			}
		}
		/* Each scalar whole: it may run on into the next block. */
		for (uint64_t w = scalar_starts & valid; w; w &= w - 1) {
			if (!scalar_ok(b + __builtin_ctzll(w), end)) {
				return NULL;
			}
		}
		if (last >= 0) {
			return (const char *)b + last + 1;
		}
	}
}

#endif

#ifdef SKIM_X86
static bool cpu_runs_it(void) {
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2");
}
#else
static bool cpu_runs_it(void) {
	return false;
}
#endif

/* Before main, so before any thread reads the switch. */
__attribute__((constructor)) static void skim_init(void) {
	atomic_init(&skim_on, cpu_runs_it());
}

bool kinf_jsonskim_available(void) {
	return cpu_runs_it();
}

void kinf_jsonskim_enable(bool on) {
	atomic_store(&skim_on, on && cpu_runs_it());
}

bool kinf_jsonskim_enabled(void) {
	return atomic_load_explicit(&skim_on, memory_order_relaxed);
}

const char *kinf_jsonskim(const char *p, const char *end, unsigned room) {
#ifdef SKIM_X86
	if (atomic_load_explicit(&skim_on, memory_order_relaxed) && end - p >= 2 &&
			(*p == '{' || *p == '[')) {
		return skim(p, end, room);
	}
#else
	(void)p;
	(void)end;
	(void)room;
#endif
	return NULL;
}
