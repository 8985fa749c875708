/* cgroups.c - the daemon's cgroup subtree: found or made at start, the daemon
 * moved into a leaf of it, a cgroup per job beneath (under systemd, in a scope
 * of their own, which outlives the unit), all removed at exit. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <jansson.h>
#include <systemd/sd-daemon.h>

#include "cgroup.h"
#include "cgroups.h"
#include "log.h"
#include "sdunit.h"
#include "timefmt.h"

/* How long a cgroup killed at start or at exit may take to empty: its
 * processes have had SIGKILL, and only one in uninterruptible sleep (a
 * dead NFS server) takes longer; the cgroup is then left, and said so. */
#define CGROUPS_EMPTY_MS	5000

struct cgroups {
	enum cgroups_mode mode;
	unsigned ctls;		/* the jobs' controllers */
	bool freezer;		/* the jobs' cgroups have cgroup.freeze */
	bool made;		/* base is ours to remove at exit */
	int mount_fd;		/* the cgroup2 mount */
	int jobs_fd;		/* home/jobs; -1 in CGROUPS_NONE */
	int workers_fd;		/* home/workers; -1: with the daemon */
	pid_t anchor;		/* keeps the scope while the daemon runs */
	int anchor_fd;		/* its pidfd; -1 none (valgrind) */
	char base[PATH_MAX];	/* from the mount: "/system.slice/x" */
	/* Where the workers and the jobs' cgroups are: base, or the scope
	 * (scope[0] != '\0') that outlives the daemon's unit. */
	char home[PATH_MAX];
	char scope[SDUNIT_NAME_MAX];
	char origin[PATH_MAX];	/* where the daemon was at start */
	char why[512];		/* how it came to this mode, for the log */
};

static const char *const cgroups_mode_names[] = {
	[CGROUPS_NONE] = "none",
	[CGROUPS_PARTIAL] = "partial",
	[CGROUPS_V2] = "v2",
};

const char *
cgroups_mode_name(enum cgroups_mode mode)
{
	return cgroups_mode_names[mode];
}

enum cgroups_mode
cgroups_mode(const struct cgroups *cg)
{
	return cg != NULL ? cg->mode : CGROUPS_NONE;
}

unsigned
cgroups_ctls(const struct cgroups *cg)
{
	return cg != NULL ? cg->ctls : 0;
}

int
cgroups_jobs_fd(const struct cgroups *cg)
{
	return cg != NULL ? cg->jobs_fd : -1;
}

int
cgroups_workers_fd(const struct cgroups *cg)
{
	return cg != NULL ? cg->workers_fd : -1;
}

const char *
cgroups_scope_name(const struct cgroups *cg)
{
	return cg != NULL && cg->scope[0] != '\0' ? cg->scope : NULL;
}

json_t *
cgroups_ctls_json(const struct cgroups *cg)
{
	json_t *list = json_array();
	unsigned i;

	for (i = 0; list != NULL && i < CGROUP_NCTL; i++)
		if (cgroups_ctls(cg) & (1U << i))
			json_array_append_new(list,
			    json_string(cgroup_ctl_name(i)));
	return list;
}

bool
cgroups_can_freeze(const struct cgroups *cg)
{
	return cg->freezer;
}

void
cgroups_job_name(uint64_t id, unsigned attempt, char *buf, size_t size)
{
	snprintf(buf, size, "%llu.%u", (unsigned long long)id, attempt);
}

void
cgroups_job_path(const struct cgroups *cg, uint64_t id, unsigned attempt,
    char *buf, size_t size)
{
	char name[CGROUPS_NAME_MAX];

	cgroups_job_name(id, attempt, name, sizeof name);
	snprintf(buf, size, "%s/jobs/%s", strcmp(cg->home, "/") == 0 ? "" :
	    cg->home, name);
}

/* How it came to its mode, for the log. */
static void __attribute__((format(printf, 2, 3)))
cgroups_why(struct cgroups *cg, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cg->why, sizeof cg->why, fmt, ap);
	va_end(ap);
}

/* a and b joined into a PATH_MAX buffer. 0, or -1 when it does not
 * fit. */
static int
cgroups_cat(char *buf, const char *a, const char *b)
{
	int n = snprintf(buf, PATH_MAX, "%s%s", a, b);

	return n < 0 || n >= PATH_MAX ? -1 : 0;
}

/* Whether systemd marked the cgroup at path as delegated (Delegate=yes):
 * trusted.delegate, or user.delegate for a user's manager. */
