/* replay.c - a fuzz target without libFuzzer, for `make test`: runs every
 * file of its seed corpus and of its saved regressions through it once. */
#include <dirent.h>
#include <errno.h>

#include "fuzz.h"

#ifndef FUZZ_TARGET
#error "build with -DFUZZ_TARGET='\"name\"'"
#endif

/* Runs each file of dir; returns how many, or -1 when one cannot be read.
 * A dir that does not exist holds none (regress/ is made by the first
 * crash saved). */
static int
replay_dir(const char *dir)
{
	char path[4096];
	struct dirent *de;
	unsigned char *buf;
	int n = 0;
	long len;
	DIR *d;
	FILE *f;

	if ((d = opendir(dir)) == NULL)
		return errno == ENOENT ? 0 : -1;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		if ((f = fopen(path, "rb")) == NULL ||
		    fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 ||
		    fseek(f, 0, SEEK_SET) != 0 ||
		    (buf = malloc((size_t)len + 1)) == NULL ||
		    fread(buf, 1, (size_t)len, f) != (size_t)len) {
			fprintf(stderr, "replay: cannot read %s\n", path);
			closedir(d);
			return -1;
		}
		fclose(f);
		/* A crash ends the process: the last name printed is it. */
		printf("[ RUN      ] %s\n", path);
		fflush(stdout);
		LLVMFuzzerTestOneInput(buf, (size_t)len);
		free(buf);
		n++;
	}
	closedir(d);
	return n;
}

int
main(void)
{
	int a, b;

	a = replay_dir("tests/fuzz/corpus/" FUZZ_TARGET);
	b = replay_dir("tests/fuzz/regress/" FUZZ_TARGET);
	if (a <= 0 || b < 0) {
		printf("[  FAILED  ] 1 test(s): fuzz-%s replay (no seeds, or "
		    "unreadable ones)\n", FUZZ_TARGET);
		return 1;
	}
	printf("[       OK ] fuzz-%s: %d seeds, %d regressions\n",
	    FUZZ_TARGET, a, b);
	printf("[  PASSED  ] 1 test(s).\n");
	return 0;
}
