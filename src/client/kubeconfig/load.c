#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "buf.h"
#include "err.h"
#include "kubeconfig.h"
#include "kubeconfig_int.h"
#include "log.h"

static int parse_yaml(const char *file, const char *data, size_t len, struct kc *kc,
		struct kinf_error *reterr) {
	yaml_parser_t parser;
	yaml_document_t doc;
	struct parse p = { .doc = &doc, .file = file, .reterr = reterr };
	int r;

	if ((r = kc_check_bounds(file, data, len, reterr)) < 0) {
		return r;
	}
	if (!yaml_parser_initialize(&parser)) {
		return -KINF_ENOMEM;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)data, len);
	if (!yaml_parser_load(&parser, &doc)) {
		if (parser.error == YAML_MEMORY_ERROR) {
			r = -KINF_ENOMEM;
		} else if (parser.error == YAML_READER_ERROR) {
			r = kinf_error_set(reterr, KINF_ECONFIG, "%s: byte %zu: %s", file,
					parser.problem_offset + 1,
					parser.problem ? parser.problem : "invalid input");
		} else {
			r = kinf_error_set(reterr, KINF_ECONFIG, "%s: line %zu, column %zu: %s",
					file, parser.problem_mark.line + 1,
					parser.problem_mark.column + 1,
					parser.problem ? parser.problem : "invalid YAML");
		}
		kc_yaml_wipe(&parser, NULL);
		yaml_parser_delete(&parser);
		return r;
	}
	r = kc_parse_root(&p, kc);
	kc_yaml_wipe(&parser, &doc);
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return r;
}

/*
 * Fold one file into the merged config: entries whose name is taken stay
 * as the earlier file had them (whole entries, loader.go); current-context
 * comes from the first file setting it.
 */
static int merge_into(struct kc *dst, struct kc *src) {
	struct ptrv *dl[] = { &dst->clusters, &dst->users, &dst->contexts };
	struct ptrv *sl[] = { &src->clusters, &src->users, &src->contexts };
	int r = 0;

	for (int kind = 0; kind < 3; kind++) {
		for (size_t i = 0; i < sl[kind]->n; i++) {
			void *e = sl[kind]->v[i];
			if (r == 0 && !kc_find_named(dl[kind], *(char **)e)) {
				r = kc_ptrv_push(dl[kind], e);
				if (r == 0) {
					continue;
				}
			}
			kc_entry_free((enum kind)kind, e);
		}
		sl[kind]->n = 0;
	}
	if (r == 0 && (!dst->current_context || !*dst->current_context) &&
			src->current_context && *src->current_context) {
		free(dst->current_context);
		dst->current_context = src->current_context;
		src->current_context = NULL;
	}
	return r;
}

/*
 * Read, parse and merge one file. Missing files return 1 when missing_ok.
 */
static int load_file(struct kc *kc, const char *path, bool missing_ok,
		struct kinf_error *reterr) {
	struct kc one = { 0 };
	char *abs, *data = NULL;
	size_t len = 0;
	int err, r;

	abs = kc_absolute_path(path);
	if (!abs) {
		return -KINF_ENOMEM;
	}
	r = kc_read_file(abs, &data, &len, &err);
	if (r == -KINF_EIO && err == ENOENT && missing_ok) {
		kinf_log(2, "kubeconfig %s does not exist, skipped", abs);
		free(abs);
		return 1;
	}
	if (r == -KINF_EIO) {
		r = kinf_error_set(reterr, KINF_ECONFIG, "error loading config file \"%s\": %s",
				abs, strerror(err));
		free(abs);
		return r;
	}
	if (r < 0) {
		free(abs);
		return r;
	}
	r = kinf_strv_push_take(&kc->files, abs);
	if (r < 0) {
		goto out;
	}
	abs = kc->files.v[kc->files.n - 1];
	kinf_log(2, "loading kubeconfig %s", abs);
	r = parse_yaml(abs, data, len, &one, reterr);
	if (r == 0) {
		r = merge_into(kc, &one);
	}
out:
	kinf_explicit_bzero(data, len);
	free(data);
	kc_release(&one);
	return r;
}

int kc_load_files(const struct kinf_kubeconfig_opts *opts, struct kc *kc,
		struct kinf_error *reterr) {
	const char *env;
	int r;

	if (opts->kubeconfig && *opts->kubeconfig) {
		r = load_file(kc, opts->kubeconfig, false, reterr);
		return r < 0 ? r : 0;
	}
	env = kc_env_get(opts, "KUBECONFIG");
	if (env && *env) {
		struct kinf_strv seen = { 0 };
		size_t missing = 0;
		const char *p = env;
		r = 0;
		while (r >= 0) {
			const char *colon = strchr(p, ':');
			size_t n = colon ? (size_t)(colon - p) : strlen(p);
			if (n > 0) {
				char *one = kc_memdup0(p, n);
				if (!one) {
					r = -KINF_ENOMEM;
					break;
				}
				if (kinf_strv_contains(&seen, one)) {
					free(one);
				} else if ((r = kinf_strv_push_take(&seen, one)) == 0) {
					r = load_file(kc, one, true, reterr);
					if (r == 1) {
						missing++;
						r = 0;
					}
				}
			}
			if (!colon) {
				break;
			}
			p = colon + 1;
		}
		if (r == 0 && missing > 0 && missing == seen.n) {
			kinf_log(1, "none of the files in KUBECONFIG exist: %s", env);
		}
		kinf_strv_release(&seen);
		return r;
	}
	env = kc_env_get(opts, "HOME");
	if (env && *env) {
		char *path = kc_join_path(env, ".kube/config");
		if (!path) {
			return -KINF_ENOMEM;
		}
		r = load_file(kc, path, true, reterr);
		free(path);
		return r < 0 ? r : 0;
	}
	return 0;
}
