#include <stdlib.h>
#include <string.h>

#include "indexer.h"
#include "informer.h"
#include "object.h"

void kinf_informer_batch_release(struct kinf_informer_batch *batch) {
	for (size_t i = 0; i < batch->n; i++) {
		free(batch->v[i].key);
		kinf_object_unref(batch->v[i].obj);
		kinf_object_unref(batch->v[i].old);
	}
	free(batch->v);
	batch->v = NULL;
	batch->n = 0;
}

struct process_state {
	struct kinf_indexer *idx;
	struct kinf_informer_batch *batch;
};

static int push(struct kinf_informer_batch *b, const struct kinf_informer_event *ev) {
	struct kinf_informer_event *v = realloc(b->v, (b->n + 1) * sizeof(*v));
	if (!v) {
		return -KINF_ENOMEM;
	}
	b->v = v;
	b->v[b->n] = *ev;
	b->v[b->n].key = strdup(ev->key);
	if (!b->v[b->n].key) {
		return -KINF_ENOMEM;
	}
	kinf_object_ref(ev->obj);
	kinf_object_ref(ev->old);
	b->n++;
	return 0;
}

/* Runs under the FIFO's lock, so the indexer changes with the pop. */
static int process(const struct kinf_deltas *deltas, bool is_in_initial_list,
		void *userdata) {
	struct process_state *ps = userdata;
	int rc = 0;

	ps->batch->in_initial_list = is_in_initial_list;
	for (size_t i = 0; i < deltas->n && rc == 0; i++) {
		const struct kinf_delta *d = &deltas->v[i];
		struct kinf_informer_event ev = {
			.key = deltas->key,
			.obj = d->obj,
			.delta_type = d->type,
		};
		if (d->type == KINF_DELTA_DELETED) {
			rc = kinf_indexer_delete(ps->idx, deltas->key);
			ev.type = KINF_INFORMER_DELETE;
			ev.final_state_unknown = d->final_state_unknown;
		} else {
			struct kinf_object *old = kinf_indexer_get(ps->idx, deltas->key);
			if (old) {
				rc = kinf_indexer_update(ps->idx, d->obj);
				ev.type = KINF_INFORMER_UPDATE;
				ev.old = old;
				/*
				 * sharedIndexInformer.OnUpdate: a resync is an update
				 * that did not change the resourceVersion, whatever
				 * the delta type. A relist without emit_replaced
				 * queues Sync deltas; those with a new version are
				 * changes the watch missed, for every handler.
				 */
				ev.is_sync = strcmp(kinf_object_resource_version(old),
						kinf_object_resource_version(d->obj)) == 0;
			} else {
				rc = kinf_indexer_add(ps->idx, d->obj);
				ev.type = KINF_INFORMER_ADD;
				ev.initial = is_in_initial_list;
			}
			if (rc == 0) {
				rc = push(ps->batch, &ev);
			}
			kinf_object_unref(old);
			continue;
		}
		if (rc == 0) {
			rc = push(ps->batch, &ev);
		}
	}
	return rc;
}

int kinf_informer_pop(struct kinf_deltafifo *fifo, struct kinf_indexer *idx,
		int timeout_ms, struct kinf_informer_batch *ret_batch,
		struct kinf_deltas **ret_deltas) {
	struct process_state ps = { .idx = idx, .batch = ret_batch };
	ret_batch->v = NULL;
	ret_batch->n = 0;
	ret_batch->in_initial_list = false;
	int rc = kinf_deltafifo_pop(fifo, timeout_ms, process, &ps, ret_deltas);
	if (rc < 0) {
		kinf_informer_batch_release(ret_batch);
	}
	return rc;
}