static bool
cgroups_delegated(const char *path)
{
	static const char *const names[] = { "trusted.delegate",
	    "user.delegate" };
	char v[8];
	ssize_t n;
	size_t i;

	for (i = 0; i < sizeof names / sizeof names[0]; i++) {
		n = getxattr(path, names[i], v, sizeof v);
		if (n == 1 && v[0] == '1')
			return true;
	}
	return false;
}

/* Whether the cgroup at path was given to this non-root process: its
 * directory, cgroup.procs and cgroup.subtree_control are ours, as a
 * delegation makes them. */
static bool
cgroups_owned(const char *path)
{
	static const char *const files[] = { ".", "cgroup.procs",
	    "cgroup.subtree_control" };
	char file[PATH_MAX];
	struct stat st;
	size_t i;

	for (i = 0; i < sizeof files / sizeof files[0]; i++) {
		snprintf(file, sizeof file, "%s/%s", path, files[i]);
		if (stat(file, &st) == -1 || st.st_uid != geteuid() ||
		    access(file, W_OK) == -1)
			return false;
	}
	return true;
}

/* path without its last component ("/a/b" -> "/a", "/a" -> "/"), and
 * the last in *last. */
static void
cgroups_split(char *path, const char **last)
{
	char *slash = strrchr(path, '/');

	*last = slash + 1;
	if (slash == path) {
		memmove(path + 2, slash + 1, strlen(slash + 1) + 1);
		path[1] = '\0';
		*last = path + 2;
	} else
		*slash = '\0';
}

/* A cgroup's path from the mount ("/", "/a/b") as openat wants it from
 * the mount's fd (".", "a/b"). */
static const char *
cgroups_beneath(const char *path)
{
	return path[1] == '\0' ? "." : path + 1;
}

/* The path of what ("jobs", "daemon") in the subtree, as openat wants it
 * from the mount's fd. */
static void
cgroups_rel(const struct cgroups *cg, const char *what, char *buf,
    size_t size)
{
	snprintf(buf, size, "%s/%s", cgroups_beneath(cg->base), what);
}

/* Waits until the cgroup holds no process, at most ms. 0, or -1 (still
 * populated, or unreadable). */
static int
cgroups_wait_empty(int fd, uint64_t ms)
{
	uint64_t end = timefmt_mono_ms() + ms, now;
	struct pollfd pfd;
	int r;

	if ((pfd.fd = openat(fd, "cgroup.events", O_RDONLY | O_CLOEXEC)) ==
	    -1)
		return -1;
	pfd.events = POLLPRI;
	/* The kernel wakes a poller of cgroup.events at each change after
	 * its last read of it, which says what changed. */
	while ((r = cgroup_events_populated(pfd.fd)) == 1 &&
	    (now = timefmt_mono_ms()) < end)
		(void)poll(&pfd, 1, (int)(end - now));
	close(pfd.fd);
	return r == 0 ? 0 : -1;
}

/* Kills what is in the job cgroup name under dirfd and removes it. 0, or
 * -1 with the cgroup left (logged). */
static int
cgroups_clear(int dirfd, const char *name, const char *what)
{
	unsigned n = 0;
	int fd;

	if ((fd = cgroup_open(dirfd, name)) == -1) {
		if (errno == ENOENT)
			return 0;
		log_warn("cgroup %s: cannot open it", name);
		return -1;
	}
	(void)cgroup_count(fd, &n);
	if (n > 0 || cgroup_populated(fd) == 1) {
		if (cgroup_kill(fd) == -1)
			log_warn("cgroup %s: cannot kill what is in it", name);
		else if (n > 0)
			log_notice("cgroup %s: %u process%s %s %s killed",
			    name, n, n == 1 ? "" : "es", what, n == 1 ? "was" :
			    "were");
		(void)cgroups_wait_empty(fd, CGROUPS_EMPTY_MS);
	}
	close(fd);
	if (unlinkat(dirfd, name, AT_REMOVEDIR) == -1 && errno != ENOENT) {
		log_warn("cgroup %s: cannot remove it", name);
		return -1;
	}
	return 0;
}

/* Every job cgroup under jobs but those keep says are in use: killed and
 * removed. */
