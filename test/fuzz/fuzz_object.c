/*
 * The JSON object record (src/object.c, src/json.c): parsing, the
 * extracted metadata, field paths and the index functions built on them
 * (src/indexfuncs.c). Input: one flags byte (bit 0 small limits), a field
 * path up to a NUL byte, then the JSON.
 *
 * Properties checked besides memory safety: the record read from
 * metadata only (metadata_only) gives the same verdict, bytes, key, labels
 * and owners; dropping managedFields leaves exactly them out; jansson agrees on validity
 * (for objects within the depth limit), the compact bytes are valid JSON
 * equal to the input as a value, the record matches what jansson reads
 * (name, namespace, key, labels), labels are sorted and found by lookup.
 */
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "fuzz.h"
#include "indexfuncs.h"
#include "json.h"
#include "object.h"

static const char *const builtin_specs[] = {
	"namespace", "node", "owner", "phase", "label:app", "app",
	"field:spec.containers[*].image", "field:metadata.labels['a.b/c']",
	"field:spec", "field:status.conditions[0].type",
};

/* A JSON string from jansson as C text, or NULL when it holds a NUL. */
static const char *plain_string(json_t *v) {
	if (!json_is_string(v)) {
		return NULL;
	}
	const char *s = json_string_value(v);
	return strlen(s) == json_string_length(v) ? s : NULL;
}

/* jansson refuses numbers beyond its ranges and NUL bytes in keys. */
static bool jansson_limit(const json_error_t *jerr) {
	return strstr(jerr->text, "overflow") || strstr(jerr->text, "too big") ||
		strstr(jerr->text, "NUL byte in object key");
}

static void check_record(const struct kinf_object *obj, json_t *root) {
	json_t *meta = json_object_get(root, "metadata");
	const char *name = plain_string(json_object_get(meta, "name"));
	json_t *ns_v = json_object_get(meta, "namespace");
	const char *ns = plain_string(ns_v);

	if (name) {
		FUZZ_CHECK(strcmp(kinf_object_name(obj), name) == 0);
	}
	if (ns) {
		FUZZ_CHECK(strcmp(kinf_object_namespace(obj), ns) == 0);
	} else if (!ns_v || json_is_null(ns_v)) {
		FUZZ_CHECK(kinf_object_namespace(obj)[0] == '\0');
	}
	if (name && (ns || !ns_v || json_is_null(ns_v))) {
		struct kinf_buf key = {0};
		if (ns && ns[0]) {
			FUZZ_CHECK(kinf_buf_printf(&key, "%s/%s", ns, name) == 0);
		} else {
			FUZZ_CHECK(kinf_buf_append_str(&key, name) == 0);
		}
		FUZZ_CHECK(key.data && strcmp(kinf_object_key(obj), key.data) == 0);
		kinf_buf_release(&key);
	}

	size_t n_labels;
	const struct kinf_label *labels = kinf_object_labels(obj, &n_labels);
	json_t *lab = json_object_get(meta, "labels");
	if (json_is_object(lab)) {
		FUZZ_CHECK(n_labels <= json_object_size(lab) || n_labels > 0);
	}
	for (size_t i = 0; i < n_labels; i++) {
		FUZZ_CHECK(labels[i].key && labels[i].value);
		if (i > 0) {
			FUZZ_CHECK(strcmp(labels[i - 1].key, labels[i].key) <= 0);
		}
		FUZZ_CHECK(kinf_object_label(obj, labels[i].key) != NULL);
	}
	size_t n_owners;
	const struct kinf_owner_ref *owners = kinf_object_owners(obj, &n_owners);
	for (size_t i = 0; i < n_owners; i++) {
		FUZZ_CHECK(owners[i].kind && owners[i].name);
	}
	/* Every getter returns a string, never NULL. */
	FUZZ_CHECK(kinf_object_uid(obj) && kinf_object_resource_version(obj) &&
			kinf_object_kind(obj) && kinf_object_api_version(obj) &&
			kinf_object_creation_timestamp(obj) &&
			kinf_object_deletion_timestamp(obj) &&
			kinf_object_node_name(obj) && kinf_object_phase(obj));
}

