#ifndef KINF_CMD_FLAGS_H
#define KINF_CMD_FLAGS_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * kubectl's flag grammar, that of spf13/pflag (cobra parses every kubectl
 * command with it), over getopt_long's option tables. Scripts written for
 * kubectl type their flags in these forms, and each means what it means
 * to kubectl:
 *
 *   --name VALUE  --name=VALUE      required_argument: the next word is the
 *   -n VALUE  -nVALUE  -n=VALUE     value, whatever it looks like; "--name="
 *                                   is the empty value, "-n=" the value "="
 *   --flag  --flag=BOOL             no_argument: a boolean, BOOL one of Go's
 *   -A  -A=BOOL                     strconv.ParseBool words: 1 t T TRUE true
 *                                   True, 0 f F FALSE false False
 *   -Ao json  -An=NS  -Aojson       short options together
 *   --                              the end of the options
 *
 * kinf's optional_argument options (-v, --v, --verbose) take their value
 * after '=' (--v=2, -v=2), attached to a short one (-v2), or as the next
 * word when that word is an integer: so -v 2 and --v 2 are kubectl's, and
 * a bare -v is kinf's level 1 (kubectl refuses it).
 *
 * Long names match exactly: pflag has no abbreviations (getopt_long took
 * --names for --namespace). Every kinf boolean is false unless given and
 * its handler only sets it, so the last occurrence of a boolean decides
 * (pflag's rule): when it says true, cli_getopt returns the occurrences
 * that say true; when it says false, none (-A -A=false is no -A at all).
 */

/*
 * getopt_long's interface, and its globals: set optind to 0 to start; each
 * call returns an option's val with optarg its value (NULL: none), -1 at
 * the end, '?' for what is not an option of longopts or shortopts (an
 * unknown name, a boolean whose value is not one, bad syntax like ---x)
 * and ':' for a missing value; then cli_getopt_fault() says which, and
 * optind is past the word at fault. optind is past the words read so far
 * (in argv's order as given). A leading '+' in shortopts stops at the
 * first operand, optind on it; otherwise, at the end, argv is reordered
 * as getopt_long does (the options and their values, then "--" if given,
 * then the operands in order) and optind is the first operand. A leading
 * ':' is accepted and changes nothing (errors are always the caller's to
 * print).
 */
int cli_getopt(int argc, char **argv, const char *shortopts,
		const struct option *longopts);

/* What the last '?' or ':' of cli_getopt() was about. */
enum cli_flag_fault_kind {
	CLI_FLAG_UNKNOWN,	/* no option of that name */
	CLI_FLAG_NEEDS_VALUE,	/* a required value is missing */
	CLI_FLAG_BAD_BOOL,	/* a boolean's value is not a boolean */
	CLI_FLAG_BAD_SYNTAX,	/* ---x, --=x */
};

struct cli_flag_fault {
	enum cli_flag_fault_kind kind;
	const char *word;	/* the argument at fault, as typed */
	char short_name;	/* a short option's letter, or 0 */
	const char *name;	/* a long option's name as typed (not terminated) */
	size_t name_len;
	const struct option *option;	/* the option, when it exists */
	const char *value;	/* CLI_FLAG_BAD_BOOL: the value given */
	size_t at;		/* a short option's offset in word */
};

/* The fault of the last '?' or ':' (borrowed; argv's strings). */
const struct cli_flag_fault *cli_getopt_fault(void);

/*
 * Go's strconv.ParseBool: 1 when s is a true word, 0 a false one, -1
 * neither.
 */
/* flags.c stands alone (no src/ headers): the attribute KINF_MUST_CHECK names. */
__attribute__((warn_unused_result)) int cli_parse_bool(const char *s);

/*
 * Whether s is an integer as Go's strconv.ParseInt(s, 10, 32) reads one
 * (an optional sign and digits, within int32); its value in *ret.
 */
bool cli_parse_int32(const char *s, long *ret);

#endif