static void
cgroups_clear_jobs(struct cgroups *cg, const char *what,
    cgroups_keep_cb keep, void *arg)
{
	unsigned long long id;
	unsigned attempt;
	char end;
	struct dirent *de;
	DIR *d;
	int fd;

	/* A description of its own: a dup would share the offset of the
	 * last listing, at its end. */
	if ((fd = openat(cg->jobs_fd, ".", O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) == -1 || (d = fdopendir(fd)) == NULL) {
		if (fd != -1)
			close(fd);
		log_warn("cgroup %s/jobs: cannot list it", cg->base);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		if (keep != NULL && sscanf(de->d_name, "%llu.%u%c", &id,
		    &attempt, &end) == 2 && keep((uint64_t)id, attempt, arg))
			continue;
		(void)cgroups_clear(cg->jobs_fd, de->d_name, what);
	}
	closedir(d);
}

/*
 * Where the subtree is: sets cg->base (and cg->made when it is to be
 * made), or says in cg->why why there is none and returns -1.
 */
static int
cgroups_find_base(struct cgroups *cg, const char *mount,
    const char *state_dir)
{
	char path[PATH_MAX], parent[PATH_MAX], grand[PATH_MAX], own[64];
	const char *last, *plast;

	cgroup_daemon_name(state_dir, own, sizeof own);
	(void)cgroups_cat(parent, cg->origin, "");
	cgroups_split(parent, &last);
	(void)cgroups_cat(grand, parent, "");
	cgroups_split(grand, &plast);
	/* Already in a leaf "daemon" of ours: a daemon that replaced itself
	 * in place, or a restart in the leaf the last one left. */
	if (strcmp(last, "daemon") == 0 && strcmp(parent, "/") != 0 &&
	    cgroups_cat(path, mount, parent) == 0) {
		if (strcmp(plast, own) == 0 && geteuid() == 0 &&
		    sd_booted() <= 0) {
			(void)cgroups_cat(cg->base, parent, "");
			(void)cgroups_cat(cg->origin, grand, "");
			cgroups_why(cg, "as root, beneath its own cgroup %s",
			    grand);
			cg->made = true;
			return 0;
		}
		if (cgroups_delegated(path) ||
		    (geteuid() != 0 && cgroups_owned(path))) {
			(void)cgroups_cat(cg->base, parent, "");
			cgroups_why(cg, "given to it");
			return 0;
		}
	}
	if (cgroups_cat(path, mount, cg->origin) == -1) {
		cgroups_why(cg, "its cgroup's path is too long");
		return -1;
	}
	if (sd_booted() > 0) {
		if (!cgroups_delegated(path)) {
			cgroups_why(cg, "systemd manages the cgroups and did "
			    "not delegate %s to the daemon (Delegate=yes in "
			    "its unit)", cg->origin);
			return -1;
		}
		(void)cgroups_cat(cg->base, cg->origin, "");
		cgroups_why(cg, "delegated by systemd");
		return 0;
	}
	if (geteuid() == 0) {
		if (cgroups_cat(cg->base, strcmp(cg->origin, "/") == 0 ? "" :
		    cg->origin, "/") == -1 || strlen(cg->base) + strlen(own) >=
		    PATH_MAX) {
			cgroups_why(cg, "its cgroup's path is too long");
			return -1;
		}
		strcat(cg->base, own);
		cgroups_why(cg, "as root, beneath its own cgroup %s",
		    cg->origin);
		cg->made = true;
		return 0;
	}
	if (!cgroups_owned(path)) {
		cgroups_why(cg, "not root, and its cgroup %s is not its own "
		    "(see triaged(8) on delegating one)", cg->origin);
		return -1;
	}
	(void)cgroups_cat(cg->base, cg->origin, "");
	cgroups_why(cg, "its own cgroup, given to it");
	return 0;
}

/* mkdir at dirfd, an existing one fine; then opened. The fd, or -1 with
 * errno. */
static int
cgroups_mkdir(int dirfd, const char *name)
{
	if (mkdirat(dirfd, name, 0755) == -1 && errno != EEXIST)
		return -1;
	return cgroup_open(dirfd, name);
}

/* The cgroup at path (from the mount: "/", "/a/b"), opened; made first
 * when make. The fd, or -1 with errno. */
static int
cgroups_at(const struct cgroups *cg, const char *path, bool make)
{
	return make ? cgroups_mkdir(cg->mount_fd, cgroups_beneath(path)) :
	    cgroup_open(cg->mount_fd, cgroups_beneath(path));
}

/*
 * The scope's cgroup set up: the anchor (in its root, where systemd put
 * it) moved into "workers", where the workers will be, and the jobs'
 * controllers enabled, as far as the slice has them, for "jobs". 0, or
 * -1 with errno.
 */
static int
cgroups_scope_settle(struct cgroups *cg, unsigned *got)
{
	unsigned have = 0;
	int home;

	*got = 0;
	if ((home = cgroups_at(cg, cg->home, false)) == -1)
		return -1;
	if ((cg->workers_fd = cgroups_mkdir(home, "workers")) == -1 ||
	    cgroup_move(cg->workers_fd, cg->anchor) == -1) {
		close(home);
		return -1;
	}
	if (cgroup_ctls(home, "cgroup.controllers", &have) == 0)
		(void)cgroup_enable(home, have & CGROUP_JOB_CTLS, got);
	cg->jobs_fd = cgroups_mkdir(home, "jobs");
	close(home);
	return cg->jobs_fd == -1 ? -1 : 0;
}

/*
 * Moves the daemon into base/daemon and makes home/jobs with what it can
 * enable of the jobs' controllers. 0, or -1 with cg->why set.
 */
static int
cgroups_settle(struct cgroups *cg)
{
	unsigned have = 0, got = 0;
	int base = -1, leaf = -1, rc = -1;

	/* A subtree it makes gets what its parent can hand down to it. */
	if (cg->made && (base = cgroups_at(cg, cg->origin, false)) != -1) {
		if (cgroup_ctls(base, "cgroup.controllers", &have) == 0)
			(void)cgroup_enable(base, have & CGROUP_JOB_CTLS, &got);
		close(base);
	}
	if ((base = cgroups_at(cg, cg->base, cg->made)) == -1) {
		cgroups_why(cg, "cannot make or open %s: %s",
		    cg->base, strerror(errno));
		goto out;
	}
	if ((leaf = cgroups_mkdir(base, "daemon")) == -1 ||
	    cgroup_move(leaf, getpid()) == -1) {
		cgroups_why(cg, "cannot move into %s/daemon:"
		    " %s", cg->base, strerror(errno));
		goto out;
	}
	have = got = 0;
	if (cg->scope[0] != '\0') {
		if (cgroups_scope_settle(cg, &got) == -1) {
			cgroups_why(cg, "cannot make %s/workers and %s/jobs: %s",
			    cg->home, cg->home, strerror(errno));
			goto out;
		}
	} else {
		if (cgroup_ctls(base, "cgroup.controllers", &have) == 0)
			(void)cgroup_enable(base, have & CGROUP_JOB_CTLS, &got);
		if ((cg->jobs_fd = cgroups_mkdir(base, "jobs")) == -1) {
			cgroups_why(cg, "cannot make %s/jobs: %s",
			    cg->base, strerror(errno));
			goto out;
		}
	}
	if (cgroup_enable(cg->jobs_fd, got & CGROUP_JOB_CTLS, &got) == -1)
		got = 0;
	cg->ctls = got & CGROUP_JOB_CTLS;
	cg->freezer = faccessat(cg->jobs_fd, "cgroup.freeze", W_OK, 0) == 0;
	rc = 0;
out:
	if (leaf != -1)
		close(leaf);
	if (base != -1)
		close(base);
	return rc;
}

/* The anchor's life: a copy of the daemon that holds nothing open and
 * waits to be killed, with the daemon at the latest. */
static void __attribute__((noreturn))
cgroups_anchor_main(pid_t daemon)
{
	sigset_t none;

	(void)close_range(0, ~0U, 0);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1 || getppid() != daemon)
		_exit(0);
	(void)prctl(PR_SET_NAME, "triaged-anchor");
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
	for (;;)
		pause();
}

