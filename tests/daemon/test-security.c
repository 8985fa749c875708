/* test-security.c - who may do what to whose jobs, whom jobs run as, who
 * may read what on disk, and the daemon's refusal of planted directories. */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "method.h"

/*
 * The people of the matrix, all Debian base users: the owner of the jobs
 * acted on, another user, a member of admin_group (by a supplementary
 * group, as `newgrp`-less logins have it), and root.
 */
enum actor { OWNER, OTHER, ADMIN, ROOT, NACTORS };

static const char *const actor_names[NACTORS] = {
	"owner", "other user", "admin_group member", "root",
};

struct who {
	uid_t uid;
	gid_t gid;
	gid_t groups[2];
	int ngroups;
};

/* daemon (uid 1), bin (2), sys (3) with group adm (4), root. */
static const struct who actors[NACTORS] = {
	[OWNER] = { 1, 1, { 1 }, 1 },
	[OTHER] = { 2, 2, { 2 }, 1 },
	[ADMIN] = { 3, 3, { 3, 4 }, 2 },
	[ROOT] = { 0, 0, { 0 }, 1 },
};

/*
 * A connection made as who. SO_PEERCRED and SO_PEERGROUPS record the
 * effective ids and groups at connect(), so root takes them on for the
 * connect only (the saved uid stays 0) and is root again after.
 */
static struct triage_client *
connect_as(const struct tdaemon *d, const struct who *w)
{
	struct triage_client *c;
	gid_t root_groups[1] = { 0 };
	char *cause = NULL;

	assert_int_equal(setgroups((size_t)w->ngroups, w->groups), 0);
	assert_int_equal(setegid(w->gid), 0);
	assert_int_equal(seteuid(w->uid), 0);
	c = triage_client_connect(d->sock, &cause);
	assert_int_equal(seteuid(0), 0);
	assert_int_equal(setegid(0), 0);
	assert_int_equal(setgroups(1, root_groups), 0);
	if (c == NULL)
		fail_msg("connect as uid %u: %s", (unsigned)w->uid, cause);
	return c;
}

/* A root daemon others can reach: a socket for all, a dir they may pass. */
static struct tdaemon *
start_open(const char *extra)
{
	char conf[1024];
	struct tdaemon *d;

	snprintf(conf, sizeof conf, "socket_mode = 0666\nadmin_group = adm\n"
	    "%s\n[priority.held]\nrank = 5\n[priority.normal]\nrank = 10\n"
	    "[priority.spare]\nrank = 20\n", extra ? extra : "");
	d = tdaemon_start(conf);
	assert_int_equal(chmod(d->dir, 0711), 0);
	return d;
}

static bool
need_root(void)
{
	if (geteuid() == 0 && getpwuid(1) != NULL && getpwuid(2) != NULL &&
	    getpwuid(3) != NULL && getgrnam("adm") != NULL)
		return true;
	print_message("skipped: needs root and Debian's users daemon, bin, "
	    "sys and group adm\n");
	return false;
}

/* The matrix's shared daemon and each actor's connection to it. */
struct matrix {
	struct tdaemon *d;
	struct triage_client *as[NACTORS];
	int64_t done;		/* a finished job of the owner */
};

/* A job of the owner's that stays queued: its priority is paused. */
static int64_t
owner_queued(struct matrix *m)
{
	return tsubmit(m->as[OWNER], "{s[ss] ss}", "argv", "sleep", "60",
	    "priority", "held");
}

static int64_t
owner_failed(struct matrix *m)
{
	int64_t id = tsubmit(m->as[OWNER], "{s[s]}", "argv", "false");

	json_decref(twait(m->as[OWNER], id));
	return id;
}

/*
 * One cell: method called by actor a with params (stolen); allowed says
 * whether it must work, else fail with -32002 and nothing else. Returns
 * the result of an allowed call (NULL otherwise).
 */
