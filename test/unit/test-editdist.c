#include <stdlib.h>
#include <string.h>

#include "editdist.h"
#include "tap.h"

/*
 * The edit distance behind "did you mean": exact values within the limit,
 * limit + 1 beyond it (early or at the end), and strings longer than the
 * stack row.
 */

int main(void) {
	char a[201], b[201];

	is_int(kinf_editdist("", "", 2), 0, "two empty strings");
	is_int(kinf_editdist("pods", "pods", 2), 0, "equal");
	is_int(kinf_editdist("pod", "pods", 2), 1, "an insertion");
	is_int(kinf_editdist("pods", "pod", 2), 1, "a deletion");
	is_int(kinf_editdist("pods", "pids", 2), 1, "a substitution");
	is_int(kinf_editdist("pdos", "pods", 2), 2, "a transposition is two edits");
	is_int(kinf_editdist("kitten", "sitting", 3), 3, "kitten, sitting: 3");
	is_int(kinf_editdist("kitten", "sitting", 2), 3, "over the limit: limit + 1");
	is_int(kinf_editdist("deployments", "pods", 2), 3, "lengths too far apart: limit + 1");
	is_int(kinf_editdist("abcdef", "uvwxyz", 1), 2, "given up early: limit + 1");
	is_int(kinf_editdist("", "abc", 5), 3, "from empty: the length");
	is_int(kinf_editdist("wach", "watch", 2), 1, "a command typo");
	is_int(kinf_editdist("namespac", "namespace", 2), 1, "an option typo");

	memset(a, 'x', 200);
	a[200] = '\0';
	memcpy(b, a, sizeof(b));
	b[100] = 'y';
	is_int(kinf_editdist(a, b, 2), 1, "200 bytes, one substitution (a row on the heap)");
	b[199] = '\0';
	is_int(kinf_editdist(a, b, 2), 2, "200 and 199 bytes: two edits");
	is_int(kinf_editdist(a, b, 1), 2, "200 and 199 bytes, limit 1: limit + 1");
	return tap_done();
}
