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

/* Packed: one byte, in every job (and every job_status). */
enum __attribute__((packed)) job_state {
	JOB_QUEUED,
	JOB_RUNNING,
	JOB_SUCCEEDED,
	JOB_FAILED,
	JOB_TIMED_OUT,
	JOB_CANCELED,
	JOB_LOST,
};
#define JOB_NSTATES (JOB_LOST + 1)

/* The longest idempotency key a submission may give, in bytes. */
#define JOB_KEY_MAX 256

/*
 * What an attempt's run left: a job that never ran shares job_run_none and
 * carries none of it (a queued job is most jobs, and a million of them
 * should not each pay for a run's worth of fields).
 */
struct job_run {
	int64_t started_at;	/* ms since the epoch; -1 = not yet */
	int64_t finished_at;
	double user_time;	/* < 0 = unknown */
	double system_time;
	int64_t max_rss_kb;	/* < 0 = unknown */
	/* Its process's start, in clock ticks since boot (/proc/PID/stat);
	 * 0 = unknown. */
	uint64_t start_ticks;
	uint64_t stdout_dropped; /* bytes no longer stored before offset 0 */
	uint64_t stderr_dropped;
	char *reason;		/* NULL = none; kept across attempts */
	/* Protocol v1.2. The most memory the job's process tree used at
	 * once, in bytes (its cgroup's peak; without one, the largest
	 * child's max RSS); < 0 = unknown. */
	int64_t peak_memory;
	/* While it runs, its cgroup's path below the cgroup mount; NULL =
	 * none. Owned like reason, but this attempt's only: set it through
	 * job_set_cgroup. */
	char *cgroup;
	/* Protocol v1.3: the bytes its attempt left in TRIAGE_RESULT, in
	 * the wire's form (bytestr_json_bytes: a string, or {"base64":
	 * ...}); NULL = none. Owned like reason, replaced whole and never
	 * edited; job_new_attempt clears it. */
	json_t *result;
	pid_t pid;		/* 0 = never started */
	int exit_code;		/* -1 = did not exit normally */
	int signal;		/* 0 = not killed by a signal */
	bool stdout_truncated;
	bool stderr_truncated;
	bool begun;		/* this attempt was handed to a worker */
	bool oom;		/* it, or a process of it, was killed for want
				 * of memory */
	bool result_truncated;	/* it wrote more than max_result */
};

/* The run of a job that has none: every field unknown or empty. */
extern const struct job_run job_run_none;

/*
 * What few jobs ask for: a job that asks for none of it shares
 * job_extra_none and carries none of it, as with job_run (a queued job is
 * most jobs, and most ask for none of these). Stored fields all: a newer
 * copy of the job takes them whole (job_take_stored).
 */
struct job_extra {
	char *name;		/* NULL: argv[0]'s basename (job_name) */
	const char *pinned_node; /* the node it must run on; NULL: any */
	uint64_t *after;	/* ids it waits for; NULL when none */
	uint64_t *after_any;	/* ids it waits for, whatever their outcome */
	/* Protocol v1.1. */
	json_t *labels;		/* object of strings; NULL = none */
	/* Protocol v1.2: the named resources it asked for, an object of
	 * name to positive integer; NULL = none ({} on the wire). Replaced
	 * whole, never edited, as labels are. */
	json_t *resources;
	/* Protocol v1.2: the units of unit-named resources its current or
	 * last attempt was given, an object of name to array of unit names;
	 * NULL = none ({} on the wire). Set by admission at the grant,
	 * replaced whole, never edited (the views of events share it);
	 * job_new_attempt clears it. */
	json_t *devices;
	int64_t begin_at;	/* ms since the epoch; -1 = none */
	/* Protocol v1.3: the submitter's idempotency key (1 to
	 * JOB_KEY_MAX bytes), unique among the jobs of its uid that are
	 * kept; NULL = none. Fixed at submit. */
	char *key;
	/* Counts of after and after_any: a request could not hold more. */
	uint32_t nafter;
	uint32_t nafter_any;
};

/* The extra of a job that has none: every field empty, no begin_at. */
extern const struct job_extra job_extra_none;

/* Fields ordered by size, narrowed where their range allows: a queued job
 * is what a long queue is made of. */
