/* harness.h - for the daemon tests: a real triaged on a temp socket and state
 * dir, in its own process group, and helpers to talk to it over the socket. */
#ifndef TRIAGE_TEST_HARNESS_H
#define TRIAGE_TEST_HARNESS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "client.h"

/*
 * How many times slower than usual the daemons run: TRIAGE_TEST_SLOW, a
 * whole number (1 when unset), which make valgrind sets. Every wait that
 * stands for "the daemon should have done it by now" is that much longer;
 * run-tests.sh lengthens its time limit by the same factor.
 */
int tslow(void);

/* Every wait of the harness fails the test after this long; so do the
 * tests' own waits, with a deadline of their own (tdeadline). */
#define HARNESS_TIMEOUT_MS (30000 * tslow())
/* Workers of one daemon the clean-up keeps track of. */
#define HARNESS_WORKERS_MAX 64

struct tdaemon {
	pid_t pid;
	char dir[256];		/* everything of this daemon lives here */
	char sock[300];
	char conf[300];
	char log[300];
	char state[300];
	char bin[300];		/* the triaged it runs */
	char user[64];		/* its user, when not the test's */
	char kind[16];		/* what it is, for its log's banner: "" is
				 * triaged, tdaemon_adopt's callers say */
	int stop_signal;	/* 0, or what the clean-up sends pid before
				 * it kills the group: for a server whose
				 * processes are not all in its group */
	/* Under TRIAGE_TEST_CLUSTER, its [cluster] section, which every
	 * config it is given keeps (tdaemon_rewrite). */
	char cluster[512];
	/* The workers it had when it was last killed or stopped, with their
	 * start times (clock ticks since boot): a worker outlives its daemon
	 * (issue 26), in a process group of its own, and the clean-up kills
	 * those still there. */
	pid_t workers[HARNESS_WORKERS_MAX];
	uint64_t worker_ticks[HARNESS_WORKERS_MAX];
	int nworkers;
};

/*
 * Starts triaged with a config made of its own [daemon] lines (socket,
 * state_dir, log_level = debug unless extra begins with a log_level line)
 * plus extra (more [daemon] keys, then any sections), and waits
 * until its socket answers. Fails the test if it does not come up.
 */
struct tdaemon *tdaemon_start(const char *extra);
/*
 * The same, with triaged run as user (and that user's groups), which must
 * be root's to give: its dir is the user's, and it runs a copy of triaged
 * there, so that the user need not reach into the build tree.
 */
struct tdaemon *tdaemon_start_as(const char *extra, const char *user);
/*
 * Execs triaged --config conf, for a forked child: never returns (exits 127
 * when the exec fails). Through TRIAGE_TEST_WRAPPER when it is set, a
 * command split on blanks (no quoting) that runs the rest of the command
 * line: valgrind and its options, for make valgrind.
 */
void texec_triaged(const char *conf) __attribute__((noreturn));
/* True when the daemons run under TRIAGE_TEST_WRAPPER (make valgrind): for
 * the few tests that cannot hold there, which skip saying why. */
bool twrapped(void);
/*
 * Registers a server a test fixture starts itself (tests/daemon/tpg.c's
 * PostgreSQL) for the same clean-up as a daemon's: d, calloc'd, with pid
 * (0 while it is not running, else the leader of a process group of its
 * own), dir, log, kind and maybe stop_signal set; tdaemon_free ends it.
 * Fails the test, freeing d, when too many are alive.
 */
void tdaemon_adopt(struct tdaemon *d);
/* The daemon's config from now on: its [daemon] socket and state_dir
 * lines, then the printf-formatted text (more [daemon] keys first, then
 * any sections), then its [cluster] section if it has one. */
