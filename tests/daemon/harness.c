/* harness.c - for the daemon tests: a real triaged on a temp socket and state
 * dir, in its own process group, and helpers to talk to it over the socket. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "cgroup.h"
#include "harness.h"
#include "tpg.h"
#include "proc.h"
#include "tsupport-child.h"
#include "tsupport-clock.h"
#include "tsupport-daemon.h"
#include "tsupport-dir.h"
#include "tsupport-proc.h"

/* Words of TRIAGE_TEST_WRAPPER used at most. */
#define WRAPPER_WORDS 64
/* How long tkill waits for a server to obey its stop_signal. */
#define TSTOP_MS 10000
/* Daemons alive at once in one test binary. */
#define TLIVE_MAX 64
/* A gated job gives up after this many 20 ms naps, over 5 min (run-tests.sh's
 * default limit), so that no lost test leaves a job polling for ever. */
#define GATE_NAPS 15000

/*
 * Every daemon between tdaemon_start and tdaemon_free. A failing assertion
 * longjmps out of the test, past its tdaemon_end, so the harness itself must
 * find what the test left: it prints those daemons' logs, kills their process
 * groups and removes their temp dirs (treap). A fixed array, as the handler
 * of SIGTERM (run-tests.sh's timeout) reads it too.
 */
struct tlive {
	struct tdaemon	*d;
	off_t		 from;		/* the log's size when this test began */
	bool		 of_test;	/* started by the running test */
	bool		 dumped;	/* its log is out for this test */
	bool		 kept;		/* for every test: reaped at exit */
};
static struct tlive tlive[TLIVE_MAX];
/* The test process: its forks must not clean up after it. */
static pid_t towner;
/* Inside a test (between our setup and teardown around it). */
static bool tin_test;
/* At exit: what was kept for every test goes too. */
static bool tin_exit;

const char *
tbin(const char *name)
{
	static char path[PATH_MAX + 64];
	char rel[64];

	/* build/tests/test-x -> build/bin/name (the asan tree likewise) */
	snprintf(rel, sizeof rel, "bin/%.32s", name);
	if (tsupport_proc_beside(rel, 1, path, sizeof path) == -1)
		fail_msg("readlink /proc/self/exe: %s", strerror(errno));
	return path;
}

int
tslow(void)
{
	static int slow;
	const char *s;

	if (slow == 0) {
		s = getenv("TRIAGE_TEST_SLOW");
		slow = s != NULL && atoi(s) > 1 ? atoi(s) : 1;
	}
	return slow;
}

/* TRIAGE_TEST_WRAPPER, NULL when unset or empty. */
static const char *
twrapper(void)
{
	const char *wrapper = getenv("TRIAGE_TEST_WRAPPER");

	return wrapper != NULL && wrapper[strspn(wrapper, " \t\n")] != '\0' ?
	    wrapper : NULL;
}

bool
twrapped(void)
{
	return twrapper() != NULL;
}

/*
 * The command line that runs bin --config conf: through the wrapper when
 * there is one, with TRIAGE_TEST_LAUNCH naming this daemon for its log
 * files (valgrind's %q{TRIAGE_TEST_LAUNCH}): with the pid alone, a pid that
 * comes round again over a long run would overwrite an earlier process's
 * report. All in cmd: a forked child makes one too.
 */
struct tcommand {
	char	 words[1024];	/* the wrapper's, split in place */
	char	 bin[PATH_MAX];
	char	 conf[300];
	char	 name[8];
	char	 opt[9];
	char	 launch[160];	/* TRIAGE_TEST_LAUNCH=... */
	char	*argv[WRAPPER_WORDS + 4];
	bool	 wrapped;	/* argv[0] a name to look up in $PATH */
};

static void
tcommand(struct tcommand *cmd, const char *bin, const char *conf)
{
	const char *wrapper = twrapper();
	char *w, *save = NULL;
	struct timespec ts;
	int n = 0;

	snprintf(cmd->bin, sizeof cmd->bin, "%s", bin);
	snprintf(cmd->conf, sizeof cmd->conf, "%s", conf);
	snprintf(cmd->name, sizeof cmd->name, "triaged");
	snprintf(cmd->opt, sizeof cmd->opt, "--config");
	cmd->wrapped = wrapper != NULL;
	if (cmd->wrapped) {
		snprintf(cmd->words, sizeof cmd->words, "%s", wrapper);
		for (w = strtok_r(cmd->words, " \t\n", &save);
		    w != NULL && n < WRAPPER_WORDS;
		    w = strtok_r(NULL, " \t\n", &save))
			cmd->argv[n++] = w;
		clock_gettime(CLOCK_REALTIME, &ts);
		snprintf(cmd->launch, sizeof cmd->launch,
		    "TRIAGE_TEST_LAUNCH=%s.triaged.%lld.%09ld",
		    program_invocation_short_name, (long long)ts.tv_sec,
		    ts.tv_nsec);
	}
	cmd->argv[n] = n == 0 ? cmd->name : cmd->bin;
	n++;
	cmd->argv[n++] = cmd->opt;
	cmd->argv[n++] = cmd->conf;
	cmd->argv[n] = NULL;
}

void
texec_triaged(const char *conf)
{
	struct tcommand cmd;

	tcommand(&cmd, tbin("triaged"), conf);
	if (cmd.wrapped) {
		putenv(cmd.launch);
		execvp(cmd.argv[0], cmd.argv);
	} else
		execv(cmd.bin, cmd.argv);
	_exit(127);
}

bool
tpid_alive(pid_t pid)
{
	return proc_alive(pid);
}

int64_t
tdeadline(int ms)
{
	return tsupport_clock_ms() + ms;
}

int
tleft_ms(int64_t deadline)
{
	return tsupport_clock_left_ms(deadline);
}

void
tcheck_deadline(int64_t deadline, const char *fmt, ...)
{
	char what[512];
	va_list ap;

	if (tsupport_clock_ms() <= deadline)
		return;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	fail_msg("timed out waiting for %s", what);
}