struct job {
	uint64_t id;
	/* NULL-terminated, in one allocation with its strings: set it
	 * through job_set_argv. */
	char **argv;
	/* Shared with every job that has the same (intern.h): set them
	 * through job_set_env, job_set_cwd, job_set_priority, job_set_node
	 * and job_set_user (and extra's pinned_node through
	 * job_set_pinned_node). */
	char *const *env;	/* NULL-terminated "K=V", without TRIAGE_* */
	const char *cwd;
	const char *priority;	/* the priority's name */
	/* The node its current or last attempt runs or ran on; NULL:
	 * never started. */
	const char *node;
	/* The user it runs as, by name, for a root daemon: looked up on the
	 * node that runs it (a cluster's hosts share their users, not
	 * always their uids). NULL: by uid. Here, not in extra: a root
	 * daemon gives every job one. */
	const char *user;
	/* Never NULL; read it freely, change it through job_run_edit(). */
	const struct job_run *run;
	/* Never NULL; read it freely, change it through job_extra_edit(). */
	const struct job_extra *extra;
	uint64_t timeout_ms;	/* 0 = none */
	/* Protocol v1.2: bytes it declared (or its priority's default), at
	 * most INT64_MAX; 0 = none. */
	uint64_t memory;
	int64_t seq;		/* order in its queue: smaller goes first */
	int64_t submitted_at;	/* ms since the epoch; -1 = not yet */
	uid_t uid;
	gid_t gid;
	unsigned retries;	/* automatic retries left after a failure */
	unsigned attempt;
	uint16_t slots;		/* at most the config's 1024 */
	enum job_state state;	/* a byte */
	int8_t nice;		/* 0 to 19 */
	bool exclusive;
	bool held;	/* queued, but never dispatched until released */
	bool merge_output;	/* stderr into the stdout capture */
	/* Running, its processes frozen (protocol v1.2, freeze): it keeps
	 * its slots, and its timeout clock stops. */
	bool frozen;

	/* The store's own, not columns: written by store/ alone. */
	struct {
		/* Its row's version in a database shared with other
		 * daemons, whose updates name it (0 elsewhere). */
		uint32_t version;
		/* How many times another daemon's row replaced it (it
		 * wraps), which undoes the changes made before. */
		uint16_t replaced;
		/* While its store_add's callback runs: its row was
		 * inserted begun on this node, so the claim is made
		 * (store_claim writes none). */
		bool claimed;
	} store;
	/* Admission's (daemon/beginq.c, jobs-admit.c), not stored. */
	struct {
		/* Its place in the queue of begin times (1 + index, 0 =
		 * not there). */
		uint32_t begin_slot;
		/* Its dependencies hold it outside the semaphore. */
		bool gated;
	} admit;
	/* What the daemon knows of the job as other daemons sharing its
	 * database act on it too (daemon/jobs-changed.c, jobs-end.c,
	 * cluster-lease.c), not stored. */
	struct {
		/* The resources it is counted as holding on another node
		 * (daemon/resources.c): a reference to its resources then,
		 * so that what was counted is what is given back, whatever
		 * its row says by then; NULL while not counted. */
		json_t *held_elsewhere;
		/* Who canceled it while queued here, and with what signal
		 * (0: nobody), and whether another daemon's write undid
		 * that (a claim that came first): the cancel is done again
		 * on the row read back. */
		struct {
			uid_t by;
			int8_t sig;
			bool again;
		} cancel;
		/* How many writes of it the database refused (it wraps):
		 * another daemon's change came first, and an edit answered
		 * after such a write was not made (jobs_edit_undone). */
		uint16_t refused;
		/* Another daemon took this job while its run here went on
		 * (a lease that ran out); that run's end is not the job's. */
		bool taken;
		/* Its run here was stopped because this node's lease ran
		 * out unrenewed; its end is another attempt, as a takeover
		 * would make it, never an outcome. */
		bool fenced;
		/* Its slots are counted as held on another node, toward its
		 * priority's max_running. */
		bool elsewhere;
	} shared;

	struct psem_waiter waiter;	/* its place in its priority's queue */
};

/*
 * What a job's life changes, apart from reason, cgroup and result: a copy
 * taken at a state change shows the job as it was then, whatever came
 * after. run.reason, run.cgroup and run.result are always NULL here.
 */
struct job_status {
	enum job_state state;
	unsigned attempt;
	unsigned retries;
	int64_t seq;
	bool held;
	bool frozen;
	struct job_run run;
};

/* Frees a NULL-terminated vector and its strings (argv, env); NULL is
 * fine. */
void job_free_strv(char **v);
void job_status_get(const struct job *job, struct job_status *st);
/* Puts st back, the reason, cgroup and result apart. 0, or -1 out of memory (the
 * job had no run of its own and st has one): then only the run is left as
 * it was. */
int job_status_set(struct job *job, const struct job_status *st);

/*
 * The job's own run, to change: made (as job_run_none) on first use, kept
 * until the job is freed. NULL when out of memory, and nothing changed.
 */
