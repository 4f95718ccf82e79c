#include <stdlib.h>
#include <string.h>

#include "indexfuncs.h"
#include "object.h"

static int index_namespace(const struct kinf_object *obj, struct kinf_strv *ret,
		void *userdata) {
	return kinf_strv_push_str(ret, kinf_object_namespace(obj));
}

static int index_node(const struct kinf_object *obj, struct kinf_strv *ret,
		void *userdata) {
	const char *node = kinf_object_node_name(obj);
	return node[0] ? kinf_strv_push_str(ret, node) : 0;
}

static int index_phase(const struct kinf_object *obj, struct kinf_strv *ret,
		void *userdata) {
	const char *phase = kinf_object_phase(obj);
	return phase[0] ? kinf_strv_push_str(ret, phase) : 0;
}

static int index_owner(const struct kinf_object *obj, struct kinf_strv *ret,
		void *userdata) {
	size_t n;
	const struct kinf_owner_ref *owners = kinf_object_owners(obj, &n);
	for (size_t i = 0; i < n; i++) {
		struct kinf_buf b = {0};
		if (kinf_buf_printf(&b, "%s/%s", owners[i].kind, owners[i].name) < 0 ||
				kinf_strv_push_take(ret, kinf_buf_take(&b)) < 0) {
			kinf_buf_release(&b);
			return -KINF_ENOMEM;
		}
	}
	return 0;
}

static int index_label(const struct kinf_object *obj, struct kinf_strv *ret,
		void *userdata) {
	const char *v = kinf_object_label(obj, userdata);
	return v ? kinf_strv_push_str(ret, v) : 0;
}

static int index_field(const struct kinf_object *obj, struct kinf_strv *ret,
		void *userdata) {
	return kinf_object_field_values(obj, userdata, ret, NULL);
}

static const struct {
	const char *name;
	kinf_index_func fn;
} builtins[] = {
	{ "namespace", index_namespace },
	{ "node", index_node },
	{ "owner", index_owner },
	{ "phase", index_phase },
};

const char *const kinf_index_builtin_names[] = {
	"namespace", "node", "owner", "phase", NULL,
};

/* Label keys: [prefix/]name, as apimachinery's IsQualifiedName allows. */
static bool valid_label_key(const char *key) {
	const char *slash = strchr(key, '/');
	const char *name = slash ? slash + 1 : key;
	size_t n = strlen(name);
	if (slash && (slash == key || slash - key > 253 || strchr(name, '/'))) {
		return false;
	}
	if (n == 0 || n > 63) {
		return false;
	}
	for (const char *p = key; *p; p++) {
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
				(*p >= '0' && *p <= '9') || *p == '-' || *p == '_' ||
				*p == '.' || *p == '/')) {
			return false;
		}
	}
	return true;
}

int kinf_index_define(const char *definition, struct kinf_strv *ret_names,
		struct kinf_strv *ret_paths, struct kinf_error *reterr) {
	const char *eq = strchr(definition, '=');
	if (!eq || eq == definition || !eq[1]) {
		return kinf_error_set(reterr, KINF_EINVAL,
				"--index \"%s\": expected NAME=PATH, e.g. sa=spec.serviceAccountName",
				definition);
	}
	size_t n = (size_t)(eq - definition);
	for (size_t i = 0; i < sizeof(builtins) / sizeof(*builtins); i++) {
		if (strlen(builtins[i].name) == n && strncmp(builtins[i].name, definition, n) == 0) {
			return kinf_error_set(reterr, KINF_EINVAL,
					"--index \"%s\": \"%.*s\" is a built-in index", definition,
					(int)n, definition);
		}
	}
	if (memchr(definition, ':', n)) {
		return kinf_error_set(reterr, KINF_EINVAL,
				"--index \"%s\": a name may not contain ':'", definition);
	}
	int rc = kinf_object_field_path_check(eq + 1, reterr);
	if (rc < 0) {
		kinf_error_prefix(reterr, "--index \"%s\"", definition);
		return rc;
	}
	if ((rc = kinf_strv_push(ret_names, definition, n)) < 0 ||
			(rc = kinf_strv_push_str(ret_paths, eq + 1)) < 0) {
		return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	}
	return 0;
}

