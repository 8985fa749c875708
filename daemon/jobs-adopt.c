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
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "config.h"
#include "endrec.h"
#include "jobs.h"
#include "jobs-private.h"
#include "log.h"
#include "pool-spec.h"
#include "procstat.h"
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
		switch (poll(&pfd, 1, (int)(deadline - now))) {
		case -1:
			if (errno == EINTR)
				continue;
			return -1;
		case 0:
			continue;	/* the deadline, checked above */
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

/* What answers on an orphaned worker's socket. */
struct jobs_adopt_peer {
	int fd;			/* the connection */
	pid_t pid;		/* the process that listens (SO_PEERCRED) */
	uint32_t version;	/* the worker protocol it speaks */
	int error;		/* 0, or why its hello is not one to take:
				 * EPROTONOSUPPORT (version), EMSGSIZE,
				 * EPROTO */
	struct wmsg_adopted am;	/* its hello, when error is 0 */
};

/* A worker's socket is the daemon's user's, mode 0600, and no symlink:
 * none other is connected to (the worker binds it under umask 0177). */
static bool
jobs_adopt_sock_ok(const char *path)
{
	struct stat st;

	if (lstat(path, &st) == -1) {
		if (errno != ENOENT)
			log_warn("%s: lstat", path);
		return false;
	}
	if (!S_ISSOCK(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 07777) != 0600) {
		log_warnx("%s: not a worker's socket (mode %06o, owner uid "
		    "%lu): left alone", path, (unsigned)st.st_mode,
		    (unsigned long)st.st_uid);
		return false;
	}
	return true;
}

/* Reads the hello (its header read already) into peer. */
static void
jobs_adopt_hello(struct jobs_adopt_peer *peer, const struct wmsg_hdr *hdr,
    uint64_t deadline)
{
	char buf[WMSG_ADOPTED_MAX];

	peer->version = 0;
	if (hdr->type != WMSG_ADOPTED) {
		peer->error = EPROTO;
		return;
	}
	if (hdr->len > sizeof buf) {
		peer->error = EMSGSIZE;
		return;
	}
	if (jobs_adopt_read(peer->fd, buf, hdr->len, deadline) == -1 ||
	    wmsg_adopted_decode(&peer->am, buf, hdr->len, &peer->version) == -1)
		peer->error = errno;
	else
		peer->error = 0;
}

/* The worker that answered, killed with its job (the job's parent-death
 * signal), and the connection closed. While we hold the connection it
 * made, the pid that listens is that worker's; where pidfd_open is not
 * to be had (valgrind), by that pid, its start time read now. */
static void
jobs_adopt_kill(struct jobs_adopt_peer *peer)
{
	uint64_t ticks = 0;
	int pfd;

	if ((pfd = (int)pidfd_open(peer->pid, 0)) == -1 &&
	    procstat_start_ticks(peer->pid, &ticks) == -1)
		ticks = 0;
	if (procstat_kill(peer->pid, pfd, ticks, SIGKILL) == -1 &&
	    errno != ESRCH)
		log_warn("worker (pid %ld): kill", (long)peer->pid);
	if (pfd != -1)
		close(pfd);
	close(peer->fd);
	peer->fd = -1;
}

/*
 * Connects to the worker's socket at path and reads which attempt it
 * holds. Returns 0 with peer filled (peer->error says whether the hello
 * is one this daemon reads); or -1: nobody answers (the name is removed
 * then), it is not a worker of this daemon's user's (logged), or its
 * worker says nothing in time (killed, logged).
 */
static int
jobs_adopt_connect(const char *path, struct jobs_adopt_peer *peer)
{
	struct sockaddr_un sun;
	struct wmsg_hdr hdr;
	struct ucred cred;
	socklen_t len = sizeof cred;
	uint64_t deadline;
	int fd;

	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof sun.sun_path || !jobs_adopt_sock_ok(path))
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
	/* Who listens: a worker runs as the daemon's user. Any other's
	 * process is neither taken over nor killed. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1 ||
	    len != sizeof cred || cred.pid <= 0) {
		log_warn("%s: SO_PEERCRED", path);
		close(fd);
		return -1;
	}
	if (cred.uid != geteuid() && cred.uid != 0) {
		log_warnx("%s: process %ld of uid %lu listens there, not a "
		    "worker: left alone", path, (long)cred.pid,
		    (unsigned long)cred.uid);
		close(fd);
		return -1;
	}
	peer->fd = fd;
	peer->pid = cred.pid;
	deadline = timefmt_mono_ms() + JOBS_ADOPT_HELLO_MS;
	if (jobs_adopt_read(fd, &hdr, sizeof hdr, deadline) == -1) {
		/* Stopped, or stuck: a worker that cannot say what it holds
		 * is not left to go on with it beside the next attempt. */
		log_warnx("%s: its worker (pid %ld) does not answer as one "
		    "should: killed", path, (long)cred.pid);
		jobs_adopt_kill(peer);
		return -1;
	}
	jobs_adopt_hello(peer, &hdr, deadline);
	return 0;
}

/* Why the worker that answered is not to be taken over: a hello this
 * daemon cannot read, or another process than the one that listens. Into
 * buf; false when there is nothing against it. */
static bool
jobs_adopt_unreadable(const struct jobs_adopt_peer *peer, char *buf,
    size_t size)
{
	if (peer->error == EPROTONOSUPPORT)
		snprintf(buf, size, "its worker speaks worker protocol %u, this "
		    "daemon %u", peer->version, WMSG_ADOPT_VERSION);
	else if (peer->error != 0)
		snprintf(buf, size, "its worker's hello (pid %ld) does not "
		    "read as one: %s", (long)peer->pid, strerror(peer->error));
	else if (peer->am.worker != peer->pid)
		snprintf(buf, size, "a worker says it is pid %ld, but pid %ld "
		    "listens on its socket", (long)peer->am.worker,
		    (long)peer->pid);
	else
		return false;
	return true;
}

