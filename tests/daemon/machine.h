/* machine.h - for the daemon tests of the job state machine: jobs, store, pool,
 * executor and deps wired as main.c wires them, on a bare loop, recorded. */
#ifndef TRIAGE_TEST_MACHINE_H
#define TRIAGE_TEST_MACHINE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <sqlite3.h>

#include "job.h"
#include "loop.h"
#include "triaged.h"

struct deps;
struct machine;

#define MACHINE_NIDS		256	/* job ids it records: 1 .. NIDS-1 */
#define MACHINE_NEVENTS		1024
#define MACHINE_NOUTCOMES	64
#define MACHINE_NGATES		8
#define MACHINE_NBARRIERS	8
/* The built-in priorities are high, normal, low: every job goes in normal. */
#define MACHINE_PRIO_NORMAL	1

/* One published change, as the machine's listener saw it. */
struct machine_ev {
	uint64_t id;
	enum job_state from;
	enum job_state to;
	unsigned attempt;
	pid_t pid;
	char reason[160];
	int seq;		/* in the order of every callback */
	uintptr_t frame;	/* the listener's stack frame */
	int next_state;		/* job id + 1's state in memory then, or -1 */
};

/* One outcome the executor reported to jobs (through the machine). */
struct machine_out {
	uint64_t id;
	unsigned attempt;
	enum job_state state;
	char reason[512];
	bool started;
	int seq;
};

/* A call of machine_done_cb, by jobs_submit, jobs_retry or
 * jobs_after_commit. */
struct machine_done {
	struct machine *m;
	uint64_t id;		/* 0: a barrier */
	bool submission;
	int called;
	bool ok;
	char cause[160];
	int seq;
	int nev;		/* events recorded when it ran */
};

struct machine {
	struct loop loop;	/* first (loop_new); its dir: config, state */
	struct triaged td;
	struct deps *deps;
	bool in_call;		/* the test is inside a jobs_* call */
	int depth;		/* listeners running now */
	char db[128];
	sqlite3 *reader;	/* a second connection: what is on disk */
	sqlite3_stmt *row;
	int seq;
	struct machine_ev ev[MACHINE_NEVENTS];
	int nev;
	struct machine_out out[MACHINE_NOUTCOMES];
	int nout;
	int nstarted;		/* started_cb calls */
	struct machine_done sub[MACHINE_NIDS];	/* in the order submitted */
	int nsub;
	struct machine_done retry[MACHINE_NIDS];	/* by job id */
	struct machine_done barrier[MACHINE_NBARRIERS];
	int nbarrier;
	bool seen[MACHINE_NIDS];	/* the last event of each job */
	enum job_state last[MACHINE_NIDS];
	unsigned last_attempt[MACHINE_NIDS];
	int gate_fd[MACHINE_NGATES];	/* fifos jobs read their status from */
};

/*
 * A machine in a temp dir /tmp/name.XXXXXX: two slots, two workers, a short
 * kill_grace, the built-in priorities. Its listener records every change
 * before deps acts on it, and fails the next wait when a change is nested,
 * told inside a jobs_* call, out of turn, or not on disk yet. The caller's;
 * NULL on error (said on stderr).
 */
struct machine *machine_new(const char *name);
/* Ends it as main.c ends (a last flush), and removes its temp dir. */
void machine_free(struct machine *m);

/* The done_cb of jobs.h, arg a struct machine_done: records the call, and
 * checks that a job it is given is the store's, and on disk. */
void machine_done_cb(struct triaged *td, struct job *job, const char *cause,
    void *arg);
/* Job id's state and attempt as the database file has them: 0, or -1 when
 * it has no row. */
int machine_disk_row(struct machine *m, uint64_t id, enum job_state *state,
    unsigned *attempt);

/* A new job as submit makes one, in priority normal; the caller's. */
struct job *machine_job(struct machine *m, const char *const *argv);
/* A job that runs until gate is opened, and exits with the status it
 * gives. */
struct job *machine_gated(struct machine *m, int gate);
void machine_open_gate(struct machine *m, int gate, int status);
/* jobs_submit, inside which nothing may be told; returns the new id. */
uint64_t machine_submit(struct machine *m, struct job *job);
/* The done record of the submission of job id; fails the test if none. */
struct machine_done *machine_sub(struct machine *m, uint64_t id);
/* jobs_after_commit; returns the barrier's done record. */
struct machine_done *machine_after_commit(struct machine *m);

/* The last event of job id; fails the test when there is none. */
const struct machine_ev *machine_last(const struct machine *m, uint64_t id);
/* The nth (0 = first) event of job id; fails the test when there is none. */
const struct machine_ev *machine_event(const struct machine *m, uint64_t id,
    int nth);
int machine_nevents(const struct machine *m, uint64_t id);
/* Whether job id's last published state is state. */
bool machine_is(const struct machine *m, uint64_t id, enum job_state state);

/* Fails the test unless e is from -> to in attempt. */
void machine_assert_event(const struct machine_ev *e, enum job_state from,
    enum job_state to, unsigned attempt);
/* Fails the test unless jobs_count says so over every priority, and all of
 * it in priority normal; none timed out or lost. */
void machine_assert_counts(const struct machine *m, unsigned queued,
    unsigned running, unsigned succeeded, unsigned failed, unsigned canceled);

#endif