static json_t *
cell(struct matrix *m, enum actor a, const char *method, json_t *params,
    bool allowed)
{
	struct triage_error e;
	json_t *res;

	res = triage_client_call(m->as[a], method, params, 30000, &e);
	if (allowed && res == NULL)
		fail_msg("%s as %s: refused with %d \"%s\"", method,
		    actor_names[a], e.code, e.message);
	if (!allowed && res != NULL)
		fail_msg("%s as %s: allowed (%s)", method, actor_names[a],
		    json_dumps(res, JSON_COMPACT));
	if (!allowed && e.code != -32002)
		fail_msg("%s as %s: %d \"%s\", not -32002", method,
		    actor_names[a], e.code, e.message);
	return res;
}

/* The jobs a cell acted on or refused to. */
static void
assert_state(struct matrix *m, int64_t id, const char *state, int attempt)
{
	json_t *job = tget(m->as[ROOT], id);

	assert_string_equal(tstate(job), state);
	assert_int_equal(tjint(job, "attempt"), attempt);
	json_decref(job);
}

static bool
is_admin(enum actor a)
{
	return a == ADMIN || a == ROOT;
}

static bool
is_owner_or_admin(enum actor a)
{
	return a == OWNER || is_admin(a);
}

static void
matrix_submit(struct matrix *m, enum actor a)
{
	json_t *job = cell(m, a, "submit", json_pack("{s[s]}", "argv", "true"),
	    true);

	assert_int_equal(tjint(job, "uid"), actors[a].uid);
	assert_int_equal(tjint(job, "gid"), actors[a].gid);
	json_decref(job);
}

static void
matrix_open(struct matrix *m, enum actor a)
{
	json_decref(cell(m, a, "get", json_pack("{sI}", "id", m->done), true));
	json_decref(cell(m, a, "wait", json_pack("{sI sf}", "id", m->done,
	    "timeout", 0.0), true));
	json_decref(cell(m, a, "list", NULL, true));
	json_decref(cell(m, a, "stats", NULL, true));
	json_decref(cell(m, a, "watch", json_pack("{s[I]}", "ids", m->done),
	    true));
}

/*
 * A filter is open to all, but selects only the caller's own jobs unless
 * the caller is an admin: method with {"filter": filter} (stolen) by a
 * must act on id (the owner's) exactly when a may act on it, and on no
 * other job of the owner's.
 */
static void
filter_cell(struct matrix *m, enum actor a, const char *method,
    json_t *filter, int64_t id)
{
	json_t *res = cell(m, a, method, json_pack("{so}", "filter", filter),
	    true), *v, *job;
	size_t i;
	bool found = false;

	json_array_foreach(json_object_get(res, "ids"), i, v) {
		if (json_integer_value(v) == id) {
			found = true;
			continue;
		}
		if (is_admin(a) || strcmp(method, "remove") == 0)
			continue;
		job = tget(m->as[ROOT], json_integer_value(v));
		assert_int_equal(tjint(job, "uid"), actors[a].uid);
		json_decref(job);
	}
	if (found != is_owner_or_admin(a))
		fail_msg("%s of a filter by %s: %s job %lld of the owner's",
		    method, actor_names[a], found ? "acted on" : "left",
		    (long long)id);
	json_decref(res);
}

static void
matrix_cancel(struct matrix *m, enum actor a)
{
	int64_t id = owner_queued(m);

	json_decref(cell(m, a, "cancel", json_pack("{sI}", "id", id),
	    is_owner_or_admin(a)));
	assert_state(m, id, is_owner_or_admin(a) ? "canceled" : "queued", 1);
	if (!is_owner_or_admin(a))
		json_decref(tcall(m->as[ROOT], "cancel", "{sI}", "id", id));
	id = owner_queued(m);
	filter_cell(m, a, "cancel", json_pack("{ss}", "priority", "held"), id);
	assert_state(m, id, is_owner_or_admin(a) ? "canceled" : "queued", 1);
	if (!is_owner_or_admin(a))
		json_decref(tcall(m->as[ROOT], "cancel", "{sI}", "id", id));
}

static void
matrix_retry(struct matrix *m, enum actor a)
{
	int64_t id = owner_failed(m);

	json_decref(cell(m, a, "retry", json_pack("{sI}", "id", id),
	    is_owner_or_admin(a)));
	if (is_owner_or_admin(a))
		json_decref(twait(m->as[ROOT], id));
	assert_state(m, id, "failed", is_owner_or_admin(a) ? 2 : 1);
	id = owner_failed(m);
	filter_cell(m, a, "retry", json_pack("{s[I]}", "ids", id), id);
	if (is_owner_or_admin(a))
		json_decref(twait(m->as[ROOT], id));
	assert_state(m, id, "failed", is_owner_or_admin(a) ? 2 : 1);
}

