#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "flags.h"

/* What one step of the scan read. */
struct token {
	enum { TOK_OPTION, TOK_OPERAND, TOK_DASHDASH, TOK_END, TOK_FAULT } type;
	int val;
	const char *arg;
	bool is_bool;
	bool bool_value;
	struct cli_flag_fault fault;
};

/* Where the scan is: a word, and inside a cluster of short options a letter. */
struct pos {
	int word;
	int letter;		/* 0 at a word's start, else the offset in -abc */
};

struct grammar {
	const char *shorts;
	const struct option *longs;
	bool stop_at_operand;	/* '+' */
};

static struct {
	char **argv;
	int argc;
	struct pos pos;
	bool done;
	struct cli_flag_fault fault;
} scan;

int cli_parse_bool(const char *s) {
	static const char *const yes[] = { "1", "t", "T", "TRUE", "true", "True" };
	static const char *const no[] = { "0", "f", "F", "FALSE", "false", "False" };
	for (size_t i = 0; i < sizeof(yes) / sizeof(*yes); i++) {
		if (strcmp(s, yes[i]) == 0) {
			return 1;
		}
		if (strcmp(s, no[i]) == 0) {
			return 0;
		}
	}
	return -1;
}

bool cli_parse_int32(const char *s, long *ret) {
	const char *p = s + (*s == '+' || *s == '-');
	char *end;
	if (*p < '0' || *p > '9') {
		return false;
	}
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (*end || errno || v < INT32_MIN || v > INT32_MAX) {
		return false;
	}
	*ret = (long)v;
	return true;
}

/* How short option c takes a value: -1 not an option, else a has_arg value. */
static int short_has_arg(const struct grammar *g, char c) {
	if (c == ':' || c == '+' || c == '=' || c == '-') {
		return -1;
	}
	const char *p = strchr(g->shorts, c);
	if (!p || c == '\0') {
		return -1;
	}
	if (p[1] != ':') {
		return no_argument;
	}
	return p[2] == ':' ? optional_argument : required_argument;
}

static const struct option *long_named(const struct grammar *g, const char *name, size_t len) {
	for (const struct option *o = g->longs; o && o->name; o++) {
		if (strlen(o->name) == len && strncmp(o->name, name, len) == 0) {
			return o;
		}
	}
	return NULL;
}

static const struct option *long_of_short(const struct grammar *g, char c) {
	for (const struct option *o = g->longs; o && o->name; o++) {
		if (o->val == c) {
			return o;
		}
	}
	return NULL;
}

static void fault(struct token *t, enum cli_flag_fault_kind kind, const char *word) {
	t->type = TOK_FAULT;
	t->fault.kind = kind;
	t->fault.word = word;
}

/* An optional value as the next word: only an integer (kubectl's -v 2). */
static const char *next_if_integer(int argc, char **argv, struct pos *p) {
	long ignored;
	if (p->word < argc && cli_parse_int32(argv[p->word], &ignored)) {
		return argv[p->word++];
	}
	return NULL;
}

/* --name, --name=value, --name value. p is past the word. */
static void long_token(const struct grammar *g, int argc, char **argv, const char *w,
		struct pos *p, struct token *t) {
	const char *name = w + 2;
	size_t len = strcspn(name, "=");
	const char *eq = name[len] == '=' ? name + len + 1 : NULL;

	if (name[0] == '-' || name[0] == '=') {
		fault(t, CLI_FLAG_BAD_SYNTAX, w);
		return;
	}
	const struct option *o = long_named(g, name, len);
	t->fault.name = name;
	t->fault.name_len = len;
	t->fault.option = o;
	if (!o) {
		fault(t, CLI_FLAG_UNKNOWN, w);
		return;
	}
	t->type = TOK_OPTION;
	t->val = o->val;
	switch (o->has_arg) {
	case no_argument:
		t->is_bool = true;
		t->bool_value = true;
		if (eq) {
			int b = cli_parse_bool(eq);
			if (b < 0) {
				t->fault.value = eq;
				fault(t, CLI_FLAG_BAD_BOOL, w);
				return;
			}
			t->bool_value = b;
		}
		return;
	case required_argument:
		if (eq) {
			t->arg = eq;
		} else if (p->word < argc) {
			t->arg = argv[p->word++];
		} else {
			fault(t, CLI_FLAG_NEEDS_VALUE, w);
		}
		return;
	default:
		t->arg = eq ? eq : next_if_integer(argc, argv, p);
		return;
	}
}

/* The short option at letter p->letter of the word p->word. */
static void short_token(const struct grammar *g, int argc, char **argv,
		struct pos *p, struct token *t) {
	const char *w = argv[p->word];
	const char *s = w + p->letter;
	int has_arg = short_has_arg(g, s[0]);

	t->fault.short_name = s[0];
	t->fault.at = (size_t)(s - w);
	t->fault.option = long_of_short(g, s[0]);
	/* The rest of the word is this option's unless another letter follows. */
	p->word++;
	p->letter = 0;
	if (has_arg < 0) {
		t->fault.option = NULL;
		fault(t, CLI_FLAG_UNKNOWN, w);
		return;
	}
	t->type = TOK_OPTION;
	t->val = s[0];
	if (s[1] == '=' && s[2]) {
		/* -n=NS, -A=false (pflag: "-n=" is the value "=") */
		if (has_arg == no_argument) {
			int b = cli_parse_bool(s + 2);
			t->is_bool = true;
			t->bool_value = b > 0;
			if (b < 0) {
				t->fault.value = s + 2;
				fault(t, CLI_FLAG_BAD_BOOL, w);
			}
		} else {
			t->arg = s + 2;
		}
		return;
	}
	if (has_arg == no_argument) {
		t->is_bool = true;
		t->bool_value = true;
		if (s[1]) {
			/* -Ao json: the next letter is an option too */
			p->word--;
			p->letter = (int)(s + 1 - w);
		}
		return;
	}
	if (s[1]) {
		t->arg = s + 1;
	} else if (has_arg == optional_argument) {
		t->arg = next_if_integer(argc, argv, p);
	} else if (p->word < argc) {
		t->arg = argv[p->word++];
	} else {
		fault(t, CLI_FLAG_NEEDS_VALUE, w);
	}
}

