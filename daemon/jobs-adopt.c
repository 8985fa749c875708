/* jobs-adopt.c - at start, the jobs whose attempt an earlier daemon left
 * running: their end as their worker recorded it, or their worker taken over. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "endrec.h"
#include "jobs.h"
#include "jobs-private.h"
#include "log.h"
#include "pool-spec.h"
#include "psem.h"
#include "resources.h"
#include "run.h"
#include "store.h"
#include "timefmt.h"
#include "triaged.h"
#include "wmsg.h"

/* How long an orphaned worker may take to say which attempt it holds. */
#define JOBS_ADOPT_HELLO_MS 2000

/* The record's name, removed once the end it holds is on disk: until
 * then a crash must find it again. */
static void
jobs_adopt_unlink_cb(struct triaged *td, struct job *job, const char *cause,
    void *arg)
{
	char *path = arg;

	(void)td;
	(void)job;
	(void)cause;
	if (unlink(path) == -1 && errno != ENOENT)
		log_warn("%s: cannot remove it", path);
	free(path);
}

static void
jobs_adopt_unlink_later(struct triaged *td, const char *path)
{
	char *copy;

	if ((copy = strdup(path)) == NULL ||
	    jobs_after_commit(td, jobs_adopt_unlink_cb, copy) != 0) {
		free(copy);
		log_warnx("%s: out of memory: it stays, and is read again at "
		    "the next start", path);
	}
}

/* Reads exactly len bytes from fd within the deadline (ms, monotonic).
 * 0, or -1 with errno (ETIMEDOUT, EPROTO at EOF). */
static int
jobs_adopt_read(int fd, void *buf, size_t len, uint64_t deadline)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	uint64_t now;
	size_t off = 0;
	ssize_t n;

	while (off < len) {
		if ((now = timefmt_mono_ms()) >= deadline) {
			errno = ETIMEDOUT;
			return -1;
		}
		if (poll(&pfd, 1, (int)(deadline - now)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		n = read(fd, (char *)buf + off, len - off);
		if (n == -1) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -1;
		}
		if (n == 0) {
			errno = EPROTO;
			return -1;
		}
		off += (size_t)n;
	}
	return 0;
}

/*
 * Connects to the worker's socket at path and reads which attempt it
 * holds. Returns the connection, or -1: nobody answers (the name is
 * removed then), or it is not a worker's (logged).
 */
static int
jobs_adopt_connect(const char *path, struct wmsg_adopted *am)
{
	struct sockaddr_un sun;
	struct wmsg_hdr hdr;
	int fd;

	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof sun.sun_path)
		return -1;
	memcpy(sun.sun_path, path, strlen(path) + 1);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1) {
		log_warn("socket");
		return -1;
	}
	if (connect(fd, (struct sockaddr *)&sun, sizeof sun) == -1) {
		/* Its worker is gone: a name nobody listens on. */
		if (errno == ECONNREFUSED)
			(void)unlink(path);
		else if (errno != ENOENT)
			log_warn("%s: connect", path);
		close(fd);
		return -1;
	}
	if (jobs_adopt_read(fd, &hdr, sizeof hdr, timefmt_mono_ms() +
	    JOBS_ADOPT_HELLO_MS) == -1 || hdr.type != WMSG_ADOPTED ||
	    wmsg_check(&hdr, WMSG_TO_DAEMON) == -1 ||
	    jobs_adopt_read(fd, am, sizeof *am, timefmt_mono_ms() +
	    JOBS_ADOPT_HELLO_MS) == -1 || am->worker <= 0 || am->pid <= 0) {
		log_warnx("%s: no worker answers as one should", path);
		close(fd);
		return -1;
	}
	return fd;
}

/* A worker whose run is not to go on (another attempt than the store's,
 * or one this daemon could not take): fenced off, it and its job killed
 * (the job's parent-death signal). why says which, for the log. */
static void
jobs_adopt_fence(uint64_t id, int fd, const struct wmsg_adopted *am,
    const char *why)
{
	int pfd;

	log_warnx("job %llu: a worker (pid %ld) still holds attempt %u, "
	    "which %s: killing it", (unsigned long long)id, (long)am->worker,
	    am->attempt, why);
	/* While we hold the connection it made, the pid is that worker's.
	 * Where pidfd_open is not to be had (valgrind), by its pid alone. */
	if ((pfd = (int)pidfd_open(am->worker, 0)) != -1) {
		(void)pidfd_send_signal(pfd, SIGKILL, NULL, 0);
		close(pfd);
	} else if (errno == ENOSYS)
		(void)kill(am->worker, SIGKILL);
	close(fd);
}

/* Its slots back, and its run as run_adopt takes it. 0, or -1 (logged;
 * nothing held). */
static int
jobs_adopt_take(struct triaged *td, struct job *job,
    const struct run_adoptee *from)
{
	struct run_job_opts opts;

	if (resources_hold(td, job) != 0 ||
	    jobs_run_opts(td, job, &opts) != 0) {
		if (psem_waiter_state(&job->waiter) == PSEM_HELD)
			psem_release(td->sem, &job->waiter);
		log_warnx("job %llu: cannot take it over: %s",
		    (unsigned long long)job->id, job->run->reason);
		return -1;
	}
	if (run_adopt(td->run, job, &opts, from) != 0) {
		psem_release(td->sem, &job->waiter);
		log_warnx("job %llu: cannot take it over: out of memory",
		    (unsigned long long)job->id);
		return -1;
	}
	return 0;
}

