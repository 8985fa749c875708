/* worker.c - the worker process: takes one job at a time from the daemon,
 * spawns it, copies its output into files and reports how it started and ended. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "cgroups.h"
#include "endrec.h"
#include "procstat.h"
#include "timefmt.h"
#include "wmsg.h"
#include "worker-child.h"
#include "worker-groups.h"
#include "worker.h"

/* Once the job's process has exited and its group is killed, how long a
 * process that left the group may keep the output pipes open. */
#define WORKER_DRAIN_MS	2000

struct worker {
	int fd;			/* the daemon; blocking; -1 while orphaned */
	/* Orphaned (its daemon gone while it runs a job): the socket it
	 * listens on for the next daemon, -1 none; and its path. */
	int lfd;
	char lpath[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int sfd;		/* signalfd: SIGCHLD, SIGTERM */
	int null;		/* /dev/null, every job's stdin */
	pid_t pid;		/* ours: a job child checks its parent is */
	char **sh_argv;		/* see worker_sh_argv */
	size_t sh_size;
	char sh[8];		/* "/bin/sh", writable as execve's argv is */
	bool gone;		/* the daemon went away: EOF or SIGTERM */
	/* The end it reported last, until the daemon says it is stored
	 * (WMSG_ACK): what it records should the daemon go first. */
	bool unacked;
	uint64_t unacked_id;
	unsigned unacked_attempt;
	int64_t unacked_at;
	struct pool_result unacked_res;
	struct pool_setup setup;	/* cgroup_fd: the jobs' cgroups' home */
	char buf[65536];	/* output on its way to a file */
};

struct worker_stream {
	int pipe;		/* read end; -1 once closed */
	int file;		/* the capture file; -1 before made, once closed */
	bool made;		/* its file was made (worker_stream_open) */
	const char *path;	/* its name, which compaction replaces */
	uint64_t kept;		/* bytes written to file */
	uint64_t dropped;	/* keep_tail: bytes compacted away */
	bool truncated;		/* some output was dropped */
};

/*
 * One run of a job. A job is its process group: its main process is the
 * group (and session) leader, and whatever it leaves in the group when it
 * exits is killed. With a cgroup of its own, everything in that cgroup is
 * the job's, however it left the group (setsid), and is killed then too.
 * The run is finished only when the process has been reaped, both streams
 * are closed and its cgroup is empty, which come in any order.
 */
struct worker_job {
	const struct wmsg_run *run;
	pid_t pid;
	int flags;
#define WORKER_JOB_EXITED	0x1	/* reaped: status and ru are set */
#define WORKER_JOB_STDOUT_EOF	0x2
#define WORKER_JOB_STDERR_EOF	0x4
#define WORKER_JOB_EMPTY	0x8	/* no cgroup, or nothing left in it */
#define WORKER_JOB_DONE		0xf
	int status;
	struct rusage ru;
	uint64_t deadline_ms;	/* EXITED: close the streams then (monotonic) */
	/* The node's lease (WMSG_LEASE), 0 until the daemon gives one; then
	 * SIGTERM at its end, SIGKILL grace later. */
	uint64_t lease_until_us;
	uint64_t lease_grace_ms;
	int lease_sig;		/* the last signal it sent, 0 none */
	struct worker_stream out[2];	/* stdout, stderr */
	int result;		/* its result file (memfd), -1 none */
	int cg;			/* its cgroup's directory, -1 none */
	int cg_events;		/* its cgroup.events, polled for "populated" */
	char cg_name[CGROUPS_NAME_MAX];	/* "ID.ATTEMPT" under cgroup_fd */
	unsigned left;		/* processes found there after the main one */
};

/* Reads exactly len bytes. Returns 1; 0 on EOF before any byte; -1 with
 * errno (EPROTO for EOF inside the message). */
static int
worker_read_full(int fd, void *buf, size_t len)
{
	size_t off = 0;
	ssize_t n;

	while (off < len) {
		n = read(fd, (char *)buf + off, len - off);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0) {
			if (off == 0)
				return 0;
			errno = EPROTO;
			return -1;
		}
		off += (size_t)n;
	}
	return 1;
}

/* Reads one checked message; *payload is allocated (the caller frees it).
 * Returns 1, 0 when the daemon is gone, -1 on a broken message. */
static int
worker_recv(struct worker *w, struct wmsg_hdr *hdr, char **payload)
{
	int r;

	if ((r = worker_read_full(w->fd, hdr, sizeof *hdr)) != 1) {
		if (r == 0 || errno == ECONNRESET)
			w->gone = true;
		return r;
	}
	if (wmsg_check(hdr, WMSG_TO_WORKER) == -1)
		return -1;
	/* every payload to a worker has a non-zero length */
	if ((*payload = malloc(hdr->len)) == NULL)
		return -1;
	if ((r = worker_read_full(w->fd, *payload, hdr->len)) != 1) {
		free(*payload);
		*payload = NULL;
		if (r == 0)
			errno = EPROTO;
		return -1;
	}
	return 1;
}

/* Sends the n_iov parts of one message whole, in as few calls as the
 * socket takes; -1 when the daemon cannot be told. */
static int
worker_sendv(struct worker *w, struct iovec *iov, size_t n_iov)
{
	struct msghdr mh;
	size_t left = 0, i;
	ssize_t n;

	for (i = 0; i < n_iov; i++)
		left += iov[i].iov_len;
	i = 0;
	while (left > 0) {
		memset(&mh, 0, sizeof mh);
		mh.msg_iov = iov + i;
		mh.msg_iovlen = n_iov - i;
		/* MSG_NOSIGNAL: a gone daemon is an error here, not a SIGPIPE */
		n = sendmsg(w->fd, &mh, MSG_NOSIGNAL);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EPIPE || errno == ECONNRESET)
				w->gone = true;
			return -1;
		}
		left -= (size_t)n;
		/* Past what went: the parts sent whole, then into the next. */
		for (; i < n_iov && (size_t)n >= iov[i].iov_len; i++)
			n -= (ssize_t)iov[i].iov_len;
		if (i < n_iov) {
			iov[i].iov_base = (char *)iov[i].iov_base + n;
			iov[i].iov_len -= (size_t)n;
		}
	}
	return 0;
}

