#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "gofloat.h"
#include "gojson.h"
#include "hex.h"
#include "json.h"
#include "jsonnum.h"
#include "jsonpath.h"
#include "jsonpath_int.h"

/* Evaluation ------------------------------------------------------------ */

/*
 * An expression's values are made one at a time, depth first, each handed
 * to a sink before the next is made. client-go walks step by step over
 * sets (each step maps every value of the set to its results, in order);
 * depth first gives the same values in the same order without holding a
 * set, so that the items of a List given one at a time
 * (kinf_jsonpath_execute_list) are trees only while the walk is inside
 * them. The one step that is not per value, a quoted text (client-go's
 * TextNode: the one value, whatever came before), starts the walk: the
 * steps before the last one cannot change what it yields.
 */
struct exec;

struct sink {
	/* 0 for more, 1 for no more (a filter has its answer), <0 an error */
	int (*take)(struct exec *x, json_t *v, void *userdata);
	void *userdata;
};

enum item_state { ITEM_UNSEEN, ITEM_TREE, ITEM_NONE };

struct exec {
	const struct kinf_jsonpath *jp;
	json_t *root;
	/*
	 * A List given item by item: root is its skeleton, whose "items"
	 * is marker, standing for list's items; state says which items
	 * had a tree when asked for (those without are not in the List).
	 */
	const struct kinf_jsonpath_list *list;
	json_t *marker;
	unsigned char *state;
	bool as_json;
	struct kinf_buf *out;
	FILE *file;		/* out goes to it as it grows, or NULL */
};

#define SPILL_BYTES ((size_t)64 << 10)

/* Write out what is made so far (for a file), so that out stays small. */
static int spill(struct exec *x, bool all) {
	int rc = kinf_buf_error(x->out);
	if (rc < 0 || !x->file || (!all && x->out->len < SPILL_BYTES)) {
		return rc;
	}
	if (x->out->len && fwrite(x->out->data, 1, x->out->len, x->file) != x->out->len) {
		return -KINF_EIO;
	}
	kinf_buf_reset(x->out);
	return 0;
}

/* Item i's tree (a new reference), or NULL when it has none. */
static json_t *item_get(struct exec *x, size_t i) {
	if (x->state[i] == ITEM_NONE) {
		return NULL;
	}
	json_t *t = x->list->item(x->list->userdata, i);
	x->state[i] = t ? ITEM_TREE : ITEM_NONE;
	return t;
}

/* Whether item i is in the List: it has a tree (made and dropped the first time). */
static bool item_in_list(struct exec *x, size_t i) {
	if (x->state[i] == ITEM_UNSEEN) {
		json_decref(item_get(x, i));
	}
	return x->state[i] == ITEM_TREE;
}

/*
 * The k-th item of the List from the front (k >= 0) or the back (-1 is
 * the last): its tree, or NULL for none.
 */
static json_t *item_nth(struct exec *x, long k) {
	size_t n = x->list->n;
	/* -(k + 1) for the back: LONG_MIN has no negation */
	size_t want = k >= 0 ? (size_t)k : (size_t)(-(k + 1));
	for (size_t j = 0; j < n; j++) {
		size_t i = k >= 0 ? j : n - 1 - j;
		if (x->state[i] == ITEM_NONE || (want > 0 && x->state[i] == ITEM_TREE)) {
			want -= x->state[i] == ITEM_TREE;
			continue;
		}
		json_t *t = item_get(x, i);
		if (t && want == 0) {
			return t;
		}
		want -= t != NULL;
		json_decref(t);
	}
	return NULL;
}

static int walk(struct exec *x, const struct expr *e, size_t si, json_t *v,
		const struct sink *s);
static int eval(struct exec *x, const struct expr *e, json_t *cur, const struct sink *s);

/* Each item in the List, its tree walked on from step si. */
static int walk_items(struct exec *x, const struct expr *e, size_t si, const struct sink *s) {
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < x->list->n; i++) {
		json_t *t = item_get(x, i);
		if (t) {
			rc = walk(x, e, si, t, s);
			json_decref(t);
		}
	}
	return rc;
}

