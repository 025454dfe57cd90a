// SPDX-License-Identifier: MIT
/* ktest: the kernel test's guest-side tool (see ktest.h). */
#include <stdio.h>
#include <string.h>

#include "ktest.h"

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*run)(int argc, char **argv);
	} cmds[] = {
	    {"daemon", ktest_daemon_main}, {"abi", ktest_abi_main},
	    {"busy", ktest_busy_main},     {"fe", ktest_fe_main},
	    {"ts", ktest_ts_main},         {"dvr", ktest_dvr_main},
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (size_t i = 0; argc > 1 && i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].run(argc - 1, argv + 1);
	fprintf(stderr,
		"usage: ktest daemon [DEV] | abi nodaemon|daemon | "
		"busy [DEV] | fe ... | ts PID MIN | dvr ADAPTER PID MIN\n");
	return 2;
}
