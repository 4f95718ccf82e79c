/*
 * A main() for the fuzz harnesses without libFuzzer: runs
 * LLVMFuzzerTestOneInput once on every file named on the command line
 * (directories are walked one level), so the seed corpus and the crash
 * regressions run in the ordinary test suite, with gcc and under
 * -Db_sanitize=address,undefined. Prints TAP, one line per directory.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path) {
	struct kinf_buf b = {0};
	char chunk[65536];
	size_t n;
	FILE *f = fopen(path, "rb");

	if (!f) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		if (kinf_buf_append(&b, chunk, n) < 0) {
			fclose(f);
			kinf_buf_release(&b);
			return -1;
		}
	}
	fclose(f);
	/* A private copy of exactly the input's size, as libFuzzer passes it. */
	uint8_t *copy = malloc(b.len ? b.len : 1);
	if (!copy) {
		kinf_buf_release(&b);
		return -1;
	}
	if (b.len) {
		memcpy(copy, b.data, b.len);
	}
	LLVMFuzzerTestOneInput(copy, b.len);
	free(copy);
	kinf_buf_release(&b);
	return 0;
}

static int cmp(const void *a, const void *b) {
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv) {
	int test = 0, failed = 0;

	printf("1..%d\n", argc - 1);
	for (int i = 1; i < argc; i++) {
		struct stat st;
		struct kinf_strv files = {0};
		int bad = 0;
		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			DIR *d = opendir(argv[i]);
			struct dirent *e;
			while (d && (e = readdir(d))) {
				if (e->d_name[0] == '.' || strncmp(e->d_name, "README", 6) == 0) {
					continue;
				}
				struct kinf_buf p = {0};
				if (kinf_buf_printf(&p, "%s/%s", argv[i], e->d_name) < 0 ||
						kinf_strv_push_take(&files, kinf_buf_take(&p)) < 0) {
					kinf_buf_release(&p);
					bad = 1;
				}
			}
			if (d) {
				closedir(d);
			} else {
				bad = 1;
			}
			if (files.n > 1) {
				qsort(files.v, files.n, sizeof(*files.v), cmp);
			}
		} else {
			bad |= kinf_strv_push_str(&files, argv[i]) < 0;
		}
		for (size_t j = 0; j < files.n; j++) {
			if (run_file(files.v[j]) < 0) {
				bad = 1;
			}
		}
		test++;
		printf("%sok %d - %s: %zu inputs\n", bad ? "not " : "", test, argv[i], files.n);
		failed |= bad;
		kinf_strv_release(&files);
	}
	return failed;
}
