#ifndef KINF_TABLE_H
#define KINF_TABLE_H

#include <stddef.h>

/*
 * A row of a meta.k8s.io Table (kubectl's server-side printing), as a list
 * keeps it: the cells as the server sent them, with the key of the row's
 * object. The list (listpage.c) makes them; the printers (output.c) print
 * them.
 */
struct kinf_table_row {
	char *key;		/* namespace/name */
	char *json;		/* {"cells":[...]}: the row without its object */
	size_t len;
};

#endif