/* The anchor gone, and reaped. */
static void
cgroups_anchor_end(struct cgroups *cg)
{
	if (cg->anchor <= 0)
		return;
	/* The pool reaps every child it is told of (SIGCHLD): an anchor
	 * killed by someone else may be gone, and its pid another's. */
	if (cg->anchor_fd != -1) {
		(void)pidfd_send_signal(cg->anchor_fd, SIGKILL, NULL, 0);
		close(cg->anchor_fd);
		cg->anchor_fd = -1;
	} else
		(void)kill(cg->anchor, SIGKILL);
	while (waitpid(cg->anchor, NULL, 0) == -1 && errno == EINTR)
		;
	cg->anchor = 0;
}

/*
 * Under systemd, the workers and the jobs' cgroups go in a scope of their
 * own (sdunit.h): the unit's end, a restart or `systemctl kill` of it,
 * kills what is in the unit's cgroup, and running jobs are to outlive
 * that. A scope is made with a process in it and ends when it has none:
 * the anchor is that process while the daemon runs; the workers of
 * running jobs keep the scope once it has gone. Without one (no D-Bus,
 * systemd refused), the jobs stay in base, as before, and say so.
 */
static void
cgroups_scope(struct cgroups *cg)
{
	char name[SDUNIT_NAME_MAX], *cause = NULL;
	pid_t self = getpid();

	(void)cgroups_cat(cg->home, cg->base, "");
	/* A user's daemon (a unit of its user manager) keeps its jobs in
	 * its own unit, as before. */
	if (cg->made || geteuid() != 0 || sd_booted() <= 0 ||
	    sdunit_scope_name(name, sizeof name) != 0)
		return;
	if ((cg->anchor = fork()) == 0)
		cgroups_anchor_main(self);
	if (cg->anchor == -1) {
		cg->anchor = 0;
		log_warn("cgroups: no scope for the jobs (fork)");
		return;
	}
	cg->anchor_fd = (int)pidfd_open(cg->anchor, 0);
	if (sdunit_scope_start(name, cg->anchor, cg->home, sizeof cg->home,
	    &cause) != 0) {
		log_warnx("cgroups: running jobs stay in the unit's cgroup, "
		    "and a restart of the unit ends them: %s",
		    cause != NULL ? cause : "out of memory");
		free(cause);
		cgroups_anchor_end(cg);
		(void)cgroups_cat(cg->home, cg->base, "");
		return;
	}
	memcpy(cg->scope, name, sizeof name);
}

