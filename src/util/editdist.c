#include <stdlib.h>
#include <string.h>

#include "editdist.h"

size_t kinf_editdist(const char *a, const char *b, size_t limit) {
	size_t la = strlen(a), lb = strlen(b), stack_row[65], *row = stack_row;

	if ((la > lb ? la - lb : lb - la) > limit) {
		return limit + 1;
	}
	if (lb >= sizeof(stack_row) / sizeof(*stack_row) &&
			!(row = malloc((lb + 1) * sizeof(*row)))) {
		return limit + 1;
	}
	/* One row of the matrix at a time: row[j] is the distance a[..i) to b[..j). */
	for (size_t j = 0; j <= lb; j++) {
		row[j] = j;
	}
	size_t d = 0;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0], best;
		row[0] = i;
		best = row[0];
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t cost = diag + (a[i - 1] != b[j - 1]);
			if (row[j - 1] + 1 < cost) {
				cost = row[j - 1] + 1;
			}
			if (up + 1 < cost) {
				cost = up + 1;
			}
			row[j] = cost;
			diag = up;
			if (cost < best) {
				best = cost;
			}
		}
		/* every later row is at least this row's least */
		if (best > limit) {
			d = limit + 1;
			goto out;
		}
	}
	d = row[lb] > limit ? limit + 1 : row[lb];
out:
	if (row != stack_row) {
		free(row);
	}
	return d;
}