/* Whether job id is still there. */
static bool
exists(struct matrix *m, int64_t id)
{
	struct triage_error e;
	json_t *res = triage_client_call(m->as[ROOT], "get", json_pack("{sI}",
	    "id", id), 30000, &e);

	if (res == NULL && e.code != -32001)
		fail_msg("get %lld: %d \"%s\"", (long long)id, e.code,
		    e.message);
	json_decref(res);
	return res != NULL;
}

static void
matrix_remove(struct matrix *m, enum actor a)
{
	int64_t id = owner_failed(m);

	json_decref(cell(m, a, "remove", json_pack("{sI}", "id", id),
	    is_owner_or_admin(a)));
	assert_int_equal(exists(m, id), !is_owner_or_admin(a));
	id = owner_failed(m);
	/* Everything it may remove, for one who may not remove the owner's
	 * jobs: m->done stays for the rows after this one. */
	filter_cell(m, a, "remove", is_owner_or_admin(a) ?
	    json_pack("{s[I]}", "ids", id) : json_object(), id);
	assert_int_equal(exists(m, id), !is_owner_or_admin(a));
	assert_true(exists(m, m->done));
}

/* hold, then release, of the owner's queued job: each the owner's or an
 * admin's to do. */
static void
matrix_hold(struct matrix *m, enum actor a)
{
	int64_t id = owner_queued(m);
	json_t *job;

	json_decref(cell(m, a, "hold", json_pack("{sI}", "id", id),
	    is_owner_or_admin(a)));
	job = tget(m->as[ROOT], id);
	assert_int_equal(json_is_true(json_object_get(job, "held")),
	    is_owner_or_admin(a));
	json_decref(job);
	json_decref(tcall(m->as[ROOT], "hold", "{sI}", "id", id));
	json_decref(cell(m, a, "release", json_pack("{sI}", "id", id),
	    is_owner_or_admin(a)));
	job = tget(m->as[ROOT], id);
	assert_int_equal(json_is_true(json_object_get(job, "held")),
	    !is_owner_or_admin(a));
	json_decref(job);
	json_decref(tcall(m->as[ROOT], "cancel", "{sI}", "id", id));
}

/* Whether the job is frozen (get). */
static bool
frozen(struct matrix *m, int64_t id)
{
	json_t *job = tget(m->as[ROOT], id);
	bool is = json_is_true(json_object_get(job, "frozen"));

	json_decref(job);
	return is;
}

/* freeze, then thaw, of the owner's running job: each the owner's or an
 * admin's to do. */
static void
matrix_freeze(struct matrix *m, enum actor a)
{
	int64_t id = tsubmit(m->as[OWNER], "{s[ss] ss}", "argv", "sleep",
	    "60", "priority", "normal");

	(void)trunning_pid(m->as[ROOT], id);
	json_decref(cell(m, a, "freeze", json_pack("{sI}", "id", id),
	    is_owner_or_admin(a)));
	assert_int_equal(frozen(m, id), is_owner_or_admin(a));
	json_decref(tcall(m->as[ROOT], "freeze", "{sI}", "id", id));
	json_decref(cell(m, a, "thaw", json_pack("{sI}", "id", id),
	    is_owner_or_admin(a)));
	assert_int_equal(frozen(m, id), !is_owner_or_admin(a));
	json_decref(tcall(m->as[ROOT], "cancel", "{sI}", "id", id));
	json_decref(twait(m->as[ROOT], id));
}

static void
matrix_update(struct matrix *m, enum actor a)
{
	int64_t id = owner_queued(m);
	json_t *job;

	json_decref(cell(m, a, "update", json_pack("{sI ss}", "id", id,
	    "name", "renamed"), is_owner_or_admin(a)));
	job = tget(m->as[ROOT], id);
	assert_string_equal(tjstr(job, "name"),
	    is_owner_or_admin(a) ? "renamed" : "sleep");
	json_decref(job);
	json_decref(tcall(m->as[ROOT], "cancel", "{sI}", "id", id));
}