/* write(2) to stderr, async-signal-safe like the rest of the clean-up path:
 * it also runs from the handler of SIGTERM. */
static void
twrite_err(const char *buf, size_t len)
{
	ssize_t n;

	while (len > 0) {
		if ((n = write(STDERR_FILENO, buf, len)) > 0) {
			buf += n;
			len -= (size_t)n;
		} else if (n == 0 || errno != EINTR)
			return;
	}
}

static void
tputs_err(const char *s)
{
	twrite_err(s, strlen(s));
}

/* Copies d's log from byte from to stderr between banners naming why. */
static void
tlog_copy(const struct tdaemon *d, off_t from, const char *why)
{
	char buf[4096];
	ssize_t n;
	int fd;

	if (d->log[0] == '\0' ||
	    (fd = open(d->log, O_RDONLY | O_CLOEXEC)) == -1)
		return;
	if (from > 0 && lseek(fd, from, SEEK_SET) == -1)
		from = 0;
	while ((n = read(fd, buf, sizeof buf)) == -1 && errno == EINTR)
		continue;
	tputs_err("---- ");
	tputs_err(d->kind[0] != '\0' ? d->kind : "triaged");
	tputs_err(" log (");
	tputs_err(d->log);
	tputs_err(")");
	if (why != NULL) {
		tputs_err(" ");
		tputs_err(why);
	}
	if (n <= 0) {
		tputs_err(": empty ----\n");
		close(fd);
		return;
	}
	tputs_err(" ----\n");
	do {
		if (n > 0)
			twrite_err(buf, (size_t)n);
	} while ((n = read(fd, buf, sizeof buf)) > 0 ||
	    (n == -1 && errno == EINTR));
	tputs_err("---- end of log ----\n");
	close(fd);
}

void
tdaemon_dump_log(const struct tdaemon *d)
{
	tlog_copy(d, 0, NULL);
}

/* n in decimal at p, which has room for it; returns the end. */
static char *
tput_num(char *p, long n)
{
	char digits[24];
	int i = 0;

	do
		digits[i++] = (char)('0' + n % 10);
	while ((n /= 10) > 0);
	while (i > 0)
		*p++ = digits[--i];
	return p;
}

/* /proc/PID/tail (tail "task/" means /proc/PID/task/PID/children) into
 * buf, NUL-terminated; its length, -1 when it cannot be read. Only
 * async-signal-safe calls: the handler of SIGTERM comes here too. */
static ssize_t
tproc_read(pid_t pid, const char *tail, char *buf, size_t size)
{
	char path[96], *p = path;
	ssize_t n, len = 0;
	int fd;

	memcpy(p, "/proc/", 6);
	p = tput_num(p + 6, pid);
	*p++ = '/';
	if (strcmp(tail, "task/") == 0) {
		memcpy(p, "task/", 5);
		p = tput_num(p + 5, pid);
		tail = "/children";
	}
	memcpy(p, tail, strlen(tail) + 1);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	while ((size_t)len < size - 1 &&
	    ((n = read(fd, buf + len, size - 1 - (size_t)len)) > 0 ||
	    (n == -1 && errno == EINTR)))
		if (n > 0)
			len += n;
	close(fd);
	buf[len] = '\0';
	return len;
}

/* The start time of pid (field 22 of /proc/PID/stat, clock ticks since
 * boot), 0 when it is gone. Async-signal-safe. */
static uint64_t
tproc_start_ticks(pid_t pid)
{
	char buf[1024], *p;
	uint64_t ticks = 0;
	int field;

	if (tproc_read(pid, "stat", buf, sizeof buf) <= 0 ||
	    (p = strrchr(buf, ')')) == NULL)
		return 0;
	/* The command name may hold anything: fields 3 on follow its last
	 * ')', one space before each. */
	for (field = 2; field < 22 && *p != '\0'; p++)
		if (*p == ' ')
			field++;
	while (*p >= '0' && *p <= '9')
		ticks = ticks * 10 + (uint64_t)(*p++ - '0');
	return ticks;
}

/*
 * Notes the workers d has now, its children (a triaged forks nothing
 * else), beside those it had before: when d is killed, or stops leaving
 * its jobs to them (shutdown = keep), they live on for the next daemon.
 * Async-signal-safe.
 */
static void
tworkers_note(struct tdaemon *d)
{
	char buf[4096], *p;
	uint64_t ticks;
	pid_t pid;
	int i;

	if (d->pid <= 0 || d->kind[0] != '\0' ||
	    tproc_read(d->pid, "task/", buf, sizeof buf) <= 0)
		return;
	for (p = buf; *p != '\0';) {
		for (pid = 0; *p >= '0' && *p <= '9'; p++)
			pid = pid * 10 + (*p - '0');
		while (*p != '\0' && (*p < '0' || *p > '9'))
			p++;
		if (pid <= 0 || (ticks = tproc_start_ticks(pid)) == 0)
			continue;
		for (i = 0; i < d->nworkers; i++)
			if (d->workers[i] == pid && d->worker_ticks[i] == ticks)
				break;
		if (i < d->nworkers || d->nworkers == HARNESS_WORKERS_MAX)
			continue;
		d->workers[d->nworkers] = pid;
		d->worker_ticks[d->nworkers++] = ticks;
	}
}

/*
 * Kills what is left of the workers noted of d, each only while its pid is
 * still the process noted (its start time). Their jobs follow them (the
 * job's parent-death signal). Async-signal-safe: no scan of /proc by name,
 * which under valgrind is not the workers' own.
 */
static void
tworkers_kill(struct tdaemon *d)
{
	int i;

	for (i = 0; i < d->nworkers; i++)
		if (tproc_start_ticks(d->workers[i]) == d->worker_ticks[i])
			(void)kill(d->workers[i], SIGKILL);
	d->nworkers = 0;
}

