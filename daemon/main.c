/* main.c - triaged's start and end: options, config, the worker pool forked
 * first, then the store, the semaphore, the socket, and the event loop. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include <event2/event.h>

#include "caller-env.h"
#include "capture.h"
#include "cgroups.h"
#include "client.h"
#include "cluster.h"
#include "cluster-output.h"
#include "config.h"
#include "conn.h"
#include "deps.h"
#include "fdlimit.h"
#include "http.h"
#include "http-events.h"
#include "jobs.h"
#include "log.h"
#include "membudget.h"
#include "method.h"
#include "metrics.h"
#include "notify.h"
#include "oomadj.h"
#include "passwd.h"
#include "pool.h"
#include "prune.h"
#include "recover.h"
#include "reload.h"
#include "rpc.h"
#include "run.h"
#include "safepath.h"
#include "series.h"
#include "server.h"
#include "shutdown.h"
#include "store.h"
#include "timefmt.h"
#include "triaged.h"
#include "version.h"
#include "wait.h"
#include "watch.h"

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: triaged [--config FILE] [--socket PATH] [--check-config]\n"
	    "\n"
	    "The triage job daemon: runs submitted commands by priority on a\n"
	    "fixed pool of workers, never more at once than its slots allow.\n"
	    "It stays in the foreground and logs to stderr.\n"
	    "\n"
	    "  -c, --config FILE   config file (default: $TRIAGE_CONFIG, else\n"
	    "                      " CONFIG_DEFAULT_PATH ", if it exists)\n"
	    "  -s, --socket PATH   listening socket (default: $TRIAGE_SOCKET if\n"
	    "                      not empty, else the config's socket key;\n"
	    "                      else, when not root and $XDG_RUNTIME_DIR is\n"
	    "                      an absolute path to an existing directory,\n"
	    "                      $XDG_RUNTIME_DIR/triage/triage.sock; else,\n"
	    "                      and always for root, "
	    TRIAGE_SOCKET_SYSTEM ")\n"
	    "  -t, --check-config  read the config, report, and exit\n"
	    "  -h, --help          this help\n"
	    "  -V, --version       the version\n");
}

/* Each line of a multi-line cause gets its own log line. */
static void
log_cause(const char *cause)
{
	const char *p = cause, *nl;

	while (p != NULL && *p != '\0') {
		nl = strchr(p, '\n');
		log_err("%.*s", nl ? (int)(nl - p) : (int)strlen(p), p);
		p = nl ? nl + 1 : NULL;
	}
}

/* mkdir -p: each missing directory made with mode. */
static int
mkdirs(const char *path, mode_t mode)
{
	char buf[4096], *p;

	if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (p = buf + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(buf, mode) != 0 && errno != EEXIST)
		return -1;
	return 0;
}

/* Nobody but root and us may have made dir or be able to change it: the
 * jobs in it run as their submitters, and the socket decides who is who. */
static void
check_dir_safe(const char *what, const char *dir, uid_t uid)
{
	char *why = NULL, *abs = NULL, *cwd = NULL;

	/* A relative path (make run's run/state) is checked where it is:
	 * below the working directory, which is checked too. */
	if (dir[0] != '/' && ((cwd = getcwd(NULL, 0)) == NULL ||
	    asprintf(&abs, "%s/%s", cwd, dir) < 0))
		fatal("%s %s: cannot tell where it is", what, dir);
	if (safepath_check(abs != NULL ? abs : dir, uid, &why) != 0)
		fatalx("not starting: %s %s is unsafe: %s", what, dir,
		    why ? why : "out of memory");
	free(abs);
	free(cwd);
}