static void
matrix_output(struct matrix *m, enum actor a)
{
	json_decref(cell(m, a, "output", json_pack("{sI ss}", "id", m->done,
	    "stream", "stdout"), is_owner_or_admin(a)));
}

static void
matrix_admin(struct matrix *m, enum actor a)
{
	json_t *stats, *p;
	size_t i;

	json_decref(cell(m, a, "pause", json_pack("{ss}", "priority",
	    "spare"), is_admin(a)));
	stats = tcall(m->as[ROOT], "stats", "{}");
	json_array_foreach(json_object_get(stats, "priorities"), i, p)
		if (strcmp(tjstr(p, "name"), "spare") == 0)
			assert_int_equal(json_is_true(json_object_get(p,
			    "paused")), is_admin(a));
	json_decref(stats);
	json_decref(cell(m, a, "resume", json_pack("{ss}", "priority",
	    "spare"), is_admin(a)));
	if (!is_admin(a))
		json_decref(tcall(m->as[ROOT], "resume", "{ss}", "priority",
		    "spare"));
	json_decref(cell(m, a, "reload", NULL, is_admin(a)));
}

/* Every method of the daemon's table, and the cells that try it. */
static const struct {
	const char *method;
	void (*cells)(struct matrix *, enum actor);
} matrix_rows[] = {
	{ "cancel", matrix_cancel },
	{ "freeze", matrix_freeze },
	{ "get", matrix_open },
	{ "hold", matrix_hold },
	{ "list", matrix_open },
	{ "output", matrix_output },
	{ "pause", matrix_admin },
	{ "release", matrix_hold },
	{ "reload", matrix_admin },
	{ "remove", matrix_remove },
	{ "resume", matrix_admin },
	{ "retry", matrix_retry },
	{ "stats", matrix_open },
	{ "submit", matrix_submit },
	{ "thaw", matrix_freeze },
	{ "update", matrix_update },
	{ "wait", matrix_open },
	{ "watch", matrix_open },
};

/* The matrix must grow with the method table: a method nobody tried for
 * each actor is a hole in it. */
static void
test_matrix_covers_every_method(void **state)
{
	size_t i, n = sizeof matrix_rows / sizeof matrix_rows[0];

	(void)state;
	for (i = 0; i < n; i++)
		assert_non_null(method_find(matrix_rows[i].method));
	assert_int_equal(n, method_count());
}

static void
test_ownership_matrix(void **state)
{
	struct matrix m;
	size_t row;
	int a;

	(void)state;
	if (!need_root())
		skip();
	memset(&m, 0, sizeof m);
	m.d = start_open(NULL);
	for (a = 0; a < NACTORS; a++)
		m.as[a] = connect_as(m.d, &actors[a]);
	json_decref(tcall(m.as[ROOT], "pause", "{ss}", "priority", "held"));
	m.done = tsubmit(m.as[OWNER], "{s[ss]}", "argv", "echo", "secret");
	json_decref(twait(m.as[OWNER], m.done));
	for (row = 0; row < sizeof matrix_rows / sizeof matrix_rows[0]; row++)
		for (a = 0; a < NACTORS; a++)
			matrix_rows[row].cells(&m, (enum actor)a);
	for (a = 0; a < NACTORS - 1; a++)
		triage_client_free(m.as[a]);
	tdaemon_end(m.d, m.as[ROOT]);
}

/*
 * admin_group counts by the primary group too (bin with primary group adm
 * here), and follows the config: a reload that names another group moves
 * the right at once, for the connections already open as well.
 */