/* Read one option, operand or the end from p on, and move p past it. */
static void next_token(const struct grammar *g, int argc, char **argv, struct pos *p,
		struct token *t) {
	*t = (struct token){ .type = TOK_END };
	if (p->letter > 0) {
		short_token(g, argc, argv, p, t);
		return;
	}
	if (p->word >= argc) {
		return;
	}
	const char *w = argv[p->word];
	if (w[0] != '-' || w[1] == '\0') {
		t->type = TOK_OPERAND;
		p->word++;
		return;
	}
	if (w[1] == '-' && w[2] == '\0') {
		t->type = TOK_DASHDASH;
		p->word++;
		return;
	}
	if (w[1] == '-') {
		p->word++;
		long_token(g, argc, argv, w, p, t);
		return;
	}
	p->letter = 1;
	short_token(g, argc, argv, p, t);
}

/*
 * The value of the boolean val at its last occurrence from p on (value:
 * the one just read), as pflag's last Set leaves it. A fault on the way
 * ends the look: the scan stops there anyway.
 */
static bool last_bool(const struct grammar *g, int argc, char **argv, struct pos p,
		int val, bool value) {
	for (;;) {
		struct token t;
		next_token(g, argc, argv, &p, &t);
		if (t.type == TOK_END || t.type == TOK_DASHDASH || t.type == TOK_FAULT ||
				(t.type == TOK_OPERAND && g->stop_at_operand)) {
			return value;
		}
		if (t.type == TOK_OPTION && t.is_bool && t.val == val) {
			value = t.bool_value;
		}
	}
}

/*
 * Options first, then "--", then the operands, each in their order, as
 * getopt_long leaves argv; returns the index of the first operand. No
 * allocation: each option word is rotated to the front of the operands
 * seen so far.
 */
static int permute(const struct grammar *g, int argc, char **argv) {
	int front = 1;
	struct pos p = { .word = 1 };

	while (p.word < argc) {
		struct token t;
		int start = p.word;
		next_token(g, argc, argv, &p, &t);
		while (p.letter > 0) {	/* the rest of a cluster is this word's */
			next_token(g, argc, argv, &p, &t);
		}
		if (t.type == TOK_OPERAND) {
			continue;
		}
		for (int k = start; k < p.word; k++) {
			char *w = argv[k];
			memmove(&argv[front + 1], &argv[front], (size_t)(k - front) * sizeof(*argv));
			argv[front++] = w;
		}
		if (t.type == TOK_DASHDASH || t.type == TOK_END) {
			break;
		}
	}
	return front;
}

int cli_getopt(int argc, char **argv, const char *shortopts,
		const struct option *longopts) {
	struct grammar g = { .shorts = shortopts, .longs = longopts };

	while (*g.shorts == '+' || *g.shorts == ':') {
		g.stop_at_operand |= *g.shorts == '+';
		g.shorts++;
	}
	if (optind == 0 || scan.argv != argv || scan.argc != argc) {
		scan.argv = argv;
		scan.argc = argc;
		scan.pos = (struct pos){ .word = 1 };
		scan.done = false;
	}
	optarg = NULL;
	if (scan.done) {
		return -1;
	}
	for (;;) {
		struct pos before = scan.pos;
		struct token t;
		next_token(&g, argc, argv, &scan.pos, &t);
		switch (t.type) {
		case TOK_OPERAND:
			if (g.stop_at_operand) {
				scan.pos = before;
				scan.done = true;
				optind = before.word;
				return -1;
			}
			continue;
		case TOK_DASHDASH:
			if (g.stop_at_operand) {
				scan.done = true;
				optind = scan.pos.word;
				return -1;
			}
			/* fall through */
		case TOK_END:
			scan.done = true;
			optind = g.stop_at_operand ? argc : permute(&g, argc, argv);
			return -1;
		case TOK_FAULT:
			scan.fault = t.fault;
			scan.done = true;
			optind = scan.pos.word;	/* past the word at fault */
			optopt = t.fault.short_name ? t.fault.short_name :
				t.fault.option ? t.fault.option->val : 0;
			return t.fault.kind == CLI_FLAG_NEEDS_VALUE ? ':' : '?';
		case TOK_OPTION:
			if (t.is_bool && (!t.bool_value ||
					!last_bool(&g, argc, argv, scan.pos, t.val, true))) {
				continue;	/* it is or ends false: as if not given */
			}
			optarg = (char *)t.arg;
			optind = scan.pos.word;
			return t.val;
		}
	}
}

const struct cli_flag_fault *cli_getopt_fault(void) {
	return &scan.fault;
}
