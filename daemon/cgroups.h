/* cgroups.h - the daemon's cgroup subtree: found or made at start, the daemon
 * moved into a leaf of it, a cgroup per job beneath (under systemd, in a scope
 * of their own, which outlives the unit), all removed at exit. */
#ifndef TRIAGED_CGROUPS_H
#define TRIAGED_CGROUPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* What the config asks for ([daemon] cgroups). */
enum cgroups_want {
	CGROUPS_WANT_AUTO,
	CGROUPS_WANT_REQUIRED,
	CGROUPS_WANT_OFF,
};

/* What the daemon got: stats' "cgroups". */
enum cgroups_mode {
	CGROUPS_NONE,		/* process groups, as without cgroups */
	CGROUPS_PARTIAL,	/* a cgroup per job; not every job control */
	CGROUPS_V2,		/* and memory, pids and cpu control */
};

struct cgroups;

/*
 * Finds the subtree the daemon may write in, as triaged(8) says (the one
 * systemd's Delegate= gave it; else, as root where no systemd manages
 * cgroups, one it makes beneath its own cgroup, named after state_dir; else
 * one it was given and owns), moves the daemon into its leaf "daemon",
 * enables what it can of cpu, memory and pids for the jobs' cgroups under
 * "jobs". Under systemd, "jobs" and the workers' leaf "workers" are in a
 * scope of their own, STEM-jobs.scope, made or found again over D-Bus,
 * so that a stop, restart or kill of the unit leaves running jobs to the
 * next daemon (what an earlier daemon left there is cleared by
 * cgroups_clear_left, at recovery). Logs
 * the mode it got and why. Without a subtree the mode is CGROUPS_NONE,
 * which want REQUIRED refuses. Returns the state, or NULL with *cause
 * set (allocated): out of memory, or REQUIRED and none to be had.
 * Call it before any process forks but the workers: they are born in the
 * daemon's leaf, and moved into "workers" where there is one.
 */
struct cgroups *cgroups_start(enum cgroups_want want, const char *state_dir,
    char **cause);
/* Kills what is left in the jobs' cgroups and removes them, and the
 * subtree when the daemon made it (moving itself back where it was); a
 * scope, then empty, ends. */
void cgroups_stop(struct cgroups *cg);
/* The daemon goes and leaves its running jobs (shutdown = keep): the
 * subtree, the scope (as long as workers are in it) and the jobs' cgroups
 * stay as they are for the next one. */
void cgroups_leave(struct cgroups *cg);

/* Whether the job cgroup of attempt ID.ATTEMPT is in use (adopted). */
typedef bool (*cgroups_keep_cb)(uint64_t id, unsigned attempt, void *arg);
/* At recovery, once the adopted runs are known: kills and removes every
 * job cgroup an earlier daemon left but those keep says are in use
 * (keep NULL: all). */
void cgroups_clear_left(struct cgroups *cg, cgroups_keep_cb keep,
    void *arg);

/* cg may be NULL (none) for these. */
enum cgroups_mode cgroups_mode(const struct cgroups *cg);
const char *cgroups_mode_name(enum cgroups_mode mode);
/* The controllers the jobs' cgroups have (cgroup.h's mask). */
unsigned cgroups_ctls(const struct cgroups *cg);
/* The same as a JSON array of names, stats' "cgroup"; NULL out of
 * memory. */
json_t *cgroups_ctls_json(const struct cgroups *cg);
/* The jobs' parent directory, for the workers that make their cgroups;
 * -1 in CGROUPS_NONE. */
int cgroups_jobs_fd(const struct cgroups *cg);
/* The leaf a new worker is moved into, -1 for none (it stays where it was
 * born, in the daemon's leaf). */
int cgroups_workers_fd(const struct cgroups *cg);
/* The scope the jobs run in ("triage-jobs.scope"), NULL for none. */
const char *cgroups_scope_name(const struct cgroups *cg);

/* A job attempt's cgroup, its name under "jobs" ("42.1"): the workers name
 * them so. */
#define CGROUPS_NAME_MAX 32
void cgroups_job_name(uint64_t id, unsigned attempt, char *buf,
    size_t size);
/* Its path from the cgroup mount ("/triaged-x/jobs/42.1"), for the job's
 * `cgroup` field. */
void cgroups_job_path(const struct cgroups *cg, uint64_t id,
    unsigned attempt, char *buf, size_t size);

/* SIGKILL to everything in a job attempt's cgroup (its worker cannot: it
 * is stuck, or gone). 0, or -1 with errno. */
int cgroups_job_kill(const struct cgroups *cg, uint64_t id,
    unsigned attempt);
/* Freezes or thaws a job attempt's cgroup. 0, or -1 with errno (ENOENT:
 * a kernel without the freezer). */
int cgroups_job_freeze(const struct cgroups *cg, uint64_t id,
    unsigned attempt, bool on);
/* Whether the jobs' cgroups have the freezer (cgroup.freeze). */
bool cgroups_can_freeze(const struct cgroups *cg);

#endif
