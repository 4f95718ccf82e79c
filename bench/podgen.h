#ifndef KINF_BENCH_PODGEN_H
#define KINF_BENCH_PODGEN_H

#include "buf.h"

/*
 * Append pod number i as compact JSON (about 3.8 KB: managedFields, two
 * containers with env, volumes, status), spread over 10 namespaces, 20
 * nodes and 50 apps, with a ReplicaSet owner.
 */
void bench_make_pod(struct kinf_buf *b, int i);

#endif
