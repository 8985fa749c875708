/* job.h - the job: what was asked for, where it stands, how it ended; its
 * state machine and its JSON form (protocol.md, "The job object"). */
#ifndef TRIAGE_JOB_H
#define TRIAGE_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "psem.h"

enum job_state {
	JOB_QUEUED,
	JOB_RUNNING,
	JOB_SUCCEEDED,
	JOB_FAILED,
	JOB_TIMED_OUT,
	JOB_CANCELED,
	JOB_LOST,
};
#define JOB_NSTATES (JOB_LOST + 1)

struct job {
	uint64_t id;
	char *name;
	char **argv;		/* NULL-terminated */
	char **env;		/* NULL-terminated "K=V", without TRIAGE_* */
	char *cwd;
	char *priority;		/* the priority's name */
	enum job_state state;
	unsigned slots;
	bool exclusive;
	uint64_t timeout_ms;	/* 0 = none */
	unsigned retries;	/* automatic retries left after a failure */
	int64_t seq;		/* order in its queue: smaller goes first */
	uint64_t *after;	/* ids it waits for; NULL when none */
	size_t nafter;
	uid_t uid;
	gid_t gid;
	int64_t submitted_at;	/* ms since the epoch; -1 = not yet */
	int64_t started_at;
	int64_t finished_at;
	pid_t pid;		/* 0 = never started */
	int exit_code;		/* -1 = did not exit normally */
	int signal;		/* 0 = not killed by a signal */
	char *reason;		/* NULL = none */
	unsigned attempt;
	double user_time;	/* < 0 = unknown */
	double system_time;
	int64_t max_rss_kb;	/* < 0 = unknown */
	bool stdout_truncated;
	bool stderr_truncated;
	bool begun;		/* this attempt was handed to a worker */
	uint64_t start_ticks;	/* its process's start, in clock ticks since
				 * boot (/proc/PID/stat); 0 = unknown */
	/* Protocol v1.1. */
	json_t *labels;		/* object of strings; NULL = none */
	bool held;		/* queued, but never dispatched until released */
	int64_t begin_at;	/* ms since the epoch; -1 = none */
	uint64_t *after_any;	/* ids it waits for, whatever their outcome */
	size_t nafter_any;
	int nice;		/* 0 to 19 */
	bool merge_output;	/* stderr into the stdout capture */
	uint64_t stdout_dropped; /* bytes no longer stored before offset 0 */
	uint64_t stderr_dropped;
	/* The daemon's, not stored: its dependencies hold it outside the
	 * semaphore; its place in the queue of begin times (1 + index, 0 =
	 * not there). */
	bool gated;
	size_t begin_slot;

	struct psem_waiter waiter;	/* its place in its priority's queue */
};

/*
 * What a job's life changes, apart from reason: a copy taken at a state
 * change shows the job as it was then, whatever came after.
 */
struct job_status {
	enum job_state state;
	unsigned attempt;
	unsigned retries;
	int64_t seq;
	int64_t started_at;
	int64_t finished_at;
	pid_t pid;
	int exit_code;
	int signal;
	double user_time;
	double system_time;
	int64_t max_rss_kb;
	bool stdout_truncated;
	bool stderr_truncated;
	bool begun;
	uint64_t start_ticks;
	bool held;
	uint64_t stdout_dropped;
	uint64_t stderr_dropped;
};

/* Frees a NULL-terminated vector and its strings (argv, env); NULL is
 * fine. */
void job_free_strv(char **v);
void job_status_get(const struct job *job, struct job_status *st);
void job_status_set(struct job *job, const struct job_status *st);

const char *job_state_name(enum job_state state);
/* Returns the state called name, or -1. */
int job_state_parse(const char *name);
bool job_state_terminal(enum job_state state);

/* A job with every field empty or unknown; NULL when out of memory. */
struct job *job_new(void);
void job_free(struct job *job);

/* A new attempt: attempt + 1, and what the last run left (pid, exit code,
 * signal, times, usage, truncation, begun) cleared. The state is the
 * caller's. */
void job_new_attempt(struct job *job);

/* Frees the environment (env becomes NULL): a job that has ended keeps
 * it on disk only, where a retry reads it back. */
void job_drop_env(struct job *job);

/* Sets reason to a copy of the formatted text (NULL clears it); 0 or -1. */
int job_set_reason(struct job *job, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * The job object of protocol.md, a new reference; position is its place in
 * the queue, or -1 for null; pending_reason why it is queued still, or NULL
 * for null. NULL when out of memory.
 */
json_t *job_to_json(const struct job *job, int64_t position,
    const char *pending_reason);
/*
 * The same object as text, appended to w: what job_to_json's object dumps
 * to (JSONW_DUMP_FLAGS), byte for byte, without building it. 0, or -1
 * with w failed (out of memory, a string that is not UTF-8).
 */
struct jsonw;
int job_write_json(const struct job *job, int64_t position,
    const char *pending_reason, struct jsonw *w);

#endif
