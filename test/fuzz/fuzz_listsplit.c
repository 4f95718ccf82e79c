/*
 * The list splitter (src/listsplit.c): a List or Table response
 * split into members and items while it arrives, at arbitrary chunk
 * boundaries, with the items parsed where they lie (element_prefix, the
 * fast path) or gathered first. Input: one flags byte (bit 0 small limits,
 * bit 1 one-byte chunks, bit 2 the callbacks stop the split after 1 to 8
 * items, bits 3-5), eight bytes seeding the chunk sizes, the body.
 *
 * Properties checked besides memory safety: whole or in chunks, with or
 * without the fast path, the same members and items come out and the
 * outcome is the same (unless a size limit ended one of them); a stop
 * asked for by a callback (as kinf list's printer does on a closed pipe)
 * ends every run after the same items, with the callback's error.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "object.h"
#include "listsplit.h"

struct trace {
	uint64_t hash;
	unsigned long members;
	unsigned long items;
	int item_error;
	unsigned long stop_after;	/* items, then the callbacks stop it; 0 never */
	const struct kinf_object_limits *limits;
};

static void mix(struct trace *t, const char *s, size_t n) {
	for (size_t i = 0; i < n; i++) {
		t->hash = (t->hash ^ (unsigned char)s[i]) * 0x100000001b3ull;
	}
	t->hash = (t->hash ^ 0x1ff) * 0x100000001b3ull;
}

static int on_member(const char *key, size_t key_len, const char *value,
		size_t len, void *userdata) {
	struct trace *t = userdata;
	t->members++;
	mix(t, key, key_len);
	mix(t, value, len);
	return 0;
}

static int add_item(struct trace *t, struct kinf_object *obj) {
	size_t n;
	const char *json = kinf_object_json(obj, &n);
	t->items++;
	mix(t, kinf_object_key(obj), strlen(kinf_object_key(obj)));
	mix(t, json, n);
	kinf_object_unref(obj);
	return t->items == t->stop_after ? -KINF_ECANCELED : 0;
}

static int on_element(const char *key, size_t key_len, const char *value,
		size_t len, void *userdata) {
	struct trace *t = userdata;
	struct kinf_object *obj = NULL;
	mix(t, key, key_len);
	int rc = kinf_object_parse(value, len, t->limits, &obj, NULL);
	if (rc < 0) {
		t->item_error = rc;
		return rc;
	}
	return add_item(t, obj);
}

static int on_element_prefix(const char *key, size_t key_len, const char *data,
		size_t avail, size_t *ret_used, void *userdata) {
	struct trace *t = userdata;
	struct kinf_object *obj = NULL;
	if (key_len != 5) {
		return -KINF_EINVAL;
	}
	int rc = kinf_object_parse_prefix(data, avail, t->limits, &obj, ret_used, NULL);
	if (rc < 0) {
		return rc;
	}
	FUZZ_CHECK(*ret_used > 0 && *ret_used <= avail && data[*ret_used - 1] == '}');
	mix(t, key, key_len);
	rc = add_item(t, obj);
	return rc < 0 ? -rc : 0;	/* taken, and stop */
}

static const struct kinf_listsplit_ops slow_ops = {
	.member = on_member, .element = on_element,
};
static const struct kinf_listsplit_ops fast_ops = {
	.member = on_member, .element = on_element, .element_prefix = on_element_prefix,
};

static int run(const uint8_t *data, size_t len, const struct kinf_listsplit_ops *ops,
		const struct kinf_object_limits *limits, uint64_t seed, int chunking,
		struct trace *t) {
	struct kinf_error err = {0};
	struct kinf_listsplit *s = kinf_listsplit_new(ops, t, limits->max_bytes);
	int rc = 0;

	FUZZ_CHECK(s != NULL);
	t->limits = limits;
	size_t off = 0;
	while (off < len) {
		size_t n = len - off;
		if (chunking == 1) {
			n = 1;
		} else if (chunking == 2) {
			size_t c = 1 + (size_t)(fuzz_rand(&seed) % 200);
			n = c < n ? c : n;
		}
		rc = kinf_listsplit_feed(s, (const char *)data + off, n, &err);
		if (rc < 0) {
			FUZZ_CHECK(kinf_listsplit_feed(s, "{", 1, NULL) < 0);
			break;
		}
		off += n;
	}
	if (rc == 0) {
		rc = kinf_listsplit_finish(s, &err);
	}
	kinf_listsplit_free(s);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	struct fuzz_input in = { data, size };
	uint8_t flags = fuzz_byte(&in);
	uint64_t seed = 0;
	for (int i = 0; i < 8; i++) {
		seed = seed << 8 | fuzz_byte(&in);
	}
	struct kinf_object_limits limits = {0};
	if (flags & 1) {
		limits.max_bytes = 300;
		limits.max_depth = 8;
	}
	struct trace t[4];
	int rc[4];
	const struct kinf_listsplit_ops *ops[4] = { &slow_ops, &fast_ops, &slow_ops, &fast_ops };
	int chunking = flags & 2 ? 1 : 2;
	for (int i = 0; i < 4; i++) {
		memset(&t[i], 0, sizeof(t[i]));
		t[i].hash = 0xcbf29ce484222325ull;
		t[i].stop_after = flags & 4 ? 1 + ((flags >> 3) & 7) : 0;
		rc[i] = run(in.p, in.n, ops[i], &limits, seed, i < 2 ? 0 : chunking, &t[i]);
	}
	for (int i = 0; i < 4; i++) {
		if (rc[i] == -KINF_ETOOBIG) {
			return 0;
		}
	}
	/*
	 * An item that fails to parse may fail on the fast path's terms (cut
	 * short where it lies) and be rescanned: the outcome must still agree.
	 */
	for (int i = 0; i < 4; i++) {
		FUZZ_CHECK(rc[i] != -KINF_ECANCELED || t[i].items == t[i].stop_after);
	}
	for (int i = 1; i < 4; i++) {
		FUZZ_CHECK((rc[i] < 0) == (rc[0] < 0));
		/*
		 * Bad syntax right after the item that stops the split: the fast
		 * path hands the item over first, the scanner looks for the ','
		 * or ']' first. Either way the list fails.
		 */
		bool stopped = rc[i] == -KINF_ECANCELED, stopped0 = rc[0] == -KINF_ECANCELED;
		FUZZ_CHECK(stopped == stopped0 || rc[stopped ? 0 : i] == -KINF_EJSON);
		if (rc[0] == 0 || (stopped && stopped0)) {
			FUZZ_CHECK(t[i].members == t[0].members);
			FUZZ_CHECK(t[i].items == t[0].items);
			FUZZ_CHECK(t[i].hash == t[0].hash);
		}
	}
	return 0;
}