/* Kills d's process group and reaps d, and what is left of its workers. A
 * d with a stop_signal gets it first, and the time to end its own
 * processes before the SIGKILL. A triaged is stopped (SIGSTOP) while its
 * workers are noted, so that it forks none unseen before it dies. */
static void
tkill(struct tdaemon *d)
{
	/* tsupport_child_end sends SIGCONT with a stop_signal. */
	if (d->pid > 0 && d->kind[0] == '\0' && kill(d->pid, SIGSTOP) == 0)
		tworkers_note(d);
	tsupport_child_end(d->pid, d->stop_signal, TSTOP_MS);
	d->pid = 0;
	tworkers_kill(d);
}

/*
 * What a daemon killed without its own stop leaves of its cgroups, where
 * it made them beneath the test's own cgroup (cgroups.c): what still runs
 * there killed, the subtree removed, so that the host keeps none.
 */
static void
tcgroup_clear(const struct tdaemon *d)
{
	char mount[PATH_MAX], self[PATH_MAX], name[CGROUP_DAEMON_NAME_MAX];
	char base[2 * PATH_MAX + 64];
	int64_t deadline = tdeadline(HARNESS_TIMEOUT_MS);
	struct dirent *de;
	DIR *jobs;
	int fd;

	if (d->state[0] == '\0' || cgroup_mount_find("/proc/self/mountinfo",
	    mount, sizeof mount) == -1 || cgroup_path_of("/proc/self/cgroup",
	    self, sizeof self) == -1)
		return;
	cgroup_daemon_name(d->state, name, sizeof name);
	snprintf(base, sizeof base, "%s%s/%s", mount, strcmp(self, "/") == 0 ?
	    "" : self, name);
	if ((fd = cgroup_open(AT_FDCWD, base)) == -1)
		return;
	(void)cgroup_kill(fd);
	while (cgroup_populated(fd) == 1 && tleft_ms(deadline) > 0)
		poll(NULL, 0, 10);
	if ((jobs = opendir(strcat(base, "/jobs"))) != NULL) {
		while ((de = readdir(jobs)) != NULL)
			if (de->d_type == DT_DIR && de->d_name[0] != '.')
				(void)unlinkat(dirfd(jobs), de->d_name,
				    AT_REMOVEDIR);
		closedir(jobs);
	}
	(void)unlinkat(fd, "jobs", AT_REMOVEDIR);
	(void)unlinkat(fd, "daemon", AT_REMOVEDIR);
	close(fd);
	*strrchr(base, '/') = '\0';
	if (rmdir(base) == -1 && errno != ENOENT)
		fprintf(stderr, "harness: could not remove %s: %s\n", base,
		    strerror(errno));
}

/* Removes d's dir and all in it (and its cgroups), with SIGTERM, SIGINT and SIGHUP held
 * back until it is done: run-tests.sh's timeout signals our whole group,
 * and the removal finishes its job all the same. Not in a forked child:
 * under make valgrind, a child that exits is one more process checked for
 * leaks, holding the test's memory it cannot reach. Returns 0, or -1 if
 * it did not succeed. */
static int
trm_dir(const struct tdaemon *d)
{
	sigset_t hold, old;
	int rc;

	if (d->dir[0] == '\0')
		return 0;
	tcgroup_clear(d);
	sigemptyset(&hold);
	sigaddset(&hold, SIGTERM);
	sigaddset(&hold, SIGINT);
	sigaddset(&hold, SIGHUP);
	sigprocmask(SIG_BLOCK, &hold, &old);
	rc = tsupport_dir_remove(d->dir, &(struct tsupport_err){ 0 });
	sigprocmask(SIG_SETMASK, &old, NULL);
	return rc == 0 ? 0 : -1;
}

/* Ends the registered daemon in slot i for a test that went wrong: its log
 * unless out already, then kill, rm, free. */
static void
treap(int i, const char *why)
{
	struct tdaemon *d = tlive[i].d;

	tlive[i].d = NULL;
	if (!tlive[i].dumped && !tlive[i].kept)
		tlog_copy(d, tlive[i].from, why);
	tkill(d);
	if (trm_dir(d) == -1)
		fprintf(stderr, "harness: could not remove %s\n", d->dir);
	free(d);
}

/* Prints the logs of every daemon alive, since the test began. */
static void
tdump_all(const char *why)
{
	int i;

	for (i = 0; i < TLIVE_MAX; i++)
		if (tlive[i].d != NULL && !tlive[i].dumped) {
			tlog_copy(tlive[i].d, tlive[i].from, why);
			tlive[i].dumped = true;
		}
}

/* Reaps the daemons the current test started (all when all is set). */
static void
treap_left(bool all, const char *why)
{
	int i;

	for (i = 0; i < TLIVE_MAX; i++)
		if (tlive[i].d != NULL && (all || tlive[i].of_test) &&
		    (!tlive[i].kept || getpid() != towner || tin_exit))
			treap(i, why);
}

static void
tatexit(void)
{
	tin_exit = true;
	if (getpid() == towner)
		treap_left(true, "was still running at exit");
}

/*
 * SIGTERM (run-tests.sh's timeout), SIGINT, SIGHUP: a hung test ends here.
 * Shows what its daemons logged, kills them and removes their dirs, with
 * async-signal-safe calls only, then dies of the signal.
 */
static void
tsignal_cb(int sig)
{
	int i;

	if (getpid() == towner) {
		tputs_err(sig == SIGTERM ? "harness: SIGTERM (a hung test?)" :
		    sig == SIGINT ? "harness: SIGINT" : "harness: SIGHUP");
		tputs_err(": killing the daemons\n");
		for (i = 0; i < TLIVE_MAX; i++) {
			if (tlive[i].d == NULL)
				continue;
			tkill(tlive[i].d);
			if (!tlive[i].dumped)
				tlog_copy(tlive[i].d, tlive[i].from,
				    "when the test was killed");
			(void)trm_dir(tlive[i].d);
			tlive[i].d = NULL;
		}
	}
	signal(sig, SIG_DFL);
	raise(sig);		/* delivered as this handler returns */
}

