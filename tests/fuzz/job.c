/* job.c - fuzz target: a job built from the input, its JSON object
 * (job_to_json) and its database row (db insert, load, env): round trips. */
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

#include "bytestr.h"
#include "sqlite-db.h"
#include "fuzz.h"
#include "job.h"

static struct sqlite_db *fuzz_db_open;
static char fuzz_dir[1024];

/* The database and its directory go when the process ends. */
static void
fuzz_cleanup(void)
{
	static const char *const files[] = { "jobs.db", "jobs.db-wal",
	    "jobs.db-shm" };
	char path[1100];
	size_t i;

	sqlite_db_close(fuzz_db_open);
	for (i = 0; i < sizeof files / sizeof files[0]; i++) {
		snprintf(path, sizeof path, "%s/%s", fuzz_dir, files[i]);
		unlink(path);
	}
	rmdir(fuzz_dir);
}

/* One database per process: opening one per input would be the most of
 * the time spent. */
static struct sqlite_db *
fuzz_db(void)
{
	char path[1100];

	if (fuzz_db_open != NULL)
		return fuzz_db_open;
	snprintf(fuzz_dir, sizeof fuzz_dir, "%s/triage-fuzz-job-XXXXXX",
	    fuzz_tmpdir());
	if (mkdtemp(fuzz_dir) == NULL)
		abort();
	snprintf(path, sizeof path, "%s/jobs.db", fuzz_dir);
	if ((fuzz_db_open = sqlite_db_open(path, NULL)) == NULL ||
	    sqlite_db_set_sync(fuzz_db_open, false, NULL) != 0)
		abort();
	atexit(fuzz_cleanup);
	return fuzz_db_open;
}

/* A NULL-terminated vector of min to max strings from the input. */
static char **
fuzz_strv(struct fuzz_in *in, size_t min, size_t max, bool var)
{
	size_t n = min + fuzz_u8(in) % (max - min + 1), i;
	char **v = calloc(n + 1, sizeof *v);
	char *s;

	if (v == NULL)
		abort();
	for (i = 0; i < n; i++) {
		s = fuzz_str(in, 24);
		if (var) {
			/* "K=V", K non-empty and without '='. */
			char *kv;

			if (asprintf(&kv, "K%zu=%s", i, s) < 0)
				abort();
			free(s);
			s = kv;
		}
		v[i] = s;
	}
	return v;
}

static int64_t
fuzz_time(struct fuzz_in *in)
{
	uint32_t v = fuzz_u32(in);

	return v % 3 == 0 ? -1 : (int64_t)v * 1000 + v % 1000;
}

/* The fields of protocol v1.1. */
static void
fuzz_job_v11(struct fuzz_in *in, struct job *job)
{
	struct job_extra *extra;
	size_t n = fuzz_u8(in) % 4, i;
	char *k, *v;

	if ((extra = job_extra_edit(job)) == NULL)
		abort();
	for (i = 0; i < n; i++) {
		if (extra->labels == NULL && (extra->labels = json_object()) ==
		    NULL)
			abort();
		k = fuzz_str(in, 16);
		v = fuzz_str(in, 24);
		/* A key or value that is not UTF-8 is left out, as jansson
		 * takes none. */
		(void)json_object_set_new(extra->labels, k, json_string(v));
		free(k);
		free(v);
	}
	job->held = fuzz_u8(in) & 1;
	extra->begin_at = fuzz_time(in);
	extra->nafter_any = fuzz_u8(in) % 3;
	if (extra->nafter_any > 0 && (extra->after_any =
	    calloc(extra->nafter_any, sizeof *extra->after_any)) == NULL)
		abort();
	for (i = 0; i < extra->nafter_any; i++)
		extra->after_any[i] = (uint64_t)fuzz_u32(in) + 1;
	job->nice = fuzz_u8(in) % 20;
	job->merge_output = fuzz_u8(in) & 1;
	job_run_edit(job)->stdout_dropped = fuzz_u32(in);
	job_run_edit(job)->stderr_dropped = fuzz_u32(in);
}

/* resources and devices as a submission and admission make them: counts
 * of at least one, and lists of at least one unit name. A key or a name
 * that is not UTF-8 is left out, as jansson takes none. */
