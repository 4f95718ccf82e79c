/*
 * The row a printer's cells go into, and the formats printers.go shares.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apistatus.h"
#include "err.h"
#include "gofloat.h"
#include "jsonnum.h"
#include "kindcols_int.h"
#include "rfc3339.h"

void kinf_kindcols_human_duration(long long s, char *buf, size_t size) {
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

/* ---- the row ---- */

/* Whether the next cell is written, and step past its column. */
static bool next_shown(struct row *r) {
	size_t i = r->at++;
	if (r->err || i >= r->k->n_cols) {
		return false;	/* more cells than columns: kubectl drops them */
	}
	return r->json || r->wide || r->k->cols[i].priority == 0;
}

static void fail(struct row *r, int err) {
	if (!r->err) {
		r->err = err;
	}
}

/* A JSON literal (json) or a text (kubectl's) for the next cell. */
static void put(struct row *r, const char *literal, const char *text) {
	if (!next_shown(r)) {
		return;
	}
	if (r->json) {
		kinf_buf_puts(r->out, r->at > 1 ? "," : "");
		kinf_buf_puts(r->out, literal);
	} else {
		kinf_strv_put_str(r->text, text);
	}
}

void cell_str(struct row *r, const char *s) {
	s = s ? s : "";
	if (!next_shown(r)) {
		return;
	}
	if (r->json) {
		kinf_buf_puts(r->out, r->at > 1 ? "," : "");
		if (kinf_apistatus_quote(r->out, s) < 0) {
			fail(r, -KINF_ENOMEM);
		}
		return;
	}
	/* kubectl prints a string up to its first line break, then "...". */
	size_t n = strcspn(s, "\f\n\r");
	if (!s[n]) {
		kinf_strv_put_str(r->text, s);
		return;
	}
	struct kinf_buf b = {0};
	kinf_buf_put(&b, s, n);
	kinf_buf_puts(&b, "...");
	if (kinf_buf_error(&b)) {
		fail(r, kinf_buf_error(&b));
	}
	kinf_strv_put_take(r->text, kinf_buf_take(&b));
}

void cell_strf(struct row *r, const char *fmt, ...) {
	struct kinf_buf b = {0};
	va_list ap;
	va_start(ap, fmt);
	int rc = kinf_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	if (rc < 0) {
		fail(r, rc);
	}
	cell_str(r, b.data);
	kinf_buf_release(&b);
}

void cell_buf(struct row *r, struct kinf_buf *b, const char *empty) {
	if (kinf_buf_error(b)) {
		fail(r, kinf_buf_error(b));
	}
	cell_str(r, b->len ? b->data : empty);
	kinf_buf_reset(b);
}

void cell_int(struct row *r, long long v) {
	char n[24];
	snprintf(n, sizeof(n), "%lld", v);
	put(r, n, n);
}

void cell_bool(struct row *r, bool v) {
	put(r, v ? "true" : "false", v ? "true" : "false");
}

void cell_null(struct row *r) {
	/* kubectl prints nothing for a null cell. */
	put(r, "null", "");
}

void cell_value(struct row *r, json_t *v) {
	switch (json_typeof(v)) {
	case JSON_STRING:
		cell_str(r, json_string_value(v));
		return;
	case JSON_INTEGER:
		cell_int(r, json_integer_value(v));
		return;
	case JSON_REAL: {
		/*
		 * The literal is encoding/json's; kubectl reads it back as
		 * jsonnum.h says (an int64 when it has no fraction and fits) and
		 * prints that value %v: 1000000, 1e+21, 2.75.
		 */
		char lit[KINF_GOFLOAT_SIZE], text[KINF_JSONNUM_SIZE];
		double d = json_real_value(v);
		struct kinf_jsonnum n = { .type = KINF_JSONNUM_FLOAT, .f = d };
		kinf_gofloat_format_json(d, lit);
		if (kinf_jsonnum_parse(lit, strlen(lit), &n) < 0) {
			n = (struct kinf_jsonnum){ .type = KINF_JSONNUM_FLOAT, .f = d };	/* (it is one) */
		}
		put(r, lit, kinf_jsonnum_format_value(&n, text));
		return;
	}
	case JSON_TRUE:
	case JSON_FALSE:
		cell_bool(r, json_is_true(v));
		return;
	default:
		cell_null(r);
		return;
	}
}