/* Registers d, from the first one on with the clean-up at exit and on
 * signals. Fails the test, freeing d, when the table is full. */
static void
tlive_add(struct tdaemon *d)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP };
	struct sigaction sa;
	size_t k;
	int i;

	if (towner == 0) {
		towner = getpid();
		atexit(tatexit);
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = tsignal_cb;
		sigemptyset(&sa.sa_mask);
		for (k = 0; k < sizeof sigs / sizeof sigs[0]; k++)
			sigaddset(&sa.sa_mask, sigs[k]);
		for (k = 0; k < sizeof sigs / sizeof sigs[0]; k++)
			sigaction(sigs[k], &sa, NULL);
	}
	for (i = 0; i < TLIVE_MAX && tlive[i].d != NULL; i++)
		continue;
	if (i == TLIVE_MAX) {
		free(d);
		fail_msg("more than %d daemons at once", TLIVE_MAX);
	}
	tlive[i].from = 0;
	tlive[i].of_test = tin_test;
	tlive[i].dumped = false;
	tlive[i].kept = false;
	tlive[i].d = d;
}

void
tdaemon_keep(const struct tdaemon *d)
{
	int i;

	for (i = 0; i < TLIVE_MAX; i++)
		if (tlive[i].d == d) {
			tlive[i].of_test = false;
			tlive[i].kept = true;
		}
}

static void
tlive_remove(const struct tdaemon *d)
{
	int i;

	for (i = 0; i < TLIVE_MAX; i++)
		if (tlive[i].d == d)
			tlive[i].d = NULL;
}

/*
 * cmocka gives no hook around each test, nor says in a teardown whether the
 * test passed. So the harness stands in for cmocka's runner (the exported
 * function the cmocka_run_group_tests macros call, found again with
 * dlsym(RTLD_NEXT)) and puts its own setup, test and teardown around each
 * test. Its teardown, which cmocka runs after a failed test too, knows the
 * test failed when the test function did not return.
 */
struct ttest {
	const char		*name;
	CMUnitTestFunction	 test;
	CMFixtureFunction	 setup;
	CMFixtureFunction	 teardown;
	bool			 returned;
};
static struct ttest *ttests;
static size_t nttests;
static size_t tnext;		/* cmocka runs the tests in array order */
static struct ttest *tcurrent;
/* A test filter skips tests, so the order no longer tells which test
 * runs: then the tests run as they are, cleaned up at exit only. */
static bool tfiltered;

typedef int (*trunner_fn)(const char *, const struct CMUnitTest *const,
    const size_t, CMFixtureFunction, CMFixtureFunction);
typedef void (*tfilter_fn)(const char *);

static void
tfilter(const char *symbol, const char *pattern)
{
	tfilter_fn real = (tfilter_fn)dlsym(RTLD_NEXT, symbol);

	tfiltered = true;
	if (real != NULL)
		real(pattern);
}

void
cmocka_set_test_filter(const char *pattern)
{
	tfilter("cmocka_set_test_filter", pattern);
}

void
cmocka_set_skip_filter(const char *pattern)
{
	tfilter("cmocka_set_skip_filter", pattern);
}

static int
tsetup_cb(void **state)
{
	struct stat st;
	char why[300];
	int i;

	/* A setup that failed left what it started, with no teardown. */
	if (tcurrent != NULL) {
		snprintf(why, sizeof why, "was left by %s, whose setup failed",
		    tcurrent->name);
		treap_left(false, why);
	}
	if (tnext >= nttests)
		fail_msg("harness: more tests run than were given");
	tcurrent = &ttests[tnext++];
	tcurrent->returned = false;
	for (i = 0; i < TLIVE_MAX; i++) {
		if (tlive[i].d == NULL)
			continue;
		tlive[i].from = stat(tlive[i].d->log, &st) == 0 ? st.st_size : 0;
		tlive[i].of_test = false;
		tlive[i].dumped = false;
	}
	tin_test = true;
	return tcurrent->setup != NULL ? tcurrent->setup(state) : 0;
}

static void
ttest_cb(void **state)
{
	struct ttest *t = tcurrent;

	t->test(state);
	t->returned = true;	/* not reached when an assertion fails */
}

static int
tteardown_cb(void **state)
{
	struct ttest *t = tcurrent;
	char why[300];
	int rc = 0;

	if (!t->returned) {
		snprintf(why, sizeof why, "since %s began, which failed",
		    t->name);
		tdump_all(why);
	}
	/* The test's own teardown may still free what its setup started. */
	if (t->teardown != NULL)
		rc = t->teardown(state);
	snprintf(why, sizeof why, "was left running by %s", t->name);
	treap_left(false, why);
	tin_test = false;
	tcurrent = NULL;
	return rc;
}

int
_cmocka_run_group_tests(const char *group_name,
    const struct CMUnitTest *const tests, const size_t num_tests,
    CMFixtureFunction group_setup, CMFixtureFunction group_teardown)
{
	trunner_fn real;
	struct CMUnitTest *wrapped;
	const char *only;
	size_t i, n = 0;
	int rc;

	real = (trunner_fn)dlsym(RTLD_NEXT, "_cmocka_run_group_tests");
	if (real == NULL) {
		fprintf(stderr, "harness: no cmocka runner: %s\n", dlerror());
		return -1;
	}
	if (tfiltered || ttests != NULL)
		return real(group_name, tests, num_tests, group_setup,
		    group_teardown);
	if ((wrapped = calloc(num_tests, sizeof *wrapped)) == NULL ||
	    (ttests = calloc(num_tests, sizeof *ttests)) == NULL) {
		fprintf(stderr, "harness: out of memory\n");
		return -1;
	}
	/* TRIAGE_TEST_ONLY=part runs only the tests whose names have it:
	 * one test again and again, while a race is hunted. */
	only = getenv("TRIAGE_TEST_ONLY");
	for (i = 0; i < num_tests; i++) {
		if (only != NULL && tests[i].name != NULL &&
		    strstr(tests[i].name, only) == NULL)
			continue;
		wrapped[n] = tests[i];
		if (tests[i].name != NULL && tests[i].test_func != NULL) {
			ttests[n] = (struct ttest){ tests[i].name,
			    tests[i].test_func, tests[i].setup_func,
			    tests[i].teardown_func, false };
			wrapped[n].test_func = ttest_cb;
			wrapped[n].setup_func = tsetup_cb;
			wrapped[n].teardown_func = tteardown_cb;
		}
		n++;
	}
	nttests = n;
	rc = real(group_name, wrapped, n, group_setup, group_teardown);
	/* A passing run has ended all its daemons, the shared ones in the
	 * group teardown. */
	treap_left(true, "outlived the tests (a group fixture failed?)");
	free(wrapped);
	free(ttests);
	ttests = NULL;
	tnext = nttests = 0;
	tcurrent = NULL;
	return rc;
}