static void
fuzz_job_resources(struct fuzz_in *in, struct job *job)
{
	struct job_extra *extra;
	size_t n = fuzz_u8(in) % 3, i;
	json_t *units;
	char *k, *u;

	if ((extra = job_extra_edit(job)) == NULL)
		abort();
	if ((extra->resources = json_object()) == NULL ||
	    (extra->devices = json_object()) == NULL)
		abort();
	for (i = 0; i < n; i++) {
		k = fuzz_str(in, 16);
		(void)json_object_set_new(extra->resources, k,
		    json_integer(1 + fuzz_u8(in)));
		if ((units = json_array()) == NULL)
			abort();
		u = fuzz_str(in, 8);
		(void)json_array_append_new(units, json_sprintf("u%s", u));
		free(u);
		if (json_array_size(units) > 0)
			(void)json_object_set(extra->devices, k, units);
		json_decref(units);
		free(k);
	}
}

/* The fields of protocol v1.2. */
static void
fuzz_job_v12(struct fuzz_in *in, struct job *job)
{
	char *s;

	job->memory = fuzz_u64(in) >> 1;
	job->frozen = fuzz_u8(in) & 1;
	job_run_edit(job)->peak_memory = (int64_t)(fuzz_u64(in) >> 1) - 1;
	job_run_edit(job)->oom = fuzz_u8(in) & 1;
	if (fuzz_u8(in) & 1) {
		s = fuzz_str(in, 40);
		if (job_set_cgroup(job, s) != 0)
			abort();
		free(s);
	}
	fuzz_job_resources(in, job);
}

static struct job *
fuzz_job(struct fuzz_in *in)
{
	struct job *job = job_new();
	struct job_extra *extra;
	struct job_run *run;
	char *s, *t;
	size_t i;

	if (job == NULL || (run = job_run_edit(job)) == NULL ||
	    (extra = job_extra_edit(job)) == NULL)
		abort();
	job->id = (uint64_t)fuzz_u32(in) + 1;
	extra->name = fuzz_str(in, 40);
	if (job_set_argv(job, fuzz_strv(in, 1, 4, false)) != 0)
		abort();
	if (job_set_env(job, fuzz_strv(in, 0, 3, true)) != 0 ||
	    job_set_cwd(job, (s = fuzz_str(in, 40))) != 0 ||
	    job_set_priority(job, (t = fuzz_str(in, 32))) != 0)
		abort();
	free(s);
	free(t);
	job->state = (enum job_state)(fuzz_u8(in) % JOB_NSTATES);
	job->slots = fuzz_u32(in);
	job->exclusive = fuzz_u8(in) & 1;
	job->timeout_ms = fuzz_u64(in) >> 1;
	job->retries = fuzz_u32(in);
	job->seq = (int64_t)(fuzz_u64(in) >> 1);
	extra->nafter = fuzz_u8(in) % 4;
	if (extra->nafter > 0 && (extra->after = calloc(extra->nafter,
	    sizeof *extra->after)) == NULL)
		abort();
	for (i = 0; i < extra->nafter; i++)
		extra->after[i] = (uint64_t)fuzz_u32(in) + 1;
	job->uid = fuzz_u32(in);
	job->gid = fuzz_u32(in);
	job->submitted_at = fuzz_time(in);
	run->started_at = fuzz_time(in);
	run->finished_at = fuzz_time(in);
	run->pid = (pid_t)(fuzz_u32(in) & 0x7fffffff);
	run->exit_code = (int)(fuzz_u8(in)) - 1;
	run->signal = fuzz_u8(in) % 70;
	if (fuzz_u8(in) & 1)
		run->reason = fuzz_str(in, 60);
	job->attempt = fuzz_u32(in);
	run->user_time = fuzz_u8(in) & 1 ? -1 : fuzz_u32(in) / 1000.0;
	run->system_time = fuzz_u8(in) & 1 ? -1 :
	    fuzz_u32(in) / 1000.0;
	run->max_rss_kb = (int64_t)fuzz_u32(in) - 1;
	run->stdout_truncated = fuzz_u8(in) & 1;
	run->stderr_truncated = fuzz_u8(in) & 1;
	run->begun = fuzz_u8(in) & 1;
	run->start_ticks = fuzz_u32(in);
	fuzz_job_v11(in, job);
	fuzz_job_v12(in, job);
	return job;
}