/* [a:b] of the List's items, as [a:b] of an array of them. */
static int slice_items(struct exec *x, const struct step *st, const struct expr *e,
		size_t si, const struct sink *s) {
	long a = st->has_start ? st->start : 0, b = st->has_end ? st->end : LONG_MAX;
	int rc = 0;
	if (a < 0 || b < 0) {
		/* From the end: how many there are first. */
		long n = 0;
		for (size_t i = 0; i < x->list->n; i++) {
			n += item_in_list(x, i);
		}
		a = a < 0 ? (a + n < 0 ? 0 : a + n) : a;
		b = b < 0 ? b + n : b;
	}
	long j = 0;
	for (size_t i = 0; rc == 0 && i < x->list->n && j < b; i++) {
		if (x->state[i] == ITEM_NONE || (j < a && x->state[i] == ITEM_TREE)) {
			j += x->state[i] == ITEM_TREE;
			continue;
		}
		json_t *t = item_get(x, i);
		if (t && j >= a) {
			rc = walk(x, e, si, t, s);
		}
		j += t != NULL;
		json_decref(t);
	}
	return rc;
}

static int compare(json_t *a, json_t *b) {
	if (json_is_number(a) && json_is_number(b)) {
		return kinf_jsonnum_cmp_json(a, b);
	}
	if (json_is_string(a) && json_is_string(b)) {
		return strcmp(json_string_value(a), json_string_value(b));
	}
	return json_equal(a, b) ? 0 : 2;
}

/* A filter's sink: 1 (no more) at the first value that passes. */
static int take_filter(struct exec *x, json_t *v, void *userdata) {
	const struct step *s = userdata;
	int c = s->op == CMP_EXISTS ? 0 : compare(v, s->literal);
	(void)x;
	switch (s->op) {
	case CMP_EXISTS: return 1;
	case CMP_EQ: return c == 0;
	case CMP_NE: return c != 0;
	case CMP_LT: return c == -1;
	case CMP_GT: return c == 1;
	case CMP_LE: return c == -1 || c == 0;
	case CMP_GE: return c == 1 || c == 0;
	}
	return 0;
}

/* Whether item passes the filter step s: 1, 0, or <0 for an error. */
static int filter_ok(struct exec *x, const struct step *s, json_t *item) {
	struct sink test = { take_filter, (void *)s };
	return eval(x, s->filter_path, item, &test);
}

/* The elements of v that pass the filter, walked on from step si. */
static int filter(struct exec *x, const struct step *st, json_t *v, const struct expr *e,
		size_t si, const struct sink *s) {
	int rc = 0;
	if (v == x->marker) {
		for (size_t i = 0; rc == 0 && i < x->list->n; i++) {
			json_t *t = item_get(x, i);
			if (t && (rc = filter_ok(x, st, t)) == 1) {
				rc = walk(x, e, si, t, s);
			}
			json_decref(t);
		}
		return rc;
	}
	size_t j;
	json_t *c;
	json_array_foreach(v, j, c) {
		if ((rc = filter_ok(x, st, c)) == 1) {
			rc = walk(x, e, si, c, s);
		}
		if (rc != 0) {
			break;
		}
	}
	return rc;
}

/*
 * .. (name NULL) or ..name below v: in an object its values (or its name
 * member) first, then what is below each; in an array each element, then
 * what is below it.
 */
static int recurse(struct exec *x, json_t *v, const char *name, const struct expr *e,
		size_t si, const struct sink *s) {
	const char *k;
	json_t *child;
	size_t i;
	int rc = 0;
	if (v == x->marker) {
		for (i = 0; rc == 0 && i < x->list->n; i++) {
			json_t *t = item_get(x, i);
			if (t && !name) {
				rc = walk(x, e, si, t, s);
			}
			if (t && rc == 0) {
				rc = recurse(x, t, name, e, si, s);
			}
			json_decref(t);
		}
	} else if (json_is_object(v)) {
		if (name) {
			json_t *hit = json_object_get(v, name);
			rc = hit ? walk(x, e, si, hit, s) : 0;
		} else {
			json_object_foreach(v, k, child) {
				if ((rc = walk(x, e, si, child, s)) != 0) {
					return rc;
				}
			}
		}
		json_object_foreach(v, k, child) {
			if (rc != 0 || (rc = recurse(x, child, name, e, si, s)) != 0) {
				return rc;
			}
		}
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, child) {
			if ((!name && (rc = walk(x, e, si, child, s)) != 0) ||
					(rc = recurse(x, child, name, e, si, s)) != 0) {
				return rc;
			}
		}
	}
	return rc;
}