bool row_seconds_since(const struct row *r, const char *timestamp, long long *ret) {
	struct timespec t;
	if (!timestamp || kinf_rfc3339_parse(timestamp, &t) < 0) {
		return false;
	}
	/* Go's int(time.Since(t).Seconds()): whole seconds, toward zero. */
	long long ns = ((long long)r->now.tv_sec - (long long)t.tv_sec) * 1000000000LL +
		((long long)r->now.tv_nsec - (long long)t.tv_nsec);
	*ret = ns / 1000000000LL;
	return true;
}

void cell_age(struct row *r, const char *timestamp) {
	char age[32];
	long long s;
	/* A zero metav1.Time (unset, or Go's zero time) is "<unknown>". */
	if (!row_seconds_since(r, timestamp, &s) ||
			strncmp(timestamp, "0001-01-01T00:00:00", 19) == 0) {
		cell_str(r, "<unknown>");
		return;
	}
	kinf_kindcols_human_duration(s, age, sizeof(age));
	cell_str(r, age);
}

/* ---- JSON helpers ---- */

json_t *at(json_t *o, ...) {
	va_list ap;
	va_start(ap, o);
	for (const char *k = va_arg(ap, const char *); o && k; k = va_arg(ap, const char *)) {
		o = json_object_get(o, k);
	}
	va_end(ap);
	return o;
}

const char *str(json_t *o, const char *key) {
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "";
}

long long num(json_t *o, const char *key) {
	json_t *v = json_object_get(o, key);
	return json_is_real(v) ? (long long)json_real_value(v) : json_integer_value(v);
}

const char *obj_name(json_t *obj) {
	return str(json_object_get(obj, "metadata"), "name");
}

void cell_created(struct row *r, json_t *obj) {
	cell_age(r, json_string_value(at(obj, "metadata", "creationTimestamp", NULL)));
}

/* ---- formats ---- */