/* Its end as its worker recorded it: 1 taken, 0 none (or unusable). */
static int
jobs_adopt_record(struct triaged *td, struct job *job)
{
	struct run_adoptee from = { .fd = -1 };
	struct pool_result res;
	char path[PATH_MAX];
	int64_t finished_at;
	int r;

	if (endrec_path(td->adopt_dir, job->id, job->attempt, "end", path,
	    sizeof path) == -1)
		return 0;
	if ((r = endrec_read(td->adopt_dir, job->id, job->attempt, &res,
	    &finished_at)) == 0)
		return 0;
	if (r == -1) {
		log_warn("%s: unusable, removed", path);
		(void)unlink(path);
		return 0;
	}
	log_notice("job %llu: taking the end of attempt %u that its worker "
	    "recorded in %s (the last daemon went before storing it)",
	    (unsigned long long)job->id, job->attempt, path);
	from.ended = &res;
	if (jobs_adopt_take(td, job, &from) != 0)
		return 0;
	/* It ended when its worker saw it end, not at this start. Nobody
	 * has heard of it yet: no client is connected before recovery. */
	if (job_state_terminal(job->state) && finished_at > 0 &&
	    finished_at >= job->run->started_at) {
		jobs_run(job)->finished_at = finished_at;
		store_update(td->store, job);
	}
	jobs_adopt_unlink_later(td, path);
	return 1;
}

int
jobs_adopt(struct triaged *td, struct job *job)
{
	struct run_adoptee from;
	struct wmsg_adopted am;
	char path[PATH_MAX];
	int fd;

	if (td->adopt_dir == NULL)
		return 0;
	if (jobs_adopt_record(td, job) == 1)
		return 1;
	if (endrec_path(td->adopt_dir, job->id, job->attempt, "sock", path,
	    sizeof path) == -1)
		return 0;
	if ((fd = jobs_adopt_connect(path, &am)) == -1)
		/* It may have ended since the look at its record. */
		return jobs_adopt_record(td, job);
	if (am.job_id != job->id || am.attempt != job->attempt) {
		jobs_adopt_fence(job->id, fd, &am, "is not the job's attempt");
		return 0;
	}
	from = (struct run_adoptee){ .fd = fd, .worker = am.worker,
	    .pid = am.pid, .start_ticks = am.start_ticks,
	    .exited = am.exited != 0 };
	/* Not taken, the job runs again as a new attempt: this one must
	 * not run beside it. */
	if (jobs_adopt_take(td, job, &from) != 0) {
		jobs_adopt_fence(job->id, fd, &am, "cannot be taken over");
		return 0;
	}
	log_notice("job %llu: attempt %u taken over from an earlier daemon: "
	    "worker %ld, process %ld", (unsigned long long)job->id,
	    job->attempt, (long)am.worker, (long)am.pid);
	return 1;
}

/* Splits "ID.ATTEMPT.SUFFIX"; false for a name of another form. */
static bool
jobs_adopt_name(const char *name, uint64_t *id, unsigned *attempt,
    const char **suffix)
{
	unsigned long long i;
	int n = 0;

	if (sscanf(name, "%llu.%u.%n", &i, attempt, &n) != 2 || n == 0)
		return false;
	*id = (uint64_t)i;
	*suffix = name + n;
	return true;
}

void
jobs_adopt_sweep(struct triaged *td)
{
	struct wmsg_adopted am;
	char path[PATH_MAX];
	const char *suffix;
	struct dirent *de;
	struct job *job;
	unsigned attempt;
	uint64_t id;
	DIR *dir;
	int fd;

	if (td->adopt_dir == NULL || (dir = opendir(td->adopt_dir)) == NULL)
		return;
	while ((de = readdir(dir)) != NULL) {
		if (de->d_name[0] == '.' ||
		    !jobs_adopt_name(de->d_name, &id, &attempt, &suffix))
			continue;
		/* The attempts the store has running are jobs_adopt's. */
		job = store_get(td->store, id);
		if (job != NULL && job->attempt == attempt &&
		    (job->state == JOB_RUNNING ||
		    (job->state == JOB_QUEUED && job->run->begun)))
			continue;
		if ((size_t)snprintf(path, sizeof path, "%s/%s",
		    td->adopt_dir, de->d_name) >= sizeof path)
			continue;
		if (strcmp(suffix, "sock") == 0 &&
		    (fd = jobs_adopt_connect(path, &am)) != -1)
			jobs_adopt_fence(id, fd, &am, job == NULL ?
			    "is of no job the store has" :
			    "is not the job's running attempt");
		log_notice("%s: stale (job %llu is at attempt %u, not "
		    "running): removed", path, (unsigned long long)id,
		    job != NULL ? job->attempt : 0);
		if (unlink(path) == -1 && errno != ENOENT)
			log_warn("%s: cannot remove it", path);
	}
	closedir(dir);
}
