/* config.c - fuzz target: triage.conf parsing and checking (config_load)
 * of arbitrary file contents: a config, or every problem found. */
#include <fcntl.h>
#include <unistd.h>

#include "caller-env.h"
#include "config.h"
#include "fuzz.h"
#include "nodename.h"

static char fuzz_file[4096];

static void
fuzz_cleanup(void)
{
	unlink(fuzz_file);
}

/* The file the input is written to: one per process, reused. */
static const char *
fuzz_path(void)
{
	static int fd = -1;

	if (fd < 0) {
		snprintf(fuzz_file, sizeof fuzz_file,
		    "%s/triage-fuzz-conf-XXXXXX", fuzz_tmpdir());
		if ((fd = mkstemp(fuzz_file)) < 0)
			abort();
		atexit(fuzz_cleanup);
	}
	return fuzz_file;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct caller_env env = { .euid = 1000, .home = "/home/fuzz",
	    .hostname = "fuzz.example" };
	struct config_opts opts = { .path = fuzz_path(), .env = &env };
	struct config *cfg;
	char *cause = NULL;
	unsigned i;
	FILE *f;

	if ((f = fopen(opts.path, "w")) == NULL)
		abort();
	if (size > 0 && fwrite(data, 1, size, f) != size)
		abort();
	fclose(f);
	if ((cfg = config_load(&opts, &cause)) == NULL) {
		FUZZ_ASSERT(cause != NULL && cause[0] != '\0');
		free(cause);
		return 0;
	}
	FUZZ_ASSERT(cause == NULL);
	FUZZ_ASSERT(cfg->npriorities >= 1 &&
	    cfg->npriorities <= CONFIG_PRIORITIES_MAX);
	FUZZ_ASSERT(cfg->default_priority < cfg->npriorities);
	FUZZ_ASSERT(cfg->workers >= cfg->slots && cfg->slots >= 1);
	FUZZ_ASSERT(cfg->max_argv >= 1 && cfg->max_name >= 1);
	FUZZ_ASSERT(cfg->cluster.node != NULL &&
	    nodename_valid(cfg->cluster.node));
	FUZZ_ASSERT(!cfg->cluster.enabled || cfg->cluster.postgresql != NULL);
	FUZZ_ASSERT(cfg->cluster.lease_ms >= 1000 &&
	    cfg->cluster.lease_ms <= 3600 * 1000);
	FUZZ_ASSERT(cfg->memory_kind != CONFIG_MEMORY_PERCENT ||
	    (cfg->memory_value >= 1 && cfg->memory_value <= 100));
	FUZZ_ASSERT(cfg->nresources <= CONFIG_RESOURCES_MAX);
	for (i = 0; i < cfg->nresources; i++) {
		const struct config_resource *r = &cfg->resources[i];

		FUZZ_ASSERT(config_resource_find(cfg, r->name) == (int)i);
		FUZZ_ASSERT((r->units == NULL) == (r->nunits == 0));
		FUZZ_ASSERT(r->count >= 1 && r->count <= UINT32_MAX);
		FUZZ_ASSERT(r->units == NULL || (r->count == r->nunits &&
		    r->nunits <= CONFIG_RESOURCE_UNITS_MAX &&
		    r->units[r->nunits] == NULL));
		FUZZ_ASSERT(r->share >= 1 && r->share <= 1000);
		FUZZ_ASSERT(r->units != NULL || (r->share == 1 &&
		    r->env == NULL));
		FUZZ_ASSERT(!r->cluster || r->units == NULL);
	}
	for (i = 0; i < cfg->npriorities; i++) {
		FUZZ_ASSERT(config_priority_find(cfg,
		    cfg->priorities[i].name) == (int)i);
		if (i > 0)
			FUZZ_ASSERT(cfg->priorities[i - 1].rank <
			    cfg->priorities[i].rank);
	}
	config_free(cfg);
	return 0;
}
