/* harness.c - for the daemon tests: a real triaged on a temp socket and state
 * dir, in its own process group, and helpers to talk to it over the socket. */
#include <dlfcn.h>
#include <grp.h>
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
#include <sys/prctl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "tpg.h"
#include "proc.h"

/* Words of TRIAGE_TEST_WRAPPER used at most. */
#define WRAPPER_WORDS 64
/* How many 10 ms naps tkill waits for a server to obey its stop_signal. */
#define TSTOP_NAPS 1000
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
	char self[PATH_MAX];
	ssize_t n;

	/* build/tests/test-x -> build/bin/name (the asan tree likewise) */
	if ((n = readlink("/proc/self/exe", self, sizeof self - 1)) < 0)
		fail_msg("readlink /proc/self/exe: %s", strerror(errno));
	self[n] = '\0';
	*strrchr(self, '/') = '\0';
	*strrchr(self, '/') = '\0';
	snprintf(path, sizeof path, "%s/bin/%.32s", self, name);
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

/* A copy of s for an argv, in a child about to exec: no way back. */
static char *
texec_arg(const char *s)
{
	char *copy = strdup(s);

	if (copy == NULL)
		_exit(127);
	return copy;
}

/* Execs bin --config conf, through the wrapper when there is one. */
static void __attribute__((noreturn))
texec_program(const char *bin, const char *conf)
{
	char *argv[WRAPPER_WORDS + 4], *words, *w, *save = NULL;
	const char *wrapper = twrapper();
	char launch[128];
	struct timespec ts;
	int n = 0;

	if (wrapper != NULL) {
		words = texec_arg(wrapper);
		for (w = strtok_r(words, " \t\n", &save);
		    w != NULL && n < WRAPPER_WORDS;
		    w = strtok_r(NULL, " \t\n", &save))
			argv[n++] = w;
		/*
		 * Names this daemon for the wrapper's log files (valgrind's
		 * %q{TRIAGE_TEST_LAUNCH}): with the pid alone, a pid that
		 * comes round again over a long run would overwrite an
		 * earlier process's report.
		 */
		clock_gettime(CLOCK_REALTIME, &ts);
		snprintf(launch, sizeof launch, "%s.triaged.%lld.%09ld",
		    program_invocation_short_name, (long long)ts.tv_sec,
		    ts.tv_nsec);
		setenv("TRIAGE_TEST_LAUNCH", launch, 1);
	}
	argv[n] = texec_arg(n == 0 ? "triaged" : bin);
	n++;
	argv[n++] = texec_arg("--config");
	argv[n++] = texec_arg(conf);
	argv[n] = NULL;
	if (wrapper != NULL)
		execvp(argv[0], argv);
	else
		execv(bin, argv);
	_exit(127);
}

void
texec_triaged(const char *conf)
{
	texec_program(tbin("triaged"), conf);
}

bool
tpid_alive(pid_t pid)
{
	return proc_alive(pid);
}

static int64_t
tnow_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t
tdeadline(int ms)
{
	return tnow_ms() + ms;
}

int
tleft_ms(int64_t deadline)
{
	int64_t left = deadline - tnow_ms();

	return left > 0 ? (int)(left < INT_MAX ? left : INT_MAX) : 0;
}

void
tcheck_deadline(int64_t deadline, const char *fmt, ...)
{
	char what[512];
	va_list ap;

	if (tnow_ms() <= deadline)
		return;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	fail_msg("timed out waiting for %s", what);
}

static void
tsleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
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

/* Kills d's process group and reaps d. SIGKILL cannot be refused, so the
 * blocking wait ends. A d with a stop_signal gets it first, and the time to
 * end its own processes before the SIGKILL. */
