#ifndef KINF_OBJECT_H
#define KINF_OBJECT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "buf.h"
#include "err.h"

/*
 * One Kubernetes object: its compact JSON bytes, kept byte-exact, plus a
 * small record of fields extracted once at parse time. Immutable after
 * kinf_object_parse() and reference counted (atomically), because one object
 * sits in the store, in index buckets and in queued deltas at once.
 * All const char * getters return strings owned by the object ("" when the
 * field is absent, never NULL).
 */
struct kinf_object;

struct kinf_label {
	const char *key;
	const char *value;
};

struct kinf_owner_ref {
	const char *kind;
	const char *name;
	bool controller;
};

/* Limits applied while parsing; zero fields mean the defaults below. */
struct kinf_object_limits {
	size_t max_bytes;	/* default 64 MiB */
	unsigned max_depth;	/* default 512 */
	/*
	 * Read only metadata (and kind, apiVersion): spec and status are
	 * validated whole, not walked for nodeName and phase, which stay
	 * empty. For objects that are only printed (kinf list -o
	 * json|yaml|name).
	 */
	bool metadata_only;
	/*
	 * Leave metadata.managedFields out of the kept bytes (client-go
	 * users' SetTransform): for objects nothing will print them from.
	 */
	bool drop_managed_fields;
	/*
	 * Most items one list may hold, and most pages it may take (the
	 * pager, and initial events of a streaming list); default 1,000,000.
	 */
	size_t max_list_items;
};

#define KINF_OBJECT_DEFAULT_MAX_BYTES ((size_t)64 << 20)
#define KINF_OBJECT_DEFAULT_MAX_DEPTH 512u
#define KINF_LIST_DEFAULT_MAX_ITEMS ((size_t)1000000)

/*
 * Parse one JSON object (must be a JSON object with metadata.name), validate
 * it strictly (syntax, UTF-8, depth) and build the record. The bytes are
 * copied, with insignificant white space removed. Returns 0 and a new object
 * with one reference in *ret, or -KINF_EJSON / -KINF_ETOOBIG / -KINF_ENOMEM.
 */
KINF_MUST_CHECK int kinf_object_parse(const char *json, size_t len,
		const struct kinf_object_limits *limits,
		struct kinf_object **ret, struct kinf_error *reterr);

/*
 * Like kinf_object_parse() for the object json starts with (white space
 * first is fine): the bytes after it are not looked at. *ret_used is the
 * length read, through the closing '}'. A text cut short fails as any
 * malformed one does (-KINF_EJSON).
 */
KINF_MUST_CHECK int kinf_object_parse_prefix(const char *json, size_t len,
		const struct kinf_object_limits *limits, struct kinf_object **ret,
		size_t *ret_used, struct kinf_error *reterr);

/*
 * obj without metadata.managedFields, as kubectl prints -o json and -o yaml
 * unless --show-managed-fields: a new reference to obj itself when it has
 * none. 0, or -KINF_ENOMEM.
 */
KINF_MUST_CHECK int kinf_object_without_managed_fields(struct kinf_object *obj,
		struct kinf_object **ret);

/*
 * Why s[0..len) cannot be a Kubernetes object's name or namespace, as the
 * API server's validation has it (apimachinery IsValidPathSegmentName: not
 * "." or "..", no '/' or '%'; and no NUL), e.g. "may not contain '/'"; NULL
 * when it can. kinf_object_parse() refuses such objects (-KINF_EJSON).
 */
const char *kinf_object_name_problem(const char *s, size_t len);

/*
 * An object's key for an error message: "ns/name" (or "name"), JSON-quoted
 * so that a NUL or a control shows as an escape. Always a string: "\"\""
 * when memory runs out. The caller releases buf.
 */
const char *kinf_object_key_quoted(struct kinf_buf *buf, const char *ns, size_t ns_len,
		const char *name, size_t name_len);

/*
 * obj's JSON as a new jansson tree (the caller decrefs), its numbers as
 * jsonnum.h has them. NULL on failure, with reterr naming the object and
 * the field: object "ns/name": field .spec.x: number 1e400 is beyond
 * float64's range (-KINF_ETOOBIG), or -KINF_ENOMEM.
 */
KINF_MUST_CHECK json_t *kinf_object_tree(const struct kinf_object *obj, struct kinf_error *reterr);

