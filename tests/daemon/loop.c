/* loop.c - for the daemon tests that drive parts of the daemon on a bare
 * event_base: a temp dir, a wait with a deadline, a fifo, jobs to run. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>

#include "job.h"
#include "loop.h"
#include "tsupport-dir.h"

static void
loop_safety_cb(evutil_socket_t fd, short what, void *arg)
{
	struct loop *l = arg;

	(void)fd;
	(void)what;
	l->timed_out = true;
	event_base_loopbreak(l->base);
}

void *
loop_new(size_t size, const char *name)
{
	struct loop *l;

	assert_true(size >= sizeof *l);
	if ((l = calloc(1, size)) == NULL)
		return NULL;
	if (loop_mkdtemp(l, name) != 0 || loop_open(l) != 0) {
		loop_free(l);
		return NULL;
	}
	return l;
}

int
loop_mkdtemp(struct loop *l, const char *name)
{
	l->fifo_fd = -1;
	snprintf(l->dir, sizeof l->dir, "/tmp/%s.XXXXXX", name);
	if (mkdtemp(l->dir) == NULL) {
		l->dir[0] = '\0';
		return -1;
	}
	return 0;
}

int
loop_open(struct loop *l)
{
	if ((l->base = event_base_new()) == NULL ||
	    (l->safety = evtimer_new(l->base, loop_safety_cb, l)) == NULL)
		return -1;
	return 0;
}

void
loop_free(void *fixture)
{
	struct loop *l = fixture;
	struct tsupport_err err;

	if (l->fifo_ev != NULL)
		event_free(l->fifo_ev);
	if (l->fifo_fd != -1)
		close(l->fifo_fd);
	if (l->safety != NULL)
		event_free(l->safety);
	if (l->base != NULL)
		event_base_free(l->base);
	if (l->dir[0] != '\0')
		(void)tsupport_dir_remove(l->dir, &err);
	free(l);
}

void
loop_bad(struct loop *l, const char *fmt, ...)
{
	va_list ap;

	if (l->bad[0] != '\0')
		return;
	va_start(ap, fmt);
	vsnprintf(l->bad, sizeof l->bad, fmt, ap);
	va_end(ap);
}

bool
loop_failing(struct loop *l)
{
	if (l->bad[0] == '\0' && !l->timed_out)
		return false;
	if (l->fail_cb != NULL)
		l->fail_cb(l->fail_arg);
	return true;
}

static void
loop_fifo_cb(evutil_socket_t fd, short what, void *arg)
{
	struct loop *l = arg;
	ssize_t n;

	(void)what;
	n = read(fd, l->fifo_buf + l->fifo_len,
	    sizeof l->fifo_buf - 1 - l->fifo_len);
	if (n > 0) {
		l->fifo_len += (size_t)n;
		l->fifo_buf[l->fifo_len] = '\0';
	} else if (n == 0)
		event_del(l->fifo_ev);	/* the writer is done */
}

const char *
loop_fifo(struct loop *l)
{
	snprintf(l->fifo_path, sizeof l->fifo_path, "%s/fifo", l->dir);
	assert_int_equal(mkfifo(l->fifo_path, 0600), 0);
	/* O_NONBLOCK: opening needs no writer; none yet is no event */
	assert_int_not_equal(l->fifo_fd = open(l->fifo_path,
	    O_RDONLY | O_NONBLOCK | O_CLOEXEC), -1);
	assert_non_null(l->fifo_ev = event_new(l->base, l->fifo_fd,
	    EV_READ | EV_PERSIST, loop_fifo_cb, l));
	assert_int_equal(event_add(l->fifo_ev, NULL), 0);
	return l->fifo_path;
}

char **
loop_strv(const char *const *v)
{
	size_t n = 0, i;
	char **copy;

	while (v[n] != NULL)
		n++;
	assert_non_null(copy = calloc(n + 1, sizeof *copy));
	for (i = 0; i < n; i++)
		assert_non_null(copy[i] = strdup(v[i]));
	return copy;
}

struct job *
loop_job(const struct loop *l, const char *const *argv, const char *priority)
{
	static const char *const env[] = {
		"PATH=/usr/bin:/bin", "LC_ALL=C", NULL
	};
	struct job *job;

	assert_non_null(job = job_new());
	assert_int_equal(job_set_argv(job, loop_strv(argv)), 0);
	assert_int_equal(job_set_env(job, loop_strv(env)), 0);
	assert_int_equal(job_set_cwd(job, l->dir), 0);
	assert_non_null(job_extra_edit(job)->name = strdup("test"));
	assert_int_equal(job_set_priority(job, priority), 0);
	job->uid = getuid();
	job->gid = getgid();
	return job;
}
