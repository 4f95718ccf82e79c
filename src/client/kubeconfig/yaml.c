#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <yaml.h>

#include "base64.h"
#include "buf.h"
#include "err.h"
#include "kubeconfig.h"
#include "kubeconfig_int.h"

/* ---- YAML access ---- */

int kc_node_error(struct parse *p, const yaml_node_t *node, const char *fmt, ...) {
	char msg[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return kinf_error_set(p->reterr, KINF_ECONFIG, "%s: line %zu, column %zu: %s",
			p->file, node->start_mark.line + 1, node->start_mark.column + 1, msg);
}

yaml_node_t *kc_node_at(struct parse *p, int id) {
	return yaml_document_get_node(p->doc, id);
}

bool kc_is_null(const yaml_node_t *n) {
	const char *v;
	if (!n) {
		return true;
	}
	if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) {
		return false;
	}
	v = (const char *)n->data.scalar.value;
	return !*v || strcmp(v, "~") == 0 || strcmp(v, "null") == 0 ||
		strcmp(v, "Null") == 0 || strcmp(v, "NULL") == 0;
}

bool kc_key_is(const yaml_node_t *key, const char *name) {
	return key && key->type == YAML_SCALAR_NODE &&
		strcmp((const char *)key->data.scalar.value, name) == 0;
}

int kc_want_mapping(struct parse *p, const yaml_node_t *n, const char *what) {
	if (n->type != YAML_MAPPING_NODE) {
		return kc_node_error(p, n, "\"%s\" must be a mapping", what);
	}
	return 0;
}

int kc_want_sequence(struct parse *p, const yaml_node_t *n, const char *what) {
	if (n->type != YAML_SEQUENCE_NODE) {
		return kc_node_error(p, n, "\"%s\" must be a sequence", what);
	}
	return 0;
}

/* A string field; null leaves it unset. secret: zero what it replaces. */
int kc_get_string(struct parse *p, const yaml_node_t *n, const char *key,
		bool secret, char **out) {
	char *s = NULL;

	if (!kc_is_null(n)) {
		if (n->type != YAML_SCALAR_NODE) {
			return kc_node_error(p, n, "\"%s\" must be a string", key);
		}
		s = kc_memdup0(n->data.scalar.value, n->data.scalar.length);
		if (!s) {
			return -KINF_ENOMEM;
		}
	}
	if (secret) {
		kinf_free_secret(*out);
	} else {
		free(*out);
	}
	*out = s;
	return 0;
}

/*
 * YAML booleans as sigs.k8s.io/yaml reads them (YAML 1.1 words when
 * plain), plus the quoted strings "true" and "false".
 */