struct kinf_object *kinf_object_ref(struct kinf_object *obj);
/* Drop one reference; frees at zero. Accepts NULL. Returns NULL. */
struct kinf_object *kinf_object_unref(struct kinf_object *obj);

/* The compact JSON bytes (NUL-terminated; *ret_len without the NUL). */
const char *kinf_object_json(const struct kinf_object *obj, size_t *ret_len);
/* "namespace/name", or "name" for cluster-scoped objects. */
const char *kinf_object_key(const struct kinf_object *obj);
const char *kinf_object_namespace(const struct kinf_object *obj);
const char *kinf_object_name(const struct kinf_object *obj);
const char *kinf_object_uid(const struct kinf_object *obj);
const char *kinf_object_resource_version(const struct kinf_object *obj);
const char *kinf_object_kind(const struct kinf_object *obj);
const char *kinf_object_api_version(const struct kinf_object *obj);
const char *kinf_object_creation_timestamp(const struct kinf_object *obj);
const char *kinf_object_deletion_timestamp(const struct kinf_object *obj);
/* spec.nodeName and status.phase (pods); "" elsewhere. */
const char *kinf_object_node_name(const struct kinf_object *obj);
const char *kinf_object_phase(const struct kinf_object *obj);

/* Labels sorted by key; *ret_n is their count. */
const struct kinf_label *kinf_object_labels(const struct kinf_object *obj,
		size_t *ret_n);
/* The value of label key, or NULL when the object lacks it. */
const char *kinf_object_label(const struct kinf_object *obj, const char *key);
const struct kinf_owner_ref *kinf_object_owners(const struct kinf_object *obj,
		size_t *ret_n);

/*
 * A new object whose bytes are obj's with "apiVersion" and "kind" inserted
 * at the front when obj lacks them (list items omit them). Returns a new
 * reference to obj itself when nothing is missing, NULL on out of memory.
 */
KINF_MUST_CHECK struct kinf_object *kinf_object_with_type(struct kinf_object *obj,
		const char *api_version, const char *kind);

/*
 * The same without a copy, for writing it out: the bytes to write before
 * obj's JSON from offset *ret_skip on ("" and 0 when nothing is missing).
 * prefix is reset first. 0 or -KINF_ENOMEM.
 */
KINF_MUST_CHECK int kinf_object_type_prefix(const struct kinf_object *obj, const char *api_version,
		const char *kind, struct kinf_buf *prefix, size_t *ret_skip);

/*
 * Evaluate a field path such as "spec.nodeName", "metadata.labels.app" or
 * "spec.containers[*].image" (also "[0]", and "['a.b/c']" for keys with
 * dots, e.g. "metadata.annotations['k8s.io/initial-events-end']") against the object's bytes and
 * append every scalar it reaches as a string (strings decoded, numbers and
 * booleans as written, null skipped) to ret_values. A path that reaches
 * nothing appends nothing. -KINF_EINVAL for a malformed path.
 */
KINF_MUST_CHECK int kinf_object_field_values(const struct kinf_object *obj, const char *path,
		struct kinf_strv *ret_values, struct kinf_error *reterr);

/* Check a field path's syntax without an object. 0 or -KINF_EINVAL. */
KINF_MUST_CHECK int kinf_object_field_path_check(const char *path, struct kinf_error *reterr);

/*
 * An owned array of object references (sorted by key where the producer
 * says so), grown by kinf_object_list_push_take(). Initialise with {0};
 * a producer may also set v (malloc'd) and n itself, leaving cap 0.
 * kinf_object_list_release() drops each reference and frees v.
 */
struct kinf_object_list {
	struct kinf_object **v;
	size_t n;
	size_t cap;		/* slots allocated in v (0: exactly n) */
};
/* Room for extra more references. 0 or -KINF_ENOMEM. */
KINF_MUST_CHECK int kinf_object_list_reserve(struct kinf_object_list *list, size_t extra);
/*
 * Append obj with the caller's reference. 0, or -KINF_ENOMEM with obj
 * unref'd.
 */
KINF_MUST_CHECK int kinf_object_list_push_take(struct kinf_object_list *list, struct kinf_object *obj);
/* Drop each reference; keep the allocation for reuse. */
void kinf_object_list_reset(struct kinf_object_list *list);
void kinf_object_list_release(struct kinf_object_list *list);

#endif