/* What the JSON object says of job. */
static void
fuzz_json(const struct job *job, json_t *o)
{
	json_t *argv = json_object_get(o, "argv");
	size_t i;

	FUZZ_ASSERT(json_is_object(o));
	FUZZ_ASSERT((uint64_t)json_integer_value(json_object_get(o, "id")) ==
	    job->id);
	FUZZ_ASSERT(strcmp(json_string_value(json_object_get(o, "name")),
	    job_name(job)) == 0);
	FUZZ_ASSERT(job_state_parse(json_string_value(json_object_get(o,
	    "state"))) == (int)job->state);
	const char *why;
	char *b;

	for (i = 0; job->argv[i] != NULL; i++) {
		/* Plain when UTF-8, else {"base64": ...}: the same bytes. */
		FUZZ_ASSERT(bytestr_from_json(json_array_get(argv, i), &b,
		    &why) == 0);
		FUZZ_ASSERT(strcmp(b, job->argv[i]) == 0);
		FUZZ_ASSERT(json_is_string(json_array_get(argv, i)) ==
		    bytestr_utf8(b, strlen(b)));
		free(b);
	}
	FUZZ_ASSERT(bytestr_from_json(json_object_get(o, "cwd"), &b,
	    &why) == 0);
	FUZZ_ASSERT(strcmp(b, job->cwd) == 0);
	free(b);
	FUZZ_ASSERT(json_array_size(argv) == i);
	FUZZ_ASSERT(json_array_size(json_object_get(o, "after")) ==
	    job->extra->nafter);
	FUZZ_ASSERT(json_array_size(json_object_get(o, "after_any")) ==
	    job->extra->nafter_any);
	FUZZ_ASSERT(json_object_size(json_object_get(o, "labels")) ==
	    (job->extra->labels != NULL ?
	    json_object_size(job->extra->labels) : 0));
	FUZZ_ASSERT(json_integer_value(json_object_get(o, "nice")) ==
	    job->nice);
	FUZZ_ASSERT(job->memory == 0 ? json_is_null(json_object_get(o,
	    "memory")) : (uint64_t)json_integer_value(json_object_get(o,
	    "memory")) == job->memory);
	FUZZ_ASSERT(json_is_true(json_object_get(o, "frozen")) ==
	    job->frozen);
	FUZZ_ASSERT(json_is_true(json_object_get(o, "oom")) == job->run->oom);
	FUZZ_ASSERT(json_equal(json_object_get(o, "resources"),
	    job->extra->resources));
	FUZZ_ASSERT(json_equal(json_object_get(o, "devices"),
	    job->extra->devices));
	/* An escaped cgroup (bytes not UTF-8) is a string all the same. */
	FUZZ_ASSERT(json_is_string(json_object_get(o, "cgroup")) ==
	    (job->run->cgroup != NULL));
}

static int
fuzz_load_cb(struct job *job, void *arg)
{
	struct job **out = arg;

	FUZZ_ASSERT(*out == NULL);
	*out = job;
	return 0;
}

/* The row read back is the job written, environment included. */
static void
fuzz_row(const struct job *job, json_t *o)
{
	struct sqlite_db *db = fuzz_db();
	struct job *back = NULL;
	char **env = NULL, *cause = NULL;
	json_t *o2;
	size_t i;

	/* Whatever bytes argv, env and cwd hold (bytestr.h), as the rest
	 * made a job object. */
	FUZZ_ASSERT(sqlite_db_insert(db, job, &cause) == 0);
	FUZZ_ASSERT(sqlite_db_load(db, fuzz_load_cb, &back, NULL) == 0);
	FUZZ_ASSERT(back != NULL);
	FUZZ_ASSERT(sqlite_db_env(db, job->id, &env, NULL) == 0);
	FUZZ_ASSERT(sqlite_db_delete(db, job->id, NULL) == 0);
	for (i = 0; job->env[i] != NULL; i++)
		FUZZ_ASSERT(env[i] != NULL && strcmp(env[i], job->env[i]) == 0);
	FUZZ_ASSERT(env[i] == NULL);
	job_free_strv(env);
	FUZZ_ASSERT((o2 = job_to_json(back, 7, "queue")) != NULL);
	FUZZ_ASSERT(json_equal(o, o2));
	FUZZ_ASSERT(back->seq == job->seq &&
	    back->run->begun == job->run->begun &&
	    back->run->start_ticks == job->run->start_ticks &&
	    back->run->stdout_truncated == job->run->stdout_truncated &&
	    back->run->stderr_truncated == job->run->stderr_truncated &&
	    back->run->stdout_dropped == job->run->stdout_dropped &&
	    back->run->stderr_dropped == job->run->stderr_dropped);
	json_decref(o2);
	job_free(back);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	struct job *job = fuzz_job(&in);
	json_t *o;

	/* NULL: a name, reason, priority or label that is not UTF-8, which
	 * jansson refuses (argv and cwd are byte strings). */
	if ((o = job_to_json(job, 7, "queue")) != NULL) {
		fuzz_json(job, o);
		fuzz_row(job, o);
		json_decref(o);
	}
	job_free(job);
	return 0;
}