/* Sends one message whole; -1 when the daemon cannot be told. */
static int
worker_send(struct worker *w, uint32_t type, const void *payload, size_t len)
{
	struct wmsg_hdr hdr = { type, (uint32_t)len };
	/* sendmsg takes iovecs of non-const memory, and never writes it. */
	struct iovec iov[2] = { { &hdr, sizeof hdr },
	    { (void *)(uintptr_t)payload, len } };

	return worker_sendv(w, iov, 2);
}

/* Sends the RESULT of a run that left one, its bytes straight from
 * res (up to 16 MiB: not through a buffer); -1 when the daemon cannot be
 * told. None is sent for a run without one. */
static int
worker_send_result(struct worker *w, uint64_t job_id,
    const struct pool_result *res)
{
	struct wmsg_result_head head;
	struct wmsg_hdr hdr;
	struct iovec iov[3];

	if (res->result_len == 0)
		return 0;
	memset(&head, 0, sizeof head);
	head.job_id = job_id;
	head.truncated = res->result_truncated;
	hdr.type = WMSG_RESULT;
	hdr.len = (uint32_t)(sizeof head + res->result_len);
	iov[0] = (struct iovec){ &hdr, sizeof hdr };
	iov[1] = (struct iovec){ &head, sizeof head };
	iov[2] = (struct iovec){ res->result, res->result_len };
	return worker_sendv(w, iov, 3);
}

static int
worker_send_finished(struct worker *w, uint64_t job_id,
    const struct pool_result *res)
{
	struct wmsg_finished msg;

	wmsg_finished_encode(&msg, job_id, res);
	return worker_send(w, WMSG_FINISHED, &msg, sizeof msg);
}

/* Drains the signalfd. Returns the WORKER_SIG_* seen, or -1. */
#define WORKER_SIG_CHLD	0x1
#define WORKER_SIG_TERM	0x2
static int
worker_signals(struct worker *w)
{
	struct signalfd_siginfo si;
	int seen = 0;
	ssize_t n;

	for (;;) {
		n = read(w->sfd, &si, sizeof si);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return seen;
			return -1;
		}
		if (n != sizeof si) {
			errno = EIO;
			return -1;
		}
		if (si.ssi_signo == SIGCHLD)
			seen |= WORKER_SIG_CHLD;
		else if (si.ssi_signo == SIGTERM)
			seen |= WORKER_SIG_TERM;
	}
}

/* Milliseconds until deadline_ms, 0 if past, at most the drain; for poll. */
static int
worker_ms_until(uint64_t deadline_ms)
{
	uint64_t now = timefmt_mono_ms();

	if (now >= deadline_ms)
		return 0;
	return deadline_ms - now > WORKER_DRAIN_MS ? WORKER_DRAIN_MS :
	    (int)(deadline_ms - now);
}

static void
worker_stream_close(struct worker_job *job, int i)
{
	struct worker_stream *s = &job->out[i];

	if (s->pipe != -1) {
		close(s->pipe);
		s->pipe = -1;
	}
	job->flags |= i == 0 ? WORKER_JOB_STDOUT_EOF : WORKER_JOB_STDERR_EOF;
}

/* Writes len bytes of buf to the stream's file. Returns how many it
 * wrote; a file that cannot be written is closed, and drops the rest. */
static size_t
worker_stream_write(struct worker_stream *s, const char *buf, size_t len)
{
	size_t off = 0;
	ssize_t n;

	while (off < len) {
		n = write(s->file, buf + off, len - off);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			close(s->file);
			s->file = -1;
			break;
		}
		off += (size_t)n;
	}
	s->kept += off;
	return off;
}

/* The count of bytes no longer stored, on the capture file itself: a
 * reader of a running job's file gets the count of the very file it
 * opened, whatever compaction does meanwhile. */
static int
worker_stream_mark(int fd, uint64_t dropped)
{
	char text[24];
	int n;

	n = snprintf(text, sizeof text, "%llu", (unsigned long long)dropped);
	return fsetxattr(fd, POOL_DROPPED_XATTR, text, (size_t)n, 0);
}

/*
 * keep_tail: replaces the file by a new one holding only its last
 * max_output bytes, marked with the count dropped. The new file is made
 * under another name and renamed over the old one, so that a reader sees
 * either file whole, never one half copied. Returns 0, or -1 (the old
 * file stays, and the caller drops the rest).
 */
static int
worker_stream_compact(const struct pool_spec *spec, struct worker_stream *s)
{
	uint64_t max = spec->max_output, cut = s->kept - max;
	char tmp[PATH_MAX];
	loff_t from = (loff_t)cut;
	size_t left = (size_t)max;
	ssize_t n;
	int fd;

	if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", s->path) >= sizeof tmp)
		return -1;
	fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
	    0600);
	if (fd == -1)
		return -1;
	if (spec->set_creds && fchown(fd, spec->uid, spec->gid) == -1)
		goto fail;
	while (left > 0) {
		n = copy_file_range(s->file, &from, fd, NULL, left, 0);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			goto fail;
		left -= (size_t)n;
	}
	if (worker_stream_mark(fd, s->dropped + cut) == -1 ||
	    rename(tmp, s->path) == -1)
		goto fail;
	close(s->file);
	s->file = fd;
	s->kept = max;
	s->dropped += cut;
	s->truncated = true;
	return 0;
fail:
	close(fd);
	unlink(tmp);
	return -1;
}

/* keep_tail: compaction once the file holds twice what it keeps, so that
 * its size stays under 2 * max_output + a read, whatever the job writes;
 * at the end (final), whatever it holds over max_output. */
static void
worker_stream_trim(const struct pool_spec *spec, struct worker_stream *s,
    bool final)
{
	uint64_t max = spec->max_output;

	if (s->file == -1 || s->kept <= max ||
	    (!final && s->kept - max < max))
		return;
	if (worker_stream_compact(spec, s) == -1) {
		close(s->file);
		s->file = -1;
		s->truncated = true;
	}
}