static void
tkill(struct tdaemon *d)
{
	struct timespec nap = { 0, 10 * 1000000 };
	int i;

	if (d->pid <= 0)
		return;
	if (d->stop_signal != 0) {
		kill(d->pid, SIGCONT);
		kill(d->pid, d->stop_signal);
		for (i = 0; i < TSTOP_NAPS; i++) {
			if (waitpid(d->pid, NULL, WNOHANG) == d->pid) {
				d->pid = 0;
				return;
			}
			nanosleep(&nap, NULL);
		}
	}
	kill(-d->pid, SIGKILL);
	while (waitpid(d->pid, NULL, 0) == -1 && errno == EINTR)
		continue;
	d->pid = 0;
}

/* rm -rf of d's dir. Returns 0, or -1 if rm did not succeed. */
static int
trm_dir(const struct tdaemon *d)
{
	pid_t pid;
	int status;

	if (d->dir[0] == '\0')
		return 0;
	if ((pid = fork()) == 0) {
		/* run-tests.sh's timeout signals our whole group: rm finishes
		 * its job all the same. */
		signal(SIGTERM, SIG_IGN);
		signal(SIGINT, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		execl("/bin/rm", "rm", "-rf", "--", d->dir, (char *)NULL);
		_exit(127);
	}
	if (pid == -1)
		return -1;
	while (waitpid(pid, &status, 0) == -1)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
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

void
tbecome(const char *user)
{
	struct passwd *pw = getpwnam(user);

	if (pw == NULL || initgroups(user, pw->pw_gid) == -1 ||
	    setgid(pw->pw_gid) == -1 || setuid(pw->pw_uid) == -1) {
		fprintf(stderr, "harness: cannot become %s: %s\n", user,
		    pw == NULL ? "no such user" : strerror(errno));
		_exit(127);
	}
}

/* Starts triaged on d's config and waits until its socket answers. On
 * failure d is left registered, for the test's clean-up. */
static void
tdaemon_launch(struct tdaemon *d)
{
	struct client *c;
	char *cause = NULL;
	pid_t parent = getpid(), pid;
	int64_t deadline;
	int fd, status;

	if ((pid = fork()) == 0) {
		setpgid(0, 0);
		/* A test that dies takes its daemon along (and the daemon's
		 * workers follow it): nothing is left running. Unless the
		 * test died before the prctl. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		fd = open(d->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
		    0600);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		unsetenv("TRIAGE_SOCKET");
		unsetenv("TRIAGE_CONFIG");
		/* Relative paths of a config are the test dir's. */
		if (chdir(d->dir) != 0)
			_exit(127);
		if (d->user[0] != '\0') {
			tbecome(d->user);
			/* A change of user clears the parent-death signal. */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() != parent)
				_exit(127);
		}
		texec_program(d->bin, d->conf);
	}
	if (pid == -1)
		fail_msg("fork: %s", strerror(errno));
	d->pid = pid;
	setpgid(d->pid, d->pid);

	/* Ready once the socket answers; polled, never a fixed sleep. */
	deadline = tnow_ms() + HARNESS_TIMEOUT_MS;
	for (;;) {
		if (waitpid(d->pid, &status, WNOHANG) == d->pid) {
			d->pid = 0;
			if (WIFEXITED(status))
				fail_msg("triaged exited with status %d before "
				    "it was ready", WEXITSTATUS(status));
			fail_msg("triaged was killed by signal %d before it "
			    "was ready", WTERMSIG(status));
		}
		if ((c = client_connect(d->sock, &cause)) != NULL) {
			client_free(c);
			return;
		}
		free(cause);
		cause = NULL;
		if (tnow_ms() > deadline)
			fail_msg("triaged did not answer on %s", d->sock);
		tsleep_ms(5);
	}
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
	va_list ap;
	FILE *f;

	if ((f = fopen(d->conf, "w")) == NULL)
		fail_msg("cannot rewrite %s: %s", d->conf, strerror(errno));
	fprintf(f, "[daemon]\nsocket = %s\nstate_dir = %s\n", d->sock,
	    d->state);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fprintf(f, "\n%s", d->cluster);
	fclose(f);
}

struct tdaemon *
tdaemon_start_as(const char *extra, const char *user)
{
	struct tdaemon *d = calloc(1, sizeof *d);
	char dir[sizeof d->dir] = "/tmp/triage-test-XXXXXX";
	struct passwd *pw = NULL;

	assert_non_null(d);
	/* From here on a failure leaves d to the clean-up (treap), which
	 * skips what is not there yet. */
	tlive_add(d);
	if (mkdtemp(dir) == NULL)
		fail_msg("mkdtemp: %s", strerror(errno));
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
	assert_int_equal(kill(pid, SIGKILL), 0);
	d->pid = 0;
	assert_int_equal(waitpid(pid, NULL, 0), pid);
}

int
tdaemon_stop(struct tdaemon *d)
{
	int64_t deadline;
	int status = 0;

	if (d->pid <= 0)
		return 0;
	kill(d->pid, SIGTERM);
	deadline = tnow_ms() + HARNESS_TIMEOUT_MS;
	for (;;) {
		if (waitpid(d->pid, &status, WNOHANG) == d->pid) {
			d->pid = 0;
			/* A test that did not expect this status fails,
			 * and the log comes out then. */
			return status;
		}
		if (tnow_ms() > deadline)
			fail_msg("triaged did not stop after SIGTERM");
		tsleep_ms(5);
	}
}

void
tdaemon_end(struct tdaemon *d, struct client *c)
{
	client_free(c);
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

struct client *
tconnect(const struct tdaemon *d)
{
	char *cause = NULL;
	struct client *c = client_connect(d->sock, &cause);

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
tcall(struct client *c, const char *method, const char *fmt, ...)
{
	struct client_error e;
	json_t *params, *res;
	va_list ap;

	va_start(ap, fmt);
	params = tparams(fmt, ap);
	va_end(ap);
	if ((res = client_call(c, method, params, HARNESS_TIMEOUT_MS, &e)) == NULL)
		fail_msg("%s failed: %d %s", method, e.code, e.message);
	return res;
}

int
tcall_error(struct client *c, const char *method, struct client_error *e,
    const char *fmt, ...)
{
	json_t *params, *res;
	va_list ap;

	va_start(ap, fmt);
	params = tparams(fmt, ap);
	va_end(ap);
	if ((res = client_call(c, method, params, HARNESS_TIMEOUT_MS, e)) != NULL) {
		char *s = json_dumps(res, JSON_COMPACT);

		fail_msg("%s succeeded but should not have: %s", method, s);
	}
	return e->code;
}

/* submit with params (stolen): the new job's id. */
static int64_t
tsubmit_params(struct client *c, json_t *params)
{
	struct client_error e;
	json_t *res;
	int64_t id;

	if ((res = client_call(c, "submit", params, HARNESS_TIMEOUT_MS, &e)) == NULL)
		fail_msg("submit failed: %d %s", e.code, e.message);
	id = json_integer_value(json_object_get(res, "id"));
	json_decref(res);
	assert_true(id > 0);
	return id;
}

int64_t
tsubmit(struct client *c, const char *fmt, ...)
{
	json_t *params;
	va_list ap;

	va_start(ap, fmt);
	params = tparams(fmt, ap);
	va_end(ap);
	return tsubmit_params(c, params);
}

json_t *
twait(struct client *c, int64_t id)
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
tassert_state(struct client *c, int64_t id, const char *state)
{
	tassert_job_state(tget(c, id), id, state);
}

void
tassert_ends(struct client *c, int64_t id, const char *state)
{
	tassert_job_state(twait(c, id), id, state);
}

void
twait_pruned(struct client *c, int64_t id)
{
	struct client_error e;
	int64_t deadline = tdeadline(HARNESS_TIMEOUT_MS);
	json_t *job;

	/* Nothing tells of a pruning: the state is polled. */
	while ((job = client_call(c, "get", json_pack("{sI}", "id",
	    (json_int_t)id), HARNESS_TIMEOUT_MS, &e)) != NULL) {
		json_decref(job);
		tcheck_deadline(deadline, "job %lld to be pruned",
		    (long long)id);
		usleep(10000);
	}
	assert_int_equal(e.code, -32001);
}

json_t *
tnotification(struct client *c)
{
	struct client_error e;
	json_t *msg, *params;

	if ((msg = client_notification(c, HARNESS_TIMEOUT_MS, &e)) == NULL)
		fail_msg("no notification: %s", e.message);
	params = json_incref(json_object_get(msg, "params"));
	json_decref(msg);
	return params;
}

json_t *
tget(struct client *c, int64_t id)
{
	return tcall(c, "get", "{sI}", "id", (json_int_t)id);
}

bool
theld(struct client *c, int64_t id)
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
trunning_pid(struct client *c, int64_t id)
{
	int64_t deadline = tnow_ms() + HARNESS_TIMEOUT_MS;
	json_t *job;
	pid_t pid = 0;

	for (;;) {
		job = tcall(c, "get", "{sI}", "id", (json_int_t)id);
		if (strcmp(tstate(job), "running") == 0)
			pid = (pid_t)tjint(job, "pid");
		json_decref(job);
		if (pid > 0)
			return pid;
		if (tnow_ms() > deadline)
			fail_msg("job %lld never ran", (long long)id);
		tsleep_ms(10);
	}
}

pid_t
toutput_pid(struct client *c, int64_t id)
{
	int64_t deadline = tnow_ms() + HARNESS_TIMEOUT_MS;
	json_t *page;
	pid_t pid;

	for (;;) {
		page = tcall(c, "output", "{sIss}", "id", (json_int_t)id,
		    "stream", "stdout");
		pid = (pid_t)atoi(tjstr(page, "data"));
		json_decref(page);
		if (pid > 0)
			return pid;
		if (tnow_ms() > deadline)
			fail_msg("job %lld printed no pid", (long long)id);
		tsleep_ms(10);
	}
}

void
twait_gone(pid_t pid)
{
	int64_t deadline = tnow_ms() + HARNESS_TIMEOUT_MS;

	while (tpid_alive(pid)) {
		if (tnow_ms() > deadline)
			fail_msg("process %d is still there", (int)pid);
		tsleep_ms(1);
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
tsubmit_gated(struct client *c, const struct tdaemon *d, const char *gate,
    bool deaf)
{
	json_t *params = json_object();

	tgate_argv(params, d, gate, deaf);
	return tsubmit_params(c, params);
}

int64_t
tsubmit_gated_with(struct client *c, const struct tdaemon *d,
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
		tsleep_ms(1);
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
		tsleep_ms(10);
	}
}

void
tstorm(const char *sock, const char *prio, int fd)
{
	int64_t deadline = tdeadline(2 * HARNESS_TIMEOUT_MS);
	struct client_error e;
	struct client *c;
	char *cause, line[32];
	int64_t got;
	json_t *res;
	int out = 0;

	if ((c = client_connect(sock, &cause)) == NULL)
		_exit(0);
	while (tleft_ms(deadline) > 0) {
		while (out < TSTORM_OUT) {
			if (client_send(c, "submit", json_pack("{s[s]ss}",
			    "argv", "true", "priority", prio), &e) < 0)
				_exit(0);
			out++;
		}
		if ((res = client_recv(c, &got, 10000, &e)) == NULL)
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
 * (times tslow()), for it to exit, as it must when it refuses to start. Returns its wait
 * status.
 */
int
trun_refused(const char *conf, const char *out)
{
	struct timespec ts = { 0, 10 * 1000000 };
	int status, fd, i;
	pid_t pid, got;

	if ((pid = fork()) == 0) {
		fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0 || dup2(fd, 2) < 0)
			_exit(126);
		texec_triaged(conf);
	}
	assert_true(pid > 0);
	for (i = 0; i < 3000 * tslow(); i++) {
		if ((got = waitpid(pid, &status, WNOHANG)) == pid)
			return status;
		assert_int_equal(got, 0);
		nanosleep(&ts, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	fail_msg("triaged did not exit: it started when it should not have");
	return -1;
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

double
tclock_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6;
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