static void
test_admin_group_is_primary_too_and_follows_reload(void **state)
{
	static const struct who adm_primary = { 2, 4, { 4 }, 1 };
	struct triage_error e;
	struct tdaemon *d;
	struct triage_client *by_gid, *sys, *root;

	(void)state;
	if (!need_root())
		skip();
	d = start_open(NULL);
	by_gid = connect_as(d, &adm_primary);
	sys = connect_as(d, &actors[OTHER]);
	root = tconnect(d);
	json_decref(tcall(by_gid, "pause", "{ss}", "priority", "spare"));
	assert_int_equal(tcall_error(sys, "resume", &e, "{ss}", "priority",
	    "spare"), -32002);
	/* Now group bin (2) is the admin group: bin's primary group. */
	tdaemon_rewrite(d, "socket_mode = 0666\nadmin_group = bin\n"
	    "[priority.held]\nrank = 5\n[priority.normal]\nrank = 10\n"
	    "[priority.spare]\nrank = 20\n");
	json_decref(tcall(root, "reload", "{}"));
	assert_int_equal(tcall_error(by_gid, "resume", &e, "{ss}", "priority",
	    "spare"), -32002);
	json_decref(tcall(sys, "resume", "{ss}", "priority", "spare"));
	triage_client_free(by_gid);
	triage_client_free(sys);
	tdaemon_end(d, root);
}

/* The whole of a job's stdout, as a string to compare. */
static char *
stdout_of(struct triage_client *c, int64_t id)
{
	json_t *page = tcall(c, "output", "{sI ss}", "id", id, "stream",
	    "stdout");
	char *text = strdup(tjstr(page, "data"));

	json_decref(page);
	assert_non_null(text);
	return text;
}

/*
 * Each job runs as its submitter: uid, gid, the groups of the user's
 * entry, and HOME, USER, LOGNAME and SHELL from it in the minimal
 * environment. Root's job alone runs as root. Its output is its user's
 * file, 0600, in a state dir nobody else may enter.
 */