/*
 * Makes the stream's capture file, when its first bytes come: a job waits
 * on no file create, and a stream it never writes to has no file, which
 * readers take for an empty one. The name is this attempt's alone: the
 * daemon removed the last attempt's files before it handed this one
 * (run_hand), and an attempt that writes nothing must show none of them.
 * So a file found there is a leftover (of a worker of an earlier attempt
 * that outlived its daemon, killed since): it is unlinked and the file
 * made again, with O_EXCL, so that what readers open is this worker's own
 * and fresh, its bytes and its count dropped (keep_tail: none yet, no
 * mark needed) this attempt's. 0, or -1 with errno: the stream drops what
 * it writes then, as for a file that cannot be written.
 */
static int
worker_stream_open(const struct pool_spec *spec, struct worker_stream *s)
{
	/* keep_tail reads the file back when it compacts it. */
	int flags = (spec->keep_tail ? O_RDWR : O_WRONLY) | O_CREAT | O_EXCL |
	    O_NOFOLLOW | O_CLOEXEC, tries, saved;

	s->made = true;
	for (tries = 0; (s->file = open(s->path, flags, 0600)) == -1;
	    tries++)
		if (errno != EEXIST || tries > 0 ||
		    (unlink(s->path) == -1 && errno != ENOENT))
			return -1;
	/* A job's output is its user's, like anything it writes. */
	if (spec->set_creds && fchown(s->file, spec->uid, spec->gid) == -1) {
		saved = errno;
		close(s->file);
		s->file = -1;
		errno = saved;
		return -1;
	}
	return 0;
}

/* Copies what the pipe has into the file: under keep_head up to
 * max_output bytes in all, the rest read (so the job never blocks on a
 * full pipe) and dropped; under keep_tail all of it, the file compacted
 * as it grows. A file that cannot be made or written drops the rest too. */
static void
worker_stream_read(struct worker *w, struct worker_job *job, int i)
{
	const struct pool_spec *spec = &job->run->spec;
	struct worker_stream *s = &job->out[i];
	uint64_t room;
	size_t keep;
	ssize_t got;

	got = read(s->pipe, w->buf, sizeof w->buf);
	if (got == -1 && errno == EINTR)
		return;
	if (got <= 0) {
		/* EOF, or an error that will not go away: the same to us */
		worker_stream_close(job, i);
		return;
	}
	if (!s->made)
		(void)worker_stream_open(spec, s);
	if (s->file == -1)
		room = 0;
	else if (spec->keep_tail)
		room = (uint64_t)got;
	else
		room = spec->max_output - s->kept;
	keep = (uint64_t)got < room ? (size_t)got : (size_t)room;
	if (worker_stream_write(s, w->buf, keep) < (size_t)got)
		s->truncated = true;
	if (spec->keep_tail)
		worker_stream_trim(spec, s, false);
}

/* Sets EMPTY once the job's cgroup holds nothing (or cannot be read:
 * nothing to wait for then). */
static void
worker_cgroup_check(struct worker_job *job)
{
	if (job->cg == -1 || cgroup_events_populated(job->cg_events) != 1)
		job->flags |= WORKER_JOB_EMPTY;
}

/* SIGKILL to the job: its process group, and with a cgroup everything in
 * it, wherever it went. */
static void
worker_kill(struct worker_job *job)
{
	(void)kill(-job->pid, SIGKILL);
	if (job->cg != -1)
		(void)cgroup_kill(job->cg);
}

/*
 * Reaps the job's process if it has exited. It is first only looked at
 * (WNOWAIT): while unreaped, its pid cannot be reused, so killing the group
 * -pid cannot hit anyone else's. Returns 0, or -1 on a failed wait.
 */
static int
worker_reap(struct worker_job *job)
{
	siginfo_t si;

	memset(&si, 0, sizeof si);
	if (waitid(P_PID, (id_t)job->pid, &si, WEXITED | WNOHANG | WNOWAIT) == -1)
		return -1;
	if (si.si_pid != job->pid)
		return 0;
	/* What it left in its cgroup is counted, for its reason, before
	 * anything is killed (its ended main process is not listed). Most
	 * jobs leave nothing: one read says so. */
	worker_cgroup_check(job);
	if ((job->flags & WORKER_JOB_EMPTY) == 0 &&
	    cgroup_count(job->cg, &job->left) == -1)
		job->left = 0;
	/* What the job left behind in its group dies with it, and so does
	 * whatever it left in its cgroup. */
	if (kill(-job->pid, SIGKILL) == -1 && errno != ESRCH)
		return -1;
	if (job->left > 0)
		(void)cgroup_kill(job->cg);
	while (wait4(job->pid, &job->status, 0, &job->ru) == -1)
		if (errno != EINTR)
			return -1;
	job->flags |= WORKER_JOB_EXITED;
	job->deadline_ms = timefmt_mono_ms() + WORKER_DRAIN_MS;
	/* Reaped, it no longer keeps its cgroup populated either. */
	if ((job->flags & WORKER_JOB_EMPTY) == 0)
		worker_cgroup_check(job);
	return 0;
}

/* Nothing kept of the last end reported: it is stored, or recorded. */
static void
worker_unacked_drop(struct worker *w)
{
	w->unacked = false;
	free(w->unacked_res.result);
	w->unacked_res.result = NULL;
	w->unacked_res.result_len = 0;
}

/* An ACK: the end it names is stored, nothing to keep of it. */
static void
worker_acked(struct worker *w, const char *payload)
{
	struct wmsg_ack am;

	memcpy(&am, payload, sizeof am);
	if (w->unacked && am.job_id == w->unacked_id)
		worker_unacked_drop(w);
}

/* The daemon went before it said the last end is stored: it is recorded
 * for the next one, which takes it if the store has it running still. */
static void
worker_record_unacked(struct worker *w)
{
	if (!w->unacked || w->setup.adopt_dir == NULL)
		return;
	(void)endrec_write(w->setup.adopt_dir, w->unacked_id,
	    w->unacked_attempt, &w->unacked_res, w->unacked_at);
	worker_unacked_drop(w);
}

/* A message while a job runs: SIGNAL for it, or a late one for a job that
 * has ended (ignored). Returns 0, or -1 when the daemon is gone or broken. */
