/* bench-opts.c - the command line every benchmark program takes: --quick,
 * --dir, --help, and counts of its own (--samples N, --rounds N...). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench-daemon.h"
#include "bench-opts.h"

#define BENCH_OPTS_COUNTS_MAX 8
/* getopt_long's values of the counts: 0x100 + index. */
#define BENCH_OPTS_COUNT 0x100

static void
bench_opts_usage(const struct bench_opts *o, FILE *f)
{
	const struct bench_opts_count *c;
	char name[64];
	size_t i;

	fprintf(f, "usage: %s [--quick]", o->prog);
	for (i = 0; i < o->ncounts; i++)
		fprintf(f, " [--%s N]", o->counts[i].name);
	fprintf(f, " [--dir DIR]\n%s", o->about);
	for (i = 0; i < o->ncounts; i++) {
		c = &o->counts[i];
		snprintf(name, sizeof name, "%s N", c->name);
		fprintf(f, "  --%-11s %s (default %ld", name, c->help,
		    c->dflt);
		if (c->quick_dflt != 0)
			fprintf(f, ", --quick %ld", c->quick_dflt);
		fprintf(f, ")\n");
	}
	fprintf(f, "  --quick       a shorter run, for a quick check\n"
	    "  --dir DIR     where the temp dirs go (default /tmp)\n");
}

/* Reads --name's value into *c->v. 0, or -1 after saying why. */
static int
bench_opts_count(const struct bench_opts *o, const struct bench_opts_count *c,
    const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (*s < '0' || *s > '9' || *end != '\0' || errno != 0 ||
	    v < c->min || v > c->max) {
		fprintf(stderr, "%s: --%s wants a number from %ld to %ld, not "
		    "\"%s\"\n", o->prog, c->name, c->min, c->max, s);
		return -1;
	}
	*c->v = v;
	return 0;
}

int
bench_opts_parse(struct bench_opts *o, int argc, char **argv)
{
	const struct bench_opts_count *c;
	struct option longopts[BENCH_OPTS_COUNTS_MAX + 4] = {
		{ "quick", no_argument, NULL, 'q' },
		{ "dir", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
	};
	size_t i;
	int ch;

	if (bench_daemon_guard() == -1) {
		fprintf(stderr, "%s: cannot set up signals: %s\n", o->prog,
		    strerror(errno));
		return 1;
	}
	o->quick = false;
	o->dir = "/tmp";
	for (i = 0; i < o->ncounts && i < BENCH_OPTS_COUNTS_MAX; i++) {
		longopts[3 + i] = (struct option){ o->counts[i].name,
		    required_argument, NULL, BENCH_OPTS_COUNT + (int)i };
		/* -1: not given, whatever the order of --quick. */
		*o->counts[i].v = -1;
	}
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (ch == 'q')
			o->quick = true;
		else if (ch == 'd')
			o->dir = optarg;
		else if (ch == 'h') {
			bench_opts_usage(o, stdout);
			return 0;
		} else if (ch >= BENCH_OPTS_COUNT &&
		    ch < BENCH_OPTS_COUNT + (int)o->ncounts) {
			if (bench_opts_count(o,
			    &o->counts[ch - BENCH_OPTS_COUNT], optarg) == -1)
				return 2;
		} else {
			bench_opts_usage(o, stderr);
			return 2;
		}
	}
	if (optind != argc) {
		bench_opts_usage(o, stderr);
		return 2;
	}
	for (i = 0; i < o->ncounts; i++) {
		c = &o->counts[i];
		if (*c->v == -1)
			*c->v = o->quick && c->quick_dflt != 0 ?
			    c->quick_dflt : c->dflt;
	}
	return -1;
}
