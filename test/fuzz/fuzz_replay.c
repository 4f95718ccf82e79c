/*
 * Recorded streams as `--from FILE` reads them (src/replay.c,
 * src/deltafifo.c, src/indexer.c, src/informer.c): Lists and watch events
 * into a DeltaFIFO, popped into an indexer. Input: one flags byte (bit 0
 * label selector app=web, bit 1 field selector spec.nodeName=n1, bit 2
 * small limits, bit 3 a node index), then the stream.
 *
 * Properties checked besides memory safety: what the indexer holds at the
 * end matches the selectors (objects that stop matching are deleted), is
 * what the FIFO's pops said, and the node index agrees with the objects.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "deltafifo.h"
#include "fuzz.h"
#include "indexer.h"
#include "indexfuncs.h"
#include "informer.h"
#include "object.h"
#include "reflector.h"
#include "replay.h"
#include "selector.h"

static struct kinf_selector *labels, *fields;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	struct fuzz_input in = { data, size };
	uint8_t flags = fuzz_byte(&in);
	struct kinf_object_limits limits = {0};
	struct kinf_reflector_stats stats = {0};
	struct kinf_error err = {0};

	if (!labels) {
		FUZZ_CHECK(kinf_label_selector_parse("app=web", &labels, NULL) == 0);
		FUZZ_CHECK(kinf_field_selector_parse("spec.nodeName=n1", &fields, NULL) == 0);
	}
	if (flags & 4) {
		limits.max_bytes = 300;
		limits.max_depth = 8;
	}
	int fd = memfd_create("kinf-fuzz-replay", MFD_CLOEXEC);
	FUZZ_CHECK(fd >= 0);
	FUZZ_CHECK(in.n == 0 || write(fd, in.p, in.n) == (ssize_t)in.n);
	FUZZ_CHECK(lseek(fd, 0, SEEK_SET) == 0);

	struct kinf_indexer *idx = kinf_indexer_new();
	FUZZ_CHECK(idx != NULL);
	struct kinf_index_spec spec = {0};
	if (flags & 8) {
		FUZZ_CHECK(kinf_index_spec_resolve("node", NULL, NULL, &spec, NULL) == 0);
		FUZZ_CHECK(kinf_index_spec_install(&spec, idx, NULL) == 0);
	}
	struct kinf_deltafifo *fifo = kinf_deltafifo_new(idx, flags & 16);
	FUZZ_CHECK(fifo != NULL);
	int rc = kinf_replay_fd(fd, fifo, &limits, flags & 1 ? labels : NULL,
			flags & 2 ? fields : NULL, NULL, NULL, &stats, NULL, &err);
	close(fd);
	if (rc < 0) {
		FUZZ_CHECK(err.code == -rc && err.message[0]);
	}
	kinf_deltafifo_close(fifo);
	for (;;) {
		struct kinf_informer_batch batch = {0};
		struct kinf_deltas *deltas = NULL;
		int prc = kinf_informer_pop(fifo, idx, 0, &batch, &deltas);
		if (prc == -KINF_ECLOSED) {
			break;
		}
		FUZZ_CHECK(prc == 0);
		kinf_informer_batch_release(&batch);
		kinf_deltas_free(deltas);
	}
	FUZZ_CHECK(kinf_deltafifo_len(fifo) == 0);

	struct kinf_object_list list = {0};
	FUZZ_CHECK(kinf_indexer_list(idx, &list) == 0);
	FUZZ_CHECK(list.n == kinf_indexer_len(idx));
	for (size_t i = 0; i < list.n; i++) {
		struct kinf_object *o = list.v[i];
		if (flags & 1) {
			FUZZ_CHECK(kinf_selector_match(labels, o) == 1);
		}
		if (flags & 2) {
			FUZZ_CHECK(kinf_selector_match(fields, o) == 1);
		}
		struct kinf_object *same = kinf_indexer_get(idx, kinf_object_key(o));
		FUZZ_CHECK(same == o);
		kinf_object_unref(same);
	}
	if (flags & 8) {
		struct kinf_object_list byn = {0};
		for (size_t i = 0; i < list.n; i++) {
			const char *node = kinf_object_node_name(list.v[i]);
			if (!node[0]) {
				continue;
			}
			FUZZ_CHECK(kinf_indexer_by_index(idx, spec.index_name, node, &byn, NULL) == 0);
			bool found = false;
			for (size_t j = 0; j < byn.n; j++) {
				found |= byn.v[j] == list.v[i];
			}
			FUZZ_CHECK(found);
			kinf_object_list_release(&byn);
		}
	}
	kinf_object_list_release(&list);
	kinf_index_spec_release(&spec);
	kinf_deltafifo_free(fifo);
	kinf_indexer_free(idx);
	return 0;
}
