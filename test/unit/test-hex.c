#include <string.h>

#include "hex.h"
#include "tap.h"

/*
 * Hex digits: each of the 22 digit bytes has its value, every other byte
 * (NUL, the letters after f, bytes with the high bit set) is -1.
 */

int main(void) {
	static const char lower[] = "0123456789abcdef", upper[] = "0123456789ABCDEF";
	int bad = 0, others = 0;

	is_int(kinf_hex_value('0'), 0, "0");
	is_int(kinf_hex_value('9'), 9, "9");
	is_int(kinf_hex_value('a'), 10, "a");
	is_int(kinf_hex_value('F'), 15, "F");
	for (int i = 0; i < 16; i++) {
		if (kinf_hex_value(lower[i]) != i || kinf_hex_value(upper[i]) != i) {
			bad++;
		}
	}
	is_int(bad, 0, "every digit, either case, has its value");
	for (int c = 0; c < 256; c++) {
		if (c && (strchr(lower, c) || strchr(upper, c))) {
			continue;
		}
		others++;
		if (kinf_hex_value((char)c) != -1) {
			bad++;
		}
	}
	is_int(others, 256 - 22, "the other bytes");
	is_int(bad, 0, "every other byte is -1 (g, G, '/', ':', '@', '`', NUL, 0x80-0xff)");
	is_int(kinf_hex_value('g'), -1, "g");
	is_int(kinf_hex_value((char)0xe1), -1, "a byte with the high bit set");
	return tap_done();
}