static int
worker_command(struct worker *w, struct worker_job *job)
{
	struct wmsg_hdr hdr;
	struct wmsg_signal sm;
	struct wmsg_lease lm;
	char *payload;
	int r;

	if ((r = worker_recv(w, &hdr, &payload)) != 1)
		return -1;
	if (hdr.type == WMSG_ACK) {
		worker_acked(w, payload);
		free(payload);
		return 0;
	}
	if (hdr.type == WMSG_LEASE) {
		memcpy(&lm, payload, sizeof lm);
		free(payload);
		if (lm.job_id == job->run->spec.job_id) {
			job->lease_until_us = lm.until_us;
			job->lease_grace_ms = lm.grace_ms;
			job->lease_sig = 0;
		}
		return 0;
	}
	if (hdr.type != WMSG_SIGNAL) {
		free(payload);
		return -1;	/* a RUN while busy: the daemon lost track */
	}
	memcpy(&sm, payload, sizeof sm);
	free(payload);
	if (sm.pad != 0 || sm.sig <= 0 || sm.sig >= NSIG)
		return -1;
	/* Only while unreaped: afterwards the pid may be someone else's. */
	if (sm.job_id != job->run->spec.job_id ||
	    (job->flags & WORKER_JOB_EXITED) != 0)
		return 0;
	if (sm.sig == SIGKILL) {
		worker_kill(job);
		return 0;
	}
	if (kill(-job->pid, sm.sig) == -1 && errno != ESRCH)
		return -1;
	return 0;
}

/*
 * The lease's end, while the job's process is there: SIGTERM to its group
 * once the end has passed, SIGKILL once the grace has too. Returns poll's
 * timeout until the next of those (-1: none).
 */
static int
worker_lease(struct worker_job *job)
{
	uint64_t now = timefmt_mono_us(), at;
	int sig;

	if (job->lease_until_us == 0 || (job->flags & WORKER_JOB_EXITED) ||
	    job->lease_sig == SIGKILL)
		return -1;
	sig = job->lease_sig == 0 ? SIGTERM : SIGKILL;
	at = job->lease_until_us + (sig == SIGKILL ?
	    job->lease_grace_ms * 1000 : 0);
	if (now < at)
		return (int)((at - now + 999) / 1000);
	/* The daemon renews this while it can: it cannot. A job it froze
	 * takes no SIGTERM until thawed, and the daemon is not there to
	 * thaw it: the worker does. */
	if (sig == SIGKILL)
		worker_kill(job);
	else {
		(void)kill(-job->pid, sig);
		if (job->cg != -1)
			(void)cgroup_freeze(job->cg, false);
		(void)kill(-job->pid, SIGCONT);
	}
	job->lease_sig = sig;
	return sig == SIGTERM ? (int)job->lease_grace_ms : -1;
}

/* The listening socket closed and its name removed: adopted, or ended. */
static void
worker_unlisten(struct worker *w)
{
	if (w->lfd == -1)
		return;
	close(w->lfd);
	w->lfd = -1;
	(void)unlink(w->lpath);
}

/*
 * The daemon's stdin, stdout and stderr, which a worker inherits (and
 * never uses), belong to whoever started the daemon: a worker that kept
 * them once orphaned would hold that daemon's log pipe or terminal open
 * while nothing of the daemon runs. /dev/null in their place; a failure
 * leaves them (the worker writes nothing there).
 */
static void
worker_stdio_release(void)
{
	int fd, i;

	if ((fd = open("/dev/null", O_RDWR | O_CLOEXEC)) == -1)
		return;
	for (i = 0; i < 3; i++)
		if (fd != i)
			(void)dup2(fd, i);
	if (fd > 2)
		close(fd);
}

/*
 * The daemon is gone while the job runs: the worker keeps it, and waits
 * for the next daemon on adopt_dir/ID.ATTEMPT.sock (mode 0600: only the
 * daemon's user may take a job over). Returns 0, or -1 when it cannot
 * hold the job (no adopt_dir): the caller then kills it, as before.
 */
static int
worker_orphan(struct worker *w, struct worker_job *job)
{
	const struct pool_spec *spec = &job->run->spec;
	struct sockaddr_un sun;
	char bound[PATH_MAX];
	mode_t mask;
	int fd;

	if (w->setup.adopt_dir == NULL)
		return -1;
	if (w->fd != -1) {
		close(w->fd);
		w->fd = -1;
	}
	w->gone = true;
	worker_record_unacked(w);
	if (w->lfd != -1)
		return 0;
	worker_stdio_release();
	/* Without a socket the job still runs to its end and leaves its
	 * record: the next daemon then takes that. */
	if (endrec_path(w->setup.adopt_dir, spec->job_id, spec->attempt,
	    "sock", w->lpath, sizeof w->lpath) == -1 ||
	    endrec_path(w->setup.adopt_dir, spec->job_id, spec->attempt,
	    "sock.new", bound, sizeof bound) == -1 ||
	    strlen(bound) >= sizeof sun.sun_path)
		return 0;
	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, bound, strlen(bound) + 1);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0)) == -1)
		return 0;
	/* Ours from an earlier loss, or a stale one of this very attempt. */
	(void)unlink(bound);
	/* 0600: a socket's mode is what bind leaves of 0777. The name is
	 * bound aside and renamed once it listens: a daemon that finds
	 * ID.ATTEMPT.sock and is refused may take the worker for gone. */
	mask = umask(0177);
	if (bind(fd, (struct sockaddr *)&sun, sizeof sun) == -1 ||
	    listen(fd, 4) == -1 || rename(bound, w->lpath) == -1) {
		umask(mask);
		(void)unlink(bound);
		close(fd);
		return 0;
	}
	umask(mask);
	w->lfd = fd;
	return 0;
}

/*
 * A daemon connects to the orphaned worker: it is told which attempt the
 * worker holds, and is the worker's daemon from then on (one that does not
 * want it closes the connection, and the worker waits on).
 */