void tdaemon_rewrite(const struct tdaemon *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Whether TRIAGE_TEST_CLUSTER is set (make test-onenode): every daemon
 * tdaemon_start makes is then a one-node cluster in PostgreSQL, for the
 * tests of the SQLite file itself to skip, saying why. */
bool tcluster(void);
/* The node those one-node clusters are. */
#define TCLUSTER_NODE "solo"
/* Starts it again on the same config and state, after a stop or crash,
 * where it must refuse to start: its output into out, its wait status
 * returned once it has exited (fails the test after the harness's
 * timeout). */
int tdaemon_refused(const struct tdaemon *d, const char *out);
/* Starts it again on the same config and state, after a stop or crash. */
void tdaemon_restart(struct tdaemon *d);
/* kill -9 of the daemon alone (its workers notice and follow it). */
void tdaemon_crash(struct tdaemon *d);
/* SIGTERM, then waits for it to exit; returns its wait status. */
int tdaemon_stop(struct tdaemon *d);
/* The end of a test: closes c, stops d (which must exit cleanly), frees. */
void tdaemon_end(struct tdaemon *d, struct triage_client *c);
/* A cmocka group teardown for the daemon a group setup left in *state:
 * stops it (it must exit cleanly) and frees it. */
int tdaemon_group_teardown(void **state);
/* For what a test starts (tdaemon_adopt) that outlives it: reaped at
 * exit, not at the end of the test. */
void tdaemon_keep(const struct tdaemon *d);
/* Kills the whole process group, removes the temp dir, frees. */
void tdaemon_free(struct tdaemon *d);
/* Prints the daemon's whole log to stderr. */
void tdaemon_dump_log(const struct tdaemon *d);

/*
 * A test need not clean up when it fails: a daemon it leaves (an assertion
 * longjmps past tdaemon_end) has its log printed, since the test began, and
 * is killed and its dir removed, after the test's teardown. A failing test
 * also prints the logs of the daemons it shares (started in group setup).
 * The same at exit, and when run-tests.sh's timeout kills a hung test. A
 * passing test prints nothing.
 */

/* A new connection; fails the test if there is none. */
struct triage_client *tconnect(const struct tdaemon *d);

/* A successful call's result (fails the test otherwise). params is a
 * json_pack format and its arguments ("{}" for none). */
json_t *tcall(struct triage_client *c, const char *method, const char *fmt,
    ...);
/* A call that must fail: returns its error code, and the error's field
 * in field if not NULL. */
int tcall_error(struct triage_client *c, const char *method,
    struct triage_error *e, const char *fmt, ...);

/* submit with params from a json_pack format: the new job's id. */
int64_t tsubmit(struct triage_client *c, const char *fmt, ...);
/* Waits for the job to end and returns the job object. */
json_t *twait(struct triage_client *c, int64_t id);
/* The job's state, by name. */
const char *tstate(const json_t *job);

/* Reads the next `job` notification's params, failing after 30 s. */
json_t *tnotification(struct triage_client *c);

/* The job object with this id (get). */
json_t *tget(struct triage_client *c, int64_t id);
/* Whether the job is held (get). */
bool theld(struct triage_client *c, int64_t id);
/* The job is in state now (get); it ends in state (wait). */
void tassert_state(struct triage_client *c, int64_t id, const char *state);
void tassert_ends(struct triage_client *c, int64_t id, const char *state);
/* Polls get until the job is gone (keep_finished pruned it); fails past
 * the harness's timeout. */
void twait_pruned(struct triage_client *c, int64_t id);
/* Polls stats until key (units, used, kept, waiting) of resource name is
 * want: what is kept is reckoned when admission runs, after a submit's
 * reply. Fails past the harness's timeout. */
void twait_resource(struct triage_client *c, const char *name, const char *key,
    json_int_t want);
/* A job object's integer or string member. */
json_int_t tjint(const json_t *job, const char *key);
const char *tjstr(const json_t *job, const char *key);

/* Waits until the job runs and returns its pid. */
pid_t trunning_pid(struct triage_client *c, int64_t id);
/* Waits until the job's stdout holds a number (a pid it printed). */
pid_t toutput_pid(struct triage_client *c, int64_t id);
/* Waits until no process has this pid. */
void twait_gone(pid_t pid);

/* A job that runs until the file gate exists in d's dir (deaf to SIGTERM
 * when deaf is set); topen_gate creates it. A gate not opened within 5 min
 * fails the job (status 99). */
int64_t tsubmit_gated(struct triage_client *c, const struct tdaemon *d,
    const char *gate, bool deaf);
/* The same with more submit params from a json_pack format making an
 * object ("{si}", "slots", 2), argv aside. */
int64_t tsubmit_gated_with(struct triage_client *c, const struct tdaemon *d,
    const char *gate, const char *fmt, ...);
void topen_gate(const struct tdaemon *d, const char *gate);
/* The same wait as sh code, for a job's own sh -c script: gate may use
 * the job's variables ("gate.$TRIAGE_ATTEMPT"). In a static buffer. */
const char *tgate_sh(const struct tdaemon *d, const char *gate);

/* Path of a built binary beside the test's own: "triaged", "triage". */
const char *tbin(const char *name);

/*
 * For a test's own loops, on the monotonic clock: tdeadline is a deadline
 * ms from now; tleft_ms what is left of it, the timeout of one wait (0
 * once it has passed, never the -1 of "for ever"); tcheck_deadline fails
 * the test once it has passed, with "timed out waiting for " and what the
 * loop waited for (a printf format).
 */
int64_t tdeadline(int ms);
int tleft_ms(int64_t deadline);
void tcheck_deadline(int64_t deadline, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* True while a process with this pid exists (and is not a zombie). */
bool tpid_alive(pid_t pid);
/* The parent of pid (0 when it is gone): a job's worker, say. */
pid_t tppid(pid_t pid);
/* How many submissions tstorm keeps in flight. */
#define TSTORM_OUT 64

/*
 * Load, in a forked child (never returns): submits `true` to priority prio
 * of the daemon at sock as fast as it can, pipelined (TSTORM_OUT in
 * flight), and
 * writes each id it is told to fd unless fd is -1, until the daemon goes
 * (exit 0), or until a deadline long after a test would have killed it
 * (exit 2: it never did).
 */
void tstorm(const char *sock, const char *prio, int fd)
    __attribute__((noreturn));

/* SIGSTOP to pid, and waits until it is stopped. */
void tstop(pid_t pid);
/* Waits until the daemon's log holds text (fails after 30 s). */
void twait_log(const struct tdaemon *d, const char *text);
/* True when the daemon's log holds text. */
bool tlog_has(const struct tdaemon *d, const char *text);

/*
 * Runs triaged on conf (its stderr into out) and waits, for 30 s at most,
 * for it to exit, as it must when it refuses to start. Returns its wait
 * status.
 */
int trun_refused(const char *conf, const char *out);
/* Removes dir and all in it; fails the test when it cannot. */
void tremove_dir(const char *dir);
/* The start of a small file, NUL-terminated, into buf. */
void tread_text(const char *path, char *buf, size_t size);
/* A file of the printf-formatted text. */
void twrite_text(const char *path, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The p-th percentile (0 < p <= 100) of n values, which it sorts. */
double tpercentile(double *v, size_t n, double p);

#endif
