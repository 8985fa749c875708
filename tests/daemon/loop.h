/* loop.h - for the daemon tests that drive parts of the daemon on a bare
 * event_base: a temp dir, a wait with a deadline, a fifo, jobs to run. */
#ifndef TRIAGE_TEST_LOOP_H
#define TRIAGE_TEST_LOOP_H

#include <stdbool.h>
#include <stddef.h>

#include <event2/event.h>

struct job;

/* Every wait for a callback gives up, failing the test, after this. */
#define LOOP_SAFETY_SEC	30

/* Called before LOOP_WAIT_FOR fails the test, to undo what would hide the
 * failure. */
typedef void (*loop_fail_cb)(void *arg);

/* The first member of a test's fixture (see loop_new). */
struct loop {
	struct event_base *base;
	struct event *safety;	/* ends a wait after LOOP_SAFETY_SEC */
	bool timed_out;
	char dir[64];		/* mkdtemp: whatever the test writes */
	char bad[256];		/* a callback saw something impossible */
	loop_fail_cb fail_cb;	/* NULL for none */
	void *fail_arg;
	/* a fifo a job writes a line to: see loop_fifo */
	int fifo_fd;
	struct event *fifo_ev;
	char fifo_path[128];
	char fifo_buf[64];
	size_t fifo_len;
};

/*
 * Runs l's loop until cond holds. Fails the test as soon as a callback has
 * said something is impossible (loop_bad), or after LOOP_SAFETY_SEC without
 * cond. A macro, so that cond is the caller's and so is the failure's line.
 */
#define LOOP_WAIT_FOR(l, cond) do {					\
	struct timeval tv_ = { LOOP_SAFETY_SEC, 0 };			\
	(l)->timed_out = false;						\
	assert_int_equal(evtimer_add((l)->safety, &tv_), 0);		\
	while (!(cond)) {						\
		assert_int_not_equal(event_base_loop((l)->base,		\
		    EVLOOP_ONCE), -1);					\
		if (loop_failing(l))					\
			fail_msg("%s", (l)->bad[0] != '\0' ? (l)->bad :	\
			    "timed out waiting for " #cond);		\
	}								\
	evtimer_del((l)->safety);					\
	if ((l)->bad[0] != '\0')					\
		fail_msg("%s", (l)->bad);				\
} while (0)

/*
 * A new fixture of size bytes, zeroed but for its first member, a struct
 * loop with its temp dir (/tmp/name.XXXXXX), its event_base and its safety
 * timer. The caller's, for loop_free; NULL on error, with nothing left.
 */
void *loop_new(size_t size, const char *name);
/* Frees fixture (from loop_new, or zeroed and its loop through
 * loop_mkdtemp) with what its loop holds, and removes its temp dir with
 * all in it. A part never made is skipped. */
void loop_free(void *fixture);
/* The two halves of loop_new, for a fixture that forks before it has a
 * loop: the temp dir (0, or -1 with errno), then the event_base and the
 * safety timer (0, or -1). */
int loop_mkdtemp(struct loop *l, const char *name);
int loop_open(struct loop *l);

/* Keeps the first thing a callback saw wrong; the next wait fails with it. */
void loop_bad(struct loop *l, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Whether a wait must fail now: l->bad, or the safety timer has gone off.
 * Calls fail_cb first when it must. */
bool loop_failing(struct loop *l);

/*
 * A fifo in the temp dir, read by the loop into l->fifo_buf (NUL-ended): a
 * job writes a line to it (that it is ready, a pid), so that the test waits
 * for an event, never for a time. Returns its path, l's. Fails the test on
 * error; one per test.
 */
const char *loop_fifo(struct loop *l);

/* A copy of the NULL-terminated v, allocated; fails the test on error. */
char **loop_strv(const char *const *v);
/*
 * A new job as a submission makes one: argv, a fixed environment (PATH,
 * LC_ALL), cwd the temp dir, name "test", the priority called priority,
 * the test's uid and gid. The caller's; fails the test on error.
 */
struct job *loop_job(const struct loop *l, const char *const *argv,
    const char *priority);

#endif