/* The controllers of mask as "cpu memory pids", or "none". */
static void
cgroups_ctl_list(unsigned mask, char *buf, size_t size)
{
	size_t len = 0;
	unsigned i;

	buf[0] = '\0';
	for (i = 0; i < CGROUP_NCTL; i++)
		if (mask & (1U << i))
			len += (size_t)snprintf(buf + len, size - len, "%s%s",
			    len > 0 ? " " : "", cgroup_ctl_name(i));
	if (len == 0)
		snprintf(buf, size, "none");
}

struct cgroups *
cgroups_start(enum cgroups_want want, const char *state_dir, char **cause)
{
	struct cgroups *cg;
	char mount[PATH_MAX], ctls[64];

	if ((cg = calloc(1, sizeof *cg)) == NULL) {
		*cause = strdup("out of memory");
		return NULL;
	}
	cg->mount_fd = cg->jobs_fd = cg->workers_fd = cg->anchor_fd = -1;
	cg->mode = CGROUPS_NONE;
	if (want == CGROUPS_WANT_OFF)
		cgroups_why(cg, "cgroups = off");
	else if (cgroup_mount_find("/proc/self/mountinfo", mount,
	    sizeof mount) == -1)
		cgroups_why(cg, "no cgroup2 filesystem is "
		    "mounted");
	else if (cgroup_path_of("/proc/self/cgroup", cg->origin,
	    sizeof cg->origin) == -1)
		cgroups_why(cg, "/proc/self/cgroup names no "
		    "cgroup v2 path: %s", strerror(errno));
	else if ((cg->mount_fd = cgroup_open(AT_FDCWD, mount)) == -1)
		cgroups_why(cg, "cannot open %s: %s", mount,
		    strerror(errno));
	else if (cgroups_find_base(cg, mount, state_dir) == 0 &&
	    (cgroups_scope(cg), cgroups_settle(cg) == 0)) {
		cg->mode = (cg->ctls & CGROUP_JOB_CTLS) == CGROUP_JOB_CTLS ?
		    CGROUPS_V2 : CGROUPS_PARTIAL;
		/* What an earlier daemon left is cleared by recovery, once
		 * it knows which of it runs on (cgroups_clear_left). */
	}
	if (cg->mode == CGROUPS_NONE) {
		if (cg->jobs_fd != -1) {
			close(cg->jobs_fd);
			cg->jobs_fd = -1;
		}
		if (cg->workers_fd != -1) {
			close(cg->workers_fd);
			cg->workers_fd = -1;
		}
		cgroups_anchor_end(cg);
		if (want == CGROUPS_WANT_REQUIRED) {
			if (asprintf(cause, "cgroups = required, and there "
			    "are none: %s", cg->why) < 0)
				*cause = NULL;
			cgroups_stop(cg);
			return NULL;
		}
		log_notice("cgroups: none (%s): jobs run as process groups",
		    cg->why);
		return cg;
	}
	cgroups_ctl_list(cg->ctls, ctls, sizeof ctls);
	log_notice("cgroups: %s in %s%s/jobs (%s%s%s); controllers for jobs: "
	    "%s%s", cgroups_mode_name(cg->mode), mount,
	    strcmp(cg->home, "/") == 0 ? "" : cg->home, cg->why,
	    cg->scope[0] != '\0' ? ", the jobs in " : "", cg->scope, ctls,
	    cg->freezer ? "" : "; no freezer: freeze stops jobs with SIGSTOP");
	return cg;
}