static void
setup_state_dir(struct triaged *td)
{
	const char *dir = td->cfg->state_dir;
	struct stat st;

	check_dir_safe("state_dir", dir, td->uid);
	if (mkdirs(dir, 0700) != 0)
		fatal("state_dir %s: cannot create it", dir);
	if (stat(dir, &st) != 0)
		fatal("state_dir %s", dir);
	if (!S_ISDIR(st.st_mode))
		fatalx("state_dir %s: not a directory", dir);
	check_dir_safe("state_dir", dir, td->uid);
	/* What jobs wrote is for their users only, through the daemon. */
	if ((st.st_mode & 077) != 0) {
		if (chmod(dir, 0700) != 0)
			fatal("state_dir %s: cannot make it 0700", dir);
		log_notice("state_dir %s: mode %04o made 0700", dir,
		    (unsigned)(st.st_mode & 07777));
	}
	if (access(dir, W_OK | X_OK) != 0)
		fatal("state_dir %s: not writable", dir);
	if (asprintf(&td->output_dir, "%s/output", dir) < 0)
		fatalx("out of memory");
	if (mkdir(td->output_dir, 0700) != 0 && errno != EEXIST)
		fatal("%s: cannot create it", td->output_dir);
	/* Where workers that outlive the daemon leave their jobs' ends and
	 * wait for the next one. */
	if (asprintf(&td->adopt_dir, "%s/adopt", dir) < 0)
		fatalx("out of memory");
	if (mkdir(td->adopt_dir, 0700) != 0 && errno != EEXIST)
		fatal("%s: cannot create it", td->adopt_dir);
	/* What is in it is believed (ends, workers to take over): it must
	 * be the daemon's own, which no one else may write in. */
	if (lstat(td->adopt_dir, &st) != 0)
		fatal("%s", td->adopt_dir);
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid())
		fatalx("%s: not a directory of the daemon's user (owner %lu): "
		    "remove it", td->adopt_dir, (unsigned long)st.st_uid);
	if ((st.st_mode & 077) != 0) {
		if (chmod(td->adopt_dir, 0700) != 0)
			fatal("%s: cannot make it 0700", td->adopt_dir);
		log_notice("%s: mode %04o made 0700", td->adopt_dir,
		    (unsigned)(st.st_mode & 07777));
	}
}

/*
 * One daemon per state_dir, for its whole life: a second one would run the
 * same queued jobs again. The lock is taken before the database is opened
 * and dies with the process (the workers close their copy at once); the
 * file says who holds it. Returns the descriptor, kept open.
 */
static int
lock_state_dir(const char *dir)
{
	char path[4096], pid[32];
	ssize_t n;
	int fd;

	snprintf(path, sizeof path, "%s/lock", dir);
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) == -1)
		fatal("%s: cannot open it", path);
	if (flock(fd, LOCK_EX | LOCK_NB) == -1) {
		if (errno != EWOULDBLOCK)
			fatal("%s: cannot lock it", path);
		n = pread(fd, pid, sizeof pid - 1, 0);
		pid[n > 0 ? n : 0] = '\0';
		pid[strcspn(pid, "\n")] = '\0';
		fatalx("not starting: state_dir %s is in use by another triaged "
		    "(pid %s, holding %s)", dir, pid[0] ? pid : "unknown",
		    path);
	}
	n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) == -1 || pwrite(fd, pid, (size_t)n, 0) != n)
		log_warn("%s: cannot write our pid into it", path);
	return fd;
}

/*
 * The socket the daemon makes itself (no socket activation): its path as
 * protocol.md resolves it, its directory made, and nobody answering there
 * (a socket left by a daemon that died is removed). Allocated.
 */
static char *
own_socket(const char *flag, const struct config *cfg,
    const struct caller_env *caller)
{
	char *path, *dir, *cause = NULL;

	if ((path = client_socket_resolve(flag, cfg->socket, caller, true))
	    == NULL || (dir = strdup(path)) == NULL)
		fatalx("out of memory");
	if (strrchr(dir, '/') != NULL && strrchr(dir, '/') != dir) {
		*strrchr(dir, '/') = '\0';
		check_dir_safe("socket directory", dir, geteuid());
		if (mkdirs(dir, 0755) != 0)
			fatal("socket directory %s", dir);
		check_dir_safe("socket directory", dir, geteuid());
	}
	free(dir);
	if (server_check(path, &cause) != 0)
		fatalx("not starting: %s", cause ? cause : "out of memory");
	return path;
}

/* Every change of a job's state, once on disk. */
static void
log_job_cb(struct triaged *td, const struct jobs_event *ev, void *arg)
{
	const struct job *job = ev->view;

	(void)td;
	(void)arg;
	if (ev->change != NULL)
		log_debug("job %llu (%s, attempt %u): %s",
		    (unsigned long long)job->id, job_name(job), job->attempt,
		    ev->change);
	else if (ev->from == job->state)
		log_debug("job %llu (%s, attempt %u): queued at %s",
		    (unsigned long long)job->id, job_name(job), job->attempt,
		    job->priority);
	else
		log_debug("job %llu (%s, attempt %u): %s -> %s%s%s",
		    (unsigned long long)job->id, job_name(job), job->attempt,
		    job_state_name(ev->from), job_state_name(job->state),
		    job->run->reason ? ": " : "",
		    job->run->reason ? job->run->reason : "");
}