static void
worker_adopted(struct worker *w, struct worker_job *job)
{
	struct wmsg_adopted am;
	int fd, fl;

	if ((fd = accept4(w->lfd, NULL, NULL, SOCK_CLOEXEC)) == -1)
		return;
	/* The listening socket is non-blocking; this one must not be. */
	if ((fl = fcntl(fd, F_GETFL)) == -1 ||
	    fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == -1) {
		close(fd);
		return;
	}
	memset(&am, 0, sizeof am);
	am.version = WMSG_ADOPT_VERSION;
	am.job_id = job->run->spec.job_id;
	am.attempt = job->run->spec.attempt;
	am.pid = job->pid;
	am.worker = w->pid;
	am.exited = (job->flags & WORKER_JOB_EXITED) != 0;
	if (procstat_start_ticks(job->pid, &am.start_ticks) == -1 ||
	    am.exited)
		am.start_ticks = 0;
	w->fd = fd;
	if (worker_send(w, WMSG_ADOPTED, &am, sizeof am) == -1) {
		close(fd);
		w->fd = -1;
		return;
	}
	w->gone = false;
	worker_unlisten(w);
}

/*
 * Waits until the run is finished: output copied, process reaped. Returns 0;
 * or -1 when the worker must stop (the daemon is gone or broken, a wait
 * failed), after killing and reaping the job.
 */
static int
worker_wait(struct worker *w, struct worker_job *job)
{
	struct pollfd pfd[5];
	int i, n, nfd, timeout, sig, stream[2], events;

	while ((job->flags & WORKER_JOB_DONE) != WORKER_JOB_DONE) {
		timeout = worker_lease(job);
		if (job->flags & WORKER_JOB_EXITED) {
			if ((timeout = worker_ms_until(job->deadline_ms)) == 0) {
				/* some process that left the group holds them,
				 * or one the kill cannot end (stuck in the
				 * kernel) is still in the cgroup */
				worker_stream_close(job, 0);
				worker_stream_close(job, 1);
				job->flags |= WORKER_JOB_EMPTY;
				continue;
			}
		}
		nfd = 0;
		/* Orphaned, the next daemon comes in on the listening socket
		 * (none: a poll of fd -1 sees nothing). */
		pfd[nfd++] = (struct pollfd){ .fd = w->fd != -1 ? w->fd :
		    w->lfd, .events = POLLIN };
		pfd[nfd++] = (struct pollfd){ .fd = w->sfd, .events = POLLIN };
		/* The kernel wakes a poller of cgroup.events at each change
		 * of it: the cgroup's emptying among them. */
		events = -1;
		if ((job->flags & (WORKER_JOB_EXITED | WORKER_JOB_EMPTY)) ==
		    WORKER_JOB_EXITED && job->cg_events != -1) {
			events = nfd;
			pfd[nfd++] = (struct pollfd){ .fd = job->cg_events,
			    .events = POLLPRI };
		}
		for (i = 0; i < 2; i++) {
			stream[i] = -1;
			if (job->out[i].pipe == -1)
				continue;
			stream[i] = nfd;
			pfd[nfd++] = (struct pollfd){
				.fd = job->out[i].pipe, .events = POLLIN };
		}
		if ((n = poll(pfd, (nfds_t)nfd, timeout)) == -1) {
			if (errno == EINTR)
				continue;
			goto fail;
		}
		for (i = 0; i < 2; i++)
			if (stream[i] != -1 && pfd[stream[i]].revents != 0)
				worker_stream_read(w, job, i);
		if (events != -1 && pfd[events].revents != 0)
			worker_cgroup_check(job);
		if (pfd[1].revents != 0) {
			if ((sig = worker_signals(w)) == -1)
				goto fail;
			if (sig & WORKER_SIG_TERM) {
				w->gone = true;	/* the daemon died */
				goto fail;
			}
			if ((sig & WORKER_SIG_CHLD) &&
			    (job->flags & WORKER_JOB_EXITED) == 0 &&
			    worker_reap(job) == -1)
				goto fail;
		}
		if (pfd[0].revents != 0) {
			if (w->fd == -1)
				worker_adopted(w, job);
			else if (worker_command(w, job) == -1 &&
			    (!w->gone || worker_orphan(w, job) == -1))
				goto fail;
		}
	}
	return 0;
fail:
	worker_unlisten(w);
	if ((job->flags & WORKER_JOB_EXITED) == 0) {
		worker_kill(job);
		while (waitpid(job->pid, NULL, 0) == -1 && errno == EINTR)
			;
	}
	return -1;
}

/* Reads the exec-error pipe to EOF into buf (NUL-terminated, the excess
 * dropped). Returns the length kept: 0 when exec closed the pipe silently. */
static ssize_t
worker_exec_result(int fd, char *buf, size_t size)
{
	char sink[256];
	size_t have = 0;
	ssize_t n;

	for (;;) {
		if (have < size - 1)
			n = read(fd, buf + have, size - 1 - have);
		else
			n = read(fd, sink, sizeof sink);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0)
			break;
		if (have < size - 1)
			have += (size_t)n;
	}
	buf[have] = '\0';
	return (ssize_t)have;
}

/* The run ended before it began: why goes in res->error. */
static void
worker_error(struct pool_result *res, const char *step, const char *arg)
{
	if (arg != NULL)
		snprintf(res->error, sizeof res->error, "%s %s: %s", step, arg,
		    strerror(errno));
	else
		snprintf(res->error, sizeof res->error, "%s: %s", step,
		    strerror(errno));
}

/* The job's PATH, for the child's execvp: envp's first, else execvp's own
 * default, as when environ was the job's. */
static const char *
worker_path(const struct wmsg_run *run)
{
	size_t i;

	for (i = 0; run->envp[i] != NULL; i++)
		if (strncmp(run->envp[i], "PATH=", 5) == 0)
			return run->envp[i] + 5;
	return "/bin:/usr/bin";
}

/* The argv sh gets for a file exec finds no format in: "/bin/sh", the
 * file (the child fills it in), argv[1..]. In w->sh_argv, grown as
 * needed. 0, or -1 with res->error set. */
static int
worker_sh_argv(struct worker *w, const struct wmsg_run *run,
    struct pool_result *res)
{
	size_t argc = 0, i;
	char **v;

	while (run->argv[argc] != NULL)
		argc++;
	if (argc + 2 > w->sh_size) {
		if ((v = reallocarray(w->sh_argv, argc + 2, sizeof *v)) == NULL) {
			worker_error(res, "malloc", NULL);
			return -1;
		}
		w->sh_argv = v;
		w->sh_size = argc + 2;
	}
	w->sh_argv[0] = w->sh;
	w->sh_argv[1] = NULL;
	for (i = 1; i <= argc; i++)
		w->sh_argv[i + 1] = run->argv[i];
	return 0;
}