/* ret made, or (a copy missing) released and out of memory said. */
static int resolved(struct kinf_index_spec *ret, bool want_arg, struct kinf_error *reterr) {
	if (ret->index_name && (!want_arg || ret->arg)) {
		return 0;
	}
	kinf_index_spec_release(ret);
	return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
}

int kinf_index_spec_resolve(const char *name, const struct kinf_strv *custom_names,
		const struct kinf_strv *custom_paths, struct kinf_index_spec *ret,
		struct kinf_error *reterr) {
	struct kinf_buf b = {0};
	memset(ret, 0, sizeof(*ret));

	for (size_t i = 0; i < sizeof(builtins) / sizeof(*builtins); i++) {
		if (strcmp(name, builtins[i].name) == 0) {
			ret->index_name = strdup(name);
			ret->fn = builtins[i].fn;
			return resolved(ret, false, reterr);
		}
	}
	for (size_t i = 0; custom_names && i < custom_names->n; i++) {
		if (strcmp(name, custom_names->v[i]) == 0) {
			ret->index_name = strdup(name);
			ret->arg = strdup(custom_paths->v[i]);
			ret->fn = index_field;
			return resolved(ret, true, reterr);
		}
	}
	if (strncmp(name, "field:", 6) == 0) {
		int rc = kinf_object_field_path_check(name + 6, reterr);
		if (rc < 0) {
			return rc;
		}
		ret->index_name = strdup(name);
		ret->arg = strdup(name + 6);
		ret->fn = index_field;
		return resolved(ret, true, reterr);
	}
	const char *key = strncmp(name, "label:", 6) == 0 ? name + 6 : name;
	if (!valid_label_key(key)) {
		return kinf_error_set(reterr, KINF_EINVAL,
				"\"%s\" is not an index: use namespace, node, owner, phase, "
				"a label key, label:KEY, field:PATH or a --index name", name);
	}
	ret->index_name = kinf_buf_printf(&b, "label:%s", key) == 0 ? kinf_buf_take(&b) : NULL;
	kinf_buf_release(&b);
	ret->arg = strdup(key);
	ret->fn = index_label;
	return resolved(ret, true, reterr);
}

void kinf_index_spec_release(struct kinf_index_spec *spec) {
	free(spec->index_name);
	free(spec->arg);
	memset(spec, 0, sizeof(*spec));
}

int kinf_index_spec_install(const struct kinf_index_spec *spec,
		struct kinf_indexer *idx, struct kinf_error *reterr) {
	if (kinf_indexer_has_index(idx, spec->index_name)) {
		return 0;
	}
	char *arg = NULL;
	if (spec->arg && !(arg = strdup(spec->arg))) {
		return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	}
	int rc = kinf_indexer_add_index(idx, spec->index_name, spec->fn, arg, free);
	if (rc < 0) {
		return kinf_error_set(reterr, -rc, "index \"%s\": %s", spec->index_name,
				kinf_strerror(rc));
	}
	return 0;
}

int kinf_index_spec_values(const struct kinf_index_spec *spec,
		const struct kinf_object *obj, struct kinf_strv *ret) {
	return spec->fn(obj, ret, spec->arg);
}

int kinf_index_spec_match(const struct kinf_index_spec *spec, const char *value,
		const struct kinf_object *obj) {
	struct kinf_strv vals = {0};
	int rc = kinf_index_spec_values(spec, obj, &vals);
	if (rc == 0 && kinf_strv_error(&vals)) {
		rc = -KINF_ENOMEM;
	}
	int hit = value ? kinf_strv_contains(&vals, value) : vals.n > 0;
	kinf_strv_release(&vals);
	return rc < 0 ? rc : hit;
}
