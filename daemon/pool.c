/* pool.c - the daemon's side of the worker pool: forks the workers, hands
 * them jobs, hears their reports and replaces the ones that die. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/util.h>

#include "cgroup.h"
#include "pool.h"
#include "procstat.h"
#include "sigdefault.h"
#include "timefmt.h"
#include "waitstatus.h"
#include "wmsg.h"
#include "worker.h"

/* When fork fails, or a fresh worker dies before it could run anything,
 * forking again at once would spin: wait this long. */
#define POOL_RETRY_SEC	1
/* What may sit unread from one worker (it sends one job's reports at a
 * time, far less than this); a RESULT is let in whole however large. */
#define POOL_READ_MAX	65536

enum pool_state {
	POOL_DOWN,	/* no process; the retry timer will fork one */
	POOL_UP,	/* running, idle unless has_job */
	POOL_DYING,	/* killed and cut off; the SIGCHLD event will reap it */
};

struct pool_worker {
	struct pool *pool;
	unsigned number;	/* 1-based, for messages */
	enum pool_state state;
	pid_t pid;		/* UP, DYING */
	struct bufferevent *bev;	/* UP */
	uint64_t forked_ms;	/* when, to tell a worker that cannot start */
	bool ran;		/* it has been given a job */
	bool has_job;		/* job_id was sent and has not finished */
	bool retiring;		/* the pool shrank: it goes once idle */
	/* Taken over from an earlier daemon (pool_adopt): not our child, so
	 * no SIGCHLD comes for it; its pidfd, -1 none. It is retiring from
	 * the start: it goes once its job has ended. */
	bool adopted;
	int pidfd;
	/* Its start (procstat.h), read at its adoption: where there is no
	 * pidfd (valgrind), what tells it from a later process with its pid;
	 * 0 unknown. */
	uint64_t start_ticks;
	/* Adopted after it had reaped its job: job_pid may be another
	 * process's by now, and is never signalled from here. */
	bool job_reaped;
	uint64_t job_id;
	pid_t job_pid;		/* has_job: its process group, 0 before STARTED */
	/* The job whose end it reported last, until pool_ack: 0 none. */
	uint64_t ended_id;
	/* The RESULT of its job's run, until the FINISHED it comes before
	 * (pool_result's, allocated); NULL none. */
	char *result;
	size_t result_len;
	bool result_truncated;
	char cause[160];	/* why the pool killed it; "" if it died alone */
};

struct pool {
	struct event_base *base;
	struct pool_callbacks cb;
	void *arg;
	pid_t self;		/* a worker checks it still has this parent */
	struct rlimit nofile;	/* the open files limit jobs get */
	struct pool_setup setup;	/* what every worker is given */
	struct event *sigchld;
	struct event *retry;	/* forks the DOWN workers again */
	struct event *gone;	/* ends the adopted workers cut off (DYING) */
	unsigned n;		/* workers[0..n), retiring ones included */
	unsigned size;		/* what pool_resize asked for */
	unsigned next_number;
	bool kick;		/* the retry timer says idle_cb: pool_resize */
	struct pool_worker **workers;
};

static void pool_read_cb(struct bufferevent *, void *);
static void pool_event_cb(struct bufferevent *, short, void *);
static void pool_retire(struct pool_worker *);
static void pool_reaped(struct pool_worker *, int);

