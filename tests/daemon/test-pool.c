/* test-pool.c - the worker pool with real workers and real jobs, driven by a
 * bare event_base: capture, errors, environment, signals, deaths, cleanup. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>

#include "loop.h"
#include "pool.h"
#include "proc.h"
#include "wmsg.h"

#define NJOBS		512	/* job ids the fixture records */

#define ARGV(...)	((const char *const []){ __VA_ARGS__, NULL })
#define WAIT_FOR(fx, cond)	LOOP_WAIT_FOR(&(fx)->loop, cond)

/* What the callbacks saw of one job. */
struct tjob {
	int started;		/* calls of each callback */
	int finished;
	int lost;
	int started_seq;	/* when, in the order of all callbacks */
	int finished_seq;
	pid_t pid;
	struct pool_result res;
	char why[512];
	char out[128];		/* its capture files */
	char err[128];
};

struct fx {
	struct loop loop;	/* first (loop_new); dir: captures, scripts */
	struct pool *pool;
	struct tjob jobs[NJOBS];
	int seq;
	int nfinished;		/* finished_cb calls, all jobs */
	int idle;		/* idle_cb calls */
	int errors;		/* error_cb calls */
	/* chained runs: finished_cb starts the next job */
	uint64_t chain_next, chain_last;
};

static const char *const default_env[] = {
	"PATH=/usr/bin:/bin", "LC_ALL=C", NULL
};

static void fx_spec(struct fx *, struct pool_spec *, uint64_t,
    const char *const *);

static struct tjob *
fx_job(struct fx *fx, uint64_t id)
{
	if (id >= NJOBS) {
		loop_bad(&fx->loop, "job id %llu out of range",
		    (unsigned long long)id);
		return NULL;
	}
	return &fx->jobs[id];
}

static void
started_cb(uint64_t id, pid_t pid, uint64_t start_ticks, void *arg)
{
	struct fx *fx = arg;
	struct tjob *j = fx_job(fx, id);

	if (j == NULL)
		return;
	if (j->started || j->finished || j->lost)
		loop_bad(&fx->loop, "job %llu: started out of turn",
		    (unsigned long long)id);
	/* The very process: its start time, read while it is unreaped. */
	if (start_ticks == 0)
		loop_bad(&fx->loop, "job %llu: no start time",
		    (unsigned long long)id);
	j->started++;
	j->started_seq = ++fx->seq;
	j->pid = pid;
}

static void
finished_cb(uint64_t id, const struct pool_result *res, void *arg)
{
	struct fx *fx = arg;
	struct tjob *j = fx_job(fx, id);
	struct pool_spec spec;

	if (j == NULL)
		return;
	if (j->finished || j->lost || res->started != (j->started == 1))
		loop_bad(&fx->loop, "job %llu: finished out of turn",
		    (unsigned long long)id);
	j->finished++;
	fx->nfinished++;
	j->finished_seq = ++fx->seq;
	j->res = *res;
	if (fx->chain_next != 0 && fx->chain_next <= fx->chain_last) {
		/* straight from the callback: the worker is idle again */
		fx_spec(fx, &spec, fx->chain_next, ARGV("true"));
		if (pool_start(fx->pool, &spec) == -1)
			loop_bad(&fx->loop, "chain: pool_start: %s",
			    strerror(errno));
		fx->chain_next++;
	}
}

static void
lost_cb(uint64_t id, const char *why, void *arg)
{
	struct fx *fx = arg;
	struct tjob *j = fx_job(fx, id);

	if (j == NULL)
		return;
	if (j->finished || j->lost)
		loop_bad(&fx->loop, "job %llu: lost out of turn",
		    (unsigned long long)id);
	j->lost++;
	snprintf(j->why, sizeof j->why, "%s", why);
}

static void
idle_cb(void *arg)
{
	struct fx *fx = arg;

	fx->idle++;
}

static void
error_cb(const char *msg, void *arg)
{
	struct fx *fx = arg;

	fx->errors++;
	print_message("# pool: %s\n", msg);
}

static const struct pool_callbacks callbacks = {
	.started_cb = started_cb,
	.finished_cb = finished_cb,
	.lost_cb = lost_cb,
	.idle_cb = idle_cb,
	.error_cb = error_cb,
};

static int
fx_setup_n(void **state, unsigned n)
{
	struct fx *fx;
	char *cause = NULL;

	if ((fx = loop_new(sizeof *fx, "test-pool")) == NULL)
		return -1;
	if ((fx->pool = pool_new(fx->loop.base, n, NULL, &callbacks, fx,
	    &cause)) ==
	    NULL) {
		print_error("pool_new: %s\n", cause ? cause : "?");
		free(cause);
		return -1;
	}
	*state = fx;
	return 0;
}

static int
setup(void **state)
{
	return fx_setup_n(state, 2);
}

static int
setup1(void **state)
{
	return fx_setup_n(state, 1);
}

static int
teardown(void **state)
{
	struct fx *fx = *state;

	pool_free(fx->pool);
	loop_free(fx);
	return 0;
}

/* A spec with the defaults: fixed environment, cwd the temp dir, capture
 * files named after the job, 1 MiB kept per stream. */
static void
fx_spec(struct fx *fx, struct pool_spec *spec, uint64_t id,
    const char *const *argv)
{
	struct tjob *j = &fx->jobs[id];

	snprintf(j->out, sizeof j->out, "%s/%llu.out", fx->loop.dir,
	    (unsigned long long)id);
	snprintf(j->err, sizeof j->err, "%s/%llu.err", fx->loop.dir,
	    (unsigned long long)id);
	memset(spec, 0, sizeof *spec);
	spec->job_id = id;
	spec->argv = argv;
	spec->envp = default_env;
	spec->cwd = fx->loop.dir;
	spec->stdout_path = j->out;
	spec->stderr_path = j->err;
	spec->max_output = 1 << 20;
}