/* Starts triaged on d's config, as d's user when it has one, its output
 * into log; its pid (the leader of a group of its own). */
static pid_t
tdaemon_spawn(const struct tdaemon *d, const char *log)
{
	static const char *const drop[] = {
		"TRIAGE_SOCKET=", "TRIAGE_CONFIG=", "TRIAGE_TEST_LAUNCH=",
	};
	struct tsupport_child_user user;
	struct tsupport_err err;
	struct tcommand cmd;
	char *const add[] = { cmd.launch };
	struct tsupport_child c = {
		.argv = cmd.argv, .leader = true, .log = log,
		/* Relative paths of a config are the test dir's. */
		.cwd = d->dir,
		/* A test that dies takes its daemon along (and the daemon's
		 * workers follow it): nothing is left running. */
		.deathsig = SIGKILL,
	};
	char **env;
	pid_t pid;

	tcommand(&cmd, d->bin, d->conf);
	c.path = cmd.wrapped ? cmd.argv[0] : cmd.bin;
	c.search = cmd.wrapped;
	if (d->user[0] != '\0') {
		if (tsupport_child_user(d->user, &user, &err) == -1)
			fail_msg("%s", err.msg);
		c.user = &user;
	}
	if ((c.envp = env = tsupport_child_env(drop, sizeof drop /
	    sizeof drop[0], add, cmd.wrapped ? 1 : 0)) == NULL)
		fail_msg("out of memory");
	pid = tsupport_child_spawn(&c, &err);
	free(env);
	if (pid == -1)
		fail_msg("%s", err.msg);
	return pid;
}

/* Starts triaged on d's config and waits until its socket answers. On
 * failure d is left registered, for the test's clean-up. */
static void
tdaemon_launch(struct tdaemon *d)
{
	struct tsupport_err err;

	d->pid = tdaemon_spawn(d, d->log);
	if (tsupport_daemon_ready(d->pid, d->sock, HARNESS_TIMEOUT_MS, &err) ==
	    -1)
		fail_msg("%s", err.msg);
}

int
tdaemon_refused(const struct tdaemon *d, const char *out)
{
	pid_t pid;
	int status;

	assert_int_equal(d->pid, 0);
	pid = tdaemon_spawn(d, out);
	if (tsupport_child_wait(pid, HARNESS_TIMEOUT_MS, NULL) == 0) {
		assert_int_equal(tsupport_child_reap(pid, true, &status), 0);
		return status;
	}
	kill(-pid, SIGKILL);
	(void)tsupport_child_reap(pid, true, NULL);
	fail_msg("triaged did not exit: it started when it should not have");
	return -1;
}

/* A copy of file from to a new file to, with mode. */
static void
tcopy_file(const char *from, const char *to, mode_t mode)
{
	struct stat st;
	int in, out;
	ssize_t n;
	off_t off = 0;

	if ((in = open(from, O_RDONLY | O_CLOEXEC)) == -1 ||
	    fstat(in, &st) == -1)
		fail_msg("%s: %s", from, strerror(errno));
	if ((out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)) ==
	    -1)
		fail_msg("%s: %s", to, strerror(errno));
	while (off < st.st_size)
		if ((n = sendfile(out, in, &off, (size_t)(st.st_size - off))) <= 0)
			fail_msg("copy %s to %s: %s", from, to,
			    n == 0 ? "short file" : strerror(errno));
	close(in);
	if (fchmod(out, mode) == -1 || close(out) == -1)
		fail_msg("%s: %s", to, strerror(errno));
}

struct tdaemon *
tdaemon_start(const char *extra)
{
	return tdaemon_start_as(extra, NULL);
}

bool
tcluster(void)
{
	const char *v = getenv("TRIAGE_TEST_CLUSTER");

	return v != NULL && *v != '\0' && strcmp(v, "0") != 0;
}

/*
 * Under TRIAGE_TEST_CLUSTER, the [cluster] section that makes the daemon a
 * one-node cluster, in a database of its own on the test's own server
 * (started with the first daemon, gone with the test). Not when the test
 * makes clusters of its own.
 */
static void
tcluster_section(struct tdaemon *d, const char *extra)
{
	static struct tpg *pg;
	static unsigned n;
	struct passwd *pw = getpwuid(getuid());
	char name[32], *conninfo;

	if (!tcluster() || (extra != NULL && strstr(extra, "[cluster]")))
		return;
	if (pg == NULL) {
		if ((pg = tpg_start()) == NULL)
			fail_msg("TRIAGE_TEST_CLUSTER is set, but there is no "
			    "PostgreSQL to run");
		/* Every test's daemons use it: it goes at exit. */
		tpg_keep(pg);
	}
	snprintf(name, sizeof name, "solo%u", ++n);
	conninfo = tpg_createdb(pg, name);
	/* The role of the test's user: the daemon may run as another. */
	snprintf(d->cluster, sizeof d->cluster, "\n[cluster]\npostgresql = "
	    "%s user=%s\nnode = " TCLUSTER_NODE "\n", conninfo,
	    pw != NULL ? pw->pw_name : "root");
	free(conninfo);
}