/* Step si of e and the rest on v: every value they reach, to s. */
static int walk(struct exec *x, const struct expr *e, size_t si, json_t *v,
		const struct sink *s) {
	if (si == e->n) {
		return s->take(x, v, s->userdata);
	}
	const struct step *st = &e->steps[si];
	const char *k;
	json_t *c;
	size_t j;
	int rc = 0;
	switch (st->kind) {
	case STEP_TEXT:
	case STEP_LITERAL:
		return walk(x, e, si + 1, st->literal, s);
	case STEP_FIELD:
		c = json_object_get(v, st->name);
		return c ? walk(x, e, si + 1, c, s) : 0;
	case STEP_ALL:
		if (v == x->marker) {
			return walk_items(x, e, si + 1, s);
		}
		if (json_is_array(v)) {
			json_array_foreach(v, j, c) {
				if ((rc = walk(x, e, si + 1, c, s)) != 0) {
					break;
				}
			}
		} else if (json_is_object(v)) {
			json_object_foreach(v, k, c) {
				if ((rc = walk(x, e, si + 1, c, s)) != 0) {
					break;
				}
			}
		}
		return rc;
	case STEP_INDEX: {
		if (v == x->marker) {
			json_t *t = item_nth(x, st->index);
			rc = t ? walk(x, e, si + 1, t, s) : 0;
			json_decref(t);
			return rc;
		}
		long n = (long)json_array_size(v);
		long idx = st->index < 0 ? n + st->index : st->index;
		if (json_is_array(v) && idx >= 0 && idx < n) {
			rc = walk(x, e, si + 1, json_array_get(v, (size_t)idx), s);
		}
		return rc;
	}
	case STEP_SLICE: {
		if (v == x->marker) {
			return slice_items(x, st, e, si + 1, s);
		}
		long n = (long)json_array_size(v);
		long a = st->has_start ? st->start : 0, b = st->has_end ? st->end : n;
		a = a < 0 ? a + n : a;
		b = b < 0 ? b + n : b;
		a = a < 0 ? 0 : a;
		b = b > n ? n : b;
		for (long i = a; rc == 0 && i < b; i++) {
			rc = walk(x, e, si + 1, json_array_get(v, (size_t)i), s);
		}
		return rc;
	}
	case STEP_RECURSIVE:
		return recurse(x, v, st->name, e, si + 1, s);
	case STEP_FILTER:
		return v == x->marker || json_is_array(v) ? filter(x, st, v, e, si + 1, s) : 0;
	}
	return 0;
}

static int eval(struct exec *x, const struct expr *e, json_t *cur, const struct sink *s) {
	size_t si = e->n;
	while (si > 0 && e->steps[si - 1].kind != STEP_TEXT) {
		si--;
	}
	json_t *start = si > 0 ? e->steps[si - 1].literal : e->from_root ? x->root : cur;
	return start ? walk(x, e, si, start, s) : 0;
}

/* indent NULL: compact, on one line. */
static void newline(struct kinf_buf *out, const char *indent, int depth) {
	if (indent) {
		kinf_buf_putc(out, '\n');
		for (int i = 0; i < depth; i++) {
			kinf_buf_puts(out, indent);
		}
	}
}

static int put_json(struct exec *x, json_t *v, const char *indent, int depth);

/* The List's items as a JSON array, made an item at a time. */
static int put_items(struct exec *x, const char *indent, int depth) {
	size_t k = 0;
	int rc = 0;
	kinf_buf_putc(x->out, '[');
	for (size_t i = 0; rc == 0 && i < x->list->n; i++) {
		json_t *t = item_get(x, i);
		if (t) {
			kinf_buf_puts(x->out, k++ ? "," : "");
			newline(x->out, indent, depth + 1);
			rc = kinf_gojson_append_at(x->out, t, indent, depth + 1);
			rc = rc < 0 ? rc : spill(x, false);
			json_decref(t);
		}
	}
	if (k) {
		newline(x->out, indent, depth);
	}
	kinf_buf_putc(x->out, ']');
	return rc;
}

/*
 * v as encoding/json writes it, at depth (gojson.h), the List and its
 * items too: the skeleton's members in Go's (sorted) order.
 */
static int put_json(struct exec *x, json_t *v, const char *indent, int depth) {
	if (!x->marker || (v != x->root && v != x->marker)) {
		return kinf_gojson_append_at(x->out, v, indent, depth);
	}
	if (v == x->marker) {
		return put_items(x, indent, depth);
	}
	static const char *const keys[] = { "apiVersion", "items", "kind", "metadata" };
	int rc = 0;
	kinf_buf_putc(x->out, '{');
	for (size_t i = 0; rc == 0 && i < sizeof(keys) / sizeof(*keys); i++) {
		kinf_buf_puts(x->out, i ? "," : "");
		newline(x->out, indent, depth + 1);
		kinf_buf_putf(x->out, "\"%s\"%s", keys[i], indent ? ": " : ":");
		rc = put_json(x, json_object_get(v, keys[i]), indent, depth + 1);
	}
	newline(x->out, indent, depth);
	kinf_buf_putc(x->out, '}');
	return rc;
}