static void
fx_start(struct fx *fx, uint64_t id, const char *const *argv)
{
	struct pool_spec spec;

	fx_spec(fx, &spec, id, argv);
	assert_int_equal(pool_start(fx->pool, &spec), 0);
}

static struct tjob *
fx_wait_end(struct fx *fx, uint64_t id)
{
	struct tjob *j = &fx->jobs[id];

	WAIT_FOR(fx, j->finished || j->lost);
	return j;
}

/* Runs spec to its end: it must finish, not be lost. */
static struct tjob *
fx_run_spec(struct fx *fx, const struct pool_spec *spec)
{
	struct tjob *j;

	assert_int_equal(pool_start(fx->pool, spec), 0);
	j = fx_wait_end(fx, spec->job_id);
	assert_int_equal(j->lost, 0);
	return j;
}

static struct tjob *
fx_run(struct fx *fx, uint64_t id, const char *const *argv)
{
	struct pool_spec spec;

	fx_spec(fx, &spec, id, argv);
	return fx_run_spec(fx, &spec);
}

static void
assert_exit(const struct tjob *j, int code)
{
	assert_true(j->res.started);
	assert_true(WIFEXITED(j->res.status));
	assert_int_equal(WEXITSTATUS(j->res.status), code);
}

/* The whole file, NUL-terminated, allocated. */
static char *
slurp(const char *path)
{
	char *buf;
	size_t len = 0;
	ssize_t n;
	int fd;

	assert_int_not_equal(fd = open(path, O_RDONLY | O_CLOEXEC), -1);
	assert_non_null(buf = malloc(1 << 20));
	while ((n = read(fd, buf + len, (1 << 20) - 1 - len)) > 0)
		len += (size_t)n;
	assert_int_equal(n, 0);
	close(fd);
	buf[len] = '\0';
	return buf;
}

static void
assert_file(const char *path, const char *want)
{
	char *got = slurp(path);

	assert_string_equal(got, want);
	free(got);
}

/* Whether pid ignores sig, from /proc/pid/status. */
static bool
sig_ignored(pid_t pid, int sig)
{
	char path[64], line[256];
	unsigned long long mask = 0;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%ld/status", (long)pid);
	assert_non_null(f = fopen(path, "re"));
	while (fgets(line, sizeof line, f) != NULL)
		if (sscanf(line, "SigIgn: %llx", &mask) == 1)
			break;
	fclose(f);
	return (mask >> (sig - 1)) & 1;
}

/* The process ends (it may still be closing down when the pool reports
 * the run: its pipes close before it turns zombie), or is gone already. */
static void
assert_gone(pid_t pid)
{
	int pidfd;

	if ((pidfd = proc_pidfd(pid)) == -1) {
		assert_int_equal(errno, ESRCH);
		return;
	}
	proc_assert_exits(pidfd);
	assert_false(proc_alive(pid));
}

/* The pid a job wrote to the fifo (loop_fifo). */
static pid_t
fx_fifo_pid(struct fx *fx)
{
	pid_t pid;

	WAIT_FOR(fx, strchr(fx->loop.fifo_buf, '\n') != NULL);
	pid = (pid_t)atol(fx->loop.fifo_buf);
	assert_true(pid > 0);
	return pid;
}

static double
now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- running and reporting ---- */

static void
test_true(void **state)
{
	struct fx *fx = *state;
	struct tjob *j = fx_run(fx, 1, ARGV("true"));

	assert_int_equal(j->started, 1);
	assert_true(j->pid > 0);
	assert_true(j->started_seq < j->finished_seq);
	assert_exit(j, 0);
	assert_string_equal(j->res.error, "");
	assert_int_equal(pool_busy(fx->pool), 0);
	assert_int_equal(pool_size(fx->pool), 2);
}

static void
test_exit_status(void **state)
{
	struct fx *fx = *state;

	assert_exit(fx_run(fx, 1, ARGV("sh", "-c", "exit 3")), 3);
}