void
tdaemon_rewrite(const struct tdaemon *d, const char *fmt, ...)
{
	struct tsupport_err err;
	va_list ap;
	char *text;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (n == -1)
		fail_msg("out of memory");
	if (tsupport_daemon_conf(d->conf, d->sock, d->state, &err, "%s\n%s",
	    text, d->cluster) == -1)
		fail_msg("%s", err.msg);
	free(text);
}

struct tdaemon *
tdaemon_start_as(const char *extra, const char *user)
{
	struct tdaemon *d = calloc(1, sizeof *d);
	char dir[sizeof d->dir];
	struct passwd *pw = NULL;
	struct tsupport_err err;

	assert_non_null(d);
	/* From here on a failure leaves d to the clean-up (treap), which
	 * skips what is not there yet. */
	tlive_add(d);
	if (tsupport_dir_make(dir, sizeof dir, "/tmp", "triage-test", &err) ==
	    -1)
		fail_msg("%s", err.msg);
	memcpy(d->dir, dir, sizeof d->dir);
	snprintf(d->sock, sizeof d->sock, "%s/sock", d->dir);
	snprintf(d->conf, sizeof d->conf, "%s/triage.conf", d->dir);
	snprintf(d->log, sizeof d->log, "%s/log", d->dir);
	snprintf(d->state, sizeof d->state, "%s/state", d->dir);
	snprintf(d->bin, sizeof d->bin, "%s", tbin("triaged"));
	if (user != NULL) {
		if ((pw = getpwnam(user)) == NULL)
			fail_msg("no user %s", user);
		snprintf(d->user, sizeof d->user, "%s", user);
		snprintf(d->bin, sizeof d->bin, "%s/triaged", d->dir);
		tcopy_file(tbin("triaged"), d->bin, 0755);
		if (chown(d->dir, pw->pw_uid, pw->pw_gid) == -1)
			fail_msg("chown %s: %s", d->dir, strerror(errno));
	}
	tcluster_section(d, extra);
	/* Debug logs, for the failures, unless extra says otherwise (a load
	 * test, whose log would cost the daemon more than its jobs). */
	tdaemon_rewrite(d, "%s%s", extra && strncmp(extra, "log_level", 9) ==
	    0 ? "" : "log_level = debug\n", extra ? extra : "");
	tdaemon_launch(d);
	return d;
}

void
tdaemon_adopt(struct tdaemon *d)
{
	tlive_add(d);
}

void
tdaemon_restart(struct tdaemon *d)
{
	assert_int_equal(d->pid, 0);
	tdaemon_launch(d);
}

void
tdaemon_crash(struct tdaemon *d)
{
	pid_t pid = d->pid;

	assert_true(pid > 0);
	/* Stopped first, so that it forks no worker unnoted. */
	assert_int_equal(kill(pid, SIGSTOP), 0);
	tworkers_note(d);
	assert_int_equal(kill(pid, SIGKILL), 0);
	d->pid = 0;
	assert_int_equal(waitpid(pid, NULL, 0), pid);
}

int
tdaemon_stop(struct tdaemon *d)
{
	struct tsupport_err err;
	int status = 0;

	if (d->pid <= 0)
		return 0;
	/* Under shutdown = keep, its workers outlive it. */
	tworkers_note(d);
	if (tsupport_daemon_stop(d->pid, HARNESS_TIMEOUT_MS, &err) == -1)
		fail_msg("%s", err.msg);
	/* Its workers follow it by themselves: the group is not killed. */
	if (tsupport_child_reap(d->pid, false, &status) == -1)
		fail_msg("waitpid: %s", strerror(errno));
	d->pid = 0;
	/* A test that did not expect this status fails, and the log comes
	 * out then. */
	return status;
}

void
tdaemon_end(struct tdaemon *d, struct triage_client *c)
{
	triage_client_free(c);
	assert_int_equal(tdaemon_stop(d), 0);
	tdaemon_free(d);
}

int
tdaemon_group_teardown(void **state)
{
	struct tdaemon *d = *state;

	assert_int_equal(tdaemon_stop(d), 0);
	tdaemon_free(d);
	return 0;
}

void
tdaemon_free(struct tdaemon *d)
{
	if (d == NULL)
		return;
	tlive_remove(d);
	tkill(d);
	if (trm_dir(d) == -1)
		fprintf(stderr, "harness: could not remove %s\n", d->dir);
	free(d);
}

struct triage_client *
tconnect(const struct tdaemon *d)
{
	char *cause = NULL;
	struct triage_client *c = triage_client_connect(d->sock, &cause);

	if (c == NULL)
		fail_msg("%s", cause);
	return c;
}

static json_t *
tparams(const char *fmt, va_list ap)
{
	json_error_t err;
	json_t *p = json_vpack_ex(&err, 0, fmt, ap);

	if (p == NULL)
		fail_msg("bad test params %s: %s", fmt, err.text);
	return p;
}

json_t *
tcall(struct triage_client *c, const char *method, const char *fmt, ...)
{
	struct triage_error e;
	json_t *params, *res;
	va_list ap;

	va_start(ap, fmt);
	params = tparams(fmt, ap);
	va_end(ap);
	if ((res = triage_client_call(c, method, params, HARNESS_TIMEOUT_MS,
	    &e)) == NULL)
		fail_msg("%s failed: %d %s", method, e.code, e.message);
	return res;
}

int
tcall_error(struct triage_client *c, const char *method, struct triage_error *e,
    const char *fmt, ...)
{
	json_t *params, *res;
	va_list ap;

	va_start(ap, fmt);
	params = tparams(fmt, ap);
	va_end(ap);
	if ((res = triage_client_call(c, method, params, HARNESS_TIMEOUT_MS, e))
	    != NULL) {
		char *s = json_dumps(res, JSON_COMPACT);

		fail_msg("%s succeeded but should not have: %s", method, s);
	}
	return e->code;
}