static void
watch_job_cb(struct triaged *td, const struct jobs_event *ev, void *arg)
{
	(void)arg;
	watch_notify(td, ev->view);
}

/* Who hears of every change, in this order: shutdown last, so that the
 * answers it waits for have gone out. */
static void
listen_jobs(struct triaged *td, struct deps *deps)
{
	jobs_set_gate(td, deps_gate_cb, deps);
	if (jobs_listen(td, log_job_cb, NULL) != 0 ||
	    jobs_listen(td, wait_job_cb, NULL) != 0 ||
	    jobs_listen(td, watch_job_cb, NULL) != 0 ||
	    jobs_listen(td, deps_job_cb, deps) != 0 ||
	    jobs_listen(td, notify_job_cb, NULL) != 0 ||
	    jobs_listen(td, http_job_cb, NULL) != 0 ||
	    jobs_listen(td, shutdown_job_cb, NULL) != 0)
		fatalx("out of memory");
}

static void
stop_cb(evutil_socket_t signo, short what, void *arg)
{
	(void)what;
	notify_stopping(arg);
	shutdown_begin(arg, (int)signo);
}

static void
hup_cb(evutil_socket_t signo, short what, void *arg)
{
	(void)signo;
	(void)what;
	log_notice("SIGHUP: reloading the config");
	reload_config(arg, NULL);	/* it logs the outcome */
}

