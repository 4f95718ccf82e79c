#ifndef KINF_JSONPATH_INT_H
#define KINF_JSONPATH_INT_H

/*
 * What a parsed template is, shared by the parser (jsonpath_parse.c)
 * and the evaluation (jsonpath.c); nothing else sees it.
 */

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/*
 * A template is a list of nodes: text, an expression (a chain of steps), or
 * range/end around a sub-list. Steps select from a set of current values to
 * a new set, as client-go's jsonpath walks reflect values.
 */
/*
 * STEP_LITERAL: a number or true/false, in place of each current value
 * (client-go's IntNode, FloatNode, BoolNode); STEP_TEXT: a quoted string,
 * the one value whatever came before (TextNode).
 */
enum step_kind { STEP_FIELD, STEP_ALL, STEP_INDEX, STEP_SLICE, STEP_RECURSIVE, STEP_FILTER,
	STEP_LITERAL, STEP_TEXT };
enum cmp_op { CMP_EXISTS, CMP_EQ, CMP_NE, CMP_LT, CMP_GT, CMP_LE, CMP_GE };

struct step {
	enum step_kind kind;
	char *name;		/* FIELD; RECURSIVE (name after ..) */
	long index;		/* INDEX */
	long start, end;	/* SLICE; end LONG_MAX = to the end */
	bool has_start, has_end;
	/* FILTER: @.path OP literal */
	struct expr *filter_path;
	enum cmp_op op;
	json_t *literal;	/* FILTER; LITERAL; TEXT */
};

struct expr {
	struct step *steps;
	size_t n;
	bool from_root;		/* $ */
};

enum node_kind { NODE_TEXT, NODE_EXPR, NODE_RANGE, NODE_END };

struct node {
	enum node_kind kind;
	char *text;
	struct expr *expr;
};

struct kinf_jsonpath {
	struct node *nodes;
	size_t n;
};


#endif