/* submit with params (stolen): the new job's id. */
static int64_t
tsubmit_params(struct triage_client *c, json_t *params)
{
	struct triage_error e;
	json_t *res;
	int64_t id;

	if ((res = triage_client_call(c, "submit", params, HARNESS_TIMEOUT_MS,
	    &e)) == NULL)
		fail_msg("submit failed: %d %s", e.code, e.message);
	id = json_integer_value(json_object_get(res, "id"));
	json_decref(res);
	assert_true(id > 0);
	return id;
}

int64_t
tsubmit(struct triage_client *c, const char *fmt, ...)
{
	json_t *params;
	va_list ap;

	va_start(ap, fmt);
	params = tparams(fmt, ap);
	va_end(ap);
	return tsubmit_params(c, params);
}

json_t *
twait(struct triage_client *c, int64_t id)
{
	return tcall(c, "wait", "{sI}", "id", (json_int_t)id);
}

const char *
tstate(const json_t *job)
{
	return json_string_value(json_object_get(job, "state"));
}

/* job is in state; job is freed. */
static void
tassert_job_state(json_t *job, int64_t id, const char *state)
{
	if (strcmp(tstate(job), state) != 0)
		fail_msg("job %lld is %s, not %s", (long long)id, tstate(job),
		    state);
	json_decref(job);
}

void
tassert_state(struct triage_client *c, int64_t id, const char *state)
{
	tassert_job_state(tget(c, id), id, state);
}

void
tassert_ends(struct triage_client *c, int64_t id, const char *state)
{
	tassert_job_state(twait(c, id), id, state);
}

void
twait_resource(struct triage_client *c, const char *name, const char *key,
    json_int_t want)
{
	int64_t deadline = tdeadline(HARNESS_TIMEOUT_MS);
	json_t *st;
	json_int_t got;

	for (;;) {
		st = tcall(c, "stats", "{}");
		got = tjint(json_object_get(json_object_get(st, "resources"),
		    name), key);
		json_decref(st);
		if (got == want)
			return;
		tcheck_deadline(deadline, "%s of resource %s to be %lld (it "
		    "is %lld)", key, name, (long long)want, (long long)got);
		usleep(10000);
	}
}

void
twait_pruned(struct triage_client *c, int64_t id)
{
	struct triage_error e;
	int64_t deadline = tdeadline(HARNESS_TIMEOUT_MS);
	json_t *job;

	/* Nothing tells of a pruning: the state is polled. */
	while ((job = triage_client_call(c, "get", json_pack("{sI}", "id",
	    (json_int_t)id), HARNESS_TIMEOUT_MS, &e)) != NULL) {
		json_decref(job);
		tcheck_deadline(deadline, "job %lld to be pruned",
		    (long long)id);
		usleep(10000);
	}
	assert_int_equal(e.code, -32001);
}

json_t *
tnotification(struct triage_client *c)
{
	struct triage_error e;
	json_t *msg, *params;

	if ((msg = triage_client_notification(c, HARNESS_TIMEOUT_MS, &e))
	    == NULL)
		fail_msg("no notification: %s", e.message);
	params = json_incref(json_object_get(msg, "params"));
	json_decref(msg);
	return params;
}

json_t *
tget(struct triage_client *c, int64_t id)
{
	return tcall(c, "get", "{sI}", "id", (json_int_t)id);
}

bool
theld(struct triage_client *c, int64_t id)
{
	json_t *job = tget(c, id);
	bool v = json_is_true(json_object_get(job, "held"));

	json_decref(job);
	return v;
}

json_int_t
tjint(const json_t *job, const char *key)
{
	return json_integer_value(json_object_get(job, key));
}

const char *
tjstr(const json_t *job, const char *key)
{
	return json_string_value(json_object_get(job, key));
}

/* These poll the daemon's state every 10 ms until a deadline 30 s on:
 * waiting for a job, never a fixed sleep standing in for one. */
pid_t
trunning_pid(struct triage_client *c, int64_t id)
{
	int64_t deadline = tsupport_clock_ms() + HARNESS_TIMEOUT_MS;
	json_t *job;
	pid_t pid = 0;

	for (;;) {
		job = tcall(c, "get", "{sI}", "id", (json_int_t)id);
		if (strcmp(tstate(job), "running") == 0)
			pid = (pid_t)tjint(job, "pid");
		json_decref(job);
		if (pid > 0)
			return pid;
		if (tsupport_clock_ms() > deadline)
			fail_msg("job %lld never ran", (long long)id);
		tsupport_clock_sleep_ms(10);
	}
}

pid_t
toutput_pid(struct triage_client *c, int64_t id)
{
	int64_t deadline = tsupport_clock_ms() + HARNESS_TIMEOUT_MS;
	json_t *page;
	pid_t pid;

	for (;;) {
		page = tcall(c, "output", "{sIss}", "id", (json_int_t)id,
		    "stream", "stdout");
		pid = (pid_t)atoi(tjstr(page, "data"));
		json_decref(page);
		if (pid > 0)
			return pid;
		if (tsupport_clock_ms() > deadline)
			fail_msg("job %lld printed no pid", (long long)id);
		tsupport_clock_sleep_ms(10);
	}
}

void
twait_gone(pid_t pid)
{
	int64_t deadline = tsupport_clock_ms() + HARNESS_TIMEOUT_MS;

	while (tpid_alive(pid)) {
		if (tsupport_clock_ms() > deadline)
			fail_msg("process %d is still there", (int)pid);
		tsupport_clock_sleep_ms(1);
	}
}

/* sh polling for the gate's file, for at most GATE_NAPS naps, after which
 * it fails (status 99) saying so. */
const char *
tgate_sh(const struct tdaemon *d, const char *gate)
{
	static char sh[800];

	snprintf(sh, sizeof sh,
	    "n=0; while [ ! -e %s/%s ]; do "
	    "n=$((n + 1)); if [ $n -gt %d ]; then "
	    "echo 'gate %s never opened' >&2; exit 99; fi; "
	    "sleep 0.02; done",
	    d->dir, gate, GATE_NAPS, gate);
	return sh;
}