static void check_paths(const struct kinf_object *obj, const char *path) {
	struct kinf_strv values = {0};
	struct kinf_error err = {0};
	int check = kinf_object_field_path_check(path, &err);
	int rc = kinf_object_field_values(obj, path, &values, &err);
	FUZZ_CHECK(rc == 0 || rc == -KINF_EINVAL || rc == -KINF_ENOMEM);
	if (rc != -KINF_ENOMEM) {
		/* The syntax check and the evaluation agree about the path. */
		FUZZ_CHECK((check == 0) == (rc == 0));
	}
	for (size_t i = 0; i < values.n; i++) {
		FUZZ_CHECK(values.v[i] != NULL);
	}
	kinf_strv_release(&values);

	for (size_t i = 0; i < sizeof(builtin_specs) / sizeof(*builtin_specs); i++) {
		struct kinf_index_spec spec = {0};
		if (kinf_index_spec_resolve(builtin_specs[i], NULL, NULL, &spec, &err) < 0) {
			continue;
		}
		FUZZ_CHECK(kinf_index_spec_values(&spec, obj, &values) >= 0);
		kinf_strv_release(&values);
		kinf_index_spec_release(&spec);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	struct fuzz_input in = { data, size };
	uint8_t flags = fuzz_byte(&in);
	char *path = fuzz_string(&in);
	struct kinf_object_limits limits = {0};
	struct kinf_object *obj = NULL;
	struct kinf_error err = {0};
	const char *json = (const char *)in.p;
	size_t len = in.n;

	if (flags & 1) {
		limits.max_bytes = 512;
		limits.max_depth = 6;
	}
	unsigned depth = limits.max_depth ? limits.max_depth : KINF_OBJECT_DEFAULT_MAX_DEPTH;
	int rc = kinf_object_parse(json, len, &limits, &obj, &err);
	int valid = kinf_json_validate(json, len, depth, NULL);

	/* metadata_only: the same verdict, bytes, key, labels and owners. */
	struct kinf_object_limits mol = limits;
	struct kinf_object *mobj = NULL;
	mol.metadata_only = true;
	FUZZ_CHECK(kinf_object_parse(json, len, &mol, &mobj, NULL) == rc);
	if (rc == 0) {
		size_t a, b, la, lb, oa, ob;
		const char *ja = kinf_object_json(obj, &a), *jb = kinf_object_json(mobj, &b);
		FUZZ_CHECK(a == b && memcmp(ja, jb, a) == 0);
		FUZZ_CHECK(strcmp(kinf_object_key(obj), kinf_object_key(mobj)) == 0);
		kinf_object_labels(obj, &la);
		kinf_object_labels(mobj, &lb);
		kinf_object_owners(obj, &oa);
		kinf_object_owners(mobj, &ob);
		FUZZ_CHECK(la == lb && oa == ob);
	}
	kinf_object_unref(mobj);

	json_error_t jerr;
	/*
	 * drop_managed_fields: the same verdict and key, and the bytes are the
	 * object without metadata.managedFields (where keys are unique).
	 */
	struct kinf_object_limits dl = limits;
	struct kinf_object *dobj = NULL;
	dl.drop_managed_fields = true;
	FUZZ_CHECK(kinf_object_parse(json, len, &dl, &dobj, NULL) == rc);
	if (rc == 0 && dobj) {
		size_t dlen;
		const char *dj = kinf_object_json(dobj, &dlen);
		FUZZ_CHECK(kinf_json_validate(dj, dlen, depth, NULL) == 0);
		FUZZ_CHECK(strcmp(kinf_object_key(dobj), kinf_object_key(obj)) == 0);
		json_t *want = json_loadb(json, len, JSON_DECODE_ANY | JSON_ALLOW_NUL |
				JSON_REJECT_DUPLICATES, &jerr);
		if (want && json_is_object(json_object_get(want, "metadata"))) {
			json_object_del(json_object_get(want, "metadata"), "managedFields");
			json_t *got = json_loadb(dj, dlen, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
			FUZZ_CHECK(got != NULL && json_equal(got, want));
			json_decref(got);
		}
		json_decref(want);
	}
	kinf_object_unref(dobj);
	json_t *root = json_loadb(json, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
	if (rc == 0) {
		FUZZ_CHECK(obj != NULL);
		FUZZ_CHECK(valid == 0);
		size_t clen;
		const char *compact = kinf_object_json(obj, &clen);
		FUZZ_CHECK(compact[clen] == '\0');
		FUZZ_CHECK(kinf_json_validate(compact, clen, depth, NULL) == 0);
		/* Everything kinf accepts, jansson accepts (its limits aside). */
		FUZZ_CHECK(root != NULL || jansson_limit(&jerr));
		if (root) {
			FUZZ_CHECK(json_is_object(root));
			json_t *again = json_loadb(compact, clen,
					JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
			FUZZ_CHECK(again != NULL);
			FUZZ_CHECK(json_equal(root, again));
			json_decref(again);
			/*
			 * With duplicate keys jansson keeps the last value while
			 * kinf, like Go's decoder, merges repeated objects.
			 */
			json_t *nodup = json_loadb(json, len, JSON_DECODE_ANY |
					JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES, &jerr);
			if (nodup) {
				check_record(obj, root);
			}
			json_decref(nodup);
		}
		check_paths(obj, path);

		struct kinf_object *typed = kinf_object_with_type(obj, "v1", "Pod");
		FUZZ_CHECK(typed != NULL);
		const char *tj = kinf_object_json(typed, &clen);
		FUZZ_CHECK(kinf_json_validate(tj, clen, depth + 1, NULL) == 0);
		FUZZ_CHECK(strcmp(kinf_object_key(typed), kinf_object_key(obj)) == 0);
		kinf_object_unref(typed);
		kinf_object_unref(obj);
	} else {
		FUZZ_CHECK(obj == NULL);
		FUZZ_CHECK(err.code == -rc);
		FUZZ_CHECK(err.message[0] != '\0');
		if (rc == -KINF_EJSON && len <= (limits.max_bytes ? limits.max_bytes :
				KINF_OBJECT_DEFAULT_MAX_BYTES) && valid == 0 && json_is_object(root)) {
			/*
			 * A valid JSON object with a metadata.name fails only for a
			 * field of the wrong type (as Go's decoder would), and the
			 * message says where.
			 */
			json_t *name = json_object_get(json_object_get(root, "metadata"), "name");
			if (json_is_string(name)) {
				/*
				 * Or for metadata no server sends (a name its
				 * validation refuses, a NUL): then the message
				 * names the object.
				 */
				FUZZ_CHECK(strncmp(err.message, "line ", 5) == 0 ||
						strncmp(err.message, "object \"", 8) == 0);
			}
		}
	}
	/* jansson accepts valid JSON that kinf's validator does (NUL escapes too). */
	if (valid == 0 && depth < 2048) {
		FUZZ_CHECK(root != NULL || jansson_limit(&jerr));
	}
	json_decref(root);
	free(path);
	return 0;
}