/*
 * Why the worker's run is not job's: another attempt, or a process that is
 * not the one its worker started or the store has for this attempt. Into
 * buf; false when there is nothing against it. May mark the process
 * exited: it ended and was reaped since the hello, by its worker.
 */
static bool
jobs_adopt_not_its(const struct job *job, struct jobs_adopt_peer *peer,
    char *buf, size_t size)
{
	struct wmsg_adopted *am = &peer->am;
	const struct job_run *run = job->run;
	uint64_t ticks;

	if (am->job_id != job->id || am->attempt != job->attempt) {
		snprintf(buf, size, "a worker (pid %ld) holds attempt %u of "
		    "job %llu, not this job's attempt %u", (long)am->worker,
		    am->attempt, (unsigned long long)am->job_id, job->attempt);
		return true;
	}
	if (!am->exited) {
		/* Unreaped, the pid is the job's process still: it started
		 * when its worker says. */
		if (procstat_start_ticks(am->pid, &ticks) == -1) {
			if (errno != ENOENT) {
				snprintf(buf, size, "its process %ld cannot be "
				    "looked at: %s", (long)am->pid,
				    strerror(errno));
				return true;
			}
			am->exited = 1;
		} else if (am->start_ticks == 0 || ticks != am->start_ticks) {
			snprintf(buf, size, "its process %ld started at tick "
			    "%llu, not at %llu as its worker says",
			    (long)am->pid, (unsigned long long)ticks,
			    (unsigned long long)am->start_ticks);
			return true;
		}
	}
	/* What the store kept of this attempt's start, when it got so far. */
	if (run->pid > 0 && (am->pid != run->pid || (run->start_ticks != 0 &&
	    am->start_ticks != 0 && am->start_ticks != run->start_ticks))) {
		snprintf(buf, size, "its worker runs process %ld (start %llu), "
		    "the store has process %ld (start %llu) for attempt %u",
		    (long)am->pid, (unsigned long long)am->start_ticks,
		    (long)run->pid, (unsigned long long)run->start_ticks,
		    job->attempt);
		return true;
	}
	return false;
}

bool
jobs_rerun_unheld(const struct triaged *td)
{
	return td->cfg->shutdown == CONFIG_SHUTDOWN_REQUEUE ||
	    td->cfg->shutdown == CONFIG_SHUTDOWN_KEEP;
}

/* What comes of a job whose worker is killed at start. */
static const char *
jobs_adopt_then(const struct triaged *td)
{
	return jobs_rerun_unheld(td) ? "the job runs again" :
	    "the job is lost";
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
	r = jobs_adopt_take(td, job, &from);
	free(res.result);
	if (r != 0)
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
	struct jobs_adopt_peer peer;
	struct run_adoptee from;
	char path[PATH_MAX], why[256];

	if (td->adopt_dir == NULL)
		return 0;
	if (jobs_adopt_record(td, job) == 1)
		return 1;
	if (endrec_path(td->adopt_dir, job->id, job->attempt, "sock", path,
	    sizeof path) == -1)
		return 0;
	if (jobs_adopt_connect(path, &peer) == -1)
		/* It may have ended since the look at its record. */
		return jobs_adopt_record(td, job);
	/* Not taken, the job runs again as a new attempt: this one must
	 * not run beside it. */
	if (jobs_adopt_unreadable(&peer, why, sizeof why) ||
	    jobs_adopt_not_its(job, &peer, why, sizeof why)) {
		log_warnx("job %llu: %s: killed, and %s",
		    (unsigned long long)job->id, why, jobs_adopt_then(td));
		jobs_adopt_kill(&peer);
		return 0;
	}
	from = (struct run_adoptee){ .fd = peer.fd, .worker = peer.am.worker,
	    .pid = peer.am.pid, .start_ticks = peer.am.start_ticks,
	    .exited = peer.am.exited != 0 };
	if (jobs_adopt_take(td, job, &from) != 0) {
		log_warnx("job %llu: its worker (pid %ld) cannot be taken over: "
		    "killed, and %s", (unsigned long long)job->id,
		    (long)peer.pid, jobs_adopt_then(td));
		jobs_adopt_kill(&peer);
		return 0;
	}
	log_notice("job %llu: attempt %u taken over from an earlier daemon: "
	    "worker %ld, process %ld", (unsigned long long)job->id,
	    job->attempt, (long)peer.am.worker, (long)peer.am.pid);
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
	struct jobs_adopt_peer peer;
	char path[PATH_MAX], why[256];
	const char *suffix;
	struct dirent *de;
	struct job *job;
	unsigned attempt;
	uint64_t id;
	DIR *dir;

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
		    jobs_adopt_connect(path, &peer) == 0) {
			if (!jobs_adopt_unreadable(&peer, why, sizeof why))
				snprintf(why, sizeof why, "a worker (pid %ld) "
				    "still holds attempt %u, which %s",
				    (long)peer.pid, peer.am.attempt,
				    job == NULL ? "is of no job the store has" :
				    "is not the job's running attempt");
			log_warnx("job %llu: %s: killed",
			    (unsigned long long)id, why);
			jobs_adopt_kill(&peer);
		}
		log_notice("%s: stale (job %llu is at attempt %u, not "
		    "running): removed", path, (unsigned long long)id,
		    job != NULL ? job->attempt : 0);
		if (unlink(path) == -1 && errno != ENOENT)
			log_warn("%s: cannot remove it", path);
	}
	closedir(dir);
}