/* The job that waits for the gate. */
static void
tgate_argv(json_t *params, const struct tdaemon *d, const char *gate,
    bool deaf)
{
	char script[900];

	snprintf(script, sizeof script, "%s%s", deaf ? "trap '' TERM; " : "",
	    tgate_sh(d, gate));
	json_object_set_new(params, "argv", json_pack("[sss]", "sh", "-c",
	    script));
}

int64_t
tsubmit_gated(struct triage_client *c, const struct tdaemon *d,
    const char *gate, bool deaf)
{
	json_t *params = json_object();

	tgate_argv(params, d, gate, deaf);
	return tsubmit_params(c, params);
}

int64_t
tsubmit_gated_with(struct triage_client *c, const struct tdaemon *d,
    const char *gate, const char *fmt, ...)
{
	json_t *params;
	va_list ap;

	va_start(ap, fmt);
	params = tparams(fmt, ap);
	va_end(ap);
	if (!json_is_object(params))
		fail_msg("gated job params %s: not an object", fmt);
	tgate_argv(params, d, gate, false);
	return tsubmit_params(c, params);
}

void
topen_gate(const struct tdaemon *d, const char *gate)
{
	char path[600];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", d->dir, gate);
	if ((f = fopen(path, "w")) == NULL)
		fail_msg("cannot create %s", path);
	fclose(f);
}

pid_t
tppid(pid_t pid)
{
	pid_t ppid;

	return proc_stat(pid, &(char){ 0 }, &ppid, NULL, NULL) == 0 ? ppid : 0;
}

/* The state letter of /proc/PID/stat ('R', 'S', 'T', 'Z'...), 0 if gone. */
static char
tproc_state(pid_t pid)
{
	char st;

	return proc_stat(pid, &st, NULL, NULL, NULL) == 0 ? st : 0;
}

void
tstop(pid_t pid)
{
	int64_t deadline = tdeadline(HARNESS_TIMEOUT_MS);

	assert_int_equal(kill(pid, SIGSTOP), 0);
	/* The signal takes effect when the process next runs. */
	while (tproc_state(pid) != 'T') {
		tcheck_deadline(deadline, "process %d to stop", (int)pid);
		tsupport_clock_sleep_ms(1);
	}
}

bool
tlog_has(const struct tdaemon *d, const char *text)
{
	char *buf = NULL;
	size_t len = 0;
	bool found;
	FILE *f;

	if ((f = fopen(d->log, "r")) == NULL)
		return false;
	if (getdelim(&buf, &len, '\0', f) < 0) {
		free(buf);
		fclose(f);
		return false;
	}
	fclose(f);
	found = strstr(buf, text) != NULL;
	free(buf);
	return found;
}

void
twait_log(const struct tdaemon *d, const char *text)
{
	int64_t deadline = tdeadline(HARNESS_TIMEOUT_MS);

	while (!tlog_has(d, text)) {
		if (tleft_ms(deadline) == 0) {
			tdaemon_dump_log(d);
			fail_msg("the log never said \"%s\"", text);
		}
		tsupport_clock_sleep_ms(10);
	}
}

void
tstorm(const char *sock, const char *prio, int fd)
{
	int64_t deadline = tdeadline(2 * HARNESS_TIMEOUT_MS);
	struct triage_error e;
	struct triage_client *c;
	char *cause, line[32];
	int64_t got;
	json_t *res;
	int out = 0;

	if ((c = triage_client_connect(sock, &cause)) == NULL)
		_exit(0);
	while (tleft_ms(deadline) > 0) {
		while (out < TSTORM_OUT) {
			if (triage_client_send(c, "submit",
			    json_pack("{s[s]ss}", "argv", "true", "priority",
			    prio), &e) < 0)
				_exit(0);
			out++;
		}
		if ((res = triage_client_recv(c, &got, 10000, &e)) == NULL)
			_exit(0);
		out--;
		snprintf(line, sizeof line, "%lld\n",
		    (long long)tjint(res, "id"));
		if (fd != -1 && write(fd, line, strlen(line)) < 0)
			_exit(1);
		json_decref(res);
	}
	_exit(2);
}

/*
 * Runs triaged on conf (its stderr into out) and waits, for 30 s at most
 * (times tslow()), for it to exit, as it must when it refuses to start.
 * Returns its wait status.
 */
int
trun_refused(const char *conf, const char *out)
{
	int status, fd;
	pid_t pid;

	if ((pid = fork()) == 0) {
		fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0 || dup2(fd, 2) < 0)
			_exit(126);
		texec_triaged(conf);
	}
	assert_true(pid > 0);
	if (tsupport_child_wait(pid, 30000 * tslow(), NULL) == 0) {
		assert_int_equal(tsupport_child_reap(pid, false, &status), 0);
		return status;
	}
	assert_int_equal(errno, ETIMEDOUT);
	kill(pid, SIGKILL);
	(void)tsupport_child_reap(pid, false, NULL);
	fail_msg("triaged did not exit: it started when it should not have");
	return -1;
}

void
tremove_dir(const char *dir)
{
	struct tsupport_err err;

	if (tsupport_dir_remove(dir, &err) == -1)
		fail_msg("%s", err.msg);
}

/* The whole of a small file, NUL-terminated, into buf. */
void
tread_text(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd;

	assert_true((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0);
	n = read(fd, buf, size - 1);
	close(fd);
	assert_true(n >= 0);
	buf[n] = '\0';
}

void
twrite_text(const char *path, const char *fmt, ...)
{
	va_list ap;
	FILE *f;

	assert_non_null(f = fopen(path, "w"));
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
}

static int
tcmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double
tpercentile(double *v, size_t n, double p)
{
	size_t i;

	qsort(v, n, sizeof *v, tcmp_double);
	i = (size_t)(p / 100 * (double)n + 0.999999);
	return v[i > 0 ? i - 1 : 0];
}
