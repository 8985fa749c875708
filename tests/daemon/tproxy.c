/* tproxy.c - for the cluster's tests: a forwarding proxy in front of the
 * tests' PostgreSQL, which a test cuts (a network split) and heals. */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "tproxy.h"

#define TPROXY_CONNS 64

struct tproxy {
	pid_t pid;
	int ctl;			/* 'c'ut or 'h'eal, answered 'k' */
	int port;
	char dir[64];
};

/* A connection through the proxy: the client's end and the server's. */
struct tproxy_conn {
	int fd[2];
	bool frozen;			/* held by a cut, for ever */
};

static int
tproxy_unix(const char *dir, int port, bool listening)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd;

	snprintf(sun.sun_path, sizeof sun.sun_path, "%s/.s.PGSQL.%d", dir,
	    port);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	if (listening ? bind(fd, (struct sockaddr *)&sun, sizeof sun) == 0 &&
	    listen(fd, 64) == 0 :
	    connect(fd, (struct sockaddr *)&sun, sizeof sun) == 0)
		return fd;
	close(fd);
	return -1;
}

static bool
tproxy_write_all(int fd, const char *buf, size_t n)
{
	ssize_t w;

	while (n > 0) {
		if ((w = write(fd, buf, n)) == -1 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		buf += w;
		n -= (size_t)w;
	}
	return true;
}

/* The proxy's process: never returns. */
static void
tproxy_run(int ctl, int lfd, const char *server_dir, int port)
{
	struct tproxy_conn conns[TPROXY_CONNS], *c;
	struct pollfd pfd[2 + 2 * TPROXY_CONNS];
	int who[2 + 2 * TPROXY_CONNS];
	size_t nconns = 0, n, i;
	bool cut = false;
	char buf[65536], cmd;
	ssize_t r;
	int fd, from;

	for (;;) {
		n = 0;
		pfd[n++] = (struct pollfd){ .fd = ctl, .events = POLLIN };
		if (!cut && nconns < TPROXY_CONNS)
			pfd[n++] = (struct pollfd){ .fd = lfd, .events = POLLIN };
		for (i = 0; i < nconns && !cut; i++) {
			if (conns[i].frozen)
				continue;
			who[n] = (int)i * 2;
			pfd[n++] = (struct pollfd){ .fd = conns[i].fd[0],
			    .events = POLLIN };
			who[n] = (int)i * 2 + 1;
			pfd[n++] = (struct pollfd){ .fd = conns[i].fd[1],
			    .events = POLLIN };
		}
		if (poll(pfd, n, -1) == -1) {
			if (errno == EINTR)
				continue;
			_exit(1);
		}
		if (pfd[0].revents != 0) {
			if (read(ctl, &cmd, 1) != 1)
				_exit(0);	/* the test is gone */
			cut = cmd == 'c';
			for (i = 0; i < nconns && cut; i++)
				conns[i].frozen = true;
			if (write(ctl, "k", 1) != 1)
				_exit(0);
			continue;
		}
		for (i = 1; i < n; i++) {
			if (pfd[i].revents == 0)
				continue;
			if (pfd[i].fd == lfd) {
				if ((fd = accept4(lfd, NULL, NULL,
				    SOCK_CLOEXEC)) == -1)
					continue;
				conns[nconns].fd[0] = fd;
				conns[nconns].frozen = false;
				if ((conns[nconns].fd[1] = tproxy_unix(
				    server_dir, port, false)) == -1) {
					close(fd);
					continue;
				}
				nconns++;
				continue;
			}
			c = &conns[who[i] / 2];
			from = who[i] % 2;

			if (c->fd[0] == -1)
				continue;	/* closed this round */
			r = read(c->fd[from], buf, sizeof buf);
			if (r > 0 && tproxy_write_all(c->fd[!from], buf,
			    (size_t)r))
				continue;
			close(c->fd[0]);
			close(c->fd[1]);
			c->fd[0] = c->fd[1] = -1;
		}
		/* The closed ones go, the rest keep their order. */
		for (i = n = 0; i < nconns; i++)
			if (conns[i].fd[0] != -1)
				conns[n++] = conns[i];
		nconns = n;
	}
}

struct tproxy *
tproxy_start(const char *server_dir, int port)
{
	struct tproxy *p;
	int sv[2], lfd;

	assert_non_null(p = calloc(1, sizeof *p));
	snprintf(p->dir, sizeof p->dir, "/tmp/tproxy.XXXXXX");
	assert_non_null(mkdtemp(p->dir));
	assert_int_not_equal(lfd = tproxy_unix(p->dir, port, true), -1);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
	    sv), 0);
	assert_int_not_equal(p->pid = fork(), -1);
	if (p->pid == 0) {
		close(sv[0]);
		signal(SIGPIPE, SIG_IGN);
		tproxy_run(sv[1], lfd, server_dir, port);
	}
	close(sv[1]);
	close(lfd);
	p->ctl = sv[0];
	p->port = port;
	return p;
}

const char *
tproxy_dir(const struct tproxy *p)
{
	return p->dir;
}

static void
tproxy_tell(struct tproxy *p, char cmd)
{
	char ok;

	assert_int_equal(write(p->ctl, &cmd, 1), 1);
	assert_int_equal(read(p->ctl, &ok, 1), 1);
}

void
tproxy_cut(struct tproxy *p)
{
	tproxy_tell(p, 'c');
}

void
tproxy_heal(struct tproxy *p)
{
	tproxy_tell(p, 'h');
}

void
tproxy_free(struct tproxy *p)
{
	char path[128];

	if (p == NULL)
		return;
	close(p->ctl);
	kill(p->pid, SIGKILL);
	waitpid(p->pid, NULL, 0);
	snprintf(path, sizeof path, "%s/.s.PGSQL.%d", p->dir, p->port);
	unlink(path);
	rmdir(p->dir);
	free(p);
}