static void __attribute__((format(printf, 2, 3)))
pool_error(struct pool *pool, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (pool->cb.error_cb == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	pool->cb.error_cb(msg, pool->arg);
}

/*
 * The worker's side of fork, until worker_main: a clean process that holds
 * nothing of the daemon's but its own socket, as fd 3, and the jobs'
 * cgroup directory, as fd 4 when there is one. It never returns into
 * the daemon's code, so nothing the daemon's heap or event base holds is
 * ever touched (and _exit skips every atexit handler the daemon has).
 */
static void __attribute__((noreturn))
pool_child(pid_t daemon, int fd, const struct rlimit *nofile,
    const struct pool_setup *setup)
{
	struct pool_setup ws = *setup;
	const char *step;

	if (sigdefault_reset(&step) == -1)
		_exit(1);
	/* The daemon raises its own limit for its clients; a job gets the
	 * one the daemon was started with, as a login shell would. */
	if (setrlimit(RLIMIT_NOFILE, nofile) == -1)
		_exit(1);
	/* Out of the daemon's process group: Ctrl-C on a terminal is for
	 * the daemon, which stops its jobs gracefully. */
	if (setpgid(0, 0) == -1)
		_exit(1);
	/* Die with the daemon, unless a worker is to keep its job for the
	 * next one (its socket's EOF tells it then); if the daemon died
	 * already, the signal never comes. */
	if ((setup->adopt_dir == NULL &&
	    prctl(PR_SET_PDEATHSIG, SIGTERM) == -1) || getppid() != daemon)
		_exit(1);
	/* The cgroup's fd out of the way first: it may be 3. */
	if (ws.cgroup_fd != -1 && (ws.cgroup_fd = fcntl(ws.cgroup_fd,
	    F_DUPFD_CLOEXEC, 5)) == -1)
		_exit(1);
	if (fd != 3) {
		if (dup3(fd, 3, O_CLOEXEC) == -1)
			_exit(1);
		if (fd < 3 && close(fd) == -1)	/* worker_main refills 0-2 */
			_exit(1);
	}
	if (ws.cgroup_fd != -1) {
		if (dup3(ws.cgroup_fd, 4, O_CLOEXEC) == -1)
			_exit(1);
		ws.cgroup_fd = 4;
	}
	if (close_range(ws.cgroup_fd == -1 ? 4 : 5, ~0U, 0) == -1)
		_exit(1);
	if (prctl(PR_SET_NAME, "triaged-worker") == -1)
		_exit(1);
	_exit(worker_main(3, &ws));
}

/* Starts a worker in slot w, which must be DOWN. Returns 0, or -1 with
 * errno and nothing changed. */
static int
pool_fork(struct pool *pool, struct pool_worker *w)
{
	struct bufferevent *bev;
	int sv[2], error;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1)
		return -1;
	if (fcntl(sv[0], F_SETFL, O_NONBLOCK) == -1) {
		error = errno;
		close(sv[0]);
		close(sv[1]);
		errno = error;
		return -1;
	}
	if ((bev = bufferevent_socket_new(pool->base, sv[0],
	    BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		close(sv[0]);
		close(sv[1]);
		errno = ENOMEM;
		return -1;
	}
	/* Reads start from the header; pool_read_cb moves the low mark to
	 * each message's full size, so it runs only when one is complete. */
	bufferevent_setcb(bev, pool_read_cb, NULL, pool_event_cb, w);
	bufferevent_setwatermark(bev, EV_READ, sizeof(struct wmsg_hdr),
	    POOL_READ_MAX);
	if (bufferevent_enable(bev, EV_READ) == -1) {
		bufferevent_free(bev);
		close(sv[1]);
		errno = ENOMEM;
		return -1;
	}
	/* No handler of the daemon's (libevent's) runs in the child before
	 * pool_child has reset them. */
	if ((pid = sigdefault_fork()) == 0)
		pool_child(pool->self, sv[1], &pool->nofile, &pool->setup);
	error = errno;
	close(sv[1]);
	if (pid == -1) {
		bufferevent_free(bev);
		errno = error;
		return -1;
	}
	/* Before it is given a job: the job's cgroup is made beside it. */
	if (pool->setup.workers_cgroup_fd != -1 &&
	    cgroup_move(pool->setup.workers_cgroup_fd, pid) == -1)
		pool_error(pool, "worker %u: cannot move it into the jobs' "
		    "scope: %s; its jobs end with the daemon's unit",
		    w->number, strerror(errno));
	w->forked_ms = timefmt_mono_ms();
	w->state = POOL_UP;
	w->pid = pid;
	w->bev = bev;
	w->ran = w->has_job = false;
	w->job_pid = 0;
	w->cause[0] = '\0';
	return 0;
}

/* No more messages from w, and its job's process group is killed (the job's
 * own process also gets its parent-death SIGKILL from the worker). */
static void
pool_detach(struct pool_worker *w)
{
	free(w->result);
	w->result = NULL;
	w->result_len = 0;
	if (w->bev != NULL) {
		/* safe inside the bufferevent's own callback: libevent holds a
		 * reference until the callback returns */
		bufferevent_free(w->bev);
		w->bev = NULL;
	}
	if (w->has_job && w->job_pid > 0 && !w->job_reaped &&
	    kill(-w->job_pid, SIGKILL) == -1 && errno != ESRCH)
		pool_error(w->pool, "job %llu: kill process group %ld: %s",
		    (unsigned long long)w->job_id, (long)w->job_pid,
		    strerror(errno));
}

/*
 * Kills an adopted worker, which is not our child, so nobody here reaps
 * it and its pid alone may be another's by now: through its pidfd, or
 * where pidfd_open failed (valgrind knows no pidfd_open) by its pid while
 * its start time is still the one read at its adoption.
 */
static void
pool_adopted_kill(struct pool_worker *w)
{
	if (procstat_kill(w->pid, w->pidfd, w->start_ticks, SIGKILL) == -1 &&
	    errno != ESRCH)
		pool_error(w->pool, "worker %u (pid %ld): kill: %s",
		    w->number, (long)w->pid, strerror(errno));
	if (w->pidfd != -1) {
		close(w->pidfd);
		w->pidfd = -1;
	}
	w->start_ticks = 0;	/* never signalled again */
}

/* An adopted worker cut off: killed, and its end taken from the loop, as a
 * SIGCHLD would be for our own. */
static void
pool_adopted_end(struct pool_worker *w)
{
	static const struct timeval now = { 0, 0 };

	pool_adopted_kill(w);
	if (evtimer_add(w->pool->gone, &now) == -1)
		pool_error(w->pool, "workers: cannot arm the adopted ones' end");
}

static void
pool_gone_cb(evutil_socket_t fd, short what, void *arg)
{
	struct pool *pool = arg;
	struct pool_worker *w;
	unsigned i;

	(void)fd;
	(void)what;
	/* pool_reaped removes w from the array: start over after each. */
	for (i = 0; i < pool->n; i++) {
		w = pool->workers[i];
		if (!w->adopted || w->state != POOL_DYING)
			continue;
		pool_reaped(w, 0);
		i = (unsigned)-1;
	}
}

/*
 * The teardown of a live worker: cut it off, kill it; the SIGCHLD event
 * reaps it and goes on in pool_reaped(), as for a worker that died alone.
 */
static void
pool_cut(struct pool_worker *w)
{
	if (w->state != POOL_UP)
		return;
	pool_detach(w);
	w->state = POOL_DYING;
	if (w->adopted) {
		pool_adopted_end(w);
		return;
	}
	/* Unreaped, so the pid is still this worker's. */
	if (kill(w->pid, SIGKILL) == -1)
		pool_error(w->pool, "worker %u (pid %ld): kill: %s", w->number,
		    (long)w->pid, strerror(errno));
}

/* pool_cut() for a worker that misbehaved; fmt says how, for the
 * description of its death. */
static void __attribute__((format(printf, 2, 3)))
pool_kill(struct pool_worker *w, const char *fmt, ...)
{
	va_list ap;

	if (w->state != POOL_UP)
		return;
	va_start(ap, fmt);
	vsnprintf(w->cause, sizeof w->cause, fmt, ap);
	va_end(ap);
	pool_cut(w);
}

/* A worker that dies this soon after its fork, before any job, is taken
 * to be one that cannot start: its replacement waits for the timer. */
static bool
pool_died_young(const struct pool_worker *w)
{
	return !w->ran &&
	    timefmt_mono_ms() - w->forked_ms < POOL_RETRY_SEC * 1000;
}

static void
pool_retry_later(struct pool *pool)
{
	struct timeval tv = timefmt_tv(POOL_RETRY_SEC * 1000);

	if (evtimer_add(pool->retry, &tv) == -1)
		pool_error(pool, "workers: cannot arm the retry timer");
}

/* Forgets w, which has been reaped or never ran, and frees it. */
static void
pool_remove(struct pool *pool, struct pool_worker *w)
{
	unsigned i;

	for (i = 0; i < pool->n; i++)
		if (pool->workers[i] == w)
			break;
	if (i == pool->n)
		return;
	memmove(&pool->workers[i], &pool->workers[i + 1],
	    (pool->n - i - 1) * sizeof *pool->workers);
	pool->n--;
	if (w->pidfd != -1)
		close(w->pidfd);
	free(w->result);
	free(w);
}

/*
 * The end of every worker's teardown, once reaped: say how it died, fork
 * its replacement, then tell the daemon about the job it held, if any.
 */
static void
pool_reaped(struct pool_worker *w, int status)
{
	struct pool *pool = w->pool;
	char how[96], why[384];
	bool lost = w->has_job, young;
	uint64_t job_id = w->job_id;

	pool_detach(w);		/* done already when the pool killed it */
	if (w->adopted)
		snprintf(how, sizeof how, "its socket closed (a worker taken "
		    "over from an earlier daemon)");
	else
		waitstatus_describe(status, how, sizeof how);
	if (w->retiring) {
		/* The pool shrank, or it was adopted: no replacement. It had
		 * a job only when it died running it. */
		if (lost)
			snprintf(why, sizeof why, "worker %u (pid %ld) died: "
			    "%s", w->number, (long)w->pid, how);
		pool_remove(pool, w);
		if (lost) {
			pool_error(pool, "%s", why);
			if (pool->cb.lost_cb != NULL)
				pool->cb.lost_cb(job_id, why, pool->arg);
		}
		return;
	}
	/* Say what happened: the pool killed it, it stopped as it does when
	 * the daemon goes (or someone sent it SIGTERM), or it died. */
	if (w->cause[0] != '\0')
		snprintf(why, sizeof why, "worker %u (pid %ld) was killed: it "
		    "%s", w->number, (long)w->pid, w->cause);
	else if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		snprintf(why, sizeof why, "worker %u (pid %ld) stopped: it was "
		    "sent SIGTERM, or its socket closed", w->number,
		    (long)w->pid);
	else
		snprintf(why, sizeof why, "worker %u (pid %ld) died: %s",
		    w->number, (long)w->pid, how);
	young = pool_died_young(w);
	w->state = POOL_DOWN;
	w->pid = 0;
	w->has_job = false;
	w->job_pid = 0;
	pool_error(pool, "%s", why);

	if (young) {
		pool_error(pool, "worker %u: replacing it in %d s", w->number,
		    POOL_RETRY_SEC);
		pool_retry_later(pool);
	} else if (pool_fork(pool, w) == -1) {
		pool_error(pool, "worker %u: fork: %s; retrying in %d s",
		    w->number, strerror(errno), POOL_RETRY_SEC);
		pool_retry_later(pool);
	}
	if (lost && pool->cb.lost_cb != NULL)
		pool->cb.lost_cb(job_id, why, pool->arg);
	/* The daemon may have seen EAGAIN while this one was dying; lost_cb
	 * may have given the replacement a job already. */
	if (w->state == POOL_UP && !w->has_job && pool->cb.idle_cb != NULL)
		pool->cb.idle_cb(pool->arg);
}

static struct pool_worker *
pool_find_pid(struct pool *pool, pid_t pid)
{
	unsigned i;

	for (i = 0; i < pool->n; i++)
		if (pool->workers[i]->state != POOL_DOWN &&
		    pool->workers[i]->pid == pid)
			return pool->workers[i];
	return NULL;
}

/* Every child is a worker but the anchor of cgroups.c, and all are reaped
 * here (signals merge, so loop until there is none left). */
static void
pool_sigchld_cb(evutil_socket_t sig, short what, void *arg)
{
	struct pool *pool = arg;
	struct pool_worker *w;
	pid_t pid;
	int status;

	(void)sig;
	(void)what;
	for (;;) {
		pid = waitpid(-1, &status, WNOHANG);
		if (pid == -1 && errno == EINTR)
			continue;
		if (pid <= 0)
			return;	/* none left (0), or no children (ECHILD) */
		if ((w = pool_find_pid(pool, pid)) != NULL)
			pool_reaped(w, status);
	}
}

static void
pool_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	struct pool *pool = arg;
	struct pool_worker *w;
	bool up = false, down = false;
	unsigned i;

	(void)fd;
	(void)what;
	for (i = 0; i < pool->n; i++) {
		w = pool->workers[i];
		if (w->state != POOL_DOWN)
			continue;
		if (pool_fork(pool, w) == 0) {
			up = true;
			continue;
		}
		pool_error(pool, "worker %u: fork: %s; retrying in %d s",
		    w->number, strerror(errno), POOL_RETRY_SEC);
		down = true;
	}
	if (down)
		pool_retry_later(pool);
	if (pool->kick)
		up = true;
	pool->kick = false;
	if (up && pool->cb.idle_cb != NULL)
		pool->cb.idle_cb(pool->arg);
}

/* A RESULT from w (payload, len bytes, allocated: taken), for the run of
 * its job that has started and not finished, once. */
static void
pool_result(struct pool_worker *w, char *payload, size_t len)
{
	struct wmsg_result_head head;
	size_t n;

	memset(&head, 0, sizeof head);
	if (wmsg_result_decode(&head, payload, len) == -1 || !w->has_job ||
	    w->job_pid == 0 || head.job_id != w->job_id || w->result != NULL) {
		free(payload);
		pool_kill(w, "sent a RESULT that does not fit (job %llu)",
		    (unsigned long long)head.job_id);
		return;
	}
	/* The bytes to the front, NUL-terminated past them, as
	 * pool_result's are. */
	n = len - sizeof head;
	memmove(payload, payload + sizeof head, n);
	payload[n] = '\0';
	w->result = payload;
	w->result_len = n;
	w->result_truncated = head.truncated;
}

/* One whole message from w, checked against what w is doing. */
static void
pool_dispatch(struct pool_worker *w, const struct wmsg_hdr *hdr,
    const void *payload)
{
	struct pool *pool = w->pool;
	struct wmsg_started started;
	struct wmsg_finished finished;
	struct pool_result res;
	uint64_t job_id;

	if (hdr->type == WMSG_STARTED) {
		memcpy(&started, payload, sizeof started);
		if (!w->has_job || w->job_pid != 0 ||
		    started.job_id != w->job_id || started.pid <= 0 ||
		    started.pad != 0) {
			pool_kill(w, "sent a STARTED that does not fit "
			    "(job %llu, pid %ld)",
			    (unsigned long long)started.job_id,
			    (long)started.pid);
			return;
		}
		w->job_pid = started.pid;
		if (pool->cb.started_cb != NULL)
			pool->cb.started_cb(w->job_id, w->job_pid,
			    started.start_ticks, pool->arg);
		return;
	}

	/* Only the first message on an adopted worker's connection, which
	 * jobs_adopt reads before the pool has it. */
	if (hdr->type == WMSG_ADOPTED) {
		pool_kill(w, "sent an ADOPTED while it had a daemon");
		return;
	}
	memcpy(&finished, payload, sizeof finished);
	if (!w->has_job || finished.job_id != w->job_id ||
	    wmsg_finished_decode(&finished, &res) == -1 ||
	    res.started != (w->job_pid != 0)) {
		pool_kill(w, "sent a FINISHED that does not fit (job %llu)",
		    (unsigned long long)finished.job_id);
		return;
	}
	if (w->result != NULL && !res.started) {
		pool_kill(w, "sent a RESULT of job %llu, which never started",
		    (unsigned long long)finished.job_id);
		return;
	}
	res.result = w->result;
	res.result_len = w->result_len;
	res.result_truncated = w->result_truncated;
	w->result = NULL;
	w->result_len = 0;
	w->result_truncated = false;
	job_id = w->job_id;
	w->has_job = false;
	w->job_pid = 0;
	w->ended_id = res.started ? job_id : 0;
	/* Its job is over: now it goes; one taken over once its end is
	 * stored (pool_ack), which it would record itself if cut off
	 * before. */
	if (w->retiring && (!w->adopted || w->ended_id == 0))
		pool_retire(w);
	if (pool->cb.finished_cb != NULL)
		pool->cb.finished_cb(job_id, &res, pool->arg);
	free(res.result);
}

static void
pool_read_cb(struct bufferevent *bev, void *arg)
{
	struct pool_worker *w = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	struct wmsg_hdr hdr;
	union {
		struct wmsg_started started;
		struct wmsg_finished finished;
	} msg;
	size_t have;
	char *big;

	/* A callback may have the worker killed (pool_start on it failing):
	 * then bev is no longer its own and the rest is not read. */
	while (w->bev == bev) {
		have = evbuffer_get_length(in);
		if (have < sizeof hdr) {
			bufferevent_setwatermark(bev, EV_READ, sizeof hdr,
			    POOL_READ_MAX);
			return;
		}
		if (evbuffer_copyout(in, &hdr, sizeof hdr) != sizeof hdr) {
			pool_kill(w, "left an unreadable message");
			return;
		}
		if (wmsg_check(&hdr, WMSG_TO_DAEMON) == -1) {
			pool_kill(w, "sent a malformed message (type %u, "
			    "%u bytes)", hdr.type, hdr.len);
			return;
		}
		if (have < sizeof hdr + hdr.len) {
			bufferevent_setwatermark(bev, EV_READ,
			    sizeof hdr + hdr.len, sizeof hdr + hdr.len >
			    POOL_READ_MAX ? sizeof hdr + hdr.len :
			    POOL_READ_MAX);
			return;
		}
		/* A RESULT is up to 16 MiB: read into a buffer of its own,
		 * which keeps it (one more byte, for its NUL). */
		if (hdr.type == WMSG_RESULT) {
			if ((big = malloc((size_t)hdr.len + 1)) == NULL ||
			    evbuffer_drain(in, sizeof hdr) == -1 ||
			    evbuffer_remove(in, big, hdr.len) !=
			    (int)hdr.len) {
				free(big);
				pool_kill(w, "left an unreadable message");
				return;
			}
			pool_result(w, big, hdr.len);
			continue;
		}
		/* wmsg_check bounds hdr.len by the largest of msg's members */
		if (evbuffer_drain(in, sizeof hdr) == -1 ||
		    evbuffer_remove(in, &msg, hdr.len) != (int)hdr.len) {
			pool_kill(w, "left an unreadable message");
			return;
		}
		pool_dispatch(w, &hdr, &msg);
	}
}

/* EOF or an error: the worker is gone or going; one teardown path. */
static void
pool_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct pool_worker *w = arg;

	(void)bev;
	/* A worker that died with a message of ours unread (a lease, in a
	 * cluster) resets the socket rather than closing it: as good as
	 * EOF, and its wait status says how it died. */
	if ((what & BEV_EVENT_ERROR) && EVUTIL_SOCKET_ERROR() != ECONNRESET)
		pool_kill(w, "had a socket error (%s)",
		    evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
	else if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		pool_cut(w);	/* it died, most likely: its status says how */
}

struct pool *
pool_new(struct event_base *base, unsigned n,
    const struct pool_setup *setup, const struct pool_callbacks *cb,
    void *arg, char **cause)
{
	struct pool *pool;
	unsigned i;

	if (n == 0) {
		if (asprintf(cause, "no workers asked for") == -1)
			*cause = NULL;
		errno = EINVAL;
		return NULL;
	}
	if ((pool = calloc(1, sizeof *pool)) == NULL ||
	    (pool->workers = calloc(n, sizeof *pool->workers)) == NULL) {
		free(pool);
		if (asprintf(cause, "out of memory") == -1)
			*cause = NULL;
		errno = ENOMEM;
		return NULL;
	}
	pool->base = base;
	pool->setup = setup != NULL ? *setup : (struct pool_setup){
		.cgroup_fd = -1, .workers_cgroup_fd = -1,
		.job_oom_score_adj = POOL_OOM_SCORE_ADJ_SAME };
	pool->cb = *cb;
	pool->arg = arg;
	pool->self = getpid();
	pool->n = n;	/* pool_free copes with NULL entries */
	if (getrlimit(RLIMIT_NOFILE, &pool->nofile) == -1) {
		if (asprintf(cause, "getrlimit: %s", strerror(errno)) == -1)
			*cause = NULL;
		pool_free(pool);
		return NULL;
	}
	for (i = 0; i < n; i++) {
		if ((pool->workers[i] = calloc(1, sizeof **pool->workers))
		    == NULL) {
			if (asprintf(cause, "out of memory") == -1)
				*cause = NULL;
			pool_free(pool);
			errno = ENOMEM;
			return NULL;
		}
		pool->workers[i]->pool = pool;
		pool->workers[i]->number = i + 1;
		pool->workers[i]->pidfd = -1;
	}
	pool->next_number = n + 1;
	pool->size = n;
	/* Before the first fork, so that no death goes unseen. */
	pool->sigchld = evsignal_new(base, SIGCHLD, pool_sigchld_cb, pool);
	pool->retry = evtimer_new(base, pool_retry_cb, pool);
	pool->gone = evtimer_new(base, pool_gone_cb, pool);
	if (pool->sigchld == NULL || pool->retry == NULL || pool->gone == NULL ||
	    event_add(pool->sigchld, NULL) == -1) {
		if (asprintf(cause, "cannot set up the SIGCHLD event") == -1)
			*cause = NULL;
		pool_free(pool);
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < n; i++) {
		if (pool_fork(pool, pool->workers[i]) == -1) {
			int error = errno;

			if (asprintf(cause, "worker %u: fork: %s", i + 1,
			    strerror(error)) == -1)
				*cause = NULL;
			pool_free(pool);
			errno = error;
			return NULL;
		}
	}
	return pool;
}

/* Whether pool_close leaves w running: it has a job, and keep. */
static bool
pool_kept(const struct pool_worker *w, bool keep)
{
	return keep && w->state == POOL_UP && w->has_job;
}

/* pool_free and pool_leave: keep leaves the workers that have a job. */
static void
pool_close(struct pool *pool, bool keep)
{
	struct pool_worker *w;
	unsigned i;

	if (pool == NULL)
		return;
	/* Jobs first, while their workers (which have not reaped them) keep
	 * their pids from being reused. */
	for (i = 0; i < pool->n; i++) {
		if ((w = pool->workers[i]) == NULL || pool_kept(w, keep))
			continue;
		if (w->state == POOL_UP && w->has_job && w->job_pid > 0 &&
		    !w->job_reaped)
			kill(-w->job_pid, SIGKILL);	/* ESRCH: gone */
	}
	for (i = 0; i < pool->n; i++) {
		if ((w = pool->workers[i]) == NULL || pool_kept(w, keep) ||
		    w->state == POOL_DOWN)
			continue;
		if (w->adopted)
			pool_adopted_kill(w);
		else
			kill(w->pid, SIGKILL);	/* our unreaped child */
	}
	for (i = 0; i < pool->n; i++) {
		if ((w = pool->workers[i]) == NULL)
			continue;
		/* A kept one's socket closes here: its EOF tells it that
		 * the daemon has gone and left it the job. */
		if (w->state != POOL_DOWN && !w->adopted && !pool_kept(w, keep))
			while (waitpid(w->pid, NULL, 0) == -1 &&
			    errno == EINTR)
				;
		if (w->bev != NULL)
			bufferevent_free(w->bev);
		if (w->pidfd != -1)
			close(w->pidfd);
		free(w);
	}
	if (pool->sigchld != NULL)
		event_free(pool->sigchld);
	if (pool->retry != NULL)
		event_free(pool->retry);
	if (pool->gone != NULL)
		event_free(pool->gone);
	free(pool->workers);
	free(pool);
}

void
pool_free(struct pool *pool)
{
	pool_close(pool, false);
}

void
pool_leave(struct pool *pool)
{
	pool_close(pool, true);
}

int
pool_adopt(struct pool *pool, int fd, pid_t worker, uint64_t job_id,
    pid_t job_pid, bool job_reaped)
{
	struct pool_worker **v, *w;
	struct bufferevent *bev;

	if ((v = reallocarray(pool->workers, pool->n + 1, sizeof *v)) == NULL)
		return -1;
	pool->workers = v;
	if ((w = calloc(1, sizeof *w)) == NULL)
		return -1;
	if (fcntl(fd, F_SETFL, O_NONBLOCK) == -1 ||
	    (bev = bufferevent_socket_new(pool->base, fd,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		free(w);
		return -1;
	}
	w->pool = pool;
	w->number = pool->next_number++;
	w->state = POOL_UP;
	w->pid = worker;
	/* Taken now, while the worker holds the connection just made: the
	 * pid is its own. */
	w->pidfd = (int)pidfd_open(worker, 0);
	if (procstat_start_ticks(worker, &w->start_ticks) == -1)
		w->start_ticks = 0;
	w->bev = bev;
	w->ran = w->has_job = true;
	w->retiring = w->adopted = true;
	w->job_id = job_id;
	w->job_pid = job_pid;
	w->job_reaped = job_reaped;
	bufferevent_setcb(bev, pool_read_cb, NULL, pool_event_cb, w);
	bufferevent_setwatermark(bev, EV_READ, sizeof(struct wmsg_hdr),
	    POOL_READ_MAX);
	if (bufferevent_enable(bev, EV_READ) == -1) {
		/* the fd is the caller's again on failure */
		bufferevent_setfd(bev, -1);
		bufferevent_free(bev);
		if (w->pidfd != -1)
			close(w->pidfd);
		free(w);
		errno = ENOMEM;
		return -1;
	}
	pool->workers[pool->n++] = w;
	return 0;
}

/* Sends a whole message to w: what the socket takes now, so that the
 * worker starts on it without waiting for the loop's next turn, the rest
 * queued behind whatever is queued already. On failure the worker is
 * replaced. */
static int
pool_send(struct pool_worker *w, const void *msg, size_t len)
{
	ssize_t n;

	if (evbuffer_get_length(bufferevent_get_output(w->bev)) == 0) {
		n = send(bufferevent_getfd(w->bev), msg, len,
		    MSG_NOSIGNAL | MSG_DONTWAIT);
		/* An error is the bufferevent's to find and report, on its
		 * own write: it goes the one teardown path. */
		if (n > 0) {
			msg = (const char *)msg + n;
			len -= (size_t)n;
		}
		if (len == 0)
			return 0;
	}
	if (bufferevent_write(w->bev, msg, len) == -1) {
		pool_kill(w, "could not be sent a message");
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

int
pool_start(struct pool *pool, const struct pool_spec *spec)
{
	struct pool_worker *w = NULL;
	unsigned i;
	size_t len;
	void *msg;

	for (i = 0; i < pool->n; i++) {
		if (pool->workers[i]->state != POOL_UP)
			continue;
		if (pool->workers[i]->has_job || pool->workers[i]->retiring) {
			if (pool->workers[i]->has_job &&
			    pool->workers[i]->job_id == spec->job_id) {
				errno = EEXIST;
				return -1;
			}
		} else if (w == NULL)
			w = pool->workers[i];
	}
	if (w == NULL) {
		errno = EAGAIN;
		return -1;
	}
	if ((msg = wmsg_run_encode(spec, &len)) == NULL)
		return -1;	/* the spec's fault: the worker stays idle */
	if (pool_send(w, msg, len) == -1) {
		free(msg);
		return -1;
	}
	free(msg);
	w->ran = w->has_job = true;
	w->job_id = spec->job_id;
	w->job_pid = 0;
	return 0;
}

/* The worker that runs job_id (and, when started, has its process); NULL
 * with errno ESRCH when there is none. */
static struct pool_worker *
pool_worker_of(struct pool *pool, uint64_t job_id, bool started)
{
	struct pool_worker *w;
	unsigned i;

	for (i = 0; i < pool->n; i++) {
		w = pool->workers[i];
		if (w->state == POOL_UP && w->has_job && w->job_id == job_id &&
		    (!started || w->job_pid > 0))
			return w;
	}
	errno = ESRCH;
	return NULL;
}

int
pool_signal(struct pool *pool, uint64_t job_id, int sig)
{
	struct pool_worker *w;
	struct {
		struct wmsg_hdr hdr;
		struct wmsg_signal body;
	} msg;

	if (sig <= 0 || sig >= NSIG) {
		errno = EINVAL;
		return -1;
	}
	if ((w = pool_worker_of(pool, job_id, true)) == NULL)
		return -1;
	/* The worker does the kill: it alone knows whether it has reaped
	 * the job already, after which the pid may be someone else's. */
	memset(&msg, 0, sizeof msg);
	msg.hdr.type = WMSG_SIGNAL;
	msg.hdr.len = sizeof msg.body;
	msg.body.job_id = job_id;
	msg.body.sig = sig;
	return pool_send(w, &msg, sizeof msg);
}

void
pool_ack(struct pool *pool, uint64_t job_id)
{
	struct pool_worker *w;
	struct {
		struct wmsg_hdr hdr;
		struct wmsg_ack body;
	} msg;
	unsigned i;

	for (i = 0; i < pool->n; i++) {
		w = pool->workers[i];
		if (w->state != POOL_UP || w->ended_id != job_id)
			continue;
		w->ended_id = 0;
		memset(&msg, 0, sizeof msg);
		msg.hdr.type = WMSG_ACK;
		msg.hdr.len = sizeof msg.body;
		msg.body.job_id = job_id;
		/* A failure replaces the worker, which then records the end
		 * stored already: the next start finds it stale. */
		if (pool_send(w, &msg, sizeof msg) == 0 && w->adopted &&
		    !w->has_job)
			pool_retire(w);
		return;
	}
}

int
pool_lease(struct pool *pool, uint64_t job_id, uint64_t until_us,
    uint64_t grace_ms)
{
	struct pool_worker *w;
	struct {
		struct wmsg_hdr hdr;
		struct wmsg_lease body;
	} msg;

	if ((w = pool_worker_of(pool, job_id, false)) == NULL)
		return -1;
	memset(&msg, 0, sizeof msg);
	msg.hdr.type = WMSG_LEASE;
	msg.hdr.len = sizeof msg.body;
	msg.body.job_id = job_id;
	msg.body.until_us = until_us;
	msg.body.grace_ms = grace_ms;
	return pool_send(w, &msg, sizeof msg);
}

int
pool_abandon(struct pool *pool, uint64_t job_id, const char *why)
{
	struct pool_worker *w;
	unsigned i;

	for (i = 0; i < pool->n; i++) {
		w = pool->workers[i];
		if (w->state == POOL_UP && w->has_job && w->job_id == job_id) {
			pool_kill(w, "%s", why);
			return 0;
		}
	}
	errno = ESRCH;
	return -1;
}

void
pool_set_callbacks(struct pool *pool, const struct pool_callbacks *cb,
    void *arg)
{
	pool->cb = *cb;
	pool->arg = arg;
}

/*
 * A worker the pool no longer needs: one that is down or idle goes now
 * (its socket closes, which ends worker_main; SIGTERM too), one with a job
 * once that job has finished. Reaping removes it.
 */
static void
pool_retire(struct pool_worker *w)
{
	w->retiring = true;
	switch (w->state) {
	case POOL_DOWN:
		pool_remove(w->pool, w);
		break;
	case POOL_UP:
		if (w->has_job)
			break;
		if (w->adopted) {
			/* Its socket's EOF ends it (it is idle now). */
			pool_cut(w);
			break;
		}
		pool_detach(w);
		if (kill(w->pid, SIGTERM) == -1)
			pool_error(w->pool, "worker %u (pid %ld): kill: %s",
			    w->number, (long)w->pid, strerror(errno));
		w->state = POOL_DYING;
		break;
	case POOL_DYING:
		break;		/* reaping removes it */
	}
}

/* Which worker goes first when the pool shrinks: one that is down, then
 * an idle one, then a busy one; the newest of each. NULL: none left. */
static struct pool_worker *
pool_surplus(struct pool *pool)
{
	struct pool_worker *w, *best = NULL;
	int rank, best_rank = 0;
	unsigned i;

	for (i = 0; i < pool->n; i++) {
		w = pool->workers[i];
		if (w->retiring)
			continue;
		if (w->state == POOL_DOWN || w->state == POOL_DYING)
			rank = 3;
		else if (!w->has_job)
			rank = 2;
		else
			rank = 1;
		if (rank >= best_rank) {
			best = w;
			best_rank = rank;
		}
	}
	return best;
}

int
pool_resize(struct pool *pool, unsigned n)
{
	static const struct timeval now = { 0, 0 };
	struct pool_worker **v, *w;
	unsigned i, active = 0;

	if (n == 0) {
		errno = EINVAL;
		return -1;
	}
	for (i = 0; i < pool->n; i++)
		if (!pool->workers[i]->retiring)
			active++;
	/* Busy workers on their way out stay, as the cheapest new ones. */
	for (i = 0; i < pool->n && active < n; i++) {
		w = pool->workers[i];
		if (w->retiring && !w->adopted && w->state == POOL_UP) {
			w->retiring = false;
			active++;
		}
	}
	while (active < n) {
		v = reallocarray(pool->workers, pool->n + 1, sizeof *v);
		if (v == NULL)
			return -1;
		pool->workers = v;
		if ((w = calloc(1, sizeof *w)) == NULL)
			return -1;
		w->pool = pool;
		w->number = pool->next_number++;
		w->state = POOL_DOWN;
		w->pidfd = -1;
		pool->workers[pool->n++] = w;
		active++;
		pool->size = active;
		if (pool_fork(pool, w) == -1) {
			pool_error(pool, "worker %u: fork: %s; retrying in %d s",
			    w->number, strerror(errno), POOL_RETRY_SEC);
			pool_retry_later(pool);
		} else {
			pool->kick = true;
			if (!evtimer_pending(pool->retry, NULL))
				evtimer_add(pool->retry, &now);
		}
	}
	while (active > n && (w = pool_surplus(pool)) != NULL) {
		pool_retire(w);
		active--;
	}
	pool->size = active;
	return 0;
}

unsigned
pool_size(const struct pool *pool)
{
	return pool->size;
}

unsigned
pool_busy(const struct pool *pool)
{
	unsigned i, busy = 0;

	for (i = 0; i < pool->n; i++)
		if (pool->workers[i]->state == POOL_UP &&
		    pool->workers[i]->has_job)
			busy++;
	return busy;
}
