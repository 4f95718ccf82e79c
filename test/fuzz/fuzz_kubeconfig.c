/*
 * The kubeconfig loader (src/kubeconfig.c): YAML parsing, the schema,
 * merging, selection, overrides and validation. Input: one flags byte
 * choosing overrides (bit 0 --context a, bit 1 --user u, bit 2 --cluster
 * c, bit 3 --server, bit 4 --insecure-skip-tls-verify, bit 5 -n, bit 6 a
 * second copy of the file merged after the first), then the YAML, written
 * to a temporary file the loader reads.
 *
 * Properties checked besides memory safety: an error has a code and a
 * message; a loaded config has a server and a namespace; context names
 * load whenever the config loads.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "kubeconfig.h"

static char path[96];
static char path2[104];
static char list[208];

static const char *fake_getenv(const char *name) {
	if (strcmp(name, "HOME") == 0) {
		return "/nonexistent-kinf-fuzz-home";
	}
	if (strcmp(name, "KUBECONFIG") == 0) {
		return list;
	}
	return NULL;
}

static void write_file(const char *p, const uint8_t *data, size_t len) {
	FILE *f = fopen(p, "wb");
	FUZZ_CHECK(f != NULL);
	FUZZ_CHECK(fwrite(data, 1, len, f) == len || len == 0);
	FUZZ_CHECK(fclose(f) == 0);
}

static void make_paths(void) {
	if (path[0]) {
		return;
	}
	const char *tmp = getenv("TMPDIR");
	snprintf(path, sizeof(path), "%.40s/kinf-fuzz-kc-%ld", tmp && *tmp ? tmp : "/tmp",
			(long)getpid());
	snprintf(path2, sizeof(path2), "%s-2", path);
	snprintf(list, sizeof(list), "%s:%s", path, path2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	struct fuzz_input in = { data, size };
	uint8_t flags = fuzz_byte(&in);
	struct kinf_kubeconfig_opts opts = {
		.insecure_skip_tls_verify = -1,
		.getenv = fake_getenv,
		.serviceaccount_dir = "/nonexistent-kinf-fuzz-sa",
	};
	struct kinf_rest_config *config = NULL;
	struct kinf_error err = {0};

	make_paths();
	write_file(path, in.p, in.n);
	if (flags & 64) {
		write_file(path2, in.p, in.n);
	} else {
		unlink(path2);
		opts.kubeconfig = path;
	}
	if (flags & 1) {
		opts.context = "a";
	}
	if (flags & 2) {
		opts.user = "u";
	}
	if (flags & 4) {
		opts.cluster = "c";
	}
	if (flags & 8) {
		opts.server = "https://127.0.0.1:6443";
	}
	if (flags & 16) {
		opts.insecure_skip_tls_verify = 1;
	}
	if (flags & 32) {
		opts.namespace = "ns";
	}
	int rc = kinf_kubeconfig_load(&opts, &config, &err);
	if (rc < 0) {
		FUZZ_CHECK(config == NULL);
		FUZZ_CHECK(err.code == -rc || rc == -KINF_ENOMEM);
		FUZZ_CHECK(rc == -KINF_ENOMEM || err.message[0]);
		FUZZ_CHECK(memchr(err.message, '\0', sizeof(err.message)));
	} else {
		FUZZ_CHECK(config != NULL);
		FUZZ_CHECK(config->server && config->namespace);
		FUZZ_CHECK(!config->client_cert_pem == !config->client_key_pem);
		kinf_rest_config_free(config);

		char **names = NULL;
		FUZZ_CHECK(kinf_kubeconfig_context_names(&opts, &names, NULL) == 0);
		for (size_t i = 0; names[i]; i++) {
			free(names[i]);
		}
		free(names);
	}
	return 0;
}