/* Creates the pipes, all CLOEXEC, and with a max_result the result file:
 * anonymous and in memory, so that no attempt waits on a file create on
 * disk (a memfd costs about what a pipe does); mode 0777 as every memfd
 * is, so that a job run as another user opens it all the same. The
 * capture files come with the first bytes (worker_stream_open). */
static int
worker_prepare(struct worker_job *job, int tail_errno, int pipes[2][2],
    int errpipe[2], struct pool_result *res)
{
	int i;

	job->out[0].path = job->run->spec.stdout_path;
	job->out[1].path = job->run->spec.stderr_path;
	/* A file system without user extended attributes cannot tell readers
	 * what keep_tail dropped: refused before the run. The files are made
	 * only once the job writes, so the daemon asked the output directory
	 * at its start (capture_xattr_check). */
	if (job->run->spec.keep_tail && tail_errno != 0) {
		errno = tail_errno;
		worker_error(res, "output_keep = tail: setxattr "
		    POOL_DROPPED_XATTR " in state_dir/output", NULL);
		return -1;
	}
	for (i = 0; i < 2; i++) {
		if (pipe2(pipes[i], O_CLOEXEC) == -1) {
			worker_error(res, "pipe", NULL);
			return -1;
		}
	}
	if (pipe2(errpipe, O_CLOEXEC) == -1) {
		worker_error(res, "pipe", NULL);
		return -1;
	}
	if (job->run->spec.max_result > 0 && (job->result =
	    memfd_create("triage-result", MFD_CLOEXEC)) == -1) {
		worker_error(res, "memfd_create", "triage-result");
		return -1;
	}
	return 0;
}

/*
 * The first max_result bytes of the result file into res, however the
 * run ended; none when it is empty (or out of memory: the outcome matters
 * more than its value). What the job put past max_result, by writes or a
 * seek, is never read: result_truncated says there was some.
 */