static void
test_jobs_run_as_their_submitter(void **state)
{
	static const char script[] = "id -u; id -g; id -G; "
	    "echo \"$HOME $USER $LOGNAME $SHELL\"";
	struct tdaemon *d;
	struct triage_client *owner, *root;
	char path[512], *out;
	struct stat st;
	int64_t mine, roots;

	(void)state;
	if (!need_root())
		skip();
	d = start_open(NULL);
	owner = connect_as(d, &actors[OWNER]);
	root = tconnect(d);
	mine = tsubmit(owner, "{s[sss]}", "argv", "sh", "-c", script);
	roots = tsubmit(root, "{s[sss]}", "argv", "sh", "-c", script);
	tassert_ends(owner, mine, "succeeded");
	tassert_ends(root, roots, "succeeded");
	out = stdout_of(root, mine);
	assert_string_equal(out, "1\n1\n1\n/usr/sbin daemon daemon "
	    "/usr/sbin/nologin\n");
	free(out);
	out = stdout_of(root, roots);
	assert_string_equal(out, "0\n0\n0\n/root root root /bin/bash\n");
	free(out);
	snprintf(path, sizeof path, "%s/output/%lld.stdout", d->state,
	    (long long)mine);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_uid, 1);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(stat(d->state, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_int_equal(stat(d->sock, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0666);
	triage_client_free(owner);
	tdaemon_end(d, root);
}

/* A uid the system does not know cannot have a job run as it. */
static void
test_uid_without_passwd_entry_is_refused(void **state)
{
	static const struct who ghost = { 4242, 4242, { 4242 }, 1 };
	struct triage_error e;
	struct tdaemon *d;
	struct triage_client *c;
	json_t *list;

	(void)state;
	if (!need_root() || getpwuid(4242) != NULL)
		skip();
	d = start_open(NULL);
	c = connect_as(d, &ghost);
	assert_int_equal(tcall_error(c, "submit", &e, "{s[s]}", "argv",
	    "true"), -32002);
	assert_string_equal(e.message, "uid 4242 has no entry in the password "
	    "database: its jobs cannot run as a user the system does not "
	    "know");
	triage_client_free(c);
	c = tconnect(d);
	list = tcall(c, "list", "{}");
	assert_int_equal(json_array_size(json_object_get(list, "jobs")), 0);
	json_decref(list);
	tdaemon_end(d, c);
}

/* A nice below the priority's takes the CPU from the priorities above:
 * only admins may ask for one; anyone may ask for a nicer one. */
static void
test_nice_below_the_priority_is_for_admins(void **state)
{
	struct triage_client *owner, *admin, *root;
	struct triage_error e;
	struct tdaemon *d;
	json_t *job;
	int64_t id;

	(void)state;
	if (!need_root())
		skip();
	d = start_open("[priority.nicer]\nrank = 30\nnice = 10\n");
	owner = connect_as(d, &actors[OWNER]);
	admin = connect_as(d, &actors[ADMIN]);
	root = tconnect(d);
	assert_int_equal(tcall_error(owner, "submit", &e, "{s[s] ss si}",
	    "argv", "true", "priority", "nicer", "nice", 9), -32602);
	assert_string_equal(e.field, "nice");
	assert_string_equal(e.message, "\"nice\" 9 is below priority nicer's "
	    "nice of 10: only an admin may ask for that");
	id = tsubmit(owner, "{s[s] ss}", "argv", "true", "priority", "nicer");
	assert_int_equal(tjint(job = twait(owner, id), "nice"), 10);
	json_decref(job);
	id = tsubmit(owner, "{s[s] ss si}", "argv", "true", "priority",
	    "nicer", "nice", 15);
	assert_int_equal(tjint(job = twait(owner, id), "nice"), 15);
	json_decref(job);
	id = tsubmit(admin, "{s[s] ss si}", "argv", "true", "priority",
	    "nicer", "nice", 0);
	job = twait(admin, id);
	assert_int_equal(tjint(job, "nice"), 0);
	assert_string_equal(tstate(job), "succeeded");
	json_decref(job);
	id = tsubmit(root, "{s[s] ss si}", "argv", "true", "priority",
	    "nicer", "nice", 3);
	assert_int_equal(tjint(job = twait(root, id), "nice"), 3);
	json_decref(job);

	/* update: the same rule, against the priority the job will have;
	 * moved there without a nice, it takes that priority's. */
	json_decref(tcall(root, "pause", "{ss}", "priority", "held"));
	json_decref(tcall(root, "pause", "{ss}", "priority", "nicer"));
	id = tsubmit(owner, "{s[s] ss}", "argv", "true", "priority", "held");
	job = tcall(owner, "update", "{sI ss}", "id", id, "priority", "nicer");
	assert_int_equal(tjint(job, "nice"), 10);
	json_decref(job);
	assert_int_equal(tcall_error(owner, "update", &e, "{sI si}", "id", id,
	    "nice", 9), -32602);
	assert_string_equal(e.field, "nice");
	json_decref(tcall(owner, "update", "{sI si}", "id", id, "nice", 12));
	job = tcall(admin, "update", "{sI si}", "id", id, "nice", 2);
	assert_int_equal(tjint(job, "nice"), 2);
	json_decref(job);
	assert_int_equal(tcall_error(owner, "update", &e, "{sI si}", "id", id,
	    "nice", 20), -32602);
	json_decref(tcall(root, "cancel", "{sI}", "id", id));
	triage_client_free(owner);
	triage_client_free(admin);
	tdaemon_end(d, root);
}

/* The socket has exactly socket_mode and socket_group. */
static void
test_socket_mode_and_group(void **state)
{
	struct tdaemon *d;
	struct stat st;

	(void)state;
	if (!need_root())
		skip();
	d = tdaemon_start("socket_mode = 0640\nsocket_group = adm\n");
	assert_int_equal(stat(d->sock, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
	assert_int_equal(st.st_gid, getgrnam("adm")->gr_gid);
	tdaemon_end(d, tconnect(d));
}

/* NoNewPrivs of a job's /proc/self/status, as the job itself reads it. */
static char *
no_new_privs_of_a_job(const char *extra)
{
	struct tdaemon *d = tdaemon_start(extra);
	struct triage_client *c = tconnect(d);
	int64_t id = tsubmit(c, "{s[sss]}", "argv", "grep", "NoNewPrivs",
	    "/proc/self/status");
	char *out;

	tassert_ends(c, id, "succeeded");
	out = stdout_of(c, id);
	tdaemon_end(d, c);
	return out;
}

/* Setuid tools keep working unless the config says no_new_privs. */
static void
test_no_new_privs_only_when_asked(void **state)
{
	char *out;

	(void)state;
	out = no_new_privs_of_a_job(NULL);
	assert_string_equal(out, "NoNewPrivs:\t0\n");
	free(out);
	out = no_new_privs_of_a_job("no_new_privs = yes\n");
	assert_string_equal(out, "NoNewPrivs:\t1\n");
	free(out);
}

/* triaged on dir as its state_dir must refuse, saying want. */
static void
assert_refuses_state_dir(const struct tdaemon *d, const char *dir,
    const char *want)
{
	char conf[600], out[600], text[4096];
	int status;

	snprintf(conf, sizeof conf, "%s/unsafe.conf", d->dir);
	snprintf(out, sizeof out, "%s/unsafe.log", d->dir);
	twrite_text(conf, "[daemon]\nsocket = %s/unsafe.sock\nstate_dir = %s\n",
	    d->dir, dir);
	status = trun_refused(conf, out);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 0);
	tread_text(out, text, sizeof text);
	if (strstr(text, want) == NULL)
		fail_msg("wanted \"%s\" in: %s", want, text);
}

/*
 * A state dir another user could have planted, or can write to, is
 * refused, with the path and the reason; so is one under a parent others
 * may write to without the sticky bit.
 */
static void
test_unsafe_state_dirs_are_refused(void **state)
{
	struct tdaemon *d = tdaemon_start(NULL);
	char open_dir[400], below[500], want[1400];

	(void)state;
	snprintf(open_dir, sizeof open_dir, "%s/open", d->dir);
	assert_int_equal(mkdir(open_dir, 0700), 0);
	assert_int_equal(chmod(open_dir, 0777), 0);
	snprintf(want, sizeof want, "not starting: state_dir %s is unsafe: "
	    "%s: mode 0777 lets everyone write to it", open_dir, open_dir);
	assert_refuses_state_dir(d, open_dir, want);
	snprintf(below, sizeof below, "%s/state", open_dir);
	snprintf(want, sizeof want, "%s: mode 0777 lets everyone write to it "
	    "without the sticky bit", open_dir);
	assert_refuses_state_dir(d, below, want);
	if (geteuid() == 0) {
		assert_int_equal(chmod(open_dir, 0755), 0);
		assert_int_equal(chown(open_dir, 4242, 4242), 0);
		snprintf(want, sizeof want, "%s: owned by uid 4242, not by "
		    "root or uid 0: another user could have planted it",
		    open_dir);
		assert_refuses_state_dir(d, open_dir, want);
	}
	tdaemon_end(d, tconnect(d));
}

/*
 * state_dir/adopt holds the ends and sockets of workers that outlived a
 * daemon, which the next one believes: one of another user is refused,
 * one others may read is made the daemon's alone.
 */
static void
test_adopt_dir_is_the_daemons_alone(void **state)
{
	struct tdaemon *d = tdaemon_start(NULL);
	char dir[400], adopt[500], want[600];
	struct stat st;

	(void)state;
	if (geteuid() != 0) {
		tdaemon_end(d, tconnect(d));
		skip();
	}
	snprintf(dir, sizeof dir, "%s/other", d->dir);
	snprintf(adopt, sizeof adopt, "%s/adopt", dir);
	assert_int_equal(mkdir(dir, 0700), 0);
	assert_int_equal(mkdir(adopt, 0755), 0);
	assert_int_equal(chown(adopt, 4242, 4242), 0);
	snprintf(want, sizeof want, "%s: not a directory of the daemon's user "
	    "(owner 4242): remove it", adopt);
	assert_refuses_state_dir(d, dir, want);
	/* Its own, open to others: closed. */
	snprintf(adopt, sizeof adopt, "%s/adopt", d->state);
	assert_int_equal(tdaemon_stop(d), 0);
	assert_int_equal(chmod(adopt, 0755), 0);
	tdaemon_restart(d);
	assert_int_equal(stat(adopt, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_true(tlog_has(d, "mode 0755 made 0700"));
	tdaemon_end(d, tconnect(d));
}

/*
 * A relative state_dir (make run's run/state) is below the working
 * directory, and is checked there, the directories above it included.
 */
static void
test_relative_state_dir(void **state)
{
	struct tdaemon *d = tdaemon_start(NULL);
	struct triage_client *c;
	struct stat st;
	char path[600];

	(void)state;
	assert_int_equal(tdaemon_stop(d), 0);
	twrite_text(d->conf, "[daemon]\nsocket = %s\nstate_dir = rel/state\n",
	    d->sock);
	tdaemon_restart(d);
	c = tconnect(d);
	tassert_ends(c, tsubmit(c, "{s[s]}", "argv", "true"), "succeeded");
	snprintf(path, sizeof path, "%s/rel/state/triage.db", d->dir);
	assert_int_equal(stat(path, &st), 0);
	tdaemon_end(d, c);
}

/* stats says whom jobs run as. */
static void
test_stats_says_whom_jobs_run_as(void **state)
{
	struct tdaemon *d = tdaemon_start(NULL);
	struct triage_client *c = tconnect(d);
	json_t *stats = tcall(c, "stats", "{}");
	json_t *run_as = json_object_get(stats, "run_as");

	(void)state;
	assert_non_null(run_as);
	if (geteuid() == 0)
		assert_true(json_is_true(json_object_get(run_as, "submitter")));
	else {
		assert_true(json_is_false(json_object_get(run_as,
		    "submitter")));
		assert_int_equal(tjint(run_as, "uid"), geteuid());
	}
	json_decref(stats);
	tdaemon_end(d, c);
}

/*
 * A daemon not run by root runs every job as its own user, whoever submits
 * it, and stats says so. The socket's mode is then the whole boundary:
 * with the default 0660 a user outside the daemon's group cannot connect;
 * with 0666 anyone can, and has commands run as the daemon's user.
 */
static void
test_non_root_daemon_runs_every_job_as_itself(void **state)
{
	static const char script[] = "id -u; id -g; echo \"$HOME $USER\"";
	struct tdaemon *d;
	struct triage_client *root, *other;
	json_t *stats, *run_as;
	char *cause = NULL, *out;
	int64_t id;

	(void)state;
	if (!need_root())
		skip();
	d = tdaemon_start_as(NULL, "daemon");
	assert_int_equal(chmod(d->dir, 0711), 0);
	root = tconnect(d);
	stats = tcall(root, "stats", "{}");
	run_as = json_object_get(stats, "run_as");
	assert_true(json_is_false(json_object_get(run_as, "submitter")));
	assert_int_equal(tjint(run_as, "uid"), 1);
	assert_string_equal(tjstr(run_as, "user"), "daemon");
	json_decref(stats);
	id = tsubmit(root, "{s[sss]}", "argv", "sh", "-c", script);
	tassert_ends(root, id, "succeeded");
	out = stdout_of(root, id);
	assert_string_equal(out, "1\n1\n/usr/sbin daemon\n");
	free(out);
	/* bin is not in group daemon: the socket's 0660 keeps it out. */
	assert_int_equal(seteuid(actors[OTHER].uid), 0);
	other = triage_client_connect(d->sock, &cause);
	assert_int_equal(seteuid(0), 0);
	assert_null(other);
	assert_non_null(strstr(cause, "Permission denied"));
	free(cause);
	tdaemon_end(d, root);

	d = tdaemon_start_as("socket_mode = 0666\n", "daemon");
	assert_int_equal(chmod(d->dir, 0711), 0);
	other = connect_as(d, &actors[OTHER]);
	id = tsubmit(other, "{s[sss]}", "argv", "sh", "-c", script);
	tassert_ends(other, id, "succeeded");
	out = stdout_of(other, id);
	assert_string_equal(out, "1\n1\n/usr/sbin daemon\n");
	free(out);
	tdaemon_end(d, other);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_matrix_covers_every_method),
		cmocka_unit_test(test_ownership_matrix),
		cmocka_unit_test(
		    test_admin_group_is_primary_too_and_follows_reload),
		cmocka_unit_test(test_jobs_run_as_their_submitter),
		cmocka_unit_test(test_uid_without_passwd_entry_is_refused),
		cmocka_unit_test(test_nice_below_the_priority_is_for_admins),
		cmocka_unit_test(test_socket_mode_and_group),
		cmocka_unit_test(test_no_new_privs_only_when_asked),
		cmocka_unit_test(test_unsafe_state_dirs_are_refused),
		cmocka_unit_test(test_adopt_dir_is_the_daemons_alone),
		cmocka_unit_test(test_stats_says_whom_jobs_run_as),
		cmocka_unit_test(test_relative_state_dir),
		cmocka_unit_test(test_non_root_daemon_runs_every_job_as_itself),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