/* An expression's values as kubectl's JSONPath printer shows them, a space between. */
static int take_print(struct exec *x, json_t *v, void *userdata) {
	size_t *count = userdata;
	if ((*count)++) {
		kinf_buf_putc(x->out, ' ');
	}
	int rc = x->marker && (v == x->root || v == x->marker) ? put_json(x, v, NULL, 0) :
		kinf_jsonpath_print_value(v, x->out);
	return rc < 0 ? rc : spill(x, false);
}

/*
 * jsonpath-as-json: an expression's values (client-go's PrintResults with
 * outputJSON) as json.MarshalIndent of the array of them, "    " a level.
 */
static int take_print_json(struct exec *x, json_t *v, void *userdata) {
	size_t *count = userdata;
	kinf_buf_putc(x->out, (*count)++ ? ',' : '[');
	newline(x->out, "    ", 1);
	int rc = put_json(x, v, "    ", 1);
	return rc < 0 ? rc : spill(x, false);
}

static int end_print_json(struct exec *x, size_t count) {
	kinf_buf_puts(x->out, count ? "\n]\n" : "[]\n");
	return spill(x, false);
}

static int run_nodes(struct exec *x, size_t from, size_t to, json_t *cur);

/* A range's body, for each value its expression reaches. */
struct range {
	size_t from, to;	/* the body's nodes */
};

static int take_range(struct exec *x, json_t *v, void *userdata) {
	const struct range *r = userdata;
	return run_nodes(x, r->from, r->to, v);
}

static int run_nodes(struct exec *x, size_t from, size_t to, json_t *cur) {
	const struct kinf_jsonpath *jp = x->jp;
	int rc = 0;
	for (size_t i = from; rc == 0 && i < to; i++) {
		const struct node *n = &jp->nodes[i];
		size_t count = 0;
		if (n->kind == NODE_TEXT && x->as_json) {
			json_t *text = json_string(n->text);
			struct sink print = { take_print_json, &count };
			rc = text ? print.take(x, text, &count) : -KINF_ENOMEM;
			rc = rc < 0 ? rc : end_print_json(x, count);
			json_decref(text);
		} else if (n->kind == NODE_TEXT) {
			kinf_buf_puts(x->out, n->text);
			rc = spill(x, false);
		} else if (n->kind == NODE_EXPR) {
			struct sink print = { x->as_json ? take_print_json : take_print, &count };
			rc = eval(x, n->expr, cur, &print);
			rc = rc < 0 || !x->as_json ? rc : end_print_json(x, count);
		} else if (n->kind == NODE_RANGE) {
			/* Find the matching end. */
			size_t depth = 1, end = i + 1;
			for (; end < to; end++) {
				if (jp->nodes[end].kind == NODE_RANGE) {
					depth++;
				} else if (jp->nodes[end].kind == NODE_END && --depth == 0) {
					break;
				}
			}
			struct range r = { i + 1, end };
			struct sink body = { take_range, &r };
			rc = eval(x, n->expr, cur, &body);
			i = end;
		}
	}
	return rc;
}

static int finish(struct exec *x, int rc, struct kinf_error *reterr) {
	if (rc == 0) {
		rc = spill(x, true);
	}
	if (rc == -KINF_EIO) {
		return kinf_error_set(reterr, KINF_EIO, "writing output: %s", strerror(errno));
	}
	return rc < 0 ? kinf_error_set(reterr, -rc, "out of memory") : 0;
}

static int execute(const struct kinf_jsonpath *jp, json_t *data, bool as_json,
		struct kinf_buf *out, struct kinf_error *reterr) {
	struct exec x = { .jp = jp, .root = data, .as_json = as_json, .out = out };
	return finish(&x, run_nodes(&x, 0, jp->n, data), reterr);
}

int kinf_jsonpath_execute(const struct kinf_jsonpath *jp, json_t *data,
		struct kinf_buf *out, struct kinf_error *reterr) {
	return execute(jp, data, false, out, reterr);
}

int kinf_jsonpath_execute_json(const struct kinf_jsonpath *jp, json_t *data,
		struct kinf_buf *out, struct kinf_error *reterr) {
	return execute(jp, data, true, out, reterr);
}