/* Back where the daemon started, and the subtree it made removed. */
static void
cgroups_unmake(struct cgroups *cg)
{
	char rel[PATH_MAX];
	int fd;

	if ((fd = cgroups_at(cg, cg->origin, false)) == -1 ||
	    cgroup_move(fd, getpid()) == -1) {
		log_warn("cgroup %s: cannot move back into it", cg->origin);
		if (fd != -1)
			close(fd);
		return;
	}
	close(fd);
	cgroups_rel(cg, "daemon", rel, sizeof rel);
	if (unlinkat(cg->mount_fd, rel, AT_REMOVEDIR) == -1 ||
	    unlinkat(cg->mount_fd, cgroups_beneath(cg->base), AT_REMOVEDIR) ==
	    -1)
		log_warn("cgroup %s: cannot remove it", cg->base);
}

void
cgroups_clear_left(struct cgroups *cg, cgroups_keep_cb keep, void *arg)
{
	if (cg != NULL && cg->jobs_fd != -1)
		cgroups_clear_jobs(cg, "left by an earlier daemon", keep, arg);
}

/* What every end does: the anchor gone (a scope then lasts only as long as
 * the workers of running jobs in it), the fds closed. */
static void
cgroups_free(struct cgroups *cg)
{
	cgroups_anchor_end(cg);
	if (cg->workers_fd != -1)
		close(cg->workers_fd);
	if (cg->jobs_fd != -1)
		close(cg->jobs_fd);
	if (cg->mount_fd != -1)
		close(cg->mount_fd);
	free(cg);
}

void
cgroups_leave(struct cgroups *cg)
{
	if (cg != NULL)
		cgroups_free(cg);
}

void
cgroups_stop(struct cgroups *cg)
{
	char rel[PATH_MAX];
	unsigned ctls;
	int fd;

	if (cg == NULL)
		return;
	if (cg->jobs_fd != -1) {
		cgroups_clear_jobs(cg, "still running at exit", NULL, NULL);
		close(cg->jobs_fd);
		cg->jobs_fd = -1;
		snprintf(rel, sizeof rel, "%s/jobs", cgroups_beneath(cg->home));
		if (unlinkat(cg->mount_fd, rel, AT_REMOVEDIR) == -1 &&
		    errno != ENOENT)
			log_warn("cgroup %s/jobs: cannot remove it", cg->home);
		/* A scope's cgroup is systemd's to remove, once the anchor
		 * (cgroups_free) leaves it empty. */
		if (cg->made)
			cgroups_unmake(cg);
		else {
			/* A delegated cgroup handed back as it was given:
			 * without controllers for children, systemd can
			 * put the next daemon's process in it. */
			if ((fd = cgroups_at(cg, cg->base, false)) != -1) {
				if (cgroup_ctls(fd, "cgroup.subtree_control",
				    &ctls) == 0)
					(void)cgroup_disable(fd, ctls);
				close(fd);
			}
		}
	}
	cgroups_free(cg);
}

/* A job attempt's cgroup, opened. */
static int
cgroups_job_open(const struct cgroups *cg, uint64_t id, unsigned attempt)
{
	char name[CGROUPS_NAME_MAX];

	if (cg->jobs_fd == -1) {
		errno = ENOENT;
		return -1;
	}
	cgroups_job_name(id, attempt, name, sizeof name);
	return cgroup_open(cg->jobs_fd, name);
}

int
cgroups_job_kill(const struct cgroups *cg, uint64_t id, unsigned attempt)
{
	int fd, rc;

	if ((fd = cgroups_job_open(cg, id, attempt)) == -1)
		return -1;
	rc = cgroup_kill(fd);
	close(fd);
	return rc;
}

int
cgroups_job_freeze(const struct cgroups *cg, uint64_t id, unsigned attempt,
    bool on)
{
	int fd, rc;

	if ((fd = cgroups_job_open(cg, id, attempt)) == -1)
		return -1;
	rc = cgroup_freeze(fd, on);
	close(fd);
	return rc;
}