int kc_get_bool(struct parse *p, const yaml_node_t *n, const char *key, bool *out) {
	static const char *const yes[] = { "true", "True", "TRUE", "yes", "Yes", "YES",
		"on", "On", "ON", "y", "Y" };
	static const char *const no[] = { "false", "False", "FALSE", "no", "No", "NO",
		"off", "Off", "OFF", "n", "N" };
	const char *v;

	if (kc_is_null(n)) {
		*out = false;
		return 0;
	}
	if (n->type != YAML_SCALAR_NODE) {
		goto bad;
	}
	v = (const char *)n->data.scalar.value;
	if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) {
		if (strcmp(v, "true") == 0 || strcmp(v, "false") == 0) {
			*out = v[0] == 't';
			return 0;
		}
		goto bad;
	}
	for (size_t i = 0; i < sizeof(yes) / sizeof(*yes); i++) {
		if (strcmp(v, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcmp(v, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
bad:
	return kc_node_error(p, n, "\"%s\" must be a boolean", key);
}

/* A path field, resolved against the directory of the file naming it. */
int kc_get_path(struct parse *p, const yaml_node_t *n, const char *key, char **out) {
	char *s = NULL, *dir, *abs;
	int r = kc_get_string(p, n, key, false, &s);

	if (r < 0 || !s) {
		free(*out);
		*out = s;
		return r;
	}
	if (!*s) {
		free(*out);
		*out = NULL;
		free(s);
		return 0;
	}
	dir = kc_dir_of(p->file);
	abs = dir ? kc_join_path(dir, s) : NULL;
	free(dir);
	free(s);
	if (!abs) {
		return -KINF_ENOMEM;
	}
	free(*out);
	*out = abs;
	return 0;
}

int kc_get_data(struct parse *p, const yaml_node_t *n, const char *key,
		bool secret, char **out, size_t *out_len) {
	char *data = NULL;
	size_t len = 0;
	int r;

	if (!kc_is_null(n)) {
		if (n->type != YAML_SCALAR_NODE) {
			return kc_node_error(p, n, "\"%s\" must be a string", key);
		}
		if (n->data.scalar.length > 0) {
			r = kinf_base64_decode((const char *)n->data.scalar.value,
					n->data.scalar.length, &data, &len);
			if (r == -KINF_ENOMEM) {
				return r;
			}
			if (r < 0) {
				return kc_node_error(p, n, "\"%s\" is not valid base64", key);
			}
		}
	}
	if (secret) {
		kc_free_secret_len(*out, *out_len);
	} else {
		free(*out);
	}
	*out = data;
	*out_len = len;
	return 0;
}

/* A YAML node as JSON, resolving plain scalars as YAML 1.1 core types. */
json_t *kc_node_to_json(struct parse *p, const yaml_node_t *n, int depth) {
	json_t *j = NULL;

	/* (kc_check_bounds keeps nesting, aliases expanded, within the limit) */
	if (depth > KINF_KUBECONFIG_MAX_DEPTH) {
		return NULL;
	}
	switch (n->type) {
	case YAML_SCALAR_NODE: {
		const char *v = (const char *)n->data.scalar.value;
		char *end;
		if (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
			bool b;
			if (kc_is_null(n)) {
				return json_null();
			}
			if (strcmp(v, "true") == 0 || strcmp(v, "false") == 0 ||
					strcmp(v, "True") == 0 || strcmp(v, "False") == 0) {
				b = v[0] == 't' || v[0] == 'T';
				return json_boolean(b);
			}
			errno = 0;
			long long ll = strtoll(v, &end, 10);
			if (*v && !*end && errno == 0) {
				return json_integer(ll);
			}
			double d = strtod(v, &end);
			if (*v && !*end && (v[0] == '-' || v[0] == '.' || (v[0] >= '0' && v[0] <= '9'))) {
				return json_real(d);
			}
		}
		return json_stringn(v, n->data.scalar.length);
	}
	case YAML_SEQUENCE_NODE:
		j = json_array();
		if (!j) {
			return NULL;
		}
		for (yaml_node_item_t *it = n->data.sequence.items.start;
				it < n->data.sequence.items.top; it++) {
			json_t *item = kc_node_to_json(p, kc_node_at(p, *it), depth + 1);
			if (!item || json_array_append_new(j, item) < 0) {
				json_decref(j);
				return NULL;
			}
		}
		return j;
	case YAML_MAPPING_NODE:
		j = json_object();
		if (!j) {
			return NULL;
		}
		for (yaml_node_pair_t *pr = n->data.mapping.pairs.start;
				pr < n->data.mapping.pairs.top; pr++) {
			yaml_node_t *k = kc_node_at(p, pr->key);
			json_t *v;
			if (!k || k->type != YAML_SCALAR_NODE) {
				continue;
			}
			v = kc_node_to_json(p, kc_node_at(p, pr->value), depth + 1);
			if (!v || json_object_setn_new(j, (const char *)k->data.scalar.value,
					k->data.scalar.length, v) < 0) {
				json_decref(j);
				return NULL;
			}
		}
		return j;
	default:
		return NULL;
	}
}

/* Zero libyaml's copies of the file (tokens, keys) before freeing them. */
void kc_yaml_wipe(yaml_parser_t *parser, yaml_document_t *doc) {
	if (doc) {
		for (yaml_node_t *n = doc->nodes.start; n && n < doc->nodes.top; n++) {
			if (n->type == YAML_SCALAR_NODE && n->data.scalar.value) {
				kinf_explicit_bzero(n->data.scalar.value, n->data.scalar.length);
			}
		}
	}
	if (parser->buffer.start) {
		kinf_explicit_bzero(parser->buffer.start,
				(size_t)(parser->buffer.end - parser->buffer.start));
	}
	if (parser->raw_buffer.start) {
		kinf_explicit_bzero(parser->raw_buffer.start,
				(size_t)(parser->raw_buffer.end - parser->raw_buffer.start));
	}
}

/* ---- bounds, checked on libyaml's events before the document is built ---- */

struct anchor {
	char *name;
	bool open;		/* its node is still being read: an alias to it is a loop */
	size_t nodes;		/* its node with aliases expanded */
	size_t bytes;
	int height;		/* levels of collections it holds (a scalar: 0) */
};

struct bound_frame {
	size_t anchor;		/* index + 1 in the anchor list, or 0 */
	size_t nodes_before;
	size_t bytes_before;
	int child_height;
};

struct bounds {
	struct anchor *anchors;
	size_t n_anchors, cap_anchors;
	struct bound_frame frames[KINF_KUBECONFIG_MAX_DEPTH];
	int depth;
	size_t aliases;
	size_t nodes;		/* with aliases expanded */
	size_t bytes;
};

static int bounds_error(const char *file, const yaml_event_t *ev, struct kinf_error *reterr,
		const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int bounds_error(const char *file, const yaml_event_t *ev, struct kinf_error *reterr,
		const char *fmt, ...) {
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return kinf_error_set(reterr, KINF_ECONFIG, "%s: line %zu, column %zu: %s", file,
			ev->start_mark.line + 1, ev->start_mark.column + 1, msg);
}

/* Count a node of nodes nodes and bytes bytes (an alias: what it names). */
static int bounds_add(struct bounds *b, size_t nodes, size_t bytes, int height,
		const char *file, const yaml_event_t *ev, struct kinf_error *reterr) {
	if (nodes > KINF_KUBECONFIG_MAX_NODES - b->nodes) {
		return bounds_error(file, ev, reterr, "more than %d nodes, an alias counting as "
				"the nodes it names (the kubeconfig limit)", KINF_KUBECONFIG_MAX_NODES);
	}
	if (bytes > KINF_KUBECONFIG_MAX_EXPANDED_BYTES - b->bytes) {
		return bounds_error(file, ev, reterr, "more than %zu MiB of scalars, an alias "
				"counting as the scalars it names (the kubeconfig limit)",
				KINF_KUBECONFIG_MAX_EXPANDED_BYTES >> 20);
	}
	b->nodes += nodes;
	b->bytes += bytes;
	if (b->depth > 0 && b->frames[b->depth - 1].child_height < height) {
		b->frames[b->depth - 1].child_height = height;
	}
	return 0;
}

static int bounds_anchor(struct bounds *b, const yaml_char_t *name, size_t *ret_index) {
	*ret_index = 0;
	if (!name) {
		return 0;
	}
	if (b->n_anchors == b->cap_anchors) {
		size_t cap = b->cap_anchors ? b->cap_anchors * 2 : 16;
		struct anchor *a = realloc(b->anchors, cap * sizeof(*a));
		if (!a) {
			return -KINF_ENOMEM;
		}
		b->anchors = a;
		b->cap_anchors = cap;
	}
	struct anchor *a = &b->anchors[b->n_anchors];
	memset(a, 0, sizeof(*a));
	if (!(a->name = strdup((const char *)name))) {
		return -KINF_ENOMEM;
	}
	b->n_anchors++;
	*ret_index = b->n_anchors;
	return 0;
}

static int bounds_event(struct bounds *b, const yaml_event_t *ev, const char *file,
		struct kinf_error *reterr) {
	struct bound_frame *f;
	size_t idx;
	int r;

	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		if ((r = bounds_add(b, 1, ev->data.scalar.length, 0, file, ev, reterr)) < 0 ||
				(r = bounds_anchor(b, ev->data.scalar.anchor, &idx)) < 0) {
			return r;
		}
		if (idx) {
			b->anchors[idx - 1].nodes = 1;
			b->anchors[idx - 1].bytes = ev->data.scalar.length;
		}
		return 0;
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		if (b->depth == KINF_KUBECONFIG_MAX_DEPTH) {
			return bounds_error(file, ev, reterr, "nested more than %d levels deep "
					"(the kubeconfig limit)", KINF_KUBECONFIG_MAX_DEPTH);
		}
		if ((r = bounds_add(b, 1, 0, 0, file, ev, reterr)) < 0 ||
				(r = bounds_anchor(b, ev->type == YAML_SEQUENCE_START_EVENT ?
					ev->data.sequence_start.anchor :
					ev->data.mapping_start.anchor, &idx)) < 0) {
			return r;
		}
		f = &b->frames[b->depth++];
		f->anchor = idx;
		f->nodes_before = b->nodes - 1;
		f->bytes_before = b->bytes;
		f->child_height = 0;
		if (idx) {
			b->anchors[idx - 1].open = true;
		}
		return 0;
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		if (b->depth == 0) {
			return 0;
		}
		f = &b->frames[--b->depth];
		if (b->depth > 0 && b->frames[b->depth - 1].child_height < f->child_height + 1) {
			b->frames[b->depth - 1].child_height = f->child_height + 1;
		}
		if (f->anchor) {
			struct anchor *a = &b->anchors[f->anchor - 1];
			a->open = false;
			a->nodes = b->nodes - f->nodes_before;
			a->bytes = b->bytes - f->bytes_before;
			a->height = f->child_height + 1;
		}
		return 0;
	case YAML_ALIAS_EVENT:
		if (++b->aliases > KINF_KUBECONFIG_MAX_ALIASES) {
			return bounds_error(file, ev, reterr, "more than %d aliases (the kubeconfig "
					"limit)", KINF_KUBECONFIG_MAX_ALIASES);
		}
		/* the latest anchor of that name; none: libyaml's load says so */
		for (idx = b->n_anchors; idx > 0; idx--) {
			if (strcmp(b->anchors[idx - 1].name, (const char *)ev->data.alias.anchor) == 0) {
				break;
			}
		}
		if (idx == 0) {
			return 0;
		}
		struct anchor *a = &b->anchors[idx - 1];
		if (a->open) {
			return bounds_error(file, ev, reterr, "alias *%.64s is inside the node it "
					"names (a loop)", a->name);
		}
		if (b->depth + a->height > KINF_KUBECONFIG_MAX_DEPTH) {
			return bounds_error(file, ev, reterr, "nested more than %d levels deep with "
					"aliases expanded (the kubeconfig limit)",
					KINF_KUBECONFIG_MAX_DEPTH);
		}
		return bounds_add(b, a->nodes, a->bytes, a->height, file, ev, reterr);
	default:
		return 0;
	}
}

/*
 * Read the first document's events and check the bounds, stopping at the
 * first one crossed: libyaml's scanner does work proportional to the
 * nesting depth for every token, and its document keeps every node, so
 * neither may run unchecked. A YAML error is left for the load to report.
 */
int kc_check_bounds(const char *file, const char *data, size_t len,
		struct kinf_error *reterr) {
	struct bounds b = { 0 };
	yaml_parser_t parser;
	bool done = false;
	int r = 0;

	if (!yaml_parser_initialize(&parser)) {
		return -KINF_ENOMEM;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)data, len);
	while (!done && r == 0) {
		yaml_event_t ev;
		if (!yaml_parser_parse(&parser, &ev)) {
			r = parser.error == YAML_MEMORY_ERROR ? -KINF_ENOMEM : 0;
			break;
		}
		done = ev.type == YAML_DOCUMENT_END_EVENT || ev.type == YAML_STREAM_END_EVENT;
		r = bounds_event(&b, &ev, file, reterr);
		if (ev.type == YAML_SCALAR_EVENT && ev.data.scalar.value) {
			kinf_explicit_bzero(ev.data.scalar.value, ev.data.scalar.length);
		}
		yaml_event_delete(&ev);
	}
	for (size_t i = 0; i < b.n_anchors; i++) {
		free(b.anchors[i].name);
	}
	free(b.anchors);
	kc_yaml_wipe(&parser, NULL);
	yaml_parser_delete(&parser);
	return r;
}