struct job_run *job_run_edit(struct job *job);
/* Whether r says nothing job_run_none does not, its reason, cgroup and
 * result apart. */
bool job_run_is_none(const struct job_run *r);

/*
 * The job's own extra, to change: made (as job_extra_none) on first use,
 * kept until the job is freed. NULL when out of memory, and nothing
 * changed.
 */
struct job_extra *job_extra_edit(struct job *job);
/* Whether e says nothing job_extra_none does not. */
bool job_extra_is_none(const struct job_extra *e);
/* Lets go of what e holds and makes it job_extra_none again: for one
 * filled outside a job (a row read), never a job's own. */
void job_extra_clear(struct job_extra *e);

const char *job_state_name(enum job_state state);
/* The state as a sentence says it of a job: "is running", "has
 * succeeded", "was canceled" ("job 12 has succeeded"). Static. */
const char *job_state_phrase(enum job_state state);
/* Returns the state called name, or -1. */
int job_state_parse(const char *name);
bool job_state_terminal(enum job_state state);

/* A job with every field empty or unknown; NULL when out of memory. */
struct job *job_new(void);
void job_free(struct job *job);

/* A new attempt: attempt + 1, and what the last run left (pid, exit code,
 * signal, times, usage, peak memory, oom, cgroup, devices, truncation,
 * result, begun; not the reason) cleared. The state is the caller's. */
void job_new_attempt(struct job *job);

/* The job takes every stored field of from (a newer copy read from a
 * database) but its id; its own fields (its place in the semaphore, the
 * queue of begin times, gated, taken, elsewhere, version, cancel, refused)
 * stay, and its
 * count of replacements grows. from is left with the
 * job's old fields, for job_free. */
void job_take_stored(struct job *job, struct job *from);

/* Frees the environment (env becomes NULL): a job that has ended keeps
 * it on disk only, where a retry reads it back. */
void job_drop_env(struct job *job);

/*
 * The job holds a shared copy of cwd, priority or a node's name from now
 * on (NULL: none). 0, or -1 out of memory with nothing changed.
 */
int job_set_cwd(struct job *job, const char *cwd);
int job_set_priority(struct job *job, const char *priority);
int job_set_node(struct job *job, const char *node);
int job_set_pinned_node(struct job *job, const char *node);
int job_set_user(struct job *job, const char *user);
/*
 * Takes env (a NULL-terminated vector of strings from malloc, freed here
 * whatever happens) and holds a shared copy of it instead; NULL drops the
 * job's. 0, or -1 out of memory with the job's env as it was.
 */
int job_set_env(struct job *job, char **env);
/*
 * Takes argv (a NULL-terminated vector of strings from malloc, freed here
 * whatever happens) and keeps a copy of it in one allocation. 0, or -1 out
 * of memory with the job's argv as it was.
 */
int job_set_argv(struct job *job, char **argv);
/* A copy of v in one allocation, which free() frees whole; NULL out of
 * memory. */
char **job_strv_pack(char *const *v);

/* Takes name (from malloc, or NULL): the job stores none when it is the
 * default, argv[0]'s basename; but a default that is not UTF-8 is stored
 * with each bad byte written \xNN (job_set_argv does the same), so that a
 * job's name is always a string of its JSON. 0, or -1 out of memory for
 * the job's extra, with name freed and the job's as it was. */
int job_set_name(struct job *job, char *name);
/* The job's name, stored or by default; borrowed. */
const char *job_name(const struct job *job);

/* Sets reason to a copy of the formatted text (NULL clears it), with each
 * byte of what is not UTF-8 written \xNN (a path it quotes); 0 or -1. */
int job_set_reason(struct job *job, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * Sets the current attempt's cgroup to a copy of path (NULL clears it),
 * with each byte of what is not UTF-8 written \xNN, as job_set_reason does:
 * the job object must always be written. job_new_attempt clears it. 0, or
 * -1 out of memory with nothing changed.
 */
int job_set_cgroup(struct job *job, const char *path);

/*
 * Sets the run's result to the n bytes at s (bytestr_json_bytes), n 0 for
 * none, and whether more were written than were kept. 0, or -1 out of
 * memory with the job left without a result.
 */
int job_set_result(struct job *job, const char *s, size_t n, bool truncated);

/*
 * The job object of protocol.md, a new reference (argv and cwd as byte
 * strings, bytestr.h: {"base64": ...} where they are not UTF-8); position is
 * its place in the queue, or -1 for null; pending_reason why it is queued
 * still, or NULL for null. NULL when out of memory.
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
