// SPDX-License-Identifier: MIT
/*
 * tunerd-mkfw-xc3028 - write the synthetic XC3028 firmware file that the
 * simulated box and the xc3028 plugin use in place of the real one.
 */
#include <stdio.h>
#include <string.h>

#include "tunerd_version.h"
#include "xc3028_fwgen.h"

int main(int argc, char **argv)
{
	char err[256];

	if (argc == 2 && strcmp(argv[1], "--version") == 0) {
		fputs(TUNERD_VERSION_LINE("tunerd-mkfw-xc3028"), stdout);
		return 0;
	}
	if (argc != 2 || argv[1][0] == '-') {
		fprintf(stderr,
			"usage: %s OUTPUT.fw | --help | --version\n"
			"Writes a synthetic xc3028-v27 firmware file.\n",
			argv[0]);
		return argc == 2 && strcmp(argv[1], "--help") == 0 ? 0 : 2;
	}
	if (xc3028_fwgen_write(argv[1], err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", argv[0], err);
		return 1;
	}
	return 0;
}