/* What [daemon] cgroups asks of cgroups_start. */
static enum cgroups_want
cgroups_want(const struct config *cfg)
{
	switch (cfg->cgroups) {
	case CONFIG_CGROUPS_REQUIRED:
		return CGROUPS_WANT_REQUIRED;
	case CONFIG_CGROUPS_OFF:
		return CGROUPS_WANT_OFF;
	default:
		return CGROUPS_WANT_AUTO;
	}
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "socket", required_argument, NULL, 's' },
		{ "check-config", no_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *config_flag = NULL, *socket_flag = NULL;
	struct config_opts opts = { 0 };
	static const struct pool_callbacks no_callbacks;
	struct caller_env caller = { 0 };
	struct run_params params;
	struct pool_setup setup;
	char *pw_home = NULL;
	struct event *sigs[4];
	struct deps *deps;
	struct triaged td;
	bool check_only = false;
	char *cause = NULL, *socket_path, *db_path;
	char budget[MEMBUDGET_WORDS_MAX];
	const char *env;
	int ch, lock_fd, listen_fd = -1;
	size_t i;

	while ((ch = getopt_long(argc, argv, "c:s:thV", longopts, NULL)) != -1)
		switch (ch) {
		case 'c':
			config_flag = optarg;
			break;
		case 's':
			socket_flag = optarg;
			break;
		case 't':
			check_only = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("triaged %s\n", TRIAGE_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	if (optind != argc) {
		fprintf(stderr, "triaged: unexpected argument \"%s\"\n",
		    argv[optind]);
		usage(stderr);
		return 2;
	}

	log_init(LOG_INFO);
	memset(&td, 0, sizeof td);
	td.uid = geteuid();
	td.started_mono_ms = timefmt_mono_ms();
	/* What the config's and the socket's paths and defaults depend on:
	 * lib/ reads neither our ids nor our environment. The home, for a
	 * non-root default state_dir, is the password database's when $HOME
	 * is not an absolute path. */
	caller.euid = td.uid;
	caller.home = getenv("HOME");
	caller.xdg_state_home = getenv("XDG_STATE_HOME");
	caller.xdg_runtime_dir = getenv("XDG_RUNTIME_DIR");
	caller.triage_socket = getenv("TRIAGE_SOCKET");
	caller.triage_config = getenv("TRIAGE_CONFIG");
	if (caller.euid != 0 &&
	    (caller.home == NULL || caller.home[0] != '/') &&
	    passwd_lookup(caller.euid, NULL, &pw_home, NULL) == 0)
		caller.home = pw_home;
	opts.path = config_path(config_flag, &caller, &opts.optional);
	opts.env = &caller;
	td.cfg = config_load(&opts, &cause);
	if ((td.reload = reload_new(&opts)) == NULL)
		fatalx("out of memory");
	caller.home = NULL;	/* the config has what it needed of it */
	free(pw_home);
	if (td.cfg == NULL) {
		log_cause(cause ? cause : "cannot read the config: out of memory");
		fatalx("not starting: the config has errors");
	}
	if (check_only) {
		printf("%s: ok\n", td.cfg->path ? td.cfg->path :
		    "built-in defaults");
		config_free(td.cfg);
		return 0;
	}
	log_set_level(td.cfg->log_level);
	setup_state_dir(&td);
	lock_fd = lock_state_dir(td.cfg->state_dir);
	/* Before anything forks: the socket systemd hands over is ours. */
	switch (server_activated(&listen_fd, &socket_path, &cause)) {
	case -1:
		fatalx("not starting: %s", cause ? cause : "out of memory");
	case 1:
		log_info("socket activation: systemd handed over %s",
		    socket_path);
		break;
	default:
		socket_path = own_socket(socket_flag, td.cfg, &caller);
		break;
	}
	signal(SIGPIPE, SIG_IGN);
	/* A file size limit fails the write (EFBIG), as a full disk does;
	 * the store copes with that, and must not die of it. */
	signal(SIGXFSZ, SIG_IGN);

	if ((td.base = event_base_new()) == NULL)
		fatalx("cannot make the event loop");
	if (notify_start(&td) != 0)
		fatalx("out of memory");
	/* Before the workers, which must be born in the daemon's leaf of
	 * the subtree, and before any job's leftovers could be mistaken for
	 * a new one's. */
	if ((td.cgroups = cgroups_start(cgroups_want(td.cfg),
	    td.cfg->state_dir, &cause)) == NULL)
		fatalx("not starting: %s", cause ? cause : "out of memory");
	/* Where the daemon now is: its cgroup's limits bind it. */
	td.memory_budget = membudget_compute(td.cfg);
	setup.cgroup_fd = cgroups_jobs_fd(td.cgroups);
	setup.cgroup_ctls = cgroups_ctls(td.cgroups);
	setup.workers_cgroup_fd = cgroups_workers_fd(td.cgroups);
	setup.job_oom_score_adj = oomadj_lower();
	setup.adopt_dir = td.adopt_dir;
	setup.tail_errno = 0;
	/* output_keep = tail marks its count of dropped bytes on the
	 * capture file, which is made only once the job writes: whether the
	 * file system takes the mark is asked now, once, so that a worker
	 * can still refuse such a job before it runs. */
	if (capture_xattr_check(td.output_dir) == -1) {
		setup.tail_errno = errno;
		log_warn("%s: no extended attribute %s: the jobs of a priority "
		    "under output_keep = tail will not start", td.output_dir,
		    POOL_DROPPED_XATTR);
	}
	/* Workers first: they are forks, and must inherit nothing else. */
	td.pool = pool_new(td.base, td.cfg->workers, &setup, &no_callbacks,
	    NULL, &cause);
	if (td.pool == NULL)
		fatalx("cannot start the workers: %s", cause ? cause : "?");
	/* After the pool has noted the limit the jobs are to keep. */
	fdlimit_raise(td.cfg->max_clients, td.cfg->workers);
	if (td.cfg->cluster.enabled) {
		if (cluster_open_store(&td, &cause) != 0)
			fatalx("cannot open the cluster's job store: %s",
			    cause ? cause : "out of memory");
	} else {
		if (asprintf(&db_path, "%s/triage.db", td.cfg->state_dir) < 0)
			fatalx("out of memory");
		if ((td.store = store_open(td.base, db_path, &cause)) == NULL)
			fatalx("cannot open the job store: %s", cause ? cause :
			    "out of memory");
		free(db_path);
	}
	/* For the benchmark's comparison: a commit for every submission. */
	if ((env = getenv("TRIAGED_GROUP_COMMIT")) != NULL &&
	    strcmp(env, "0") == 0) {
		store_set_grouping(td.store, false);
		log_notice("TRIAGED_GROUP_COMMIT=0: every submission gets a "
		    "commit of its own");
	}
	if (jobs_init(&td, &cause) != 0)
		fatalx("%s", cause ? cause : "out of memory");
	jobs_follow_store(&td);
	/* Before recovery, which changes jobs they count. */
	if (metrics_init(&td, &cause) != 0 || series_init(&td, &cause) != 0)
		fatalx("%s", cause ? cause : "out of memory");
	params = (struct run_params){
		.output_dir = td.output_dir,
		.kill_grace_ms = td.cfg->kill_grace_ms,
		.max_output = td.cfg->max_output,
		.max_result = td.cfg->max_result,
		.set_creds = td.uid == 0 && td.cfg->run_as_submitter,
		.no_new_privs = td.cfg->no_new_privs,
		.cgroups = td.cgroups,
		.cfg = &td.cfg,
	};
	if ((td.run = run_new(td.base, td.pool, &params, &jobs_run_callbacks,
	    &td)) == NULL || (deps = deps_new()) == NULL)
		fatalx("out of memory");
	if (cluster_output_start(&td) != 0)
		fatalx("out of memory");
	if (rpc_start(&td, method_call) != 0 || wait_start(&td) != 0)
		fatalx("out of memory");
	listen_jobs(&td, deps);
	if (recover_jobs(&td, &cause) != 0) {
		log_cause(cause ? cause : "out of memory");
		fatalx("not starting: the jobs in %s do not fit the config",
		    td.cfg->state_dir);
	}
	if (prune_start(&td) != 0 || cluster_lease_start(&td) != 0)
		fatalx("out of memory");
	/* Signals before anyone can connect: a client that reaches the
	 * socket may stop us at once, and the loop takes the signal when it
	 * runs (till then, SIGTERM's default would kill us unclean). */
	sigs[0] = evsignal_new(td.base, SIGTERM, stop_cb, &td);
	sigs[1] = evsignal_new(td.base, SIGINT, stop_cb, &td);
	sigs[2] = evsignal_new(td.base, SIGHUP, hup_cb, &td);
	sigs[3] = NULL;
	for (i = 0; i < 3; i++)
		if (sigs[i] == NULL || evsignal_add(sigs[i], NULL) != 0)
			fatalx("cannot handle signals");
	if (conn_start(&td) != 0)
		fatalx("out of memory");
	/* HTTP first: a client that reaches the job socket finds it up. */
	if (http_start(&td, &cause) != 0)
		fatalx("cannot serve HTTP: %s", cause ? cause : "?");
	if ((td.server = server_open(&td, socket_path, listen_fd, &cause))
	    == NULL)
		fatalx("cannot listen: %s", cause ? cause : "?");

	membudget_words(td.memory_budget, false, budget, sizeof budget);
	log_notice("ready on %s: %u slots (%s policy), %u workers, %u "
	    "priorities, memory budget %s, state in %s", socket_path,
	    td.cfg->slots, td.cfg->policy, td.cfg->workers,
	    td.cfg->npriorities, budget, td.cfg->state_dir);
	notify_ready(&td);
	event_base_dispatch(td.base);

	http_stop(&td);
	server_close(td.server);
	conn_stop(&td);
	rpc_stop(&td);
	wait_stop(&td);
	if (store_flush(td.store, &cause) != 0)
		log_err("the last changes could not be stored: %s", cause);
	run_free(td.run);
	/* shutdown = keep: the running jobs stay with their workers, in
	 * their cgroups, for the next daemon. */
	if (td.phase == TRIAGED_STOPPING &&
	    td.shutdown_mode == CONFIG_SHUTDOWN_KEEP) {
		pool_leave(td.pool);
		cgroups_leave(td.cgroups);
	} else {
		pool_free(td.pool);
		cgroups_stop(td.cgroups);
	}
	for (i = 0; i < 3; i++)
		event_free(sigs[i]);
	/* Their default back would let a late SIGTERM (a stop that did not
	 * see this one end) kill the daemon while it stores its last changes
	 * and makes its last checkpoint: it is exiting already. */
	signal(SIGTERM, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	prune_stop(&td);
	cluster_lease_stop(&td);
	notify_stop(&td);
	series_free(&td);
	metrics_free(&td);
	jobs_free(&td);
	deps_free(deps);
	cluster_output_stop(&td);
	store_close(td.store);
	close(lock_fd);
	free(td.output_dir);
	free(td.adopt_dir);
	free(socket_path);
	config_free(td.cfg);
	reload_free(td.reload);
	event_base_free(td.base);
	log_notice("stopped");
	return 0;
}