static int cmp_str(const void *a, const void *b) {
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* One requirement of a label selector, as labels.Requirement.String() writes it. */
struct requirement {
	const char *key;	/* borrowed from the selector's JSON */
	char *text;
	size_t order;		/* matchLabels, then matchExpressions */
};

/* By key, as labels' internalSelector.Add sorts (stable for one key). */
static int cmp_requirement(const void *a, const void *b) {
	const struct requirement *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	return c ? c : (x->order > y->order) - (x->order < y->order);
}

/* An expression: "key", "!key", "key in (a,b)" (values sorted), "key notin (a,b)". */
static char *expression_text(json_t *expr) {
	const char *k = str(expr, "key");
	const char *op = str(expr, "operator");
	struct kinf_buf b = {0};
	if (strcmp(op, "Exists") == 0) {
		kinf_buf_puts(&b, k);
	} else if (strcmp(op, "DoesNotExist") == 0) {
		kinf_buf_putf(&b, "!%s", k);
	} else {
		struct kinf_strv vals = {0};
		size_t j;
		json_t *x;
		json_array_foreach(json_object_get(expr, "values"), j, x) {
			kinf_strv_put_str(&vals, json_string_value(x) ? json_string_value(x) : "");
		}
		if (vals.n) {
			qsort(vals.v, vals.n, sizeof(*vals.v), cmp_str);
		}
		kinf_buf_putf(&b, "%s %s (", k, strcmp(op, "NotIn") == 0 ? "notin" : "in");
		for (j = 0; j < vals.n; j++) {
			kinf_buf_putf(&b, "%s%s", j ? "," : "", vals.v[j]);
		}
		kinf_buf_puts(&b, ")");
		if (kinf_strv_error(&vals)) {
			kinf_buf_fail(&b, kinf_strv_error(&vals));
		}
		kinf_strv_release(&vals);
	}
	return kinf_buf_take(&b);	/* NULL when memory ran out */
}

void format_label_selector(json_t *sel, const char *none, struct kinf_buf *out) {
	json_t *labels = json_object_get(sel, "matchLabels");
	json_t *exprs = json_object_get(sel, "matchExpressions");
	size_t max = json_object_size(labels) + json_array_size(exprs), n = 0, i;
	struct requirement *reqs = calloc(max ? max : 1, sizeof(*reqs));
	const char *key;
	json_t *v;

	if (!reqs) {
		kinf_buf_fail(out, -KINF_ENOMEM);
		return;
	}
	json_object_foreach(labels, key, v) {
		struct kinf_buf b = {0};
		kinf_buf_putf(&b, "%s=%s", key, json_string_value(v) ? json_string_value(v) : "");
		reqs[n] = (struct requirement){ key, kinf_buf_take(&b), n };
		n++;
	}
	json_array_foreach(exprs, i, v) {
		reqs[n] = (struct requirement){ str(v, "key"), expression_text(v), n };
		n++;
	}
	qsort(reqs, n, sizeof(*reqs), cmp_requirement);
	for (i = 0; i < n; i++) {
		if (!reqs[i].text) {
			kinf_buf_fail(out, -KINF_ENOMEM);
		}
		kinf_buf_putf(out, "%s%s", i ? "," : "", reqs[i].text ? reqs[i].text : "");
		free(reqs[i].text);
	}
	if (n == 0) {
		kinf_buf_puts(out, none);
	}
	free(reqs);
}

void sorted_keys(json_t *map, struct kinf_strv *ret) {
	const char *key;
	json_t *v;
	json_object_foreach(map, key, v) {
		kinf_strv_put_str(ret, key);
	}
	if (ret->n && !kinf_strv_error(ret)) {
		qsort(ret->v, ret->n, sizeof(*ret->v), cmp_str);
	}
}

void format_labels(json_t *map, struct kinf_buf *out) {
	struct kinf_strv keys = {0};
	sorted_keys(map, &keys);
	for (size_t i = 0; i < keys.n; i++) {
		kinf_buf_putf(out, "%s%s=%s", i ? "," : "", keys.v[i],
				str(map, keys.v[i]));
	}
	if (kinf_strv_error(&keys)) {
		kinf_buf_fail(out, kinf_strv_error(&keys));
	}
	if (keys.n == 0) {
		kinf_buf_puts(out, "<none>");
	}
	kinf_strv_release(&keys);
}

void cell_containers(struct row *r, json_t *containers) {
	struct kinf_buf names = {0}, images = {0};
	size_t i;
	json_t *c;
	json_array_foreach(containers, i, c) {
		kinf_buf_putf(&names, "%s%s", i ? "," : "", str(c, "name"));
		kinf_buf_putf(&images, "%s%s", i ? "," : "", str(c, "image"));
	}
	cell_buf(r, &names, "");
	cell_buf(r, &images, "");
	kinf_buf_release(&names);
	kinf_buf_release(&images);
}

void list_more_add(struct list_more *l, const char *item) {
	if (l->shown < l->max) {
		kinf_buf_putf(&l->text, "%s%s", l->shown ? "," : "", item);
		l->shown++;
	}
	l->count++;
}

void cell_list_more(struct row *r, struct list_more *l, const char *unset) {
	if (l->count > l->shown) {
		kinf_buf_putf(&l->text, " + %zu more...", l->count - l->shown);
	}
	cell_buf(r, &l->text, unset ? unset : "");
	kinf_buf_release(&l->text);
}

void load_balancer_ingress(json_t *ingress, struct kinf_buf *out) {
	struct kinf_strv seen = {0};
	size_t i;
	json_t *in;
	json_array_foreach(ingress, i, in) {
		const char *ip = str(in, "ip"), *host = str(in, "hostname");
		if (ip[0] || host[0]) {
			kinf_strv_put_str(&seen, ip[0] ? ip : host);
		}
	}
	kinf_strv_sort_unique(&seen);
	for (i = 0; i < seen.n; i++) {
		kinf_buf_putf(out, "%s%s", i ? "," : "", seen.v[i]);
	}
	if (kinf_strv_error(&seen)) {
		kinf_buf_fail(out, kinf_strv_error(&seen));
	}
	kinf_strv_release(&seen);
}