static void
test_output_captured(void **state)
{
	struct fx *fx = *state;
	struct pool_spec spec;
	struct stat st;
	struct tjob *j;
	int fd;

	fx_spec(fx, &spec, 1, ARGV("sh", "-c", "echo out; echo err >&2"));
	/* left over from an earlier run: must be truncated */
	assert_int_not_equal(fd = open(spec.stdout_path,
	    O_WRONLY | O_CREAT | O_CLOEXEC, 0644), -1);
	assert_int_equal(write(fd, "stale stale stale\n", 18), 18);
	close(fd);
	j = fx_run_spec(fx, &spec);
	assert_exit(j, 0);
	assert_file(j->out, "out\n");
	assert_file(j->err, "err\n");
	assert_int_equal(j->res.stdout_bytes, 4);
	assert_int_equal(j->res.stderr_bytes, 4);
	assert_false(j->res.stdout_truncated);
	assert_false(j->res.stderr_truncated);
	assert_int_equal(stat(j->err, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	/* the leftover was replaced by a file of the run's own */
	assert_int_equal(stat(j->out, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
}

/* The run is finished when both the process and its output have ended, in
 * either order: here the output first (the other order: the leftover
 * tests below). */
static void
test_output_closed_first(void **state)
{
	struct fx *fx = *state;
	struct tjob *j;

	j = fx_run(fx, 1, ARGV("sh", "-c",
	    "echo bye; exec >&- 2>&-; sleep 0.3; exit 4"));
	assert_exit(j, 4);
	assert_file(j->out, "bye\n");
}

static void
test_truncation(void **state)
{
	struct fx *fx = *state;
	struct pool_spec spec;
	struct stat st;
	struct tjob *j;

	fx_spec(fx, &spec, 1, ARGV("head", "-c", "100000", "/dev/zero"));
	spec.max_output = 1000;
	j = fx_run_spec(fx, &spec);
	/* the rest was read and dropped: head never saw a broken pipe */
	assert_exit(j, 0);
	assert_int_equal(stat(j->out, &st), 0);
	assert_int_equal(st.st_size, 1000);
	assert_int_equal(j->res.stdout_bytes, 1000);
	assert_true(j->res.stdout_truncated);
	assert_false(j->res.stderr_truncated);
	assert_int_equal(j->res.stderr_bytes, 0);
}

static void
test_exec_missing(void **state)
{
	struct fx *fx = *state;
	struct tjob *j = fx_run(fx, 1, ARGV("triage-no-such-command", "x"));

	assert_false(j->res.started);
	assert_int_equal(j->started, 0);
	assert_string_equal(j->res.error,
	    "exec triage-no-such-command: No such file or directory");
	/* the worker is fine and idle */
	assert_int_equal(pool_busy(fx->pool), 0);
	assert_exit(fx_run(fx, 2, ARGV("true")), 0);
}

static void
test_bad_cwd(void **state)
{
	struct fx *fx = *state;
	struct pool_spec spec;
	struct tjob *j;

	fx_spec(fx, &spec, 1, ARGV("true"));
	spec.cwd = "/nonexistent/triage";
	j = fx_run_spec(fx, &spec);
	assert_false(j->res.started);
	assert_string_equal(j->res.error,
	    "chdir /nonexistent/triage: No such file or directory");
}

/* A capture file is made at its stream's first byte, not before the run:
 * one that cannot be made drops what the stream writes, said truncated,
 * and the job runs as it would; a stream without a byte makes none. */
static void
test_bad_output_path(void **state)
{
	struct fx *fx = *state;
	struct pool_spec spec;
	struct tjob *j;

	fx_spec(fx, &spec, 1, ARGV("sh", "-c", "echo out; echo err >&2"));
	spec.stderr_path = "/nonexistent/triage.err";
	j = fx_run_spec(fx, &spec);
	assert_exit(j, 0);
	assert_file(j->out, "out\n");
	assert_int_equal(j->res.stdout_bytes, 4);
	assert_false(j->res.stdout_truncated);
	assert_int_equal(j->res.stderr_bytes, 0);
	assert_true(j->res.stderr_truncated);

	j = fx_run(fx, 2, ARGV("true"));
	assert_exit(j, 0);
	assert_int_equal(access(j->out, F_OK), -1);
	assert_int_equal(access(j->err, F_OK), -1);
	assert_false(j->res.stdout_truncated);
	assert_false(j->res.stderr_truncated);
}

static void
test_env_exact(void **state)
{
	struct fx *fx = *state;
	struct pool_spec spec;
	struct tjob *j;
	static const char *const env[] = {
		"PATH=/usr/bin:/bin", "A=1", "B=two words", "EMPTY=", NULL
	};

	fx_spec(fx, &spec, 1, ARGV("env"));
	spec.envp = env;
	j = fx_run_spec(fx, &spec);
	assert_exit(j, 0);
	assert_file(j->out, "PATH=/usr/bin:/bin\nA=1\nB=two words\nEMPTY=\n");
}

static void
test_path_from_envp(void **state)
{
	struct fx *fx = *state;
	struct pool_spec spec;
	struct tjob *j;
	char bin[128], script[160], path[192];
	const char *env[] = { path, NULL };
	int fd;

	snprintf(bin, sizeof bin, "%s/bin", fx->loop.dir);
	snprintf(script, sizeof script, "%s/triage-test-hello", bin);
	snprintf(path, sizeof path, "PATH=%s:/usr/bin:/bin", bin);
	assert_int_equal(mkdir(bin, 0700), 0);
	assert_int_not_equal(fd = open(script,
	    O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755), -1);
	assert_int_equal(write(fd, "#!/bin/sh\necho hello from $0\n", 29), 29);
	close(fd);
	/* only the job's PATH names bin: the test's own does not */
	assert_null(strstr(getenv("PATH") ? getenv("PATH") : "", bin));

	fx_spec(fx, &spec, 1, ARGV("triage-test-hello"));
	spec.envp = env;
	j = fx_run_spec(fx, &spec);
	assert_exit(j, 0);
	{
		char want[256];

		snprintf(want, sizeof want, "hello from %s\n", script);
		assert_file(j->out, want);
	}

	/* and without it in the job's PATH, it is not found */
	j = fx_run(fx, 2, ARGV("triage-test-hello"));
	assert_false(j->res.started);
	assert_string_equal(j->res.error,
	    "exec triage-test-hello: No such file or directory");
}

/* Writes a file of mode mode at dir/name holding text. */
static void
put_file(const char *dir, const char *name, mode_t mode, const char *text)
{
	char path[256];
	int fd;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	assert_int_not_equal(fd = open(path,
	    O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode), -1);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/* Runs job id, argv, with the environment env; returns it ended. */
static struct tjob *
fx_run_env(struct fx *fx, uint64_t id, const char *const *argv,
    const char *const *env)
{
	struct pool_spec spec;

	fx_spec(fx, &spec, id, argv);
	spec.envp = env;
	return fx_run_spec(fx, &spec);
}

/*
 * The child walks the job's PATH itself (the worker's environ is not the
 * job's), by execvp(3)'s rules: a file it may not execute is passed over
 * for a later one, and named (EACCES) only when nothing else is found; a
 * file of no known format runs by sh; an empty entry is the cwd; no PATH
 * at all is execvp's default.
 */
static void
test_path_walk_like_execvp(void **state)
{
	struct fx *fx = *state;
	struct tjob *j;
	char a[128], b[128], path[300];
	const char *env[] = { path, NULL }, *no_path[] = { "A=1", NULL };

	snprintf(a, sizeof a, "%s/a", fx->loop.dir);
	snprintf(b, sizeof b, "%s/b", fx->loop.dir);
	assert_int_equal(mkdir(a, 0700), 0);
	assert_int_equal(mkdir(b, 0700), 0);
	put_file(a, "triage-t-cmd", 0644, "#!/bin/sh\necho from a\n");
	put_file(b, "triage-t-cmd", 0755, "#!/bin/sh\necho from b\n");
	put_file(a, "triage-t-noexec", 0644, "#!/bin/sh\necho never\n");
	/* no "#!": execve says ENOEXEC, and sh runs it */
	put_file(b, "triage-t-plain", 0755, "echo plain $1\n");
	put_file(fx->loop.dir, "triage-t-here", 0755, "#!/bin/sh\necho here\n");
	snprintf(path, sizeof path, "PATH=%s:/nonexistent:%s:/usr/bin:/bin",
	    a, b);

	j = fx_run_env(fx, 1, ARGV("triage-t-cmd"), env);
	assert_exit(j, 0);
	assert_file(j->out, "from b\n");
	j = fx_run_env(fx, 2, ARGV("triage-t-noexec"), env);
	assert_false(j->res.started);
	assert_string_equal(j->res.error,
	    "exec triage-t-noexec: Permission denied");
	j = fx_run_env(fx, 3, ARGV("triage-t-plain", "arg"), env);
	assert_exit(j, 0);
	assert_file(j->out, "plain arg\n");

	/* the cwd, by an empty entry, and only by one */
	snprintf(path, sizeof path, "PATH=/usr/bin::/bin");
	j = fx_run_env(fx, 4, ARGV("triage-t-here"), env);
	assert_exit(j, 0);
	assert_file(j->out, "here\n");
	snprintf(path, sizeof path, "PATH=/usr/bin:/bin");
	j = fx_run_env(fx, 5, ARGV("triage-t-here"), env);
	assert_false(j->res.started);
	assert_string_equal(j->res.error,
	    "exec triage-t-here: No such file or directory");

	/* no PATH: /bin:/usr/bin, where sh is */
	j = fx_run_env(fx, 6, ARGV("sh", "-c", "echo $A"), no_path);
	assert_exit(j, 0);
	assert_file(j->out, "1\n");
}

static void
test_fds(void **state)
{
	struct fx *fx = *state;
	struct tjob *j;
	char *out;

	/*
	 * ls lists /proc/self/fd through a directory fd of its own, the
	 * lowest free one. With only 0, 1 and 2 inherited that is 3, so the
	 * listing is exactly 0 1 2 3; any fd leaked into the job would show
	 * up, and push ls's own to 4 or above.
	 */
	j = fx_run(fx, 1, ARGV("ls", "/proc/self/fd"));
	assert_exit(j, 0);
	assert_file(j->out, "0\n1\n2\n3\n");

	j = fx_run(fx, 2, ARGV("readlink", "/proc/self/fd/0",
	    "/proc/self/fd/1", "/proc/self/fd/2"));
	assert_exit(j, 0);
	out = slurp(j->out);
	assert_true(strncmp(out, "/dev/null\npipe:[", 16) == 0);
	assert_non_null(strstr(out + 10, "\npipe:["));
	free(out);

	/* stdin gives EOF at once */
	j = fx_run(fx, 3, ARGV("wc", "-c"));
	assert_exit(j, 0);
	assert_file(j->out, "0\n");
}

static void
test_own_session(void **state)
{
	struct fx *fx = *state;
	struct tjob *j;
	char *out, *p, st;
	int ppid, pgrp, sid;

	/* cat is the job's process itself (exec, no shell) */
	j = fx_run(fx, 1, ARGV("cat", "/proc/self/stat"));
	assert_exit(j, 0);
	out = slurp(j->out);
	assert_int_equal(atol(out), j->pid);
	assert_non_null(p = strrchr(out, ')'));
	assert_int_equal(sscanf(p + 1, " %c %d %d %d", &st, &ppid, &pgrp,
	    &sid), 4);
	free(out);
	assert_int_equal(pgrp, j->pid);
	assert_int_equal(sid, j->pid);
	/* its parent is a worker, not the daemon */
	assert_int_not_equal(ppid, getpid());
	assert_int_not_equal(getsid(0), sid);
}

static void
test_rusage(void **state)
{
	struct fx *fx = *state;
	struct tjob *j;

	j = fx_run(fx, 1, ARGV("sh", "-c",
	    "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"));
	assert_exit(j, 0);
	assert_true(j->res.user_time > 0);
	assert_true(j->res.system_time >= 0);
	assert_true(j->res.max_rss_kb > 0);
}

/* ---- signals and process groups ---- */

static void
test_signal_term(void **state)
{
	struct fx *fx = *state;
	struct tjob *j = &fx->jobs[1];

	fx_start(fx, 1, ARGV("sleep", "100"));
	WAIT_FOR(fx, j->started);
	assert_int_equal(pool_busy(fx->pool), 1);
	assert_int_equal(pool_signal(fx->pool, 1, SIGTERM), 0);
	fx_wait_end(fx, 1);
	assert_true(j->res.started);
	assert_true(WIFSIGNALED(j->res.status));
	assert_int_equal(WTERMSIG(j->res.status), SIGTERM);
	assert_int_equal(pool_signal(fx->pool, 1, SIGTERM), -1);
	assert_int_equal(errno, ESRCH);
}

/* A background grandchild, signalled with the job's group. */
static void
test_grandchild_signalled(void **state)
{
	struct fx *fx = *state;
	struct tjob *j = &fx->jobs[1];
	const char *fifo = loop_fifo(&fx->loop);
	pid_t gpid;

	fx_start(fx, 1, ARGV("sh", "-c", "sleep 100 & echo $! >\"$0\"; wait",
	    fifo));
	gpid = fx_fifo_pid(fx);
	WAIT_FOR(fx, j->started);	/* the fifo may come first */
	assert_true(proc_alive(gpid));
	assert_int_equal(pool_signal(fx->pool, 1, SIGTERM), 0);
	fx_wait_end(fx, 1);
	assert_true(WIFSIGNALED(j->res.status));
	assert_int_equal(WTERMSIG(j->res.status), SIGTERM);
	assert_gone(gpid);
}

/* A grandchild that ignores the signal dies when the job's process does:
 * the job is its process group. */
static void
test_grandchild_killed_with_group(void **state)
{
	struct fx *fx = *state;
	struct tjob *j = &fx->jobs[1];
	const char *fifo = loop_fifo(&fx->loop);
	pid_t gpid;

	/* the grandchild tells its pid once it ignores SIGTERM */
	fx_start(fx, 1, ARGV("sh", "-c", "sh -c 'trap \"\" TERM; "
	    "echo $$ >\"$1\"; exec sleep 100' x \"$0\" & wait", fifo));
	gpid = fx_fifo_pid(fx);
	assert_true(sig_ignored(gpid, SIGTERM));
	WAIT_FOR(fx, j->started);
	assert_int_equal(pool_signal(fx->pool, 1, SIGTERM), 0);
	fx_wait_end(fx, 1);
	assert_true(WIFSIGNALED(j->res.status));
	assert_int_equal(WTERMSIG(j->res.status), SIGTERM);
	assert_gone(gpid);
}

/* The job's process exits on its own, leaving a child behind in its group. */
static void
test_leftover_killed(void **state)
{
	struct fx *fx = *state;
	struct tjob *j;
	const char *fifo = loop_fifo(&fx->loop);
	pid_t gpid;

	j = fx_run(fx, 1, ARGV("sh", "-c", "sleep 100 & echo $! >\"$0\"",
	    fifo));
	assert_exit(j, 0);
	gpid = fx_fifo_pid(fx);
	assert_gone(gpid);
}

/* A process that left the group keeps stdout open: the run still ends,
 * WORKER_DRAIN_MS (2 s) after the job's process. */
static void
test_escaped_output_holder(void **state)
{
	struct fx *fx = *state;
	struct tjob *j;
	const char *fifo = loop_fifo(&fx->loop);
	double t0, t;
	pid_t gpid;

	/* sleep is started from inside the new session, and the job's
	 * process waits for that: it has escaped before the group is killed */
	t0 = now_sec();
	j = fx_run(fx, 1, ARGV("sh", "-c", "setsid sh -c "
	    "'sleep 100 & echo $! >\"$1\"' x \"$0\"; echo done", fifo));
	t = now_sec() - t0;
	assert_exit(j, 0);
	assert_file(j->out, "done\n");
	gpid = fx_fifo_pid(fx);
	/* it escaped the group: still there, and ours to clean up */
	assert_true(proc_alive(gpid));
	assert_int_equal(kill(gpid, SIGKILL), 0);
	assert_true(t >= 1.5);
}

/* ---- worker deaths ---- */

static void
test_worker_killed(void **state)
{
	struct fx *fx = *state;
	struct tjob *j = &fx->jobs[1];
	pid_t worker;
	char st, want[64];
	int pidfd;

	fx_start(fx, 1, ARGV("sleep", "100"));
	WAIT_FOR(fx, j->started);
	assert_int_equal(proc_stat(j->pid, &st, &worker, NULL, NULL), 0);
	assert_int_not_equal(pidfd = proc_pidfd(j->pid), -1);
	assert_int_equal(kill(worker, SIGKILL), 0);
	fx_wait_end(fx, 1);
	assert_int_equal(j->lost, 1);
	assert_int_equal(j->finished, 0);
	snprintf(want, sizeof want, "(pid %ld) died: killed by SIGKILL",
	    (long)worker);
	print_message("# lost: %s\n", j->why);
	assert_non_null(strstr(j->why, want));
	proc_assert_exits(pidfd);	/* the job went with its worker */
	assert_false(proc_alive(j->pid));
	assert_int_equal(pool_size(fx->pool), 2);
	assert_int_equal(pool_busy(fx->pool), 0);
	/* reaped: not left a zombie */
	assert_int_equal(proc_stat(worker, &st, NULL, NULL, NULL), -1);
	/* a replacement is already there: both workers take a job */
	fx_start(fx, 2, ARGV("sleep", "0.1"));
	fx_start(fx, 3, ARGV("true"));
	assert_exit(fx_wait_end(fx, 2), 0);
	assert_exit(fx_wait_end(fx, 3), 0);
}

/* A worker killed with a message of the daemon's unread (a lease, stopped
 * as it was) resets its socket rather than closing it: its death is still
 * told by its wait status, not as a socket error of the pool's. */
static void
test_worker_killed_with_a_message_unread(void **state)
{
	struct fx *fx = *state;
	struct tjob *j = &fx->jobs[1];
	pid_t worker;
	char st = 0, want[64];
	int i;

	fx_start(fx, 1, ARGV("sleep", "100"));
	WAIT_FOR(fx, j->started);
	assert_int_equal(proc_stat(j->pid, &st, &worker, NULL, NULL), 0);
	assert_int_equal(kill(worker, SIGSTOP), 0);
	WAIT_FOR(fx, proc_stat(worker, &st, NULL, NULL, NULL) == 0 &&
	    st == 'T');
	assert_int_equal(pool_lease(fx->pool, 1, UINT64_MAX / 2, 1000), 0);
	/* Out of the pool's buffer into the stopped worker's socket. */
	for (i = 0; i < 10; i++)
		event_base_loop(fx->loop.base, EVLOOP_NONBLOCK);
	assert_int_equal(kill(worker, SIGKILL), 0);
	fx_wait_end(fx, 1);
	assert_int_equal(j->lost, 1);
	snprintf(want, sizeof want, "(pid %ld) died: killed by SIGKILL",
	    (long)worker);
	print_message("# lost: %s\n", j->why);
	assert_non_null(strstr(j->why, want));
	assert_int_equal(pool_size(fx->pool), 2);
}

/* A worker that sends garbage is torn down like a dead one. The test
 * writes the garbage through a copy of the worker's own socket. */
static void
test_worker_malformed(void **state)
{
	struct fx *fx = *state;
	struct tjob *j = &fx->jobs[1];
	struct wmsg_hdr hdr = { .type = 99, .len = 4 };
	pid_t worker;
	char st;
	int pidfd, sock, jobfd;

	fx_start(fx, 1, ARGV("sleep", "100"));
	WAIT_FOR(fx, j->started);
	assert_int_equal(proc_stat(j->pid, &st, &worker, NULL, NULL), 0);
	assert_int_not_equal(jobfd = proc_pidfd(j->pid), -1);
	assert_int_not_equal(pidfd = proc_pidfd(worker), -1);
	sock = (int)syscall(SYS_pidfd_getfd, pidfd, 3, 0);
	if (sock == -1) {
		print_message("# pidfd_getfd: %s: skipped\n", strerror(errno));
		close(pidfd);
		close(jobfd);
		skip();
	}
	assert_int_equal(write(sock, &hdr, sizeof hdr), sizeof hdr);
	fx_wait_end(fx, 1);
	close(sock);
	close(pidfd);
	assert_int_equal(j->lost, 1);
	print_message("# lost: %s\n", j->why);
	assert_non_null(strstr(j->why, "was killed: it sent a malformed "
	    "message (type 99, 4 bytes)"));
	proc_assert_exits(jobfd);
	assert_exit(fx_run(fx, 2, ARGV("true")), 0);
}

/* An idle worker that dies right after its start is replaced after the
 * retry delay, and idle_cb says so. */
static void
test_idle_worker_replaced(void **state)
{
	struct fx *fx = *state;
	pid_t kids[8];

	assert_int_equal(proc_find(getpid(), 0, PROC_ANY, kids, 8), 2);
	assert_int_equal(kill(kids[0], SIGKILL), 0);
	WAIT_FOR(fx, fx->idle == 1);
	assert_true(fx->errors >= 1);
	assert_int_equal(pool_busy(fx->pool), 0);
	assert_int_equal(proc_find(getpid(), 0, PROC_ANY, kids, 8), 2);
	fx_start(fx, 1, ARGV("sleep", "0.1"));
	fx_start(fx, 2, ARGV("true"));
	assert_exit(fx_wait_end(fx, 1), 0);
	assert_exit(fx_wait_end(fx, 2), 0);
}

/* ---- load and cleanup ---- */

static void
test_many_jobs_no_zombies(void **state)
{
	struct fx *fx = *state;
	pid_t workers[8], zombies[8];
	uint64_t id;
	int i, nw;

	fx->chain_last = 300;
	fx_start(fx, 1, ARGV("true"));
	fx_start(fx, 2, ARGV("true"));
	fx->chain_next = 3;
	WAIT_FOR(fx, fx->nfinished == 300);
	for (id = 1; id <= 300; id++) {
		assert_int_equal(fx->jobs[id].lost, 0);
		assert_int_equal(fx->jobs[id].finished, 1);
		assert_exit(&fx->jobs[id], 0);
	}
	assert_int_equal(pool_busy(fx->pool), 0);
	assert_int_equal(proc_find(getpid(), 0, PROC_ZOMBIE, zombies, 8), 0);
	nw = proc_find(getpid(), 0, PROC_ANY, workers, 8);
	assert_int_equal(nw, 2);
	for (i = 0; i < nw; i++)
		assert_int_equal(proc_find(workers[i], 0, PROC_ZOMBIE,
		    zombies, 8), 0);
}

static void
test_free_kills_all(void **state)
{
	struct fx *fx = *state;
	const char *fifo = loop_fifo(&fx->loop);
	pid_t workers[8], gpid;
	int i, nw, fd[3];

	fx_start(fx, 1, ARGV("sleep", "100"));
	fx_start(fx, 2, ARGV("sh", "-c", "sleep 100 & echo $! >\"$0\"; wait",
	    fifo));
	WAIT_FOR(fx, fx->jobs[1].started && fx->jobs[2].started);
	gpid = fx_fifo_pid(fx);
	nw = proc_find(getpid(), 0, PROC_ANY, workers, 8);
	assert_int_equal(nw, 2);
	assert_int_not_equal(fd[0] = proc_pidfd(fx->jobs[1].pid), -1);
	assert_int_not_equal(fd[1] = proc_pidfd(fx->jobs[2].pid), -1);
	assert_int_not_equal(fd[2] = proc_pidfd(gpid), -1);

	pool_free(fx->pool);
	fx->pool = NULL;
	/* the workers were reaped before it returned */
	for (i = 0; i < nw; i++)
		assert_int_equal(proc_stat(workers[i], &(char){0}, NULL, NULL,
		    NULL), -1);
	assert_int_equal(proc_find(getpid(), 0, PROC_ANY, workers, 8), 0);
	for (i = 0; i < 3; i++)
		proc_assert_exits(fd[i]);
	assert_false(proc_alive(fx->jobs[1].pid));
	assert_false(proc_alive(fx->jobs[2].pid));
	assert_false(proc_alive(gpid));
}

/*
 * The "daemon" of test_daemon_death, in a child of the test: a pool with one
 * worker running sleep; it reports the job's and the worker's pids on up,
 * then dies (without pool_free) when go closes. Plain code, no cmocka: this
 * is a forked copy of the test. Its wait for the start has the safety timer
 * of WAIT_FOR; an alarm later still ends it if the test never closes go.
 */
static int
daemon_child(struct fx *fx, int up, int go)
{
	struct timeval tv = { LOOP_SAFETY_SEC, 0 };
	struct pool_spec spec;
	pid_t pids[2];
	char *cause = NULL, st, c;

	alarm(2 * LOOP_SAFETY_SEC);	/* never outlive a failed test */
	if (loop_open(&fx->loop) != 0 || (fx->pool = pool_new(fx->loop.base,
	    1, NULL, &callbacks, fx, &cause)) == NULL)
		return 1;
	fx_spec(fx, &spec, 1, ARGV("sleep", "100"));
	if (pool_start(fx->pool, &spec) == -1 ||
	    evtimer_add(fx->loop.safety, &tv) == -1)
		return 1;
	while (!fx->jobs[1].started) {
		if (event_base_loop(fx->loop.base, EVLOOP_ONCE) == -1)
			return 1;
		if (fx->loop.timed_out) {
			fprintf(stderr, "daemon_child: timed out waiting for "
			    "job 1 to start\n");
			return 1;
		}
	}
	evtimer_del(fx->loop.safety);
	pids[0] = fx->jobs[1].pid;
	if (proc_stat(pids[0], &st, &pids[1], NULL, NULL) == -1 ||
	    write(up, pids, sizeof pids) != sizeof pids)
		return 1;
	while (read(go, &c, 1) > 0)
		;
	return 0;
}

/* Workers die with the daemon (their parent-death signal), and their jobs
 * with them. */
static void
test_daemon_death(void **state)
{
	struct fx *fx;
	struct pollfd pfd;
	pid_t daemon, pids[2];
	int up[2], go[2], fd[2], status;

	(void)state;
	assert_non_null(fx = calloc(1, sizeof *fx));
	assert_int_equal(loop_mkdtemp(&fx->loop, "test-pool"), 0);
	assert_int_equal(pipe2(up, O_CLOEXEC), 0);
	assert_int_equal(pipe2(go, O_CLOEXEC), 0);
	/* no pool in this process now: the child is the only one to fork */
	assert_int_not_equal(daemon = fork(), -1);
	if (daemon == 0) {
		close(up[0]);
		close(go[1]);
		_exit(daemon_child(fx, up[1], go[0]));
	}
	close(up[1]);
	close(go[0]);
	/* The child gives up after LOOP_SAFETY_SEC itself, closing up. */
	pfd = (struct pollfd){ .fd = up[0], .events = POLLIN };
	if (poll(&pfd, 1, (LOOP_SAFETY_SEC + 10) * 1000) != 1)
		fail_msg("timed out waiting for the child's pids");
	if (read(up[0], pids, sizeof pids) != sizeof pids)
		fail_msg("the child sent no pids (its job never started?)");
	close(up[0]);
	assert_int_not_equal(fd[0] = proc_pidfd(pids[0]), -1);
	assert_int_not_equal(fd[1] = proc_pidfd(pids[1]), -1);
	close(go[1]);		/* the daemon dies */
	assert_int_equal(waitpid(daemon, &status, 0), daemon);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	proc_assert_exits(fd[1]);	/* the worker */
	proc_assert_exits(fd[0]);	/* its job */
	assert_false(proc_alive(pids[0]));
	loop_free(fx);
}

/* ---- credentials ---- */

static void
test_creds(void **state)
{
	struct fx *fx = *state;
	struct pool_spec spec;
	struct tjob *j;
	char *out, *groups, *tok, *save;

	if (geteuid() != 0) {
		print_message("# not root: set_creds cannot be tested\n");
		skip();
	}
	fx_spec(fx, &spec, 1, ARGV("sh", "-c", "id -u; id -g; id -G"));
	spec.set_creds = true;
	spec.uid = 65534;
	spec.gid = 65534;
	spec.cwd = "/";	/* the temp dir is root's, 0700 */
	j = fx_run_spec(fx, &spec);
	assert_exit(j, 0);
	out = slurp(j->out);
	assert_true(strncmp(out, "65534\n65534\n", 12) == 0);
	groups = out + 12;
	for (tok = strtok_r(groups, " \n", &save); tok != NULL;
	    tok = strtok_r(NULL, " \n", &save))
		assert_string_not_equal(tok, "0");
	free(out);

	/* a uid without a passwd entry: its gid as the only group */
	fx_spec(fx, &spec, 2, ARGV("sh", "-c", "id -u; id -G"));
	spec.set_creds = true;
	spec.uid = 4242;
	spec.gid = 4343;
	spec.cwd = "/";
	j = fx_run_spec(fx, &spec);
	assert_exit(j, 0);
	assert_file(j->out, "4242\n4343\n");

	/* cwd is entered as the job's user: root's 0700 dir is closed */
	fx_spec(fx, &spec, 3, ARGV("true"));
	spec.set_creds = true;
	spec.uid = 65534;
	spec.gid = 65534;
	j = fx_run_spec(fx, &spec);
	assert_false(j->res.started);
	{
		char want[160];

		snprintf(want, sizeof want, "chdir %s: Permission denied",
		    fx->loop.dir);
		assert_string_equal(j->res.error, want);
	}
}

/* ---- API errors ---- */

static void
test_no_idle_worker(void **state)
{
	struct fx *fx = *state;
	struct pool_spec spec;

	fx_start(fx, 1, ARGV("sleep", "100"));
	assert_int_equal(pool_busy(fx->pool), 1);
	assert_int_equal(pool_size(fx->pool), 1);
	fx_spec(fx, &spec, 2, ARGV("true"));
	assert_int_equal(pool_start(fx->pool, &spec), -1);
	assert_int_equal(errno, EAGAIN);
	fx_spec(fx, &spec, 1, ARGV("true"));
	assert_int_equal(pool_start(fx->pool, &spec), -1);
	assert_int_equal(errno, EEXIST);

	WAIT_FOR(fx, fx->jobs[1].started);
	assert_int_equal(pool_signal(fx->pool, 1, SIGKILL), 0);
	fx_wait_end(fx, 1);
	assert_int_equal(WTERMSIG(fx->jobs[1].res.status), SIGKILL);
	assert_exit(fx_run(fx, 2, ARGV("true")), 0);
}

static void
test_signal_unknown(void **state)
{
	struct fx *fx = *state;

	assert_int_equal(pool_signal(fx->pool, 77, SIGTERM), -1);
	assert_int_equal(errno, ESRCH);
	/* handed over, but not started as far as the pool knows: the loop
	 * has not run since */
	fx_start(fx, 1, ARGV("true"));
	assert_int_equal(pool_signal(fx->pool, 1, SIGTERM), -1);
	assert_int_equal(errno, ESRCH);
	fx_wait_end(fx, 1);
	assert_int_equal(pool_signal(fx->pool, 1, SIGTERM), -1);
	assert_int_equal(errno, ESRCH);
	assert_int_equal(pool_signal(fx->pool, 1, 0), -1);
	assert_int_equal(errno, EINVAL);
}

static void
test_bad_spec(void **state)
{
	struct fx *fx = *state;
	struct pool_spec spec;

	fx_spec(fx, &spec, 1, ARGV(NULL));
	assert_int_equal(pool_start(fx->pool, &spec), -1);
	assert_int_equal(errno, EINVAL);
	fx_spec(fx, &spec, 1, ARGV("true"));
	spec.cwd = NULL;
	assert_int_equal(pool_start(fx->pool, &spec), -1);
	assert_int_equal(errno, EINVAL);
	/* nothing was sent: the workers are still idle */
	assert_int_equal(pool_busy(fx->pool), 0);
	assert_exit(fx_run(fx, 2, ARGV("true")), 0);
}

/* ---- resizing ---- */

/* Shrinking never ends a job: a busy worker goes once its job is over;
 * growing gives workers at once; idle surplus ones go at once. */
static void
test_resize(void **state)
{
	struct fx *fx = *state;
	struct pool_spec spec;
	uint64_t id;

	assert_int_equal(pool_resize(fx->pool, 0), -1);
	assert_int_equal(errno, EINVAL);
	fx_start(fx, 1, ARGV("sleep", "100"));
	fx_start(fx, 2, ARGV("sleep", "100"));
	WAIT_FOR(fx, fx->jobs[1].started && fx->jobs[2].started);
	assert_int_equal(pool_resize(fx->pool, 1), 0);
	assert_int_equal(pool_size(fx->pool), 1);
	assert_int_equal(pool_busy(fx->pool), 2);
	fx_spec(fx, &spec, 3, ARGV("true"));
	assert_int_equal(pool_start(fx->pool, &spec), -1);
	assert_int_equal(errno, EAGAIN);
	/* Both jobs run on, and end as they would have. */
	assert_int_equal(pool_signal(fx->pool, 1, SIGTERM), 0);
	assert_int_equal(pool_signal(fx->pool, 2, SIGTERM), 0);
	fx_wait_end(fx, 1);
	fx_wait_end(fx, 2);
	assert_int_equal(fx->jobs[1].lost + fx->jobs[2].lost, 0);
	assert_true(WIFSIGNALED(fx->jobs[1].res.status));
	assert_true(WIFSIGNALED(fx->jobs[2].res.status));
	assert_int_equal(pool_busy(fx->pool), 0);
	/* One worker is left: one job at a time. */
	fx_start(fx, 4, ARGV("sleep", "100"));
	fx_spec(fx, &spec, 5, ARGV("true"));
	assert_int_equal(pool_start(fx->pool, &spec), -1);
	assert_int_equal(errno, EAGAIN);
	WAIT_FOR(fx, fx->jobs[4].started);

	/* Grow to 3, with a job running: two more at once, and idle_cb. */
	fx->idle = 0;
	assert_int_equal(pool_resize(fx->pool, 3), 0);
	assert_int_equal(pool_size(fx->pool), 3);
	WAIT_FOR(fx, fx->idle > 0);
	fx_start(fx, 6, ARGV("sleep", "100"));
	fx_start(fx, 7, ARGV("sleep", "100"));
	WAIT_FOR(fx, fx->jobs[6].started && fx->jobs[7].started);
	assert_int_equal(pool_busy(fx->pool), 3);
	for (id = 4; id <= 7; id++)
		if (id != 5)
			assert_int_equal(pool_signal(fx->pool, id, SIGTERM),
			    0);
	for (id = 4; id <= 7; id++)
		if (id != 5)
			assert_int_equal(fx_wait_end(fx, id)->lost, 0);

	/* Idle surplus goes at once; what is left still works. */
	assert_int_equal(pool_resize(fx->pool, 1), 0);
	assert_int_equal(pool_size(fx->pool), 1);
	assert_exit(fx_run(fx, 8, ARGV("true")), 0);
	fx_start(fx, 9, ARGV("sleep", "100"));
	fx_spec(fx, &spec, 10, ARGV("true"));
	assert_int_equal(pool_start(fx->pool, &spec), -1);
	assert_int_equal(errno, EAGAIN);
	WAIT_FOR(fx, fx->jobs[9].started);
	assert_int_equal(pool_signal(fx->pool, 9, SIGKILL), 0);
	assert_int_equal(fx_wait_end(fx, 9)->lost, 0);
}

#define T(f)	cmocka_unit_test_setup_teardown(f, setup, teardown)
#define T1(f)	cmocka_unit_test_setup_teardown(f, setup1, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_true),
		T(test_exit_status),
		T(test_output_captured),
		T(test_output_closed_first),
		T(test_truncation),
		T(test_exec_missing),
		T(test_bad_cwd),
		T(test_bad_output_path),
		T(test_env_exact),
		T(test_path_from_envp),
		T(test_path_walk_like_execvp),
		T(test_fds),
		T(test_own_session),
		T(test_rusage),
		T(test_signal_term),
		T(test_grandchild_signalled),
		T(test_grandchild_killed_with_group),
		T(test_leftover_killed),
		T(test_escaped_output_holder),
		T(test_worker_killed),
		T(test_worker_killed_with_a_message_unread),
		T(test_worker_malformed),
		T(test_idle_worker_replaced),
		T(test_many_jobs_no_zombies),
		T(test_free_kills_all),
		cmocka_unit_test(test_daemon_death),
		T(test_creds),
		T1(test_no_idle_worker),
		T(test_signal_unknown),
		T(test_bad_spec),
		T(test_resize),
	};

	/* the pool's contract: a dead worker's socket is an error, not a
	 * signal */
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