int kinf_jsonpath_execute_list(const struct kinf_jsonpath *jp,
		const struct kinf_jsonpath_list *list, bool as_json, FILE *out,
		struct kinf_error *reterr) {
	struct kinf_buf text = {0};
	json_t *marker = json_array();
	/* The List kubectl runs a template over, its items aside. */
	json_t *skeleton = marker ? json_pack("{s:s,s:O,s:s,s:{s:s}}", "apiVersion", "v1",
			"items", marker, "kind", "List", "metadata", "resourceVersion", "") : NULL;
	struct exec x = {
		.jp = jp, .root = skeleton, .list = list, .marker = marker,
		.state = calloc(list->n + 1, 1), .as_json = as_json, .out = &text, .file = out,
	};
	int rc = skeleton && x.state ? run_nodes(&x, 0, jp->n, skeleton) : -KINF_ENOMEM;
	rc = finish(&x, rc, reterr);
	/* Items the template did not reach are asked for too: the caller hears of each. */
	for (size_t i = 0; rc == 0 && i < list->n; i++) {
		(void)item_in_list(&x, i);
	}
	free(x.state);
	json_decref(skeleton);
	json_decref(marker);
	kinf_buf_release(&text);
	return rc;
}

/* Collects every value reached (kinf_jsonpath_find). */
static int take_collect(struct exec *x, json_t *v, void *userdata) {
	(void)x;
	return json_array_append(userdata, v) < 0 ? -KINF_ENOMEM : 0;
}

int kinf_jsonpath_print_value(json_t *v, struct kinf_buf *out) {
	if (json_is_string(v)) {
		return kinf_buf_append(out, json_string_value(v), json_string_length(v));
	}
	if (json_is_real(v)) {
		char num[KINF_GOFLOAT_SIZE];
		kinf_gofloat_format(json_real_value(v), num);
		return kinf_buf_append_str(out, num);
	}
	/* Maps and lists as encoding/json writes them (floats in Go's form, not %.17g). */
	return kinf_gojson_append(out, v);
}

int kinf_jsonpath_print_values(json_t *values, struct kinf_buf *out) {
	size_t i;
	json_t *v;
	json_array_foreach(values, i, v) {
		int rc;
		if ((i > 0 && (rc = kinf_buf_append_char(out, ' ')) < 0) ||
				(rc = kinf_jsonpath_print_value(v, out)) < 0) {
			return rc;
		}
	}
	return 0;
}

json_t *kinf_jsonpath_find(const struct kinf_jsonpath *jp, json_t *data) {
	if (jp->n != 1 || jp->nodes[0].kind != NODE_EXPR) {
		return NULL;
	}
	struct exec x = { .jp = jp, .root = data };
	struct sink collect = { take_collect, json_array() };
	if (collect.userdata && eval(&x, jp->nodes[0].expr, data, &collect) < 0) {
		json_decref(collect.userdata);
		collect.userdata = NULL;
	}
	return collect.userdata;
}

json_t *kinf_jsonpath_values(const char *expression, json_t *data,
		struct kinf_error *reterr) {
	struct kinf_buf t = {0};
	struct kinf_jsonpath *jp = NULL;
	json_t *out = NULL;

	/*
	 * kubectl's RelaxedJSONPathExpression: "a.b", ".a.b", "{a.b}" and
	 * "{.a.b}" all mean {.a.b} (one leading dot dropped, one added:
	 * "..a" stays recursive), and a brace inside is refused.
	 */
	size_t len = strlen(expression);
	const char *inner = expression;
	if (len >= 2 && expression[0] == '{' && expression[len - 1] == '}') {
		inner++;
		len -= 2;
	}
	if (len == 0 || memchr(inner, '{', len) || memchr(inner, '}', len)) {
		kinf_error_fill(reterr, KINF_EINVAL, "unexpected path string \"%s\", expected a "
				"'name1.name2' or '.name1.name2' or '{name1.name2}' or "
				"'{.name1.name2}'", expression);
		return NULL;
	}
	if (len > 1 && *inner == '.') {
		inner++;
		len--;
	}
	if (kinf_buf_printf(&t, "{.%.*s}", (int)len, inner) < 0) {
		kinf_error_fill(reterr, KINF_ENOMEM, "out of memory");
	} else if (kinf_jsonpath_parse(t.data, &jp, reterr) == 0 &&
			!(out = kinf_jsonpath_find(jp, data))) {
		if (jp->n == 1 && jp->nodes[0].kind == NODE_EXPR) {
			kinf_error_fill(reterr, KINF_ENOMEM, "out of memory");
		} else {
			kinf_error_fill(reterr, KINF_EINVAL, "\"%s\": one expression expected",
					expression);
		}
	}
	kinf_jsonpath_free(jp);
	kinf_buf_release(&t);
	return out;
}
