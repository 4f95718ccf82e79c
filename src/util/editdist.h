#ifndef KINF_EDITDIST_H
#define KINF_EDITDIST_H

#include <stddef.h>

/*
 * The Levenshtein distance between a and b (bytes: insertions, deletions
 * and substitutions), for "did you mean" suggestions of resource names,
 * commands and options. Gives up early and returns limit + 1 once the
 * distance must exceed limit (also when out of memory for long strings).
 */
size_t kinf_editdist(const char *a, const char *b, size_t limit);

#endif
