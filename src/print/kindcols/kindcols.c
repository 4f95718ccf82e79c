/*
 * The public functions, and where a kind's printer is found: each file's
 * table (kindcols_int.h has the map), then the defaults.
 */
#include <stdlib.h>
#include <string.h>

#include "apistatus.h"
#include "err.h"
#include "kindcols_int.h"
#include "object.h"
#include "rfc3339.h"

const struct kinf_kindcols_column kindcols_default_columns[2] = {
	COLUMN_NAME,
	{ "Created At", "date", "", 0, DOC_CREATED },
};

void default_cells(struct row *r, json_t *obj) {
	const char *ts = json_string_value(at(obj, "metadata", "creationTimestamp", NULL));
	struct timespec t = {0};
	char buf[32];
	cell_str(r, obj_name(obj));
	/* m.GetCreationTimestamp().Time.UTC().Format(time.RFC3339); zero for none */
	if (!ts || kinf_rfc3339_parse(ts, &t) < 0) {
		cell_str(r, "0001-01-01T00:00:00Z");
		return;
	}
	time_t sec = t.tv_sec;
	struct tm tm;
	gmtime_r(&sec, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	cell_str(r, buf);
}

/* A custom resource whose CRD is not at hand: serveDefaultColumnsIfEmpty's Age. */
static const struct kinf_kindcols_column custom_columns[] = {
	COLUMN_NAME,
	{ "Age", "date", "", 0, DOC_CREATED },
};

static void custom_cells(struct row *r, json_t *obj) {
	cell_str(r, obj_name(obj));
	cell_created(r, obj);
}

static const struct kinf_kindcols custom_default = { .group = "", .kind = "",
	.cols = custom_columns, .n_cols = 2, .cells = custom_cells, .from_record = true };

static const struct {
	const struct kinf_kindcols *v;
	const size_t *n;
} files[] = {
	{ kindcols_core, &kindcols_n_core },
	{ kindcols_apps, &kindcols_n_apps },
	{ kindcols_networking, &kindcols_n_networking },
	{ kindcols_storage, &kindcols_n_storage },
	{ kindcols_control, &kindcols_n_control },
};

static const struct kinf_kindcols *builtin(const char *group, const char *kind) {
	group = group ? group : "";
	kind = kind ? kind : "";
	for (size_t f = 0; f < sizeof(files) / sizeof(*files); f++) {
		for (size_t i = 0; i < *files[f].n; i++) {
			const struct kinf_kindcols *k = &files[f].v[i];
			if (strcmp(k->kind, kind) == 0 && strcmp(k->group, group) == 0) {
				return k;
			}
		}
	}
	return NULL;
}

const struct kinf_kindcols *kinf_kindcols_for(const char *group, const char *kind) {
	const struct kinf_kindcols *k = builtin(group, kind);
	return k ? k : &custom_default;
}

const struct kinf_kindcols *kinf_kindcols_for_object(const struct kinf_object *obj) {
	const char *gv = kinf_object_api_version(obj), *slash = strchr(gv, '/');
	char group[256] = "";
	if (slash && (size_t)(slash - gv) < sizeof(group)) {
		memcpy(group, gv, (size_t)(slash - gv));
		group[slash - gv] = '\0';
	}
	return kinf_kindcols_for(group, kinf_object_kind(obj));
}

bool kinf_kindcols_is_builtin(const char *group, const char *kind) {
	return builtin(group, kind) != NULL;
}

const struct kinf_kindcols *kinf_kindcols_ref(const struct kinf_kindcols *k) {
	if (k && k->crd) {
		atomic_fetch_add(&((struct kinf_kindcols *)k)->refs, 1);
	}
	return k;
}

const struct kinf_kindcols *kinf_kindcols_unref(const struct kinf_kindcols *k) {
	struct kinf_kindcols *own = (struct kinf_kindcols *)k;
	if (own && own->crd && atomic_fetch_sub(&own->refs, 1) == 1) {
		crd_free(own->crd);
		free(own);
	}
	return NULL;
}

size_t kinf_kindcols_columns(const struct kinf_kindcols *k,
		const struct kinf_kindcols_column **ret) {
	*ret = k->cols;
	return k->n_cols;
}

int kinf_kindcols_columns_json(const struct kinf_kindcols *k, struct kinf_buf *out) {
	kinf_buf_putc(out, '[');
	for (size_t i = 0; i < k->n_cols; i++) {
		const struct kinf_kindcols_column *c = &k->cols[i];
		kinf_buf_puts(out, i ? ",{\"name\":" : "{\"name\":");
		kinf_apistatus_put_quoted(out, c->name);
		kinf_buf_puts(out, ",\"type\":");
		kinf_apistatus_put_quoted(out, c->type);
		kinf_buf_puts(out, ",\"format\":");
		kinf_apistatus_put_quoted(out, c->format);
		kinf_buf_puts(out, ",\"description\":");
		kinf_apistatus_put_quoted(out, c->description);
		kinf_buf_putf(out, ",\"priority\":%d}", c->priority);
	}
	kinf_buf_putc(out, ']');
	return kinf_buf_error(out);
}

/* What a printer from_record reads of obj: its name and creationTimestamp. */
static json_t *record_tree(const struct kinf_object *obj) {
	const char *ts = kinf_object_creation_timestamp(obj);
	json_t *meta = json_pack("{s:s}", "name", kinf_object_name(obj));
	if (meta && ts[0] && json_object_set_new(meta, "creationTimestamp", json_string(ts)) < 0) {
		json_decref(meta);
		meta = NULL;
	}
	return meta ? json_pack("{s:o}", "metadata", meta) : NULL;
}

/* obj's cells into r (set up by the caller): 0 or the error. */
static int fill(struct row *r, const struct kinf_object *obj, struct kinf_error *reterr) {
	struct kinf_error local = {0};
	json_t *root = r->k->from_record ? record_tree(obj) : kinf_object_tree(obj, &local);
	if (!root) {
		/* a number beyond float64 (local names the object and the field), or memory */
		return local.code ? kinf_error_set(reterr, local.code, "%s", local.message) :
			kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	}
	r->k->cells(r, root);
	json_decref(root);
	/* Cells a printer did not write (it never should): null, as kubectl pads. */
	while (!r->err && r->at < r->k->n_cols) {
		cell_null(r);
	}
	return r->err;
}

static void now_or_clock(const struct timespec *now, struct timespec *ret) {
	if (now) {
		*ret = *now;
	} else {
		clock_gettime(CLOCK_REALTIME, ret);
	}
}

int kinf_kindcols_row_json(const struct kinf_kindcols *k, const struct kinf_object *obj,
		const struct timespec *now, struct kinf_buf *out, struct kinf_error *reterr) {
	struct row r = { .k = k, .json = true, .out = out };
	now_or_clock(now, &r.now);
	kinf_buf_puts(out, "\"cells\":[");
	int rc = fill(&r, obj, reterr);
	kinf_buf_putc(out, ']');
	if (r.conditions) {
		kinf_buf_puts(out, ",\"conditions\":");
		kinf_buf_puts(out, r.conditions);
	}
	return rc < 0 ? rc : kinf_buf_error(out);
}

bool kinf_kindcols_sorts_rows(const struct kinf_kindcols *k) {
	return k->row_order != NULL;
}

struct ordered {
	long long key;
	const char *name;
	const struct kinf_object *obj;
};

static int cmp_ordered(const void *a, const void *b) {
	const struct ordered *x = a, *y = b;
	if (x->key != y->key) {
		return x->key < y->key ? -1 : 1;
	}
	return strcmp(x->name, y->name);
}

int kinf_kindcols_sort_rows(const struct kinf_kindcols *k, const struct kinf_object **objs,
		size_t n) {
	if (!k->row_order || n < 2) {
		return 0;
	}
	struct ordered *v = calloc(n, sizeof(*v));
	if (!v) {
		return -KINF_ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		json_t *root = kinf_object_tree(objs[i], NULL);	/* none: key 0 */
		v[i] = (struct ordered){ root ? k->row_order(root) : 0, kinf_object_name(objs[i]),
			objs[i] };
		json_decref(root);
	}
	qsort(v, n, sizeof(*v), cmp_ordered);
	for (size_t i = 0; i < n; i++) {
		objs[i] = v[i].obj;
	}
	free(v);
	return 0;
}

int kinf_kindcols_headers(const struct kinf_kindcols *k, bool wide, struct kinf_strv *ret) {
	for (size_t i = 0; i < k->n_cols; i++) {
		if (!wide && k->cols[i].priority != 0) {
			continue;
		}
		char *u = strdup(k->cols[i].name);
		for (char *p = u; p && *p; p++) {
			if (*p >= 'a' && *p <= 'z') {
				*p = (char)(*p - 'a' + 'A');
			}
		}
		if (!u) {
			kinf_strv_fail(ret, -KINF_ENOMEM);
		}
		kinf_strv_put_take(ret, u);
	}
	return kinf_strv_error(ret);
}

int kinf_kindcols_cells(const struct kinf_kindcols *k, const struct kinf_object *obj,
		bool wide, const struct timespec *now, struct kinf_strv *ret,
		struct kinf_error *reterr) {
	struct row r = { .k = k, .wide = wide, .text = ret };
	now_or_clock(now, &r.now);
	int rc = fill(&r, obj, reterr);
	return rc < 0 ? rc : kinf_strv_error(ret);
}

int kinf_kindcols_append_labels(const struct kinf_label_columns *lc,
		const struct kinf_object *obj, struct kinf_strv *ret) {
	for (size_t i = 0; lc && i < lc->n_keys; i++) {
		if (obj) {
			const char *v = kinf_object_label(obj, lc->keys[i]);
			kinf_strv_put_str(ret, v ? v : "");
			continue;
		}
		const char *slash = strrchr(lc->keys[i], '/');
		char *h = strdup(slash ? slash + 1 : lc->keys[i]);
		for (char *p = h; p && *p; p++) {
			*p = *p >= 'a' && *p <= 'z' ? (char)(*p - 'a' + 'A') : *p;
		}
		kinf_strv_put_take(ret, h);
	}
	if (lc && lc->show_labels && !obj) {
		kinf_strv_put_str(ret, "LABELS");
	} else if (lc && lc->show_labels) {
		size_t n;
		const struct kinf_label *l = kinf_object_labels(obj, &n);
		struct kinf_buf b = {0};
		for (size_t i = 0; i < n; i++) {
			kinf_buf_putf(&b, "%s%s=%s", i ? "," : "", l[i].key, l[i].value);
		}
		kinf_strv_put_take(ret, n ? kinf_buf_take(&b) : strdup("<none>"));
		kinf_buf_release(&b);
	}
	return kinf_strv_error(ret) ? -KINF_ENOMEM : 0;
}