static void
worker_result_read(const struct worker_job *job, struct pool_result *res)
{
	uint64_t max = job->run->spec.max_result;
	size_t want, got = 0;
	struct stat st;
	char *buf;
	ssize_t n;

	if (job->result == -1 || fstat(job->result, &st) == -1 ||
	    st.st_size <= 0)
		return;
	want = (uint64_t)st.st_size > max ? (size_t)max : (size_t)st.st_size;
	if ((buf = malloc(want + 1)) == NULL)
		return;
	while (got < want) {
		n = pread(job->result, buf + got, want - got, (off_t)got);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	if (got == 0) {
		free(buf);
		return;
	}
	buf[got] = '\0';
	res->result = buf;
	res->result_len = got;
	res->result_truncated = (uint64_t)st.st_size > max;
}

static void
worker_close(int *fd)
{
	if (*fd != -1) {
		close(*fd);
		*fd = -1;
	}
}

/* Writes text to a file of the job's cgroup. 0, or -1 with res->error
 * set; a file the kernel does not have is no error when missing_ok. */
static int
worker_cgroup_set(struct worker_job *job, const char *file, const char *text,
    bool missing_ok, struct pool_result *res)
{
	if (cgroup_write(job->cg, file, text) == 0 ||
	    (missing_ok && errno == ENOENT))
		return 0;
	snprintf(res->error, sizeof res->error, "cgroup %s: %s %s: %s",
	    job->cg_name, file, text, strerror(errno));
	return -1;
}

/* One limit of the job's cgroup, where it has one (value not 0) and the
 * controller is there. */
static int
worker_cgroup_limit(struct worker *w, struct worker_job *job, unsigned ctl,
    const char *file, uint64_t value, struct pool_result *res)
{
	char text[24];

	if (value == 0 || (w->setup.cgroup_ctls & ctl) == 0)
		return 0;
	snprintf(text, sizeof text, "%llu", (unsigned long long)value);
	return worker_cgroup_set(job, file, text, false, res);
}

/*
 * Makes the job's cgroup, ID.ATTEMPT under the jobs' directory, with its
 * limits: memory.max with no swap beyond it (without swap accounting the
 * file is not there, and no swap is charged to the job anyway) and the
 * whole cgroup killed when it runs out, pids.max, cpu.weight. One an
 * earlier run of the same attempt left empty is taken over. 0, or -1 with
 * res->error set.
 */
static int
worker_cgroup_make(struct worker *w, struct worker_job *job,
    struct pool_result *res)
{
	const struct pool_spec *spec = &job->run->spec;
	int dir = w->setup.cgroup_fd;

	cgroups_job_name(spec->job_id, spec->attempt, job->cg_name,
	    sizeof job->cg_name);
	if (mkdirat(dir, job->cg_name, 0755) == -1 && (errno != EEXIST ||
	    unlinkat(dir, job->cg_name, AT_REMOVEDIR) == -1 ||
	    mkdirat(dir, job->cg_name, 0755) == -1)) {
		snprintf(res->error, sizeof res->error, "cgroup %s: mkdir: %s",
		    job->cg_name, strerror(errno));
		job->cg_name[0] = '\0';
		return -1;
	}
	if ((job->cg = cgroup_open(dir, job->cg_name)) == -1 ||
	    (job->cg_events = openat(job->cg, "cgroup.events", O_RDONLY |
	    O_CLOEXEC)) == -1) {
		snprintf(res->error, sizeof res->error, "cgroup %s: open: %s",
		    job->cg_name, strerror(errno));
		return -1;
	}
	if (spec->memory_max != 0 &&
	    (w->setup.cgroup_ctls & CGROUP_MEMORY) != 0 &&
	    (worker_cgroup_limit(w, job, CGROUP_MEMORY, "memory.max",
	    spec->memory_max, res) == -1 ||
	    worker_cgroup_set(job, "memory.swap.max", "0", true, res) == -1 ||
	    worker_cgroup_set(job, "memory.oom.group", "1", false, res) == -1))
		return -1;
	if (worker_cgroup_limit(w, job, CGROUP_PIDS, "pids.max",
	    spec->pids_max, res) == -1 ||
	    worker_cgroup_limit(w, job, CGROUP_CPU, "cpu.weight",
	    spec->cpu_weight, res) == -1)
		return -1;
	return 0;
}

/* What the job's cgroup measured of all its processes, over what the
 * main process's rusage says. */
static void
worker_cgroup_usage(const struct worker *w, const struct worker_job *job,
    struct pool_result *res)
{
	struct cgroup_usage u;

	if (job->cg == -1)
		return;
	cgroup_usage(job->cg, w->setup.cgroup_ctls, &u);
	if (u.user_usec >= 0 && u.system_usec >= 0) {
		res->user_time = (double)u.user_usec / 1e6;
		res->system_time = (double)u.system_usec / 1e6;
	}
	res->peak_memory = u.peak_bytes;
	res->oom = u.oom_kills > 0;
	res->left = job->left;
}

/* The job's cgroup closed and removed (once): empty by now, or left for
 * the daemon to take at its stop or next start. */
static void
worker_cgroup_remove(struct worker *w, struct worker_job *job)
{
	worker_close(&job->cg_events);
	worker_close(&job->cg);
	if (job->cg_name[0] != '\0')
		(void)unlinkat(w->setup.cgroup_fd, job->cg_name, AT_REMOVEDIR);
	job->cg_name[0] = '\0';
}

/* Starts the job child; the write ends are closed here whatever happens.
 * Returns its pid, or -1 with res->error set. */
static pid_t
worker_spawn(struct worker_child *c, int pipes[2][2], int errpipe[2],
    struct pool_result *res)
{
	pid_t pid;

	c->out = pipes[0][1];
	c->err = pipes[1][1];
	c->errpipe = errpipe[1];
	if ((pid = worker_child_spawn(c)) == -1)
		worker_error(res, "clone", NULL);
	worker_close(&pipes[0][1]);
	worker_close(&pipes[1][1]);
	worker_close(&errpipe[1]);
	return pid;
}

/*
 * Runs one job to its end and reports it: STARTED once exec succeeded,
 * then FINISHED (started=false with the reason if it never ran). Returns 0,
 * or -1 when the worker must stop.
 */
static int
worker_run(struct worker *w, const struct wmsg_run *run)
{
	const struct pool_spec *spec = &run->spec;
	struct worker_job job;
	struct worker_child child;
	struct pool_result res;
	struct wmsg_started sm;
	struct worker_groups groups;
	int pipes[2][2] = { { -1, -1 }, { -1, -1 } }, errpipe[2] = { -1, -1 };
	int i, rc = 0;
	ssize_t n;

	memset(&job, 0, sizeof job);
	memset(&res, 0, sizeof res);
	memset(&child, 0, sizeof child);
	res.peak_memory = -1;
	job.run = run;
	job.pid = -1;
	job.cg = job.cg_events = -1;
	job.result = -1;
	for (i = 0; i < 2; i++)
		job.out[i].pipe = job.out[i].file = -1;
	child.run = run;
	child.worker = w->pid;
	child.null = w->null;
	child.path = worker_path(run);
	child.oom_score_adj = w->setup.job_oom_score_adj;

	if (spec->set_creds) {
		if (worker_groups_get(spec->uid, spec->gid, spec->groups_epoch,
		    &groups, res.error, sizeof res.error) == -1)
			goto not_started;
		child.user = groups.user;
		child.groups = groups.groups;
		child.ngroups = groups.n;
	}
	if (worker_sh_argv(w, run, &res) == -1)
		goto not_started;
	child.sh_argv = w->sh_argv;
	if (worker_prepare(&job, w->setup.tail_errno, pipes, errpipe, &res)
	    == -1)
		goto not_started;
	if (spec->cgroup && w->setup.cgroup_fd != -1 &&
	    worker_cgroup_make(w, &job, &res) == -1)
		goto not_started;
	if (job.cg == -1)
		job.flags |= WORKER_JOB_EMPTY;
	child.cgroup_fd = job.cg;
	child.result = job.result;
	for (i = 0; i < 2; i++) {
		job.out[i].pipe = pipes[i][0];	/* the job's now */
		pipes[i][0] = -1;
	}
	if ((job.pid = worker_spawn(&child, pipes, errpipe, &res)) == -1)
		goto not_started;

	n = worker_exec_result(errpipe[0], res.error, sizeof res.error);
	if (n != 0) {
		if (n == -1)
			worker_error(&res, "read", "exec result");
		kill(job.pid, SIGKILL);	/* exited already, or about to */
		while (waitpid(job.pid, NULL, 0) == -1 && errno == EINTR)
			;
		goto not_started;
	}
	worker_close(&errpipe[0]);

	memset(&sm, 0, sizeof sm);
	sm.job_id = spec->job_id;
	sm.pid = job.pid;
	/* Unreaped, the pid is still the job's. Unknown, it is 0: the daemon
	 * then never takes a later process for this one. */
	if (procstat_start_ticks(job.pid, &sm.start_ticks) == -1)
		sm.start_ticks = 0;
	/* A daemon gone by now leaves the job to its worker, as later. */
	if (worker_send(w, WMSG_STARTED, &sm, sizeof sm) == -1 &&
	    (!w->gone || worker_orphan(w, &job) == -1)) {
		worker_kill(&job);
		while (waitpid(job.pid, NULL, 0) == -1 && errno == EINTR)
			;
		rc = -1;
		goto out;
	}
	if (worker_wait(w, &job) == -1) {
		rc = -1;
		goto out;
	}

	res.started = true;
	res.status = job.status;
	res.user_time = (double)job.ru.ru_utime.tv_sec +
	    (double)job.ru.ru_utime.tv_usec / 1e6;
	res.system_time = (double)job.ru.ru_stime.tv_sec +
	    (double)job.ru.ru_stime.tv_usec / 1e6;
	res.max_rss_kb = job.ru.ru_maxrss;	/* KiB on Linux */
	worker_cgroup_usage(w, &job, &res);
	for (i = 0; i < 2; i++) {
		if (spec->keep_tail)
			worker_stream_trim(spec, &job.out[i], true);
		/* a failed close may have lost buffered data: say so */
		if (job.out[i].file != -1 && close(job.out[i].file) == -1)
			job.out[i].truncated = true;
		job.out[i].file = -1;
	}
	res.stdout_bytes = job.out[0].kept;
	res.stderr_bytes = job.out[1].kept;
	res.stdout_truncated = job.out[0].truncated;
	res.lease_ended = job.lease_sig != 0;
	res.stderr_truncated = job.out[1].truncated;
	res.stdout_dropped = job.out[0].dropped;
	res.stderr_dropped = job.out[1].dropped;
	worker_result_read(&job, &res);
	goto send;

not_started:
	res.started = false;
send:
	/* Gone before the end is told: whoever reads the end finds no cgroup
	 * of the job's left behind. */
	worker_cgroup_remove(w, &job);
	if (w->fd != -1 && worker_send_result(w, spec->job_id, &res) == 0 &&
	    worker_send_finished(w, spec->job_id, &res) == 0) {
		/* Told, not yet stored: kept until the daemon's ACK, its
		 * result with it. */
		if (res.started && w->setup.adopt_dir != NULL) {
			worker_unacked_drop(w);
			w->unacked = true;
			w->unacked_id = spec->job_id;
			w->unacked_attempt = spec->attempt;
			w->unacked_at = timefmt_now();
			w->unacked_res = res;
			res.result = NULL;
		}
		goto out;
	}
	rc = -1;
	/* No daemon to tell (it went while the job ran, or just now): the
	 * next one reads the end from the record, and the worker's part is
	 * over. Written before the socket goes, so that a daemon that finds
	 * neither knows the worker is gone. */
	if (w->gone && w->setup.adopt_dir != NULL && res.started)
		(void)endrec_write(w->setup.adopt_dir, spec->job_id,
		    spec->attempt, &res, timefmt_now());
	worker_unlisten(w);
out:
	free(res.result);
	worker_close(&job.result);
	worker_cgroup_remove(w, &job);
	for (i = 0; i < 2; i++) {
		worker_close(&job.out[i].pipe);
		worker_close(&job.out[i].file);
		worker_close(&pipes[i][0]);
		worker_close(&pipes[i][1]);
	}
	worker_close(&errpipe[0]);
	worker_close(&errpipe[1]);
	return rc;
}

/* The daemon may have started with some of 0-2 closed; the job child's
 * dup2s assume they are taken, so fill them with /dev/null. */
static int
worker_stdio(void)
{
	int fd, null;

	for (fd = 0; fd < 3; fd++) {
		if (fcntl(fd, F_GETFD) != -1)
			continue;
		if (errno != EBADF)
			return -1;
		/* the lowest free fd: this one */
		if ((null = open("/dev/null", O_RDWR)) == -1)
			return -1;
		if (null != fd) {
			close(null);
			errno = EBADF;
			return -1;
		}
	}
	return 0;
}

/* Waits for the next RUN. Returns 1 with *run filled, 0 when the daemon is
 * gone, -1 on a broken message or failure. */
static int
worker_next(struct worker *w, struct wmsg_run *run)
{
	struct pollfd pfd[2];
	struct wmsg_hdr hdr;
	char *payload;
	int r, sig;

	for (;;) {
		pfd[0] = (struct pollfd){ .fd = w->fd, .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = w->sfd, .events = POLLIN };
		if (poll(pfd, 2, -1) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (pfd[1].revents != 0) {
			if ((sig = worker_signals(w)) == -1)
				return -1;
			if (sig & WORKER_SIG_TERM) {
				/* The daemon died (the parent-death signal,
				 * without an adopt_dir, when no end is ever
				 * recorded), or it retires this worker:
				 * alive, it stores the last end itself. */
				w->gone = true;
				worker_unacked_drop(w);
				return 0;
			}
		}
		if (pfd[0].revents == 0)
			continue;
		if ((r = worker_recv(w, &hdr, &payload)) != 1)
			return r;
		if (hdr.type == WMSG_ACK) {
			worker_acked(w, payload);
			free(payload);
			continue;
		}
		if (hdr.type == WMSG_SIGNAL || hdr.type == WMSG_LEASE) {
			/* for a job that ended as the daemon sent it */
			free(payload);
			continue;
		}
		if (wmsg_run_decode(run, payload, hdr.len) == -1) {
			free(payload);
			return -1;
		}
		return 1;
	}
}

int
worker_main(int fd, const struct pool_setup *setup)
{
	struct worker *w;
	struct wmsg_run run;
	sigset_t set;
	int r, rc;

	if (worker_stdio() == -1)
		return 1;
	/* SIGCHLD and SIGTERM (the parent-death signal) come in by signalfd,
	 * so that poll sees them with everything else. */
	if (sigemptyset(&set) == -1 || sigaddset(&set, SIGCHLD) == -1 ||
	    sigaddset(&set, SIGTERM) == -1 ||
	    sigprocmask(SIG_BLOCK, &set, NULL) == -1)
		return 1;
	if ((w = calloc(1, sizeof *w)) == NULL)
		return 1;
	w->fd = fd;
	w->lfd = -1;
	w->setup = *setup;
	w->pid = getpid();
	snprintf(w->sh, sizeof w->sh, "/bin/sh");
	if ((w->null = open("/dev/null", O_RDONLY | O_CLOEXEC)) == -1) {
		free(w);
		return 1;
	}
	if ((w->sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK)) == -1) {
		close(w->null);
		free(w);
		return 1;
	}
	/* POOL_RESULT_FD taken for good (by /dev/null): no pipe or result
	 * file of a job is ever made on it, where the job child's dup2 of
	 * the result file would replace it. Taken already, it is the
	 * worker's own for good all the same. */
	if (fcntl(POOL_RESULT_FD, F_GETFD) == -1 &&
	    dup3(w->null, POOL_RESULT_FD, O_CLOEXEC) == -1) {
		close(w->sfd);
		close(w->null);
		free(w);
		return 1;
	}
	for (;;) {
		if (worker_next(w, &run) != 1)
			break;
		r = worker_run(w, &run);
		wmsg_run_clear(&run);
		if (r == -1)
			break;
	}
	rc = w->gone ? 0 : 1;
	if (w->gone)
		worker_record_unacked(w);
	worker_unacked_drop(w);
	if (w->fd != -1)
		close(w->fd);
	close(w->sfd);
	close(w->null);
	free(w->sh_argv);
	worker_groups_clear();
	free(w);
	return rc;
}
