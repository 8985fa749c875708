/* test-procstat.c - procstat_read on live, zombie and gone processes, and on
 * a command name made to look like the fields that follow it; what
 * procstat_usage says of the test itself; procstat_kill, by pidfd or by a
 * pid whose start time still matches. */
#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "procstat.h"

/* A child that sets its command name to name, tells the parent through a
 * pipe, then waits to be killed. */
static pid_t
spawn_named(const char *name)
{
	int p[2];
	pid_t pid;
	char c;

	assert_int_equal(pipe(p), 0);
	assert_true((pid = fork()) >= 0);
	if (pid == 0) {
		close(p[0]);
		if (prctl(PR_SET_NAME, name) == -1 || write(p[1], "x", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(p[1]);
	assert_int_equal(read(p[0], &c, 1), 1);
	close(p[0]);
	return pid;
}

static void
test_self_runs(void **state)
{
	uint64_t a, b;
	char st;

	(void)state;
	assert_int_equal(procstat_read(getpid(), &st, &a), 0);
	assert_int_equal(st, 'R');
	assert_true(a > 0);
	assert_int_equal(procstat_start_ticks(getpid(), &b), 0);
	assert_true(a == b);
}

/* The name holds ") Z 1 2" so that a parser stopping at the first ')'
 * would read a zombie; the start time must come out the same after the
 * process ends, as a zombie, and no process must be found once reaped. */
static void
test_zombie_then_gone(void **state)
{
	uint64_t alive, dead;
	siginfo_t info;
	pid_t pid;
	char st;

	(void)state;
	pid = spawn_named("a) Z 1 2 3 4");
	assert_int_equal(procstat_read(pid, &st, &alive), 0);
	assert_int_equal(st == 'S' || st == 'R', 1);
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT), 0);
	assert_int_equal(procstat_read(pid, &st, &dead), 0);
	assert_int_equal(st, 'Z');
	assert_true(alive == dead);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	errno = 0;
	assert_int_equal(procstat_read(pid, &st, &dead), -1);
	assert_int_equal(errno, ENOENT);
}

/* Killed, or not: whether the child pid was ended by SIGKILL, waiting for
 * it when so (a signal that is sent is delivered before kill returns, to
 * a child that is not blocking it, but its death comes later). */
static bool
killed(pid_t pid, bool wait)
{
	siginfo_t info;

	memset(&info, 0, sizeof info);
	assert_int_equal(waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT |
	    (wait ? 0 : WNOHANG)), 0);
	return info.si_pid == pid && info.si_code == CLD_KILLED &&
	    info.si_status == SIGKILL;
}

/* Without a pidfd, the pid is signalled only while its start time is the
 * one given: another, or none known, sends nothing (ESRCH). With one, the
 * pidfd alone says who. */
static void
test_kill(void **state)
{
	uint64_t ticks;
	pid_t pid;
	int fd;

	(void)state;
	pid = spawn_named("victim");
	assert_int_equal(procstat_start_ticks(pid, &ticks), 0);
	errno = 0;
	assert_int_equal(procstat_kill(pid, -1, ticks + 1, SIGKILL), -1);
	assert_int_equal(errno, ESRCH);
	assert_int_equal(procstat_kill(pid, -1, 0, SIGKILL), -1);
	assert_int_equal(errno, ESRCH);
	assert_false(killed(pid, false));
	assert_int_equal(procstat_kill(pid, -1, ticks, SIGKILL), 0);
	assert_true(killed(pid, true));
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	/* Reaped: gone, whatever its start time was. */
	assert_int_equal(procstat_kill(pid, -1, ticks, SIGKILL), -1);
	assert_int_equal(errno, ESRCH);

	/* Where pidfd_open is to be had (not under valgrind). */
	pid = spawn_named("victim");
	if ((fd = (int)pidfd_open(pid, 0)) == -1) {
		assert_int_equal(errno, ENOSYS);
		assert_int_equal(kill(pid, SIGKILL), 0);
	} else {
		assert_int_equal(procstat_kill(pid, fd, 0, SIGKILL), 0);
		close(fd);
	}
	assert_true(killed(pid, true));
	assert_int_equal(waitpid(pid, NULL, 0), pid);
}

/* The figures move as the process does: descriptors it opens, CPU it
 * burns; its start is now or a little before. */
static void
test_usage_of_self(void **state)
{
	struct procstat_usage a, b;
	struct rlimit rl;
	struct timespec t0, t;
	volatile unsigned long spin = 0;
	int p[2];

	(void)state;
	assert_int_equal(procstat_usage(&a), 0);
	assert_true(a.resident_bytes > 0);
	assert_true(a.virtual_bytes >= a.resident_bytes);
	assert_true(a.start_time <= (double)time(NULL) + 1);
	assert_true(a.start_time > (double)time(NULL) - 600);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	assert_int_equal(a.max_fds, rl.rlim_cur);
	assert_true(a.open_fds >= 3);

	assert_int_equal(pipe(p), 0);
	/* A tenth of a second of CPU, as the process's own clock counts. */
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	do {
		spin++;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000L +
	    (t.tv_nsec - t0.tv_nsec) < 100000000L);
	assert_int_equal(procstat_usage(&b), 0);
	close(p[0]);
	close(p[1]);
	assert_int_equal(b.open_fds, a.open_fds + 2);
	assert_true(b.cpu_seconds >= a.cpu_seconds + 0.05);
	assert_true(b.start_time == a.start_time);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_self_runs),
		cmocka_unit_test(test_usage_of_self),
		cmocka_unit_test(test_zombie_then_gone),
		cmocka_unit_test(test_kill),
	};

	return cmocka_run_group_tests_name("procstat", tests, NULL, NULL);
}
