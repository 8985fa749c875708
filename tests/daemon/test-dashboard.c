/* test-dashboard.c - the web dashboard in a real headless Chromium against a
 * live daemon: login, lanes, resources, live updates, actions, refusals,
 * screenshots. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "cdp.h"
#include "harness.h"
#include "proc.h"
#include "thttp.h"

/* The window the screenshots are taken at, and a phone's. */
#define WIDE_W 1280
#define WIDE_H 800
#define NARROW_W 420
#define NARROW_H 900

/* Three priorities, two slots: two running jobs fill the machine. */
#define SLOTS "slots = 2\n"
#define PRIORITIES "[priority.high]\nrank = 0\n" \
	"[priority.normal]\nrank = 10\n[priority.low]\nrank = 20\n"

/* A test's daemon, listening on HTTP with a token, and its browser. */
struct fx {
	struct tdaemon	*d;
	struct triage_client	*c;
	struct cdp	*b;
	int		 port;
	char		 addr[64];	/* 127.0.0.1:port, for thttp */
	char		 origin[80];	/* http://127.0.0.1:port */
	char		 dir[64];	/* the token file's temp dir */
	char		 token_file[128];
	char		 token[65];
};

static int
fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof *f);
	unsigned char raw[16];
	int fd;
	size_t i;

	if (f == NULL)
		return -1;
	*state = f;
	snprintf(f->dir, sizeof f->dir, "/tmp/triage-dash.XXXXXX");
	if (mkdtemp(f->dir) == NULL)
		fail_msg("mkdtemp: %s", strerror(errno));
	/* A fresh token each test: nothing in the page may know it. */
	if ((fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC)) == -1 ||
	    read(fd, raw, sizeof raw) != (ssize_t)sizeof raw)
		fail_msg("/dev/urandom: %s", strerror(errno));
	close(fd);
	for (i = 0; i < sizeof raw; i++)
		snprintf(f->token + 2 * i, 3, "%02x", raw[i]);
	snprintf(f->token_file, sizeof f->token_file, "%s/token", f->dir);
	if ((fd = open(f->token_file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    0600)) == -1 || dprintf(fd, "%s\n", f->token) < 0 || close(fd) == -1)
		fail_msg("%s: %s", f->token_file, strerror(errno));
	return 0;
}

/* The daemon is the harness's to reap when a test fails; the browser and
 * the token are ours. */
static int
fx_teardown(void **state)
{
	struct fx *f = *state;

	if (f == NULL)
		return 0;
	cdp_stop(f->b);
	if (f->dir[0] != '\0') {
		unlink(f->token_file);
		rmdir(f->dir);
	}
	free(f);
	return 0;
}

/* Starts the daemon, then the browser; extra goes after its [daemon]
 * lines and before its priorities: more keys, then sections of its own
 * ([resource.NAME]). */
static void
fx_start(struct fx *f, const char *extra)
{
	char *conf;

	if (!cdp_available()) {
		print_message("skipped: %s is not installed (make deps installs "
		    "the package chromium)\n", CDP_BROWSER);
		skip();
	}
	f->port = tfree_port();
	snprintf(f->addr, sizeof f->addr, "127.0.0.1:%d", f->port);
	snprintf(f->origin, sizeof f->origin, "http://%s", f->addr);
	if (asprintf(&conf, "%s%s%s[http]\nlisten = %s\nauth = token\n"
	    "token_file = %s\n", SLOTS, extra, PRIORITIES, f->addr,
	    f->token_file) == -1)
		fail_msg("out of memory");
	f->d = tdaemon_start(conf);
	free(conf);
	/* Its HTTP listener is up, whatever the order of its start. */
	twait_log(f->d, "http: listening on");
	f->c = tconnect(f->d);
	f->b = cdp_start(WIDE_W, WIDE_H);
}

static void
fx_end(struct fx *f)
{
	/* The page may not have thrown anything along the way. */
	assert_int_equal(cdp_exceptions(f->b), 0);
	cdp_stop(f->b);
	f->b = NULL;
	tdaemon_end(f->d, f->c);
	f->d = NULL;
}

/* Types token into the login form and sends it with its button. */
static void
fx_submit_login(struct fx *f, const char *token)
{
	unsigned loads;

	cdp_click(f->b, "#token");
	cdp_type(f->b, token);
	loads = cdp_loads(f->b);
	cdp_click(f->b, "#login-submit");
	cdp_wait_loads(f->b, loads);
}

/* Opens the dashboard, logging in through the form, and waits until it
 * follows the daemon live. */
static void
fx_login(struct fx *f)
{
	char url[128];

	snprintf(url, sizeof url, "%s/", f->origin);
	cdp_navigate(f->b, url);
	fx_submit_login(f, f->token);
	cdp_wait_true(f->b, "location.pathname === '/' && "
	    "document.body.dataset.live === 'yes'");
}

/* The lane's count of kind (queued, held, running) equals n. */
static void
fx_wait_count(struct fx *f, const char *prio, const char *kind, long n)
{
	cdp_wait_true(f->b, "((e) => e !== null && "
	    "e.textContent.replace(/\\D/g, '') === '%ld')(document."
	    "querySelector('[data-lane=\"%s\"] [data-count=\"%s\"]'))",
	    n, prio, kind);
}

static int64_t
submit_sh(struct triage_client *c, const char *prio, const char *name,
    const char *script)
{
	return tsubmit(c, "{s[sss]ssss}", "argv", "sh", "-c", script,
	    "priority", prio, "name", name);
}

/*
 * A job that prints a numbered line five times a second until the gate
 * file exists in d's dir (for 5 minutes at most): something running whose
 * output moves.
 */
static int64_t
submit_printer(struct triage_client *c, const struct tdaemon *d,
    const char *prio, const char *name, const char *gate)
{
	char script[600];

	snprintf(script, sizeof script,
	    "i=0; while [ ! -e %s/%s ] && [ $i -lt 1500 ]; do "
	    "echo \"step $i: compiling unit $((i %% 40)) of 40\"; "
	    "i=$((i + 1)); sleep 0.2; done", d->dir, gate);
	return submit_sh(c, prio, name, script);
}

/* The session cookie (name=value) that a 303 from POST /login sets, into
 * buf. */
static void
session_cookie(const struct thttp_resp *r, char *buf, size_t size)
{
	char *v = thttp_header(r, "Set-Cookie");

	if (v == NULL || strncmp(v, "triage_session=", 15) != 0 ||
	    strcspn(v, ";") >= size)
		fail_msg("no triage_session cookie in:\n%s", r->headers);
	snprintf(buf, size, "%.*s", (int)strcspn(v, ";"), v);
	free(v);
}

/* Clicks the button of action for job id, the first that the selector
 * within (a container's, then a space; "" for anywhere) finds. */
static void
fx_click_job(struct fx *f, const char *within, const char *action,
    int64_t id)
{
	char sel[256];

	snprintf(sel, sizeof sel, "%s[data-action=\"%s\"][data-id=\"%lld\"]",
	    within, action, (long long)id);
	cdp_click(f->b, sel);
}

/* Waits until the page shows running job id frozen (its badge, and a
 * Thaw button) or not (no badge, a Freeze button). */
static void
fx_wait_frozen(struct fx *f, int64_t id, bool frozen)
{
	cdp_wait_true(f->b, "((c) => c !== null && c.dataset.frozen === "
	    "'%s' && c.querySelector('.badge.frozen').hidden === %s && c."
	    "querySelector('[data-action=\"%s\"]') !== null)(document."
	    "querySelector('#running [data-job=\"%lld\"]'))", frozen ? "yes" :
	    "no", frozen ? "false" : "true", frozen ? "thaw" : "freeze",
	    (long long)id);
}

/* Whether the priority is paused, by stats over the socket. */
static bool
paused(struct triage_client *c, const char *prio)
{
	json_t *st = tcall(c, "stats", "{}"), *p;
	bool found = false, v = false;
	size_t i;

	json_array_foreach(json_object_get(st, "priorities"), i, p)
		if (strcmp(tjstr(p, "name"), prio) == 0) {
			found = true;
			v = json_is_true(json_object_get(p, "paused"));
		}
	json_decref(st);
	assert_true(found);
	return v;
}

/* Asserts that path is a PNG image width pixels wide. */
static void
assert_png(const char *path, unsigned width)
{
	unsigned char head[24];
	FILE *f = fopen(path, "rb");
	unsigned w;

	assert_non_null(f);
	assert_int_equal(fread(head, 1, sizeof head, f), sizeof head);
	fclose(f);
	assert_memory_equal(head, "\x89PNG\r\n\x1a\n", 8);
	w = (unsigned)head[16] << 24 | (unsigned)head[17] << 16 |
	    (unsigned)head[18] << 8 | head[19];
	assert_int_equal(w, width);
}

/* build/artifacts (of the build the test belongs to), made if need be, and
 * name in it, in a static buffer. */
static const char *
artifact(const char *name)
{
	static char path[600];
	char bin[512], *top;

	/* tbin names build/bin/triaged (or build/asan/bin/...). */
	snprintf(bin, sizeof bin, "%s", tbin("triaged"));
	top = dirname(dirname(bin));
	snprintf(path, sizeof path, "%s/artifacts", top);
	if (mkdir(path, 0755) == -1 && errno != EEXIST)
		fail_msg("mkdir %s: %s", path, strerror(errno));
	snprintf(path, sizeof path, "%s/artifacts/%s", top, name);
	return path;
}

/*
 * Without a session, / is the login page; a wrong token comes back to it
 * saying so, the right one leads to the dashboard, live.
 */
static void
login_form_leads_to_the_dashboard(void **state)
{
	struct fx *f = *state;
	char url[128];

	fx_start(f, "");
	snprintf(url, sizeof url, "%s/", f->origin);
	cdp_navigate(f->b, url);
	cdp_wait_true(f->b, "document.getElementById('login-form') !== null");
	assert_int_equal(cdp_eval_int(f->b,
	    "document.querySelectorAll('#lanes, [data-lane]').length"), 0);
	cdp_screenshot(f->b, artifact("login.png"));
	assert_png(artifact("login.png"), WIDE_W);

	fx_submit_login(f, "not-the-token");
	cdp_wait_true(f->b, "location.pathname === '/login' && "
	    "new URLSearchParams(location.search).get('failed') === '1' && "
	    "document.getElementById('login-form') !== null");

	fx_submit_login(f, f->token);
	cdp_wait_true(f->b, "location.pathname === '/' && "
	    "document.body.dataset.live === 'yes'");
	/* Every configured priority has its lane. */
	fx_wait_count(f, "high", "queued", 0);
	fx_wait_count(f, "normal", "queued", 0);
	fx_wait_count(f, "low", "queued", 0);
	fx_end(f);
}

/*
 * The lanes count what was submitted over the socket, a paused priority
 * keeps its jobs queued, and a job submitted later shows up without a
 * reload. Job data is shown as text, never as markup.
 */
static void
lanes_follow_the_queue_live(void **state)
{
	static const char *const evil = "<img src=x onerror=\"window.pwned=1\">";
	struct fx *f = *state;
	int64_t low[3], high, late;
	unsigned loads;
	size_t i;

	fx_start(f, "");
	json_decref(tcall(f->c, "pause", "{ss}", "priority", "low"));
	for (i = 0; i < 3; i++)
		low[i] = submit_sh(f->c, "low", i == 1 ? evil : "batch", "true");
	/* A job of a running priority is dispatched and ends. */
	high = submit_sh(f->c, "high", "quick", "echo done");
	tassert_ends(f->c, high, "succeeded");

	fx_login(f);
	fx_wait_count(f, "low", "queued", 3);
	fx_wait_count(f, "high", "queued", 0);
	cdp_wait_true(f->b, "document.querySelector('[data-lane=\"low\"]')"
	    ".dataset.paused === 'yes'");
	for (i = 0; i < 3; i++)
		cdp_wait_true(f->b, "document.querySelector('[data-lane=\"low\"] "
		    "li[data-job=\"%lld\"]') !== null", (long long)low[i]);
	/* A one-node cluster (make test-onenode, CI's sanitized run) says
	 * its node is up; a daemon of its own says nothing of nodes. */
	cdp_wait_true(f->b, "document.querySelector('#summary').textContent"
	    ".includes('nodes 1 / 1 up') === %s", tcluster() ? "true" :
	    "false");
	cdp_wait_true(f->b, "document.querySelector('#recent "
	    "tr[data-job=\"%lld\"] .state').textContent === 'succeeded'",
	    (long long)high);
	cdp_wait_true(f->b, "document.querySelector('[data-lane=\"low\"] "
	    "li[data-job=\"%lld\"] .name').textContent === %s",
	    (long long)low[1], cdp_quote(evil));
	assert_int_equal(cdp_eval_int(f->b, "document.querySelectorAll("
	    "'#lanes img').length + (window.pwned === undefined ? 0 : 1)"), 0);

	/* Later submissions: no reload, the same document. */
	json_decref(cdp_eval(f->b, "window.sameDocument = true"));
	loads = cdp_loads(f->b);
	late = submit_sh(f->c, "low", "late", "true");
	fx_wait_count(f, "low", "queued", 4);
	cdp_wait_true(f->b, "document.querySelector('[data-lane=\"low\"] "
	    "li[data-job=\"%lld\"]') !== null && window.sameDocument === true",
	    (long long)late);
	assert_int_equal(cdp_loads(f->b), loads);
	/* Still queued, as the page says: low is paused. */
	tassert_state(f->c, late, "queued");
	tassert_state(f->c, low[0], "queued");
	fx_end(f);
}

/* Whether the job is frozen, by get over the socket. */
static bool
tfrozen(struct triage_client *c, int64_t id)
{
	json_t *job = tget(c, id);
	bool v = json_is_true(json_object_get(job, "frozen"));

	json_decref(job);
	return v;
}

/*
 * Buttons clicked in the page act on the daemon, checked over the socket:
 * freeze and thaw a running job (its card says frozen meanwhile), hold and
 * release a queued job, cancel another, resume the paused priority, retry
 * the canceled job.
 */
static void
actions_clicked_in_the_page(void **state)
{
	struct fx *f = *state;
	int64_t a, b, r;
	json_t *job;

	fx_start(f, "");
	json_decref(tcall(f->c, "pause", "{ss}", "priority", "low"));
	a = submit_sh(f->c, "low", "to-cancel", "true");
	b = submit_sh(f->c, "low", "to-hold", "true");
	r = tsubmit(f->c, "{s[ss] ss ss}", "argv", "sleep", "600", "priority",
	    "high", "name", "to-freeze");
	(void)trunning_pid(f->c, r);
	fx_login(f);
	fx_wait_count(f, "low", "queued", 2);

	fx_click_job(f, "#running ", "freeze", r);
	fx_wait_frozen(f, r, true);
	assert_true(tfrozen(f->c, r));
	tassert_state(f->c, r, "running");
	fx_click_job(f, "#running ", "thaw", r);
	fx_wait_frozen(f, r, false);
	assert_false(tfrozen(f->c, r));
	json_decref(tcall(f->c, "cancel", "{sI}", "id", (json_int_t)r));
	tassert_ends(f->c, r, "canceled");

	fx_click_job(f, "", "hold", b);
	fx_wait_count(f, "low", "held", 1);
	assert_true(theld(f->c, b));
	fx_click_job(f, "", "release", b);
	fx_wait_count(f, "low", "held", 0);
	assert_false(theld(f->c, b));

	fx_click_job(f, "", "cancel", a);
	cdp_wait_true(f->b, "document.querySelector('#recent "
	    "tr[data-job=\"%lld\"] .state').textContent === 'canceled'",
	    (long long)a);
	tassert_state(f->c, a, "canceled");
	tassert_state(f->c, b, "queued");

	cdp_click(f->b, "[data-action=\"resume\"][data-priority=\"low\"]");
	tassert_ends(f->c, b, "succeeded");
	cdp_wait_true(f->b, "document.querySelector('[data-lane=\"low\"]')"
	    ".dataset.paused === 'no'");

	fx_click_job(f, "#recent ", "retry", a);
	/* The click's POST is the page's to send: until the page shows the
	 * new attempt's end, a still canceled job is not the retry's. */
	cdp_wait_true(f->b, "document.querySelector('#recent "
	    "tr[data-job=\"%lld\"] .state')?.textContent === 'succeeded'",
	    (long long)a);
	tassert_state(f->c, a, "succeeded");
	job = tget(f->c, a);
	assert_int_equal(tjint(job, "attempt"), 2);
	json_decref(job);
	/* Nothing went wrong that the page had to show. */
	assert_true(cdp_eval_int(f->b,
	    "document.getElementById('error').hidden ? 1 : 0") == 1);
	fx_end(f);
}

/*
 * A job granted its slots whose process has not started (its worker is
 * stopped here, so it stays so) is what the busy slot holds: /api/state
 * lists it among the running, queued at position 0 and waiting for
 * nothing, and the page shows it there as starting, not "Nothing is
 * running" beside a busy slot. Once its worker goes on, it runs and ends.
 */
static void
starting_job_explains_the_busy_slot(void **state)
{
	struct fx *f = *state;
	char auth[128];
	struct thttp_resp r;
	json_t *st, *running, *job;
	json_error_t err;
	pid_t workers[64];
	int64_t id;
	int n, i;

	fx_start(f, "");
	fx_login(f);
	n = proc_find(f->d->pid, 0, PROC_LIVE, workers, 64);
	assert_true(n >= 2 && n <= 64);
	for (i = 0; i < n; i++)
		tstop(workers[i]);
	id = submit_sh(f->c, "normal", "starter", "true");

	snprintf(auth, sizeof auth, "Authorization: Bearer %s", f->token);
	thttp(f->addr, "GET", "/api/state", auth, NULL, &r);
	assert_int_equal(r.status, 200);
	if ((st = json_loads(r.body, 0, &err)) == NULL)
		fail_msg("not JSON (%s): %s", err.text, r.body);
	thttp_free(&r);
	running = json_object_get(st, "running");
	assert_int_equal(json_array_size(running), 1);
	job = json_array_get(running, 0);
	assert_int_equal(tjint(job, "id"), id);
	assert_string_equal(tstate(job), "queued");
	assert_int_equal(tjint(job, "position"), 0);
	assert_true(json_is_null(json_object_get(job, "pending_reason")));
	assert_int_equal(tjint(json_object_get(st, "stats"), "slots_busy"), 1);
	json_decref(st);

	cdp_wait_true(f->b, "((e) => e !== null && "
	    "e.classList.contains('starting') && "
	    "e.querySelector('.prio').textContent.includes('starting'))"
	    "(document.querySelector('#running [data-job=\"%lld\"]')) && "
	    "document.getElementById('running-none').hidden", (long long)id);
	/* Its lane counts it queued, as stats does, and says it starts. */
	cdp_wait_true(f->b, "document.querySelector('[data-lane=\"normal\"] "
	    ".more').textContent === '1 starting'");
	cdp_screenshot(f->b, artifact("starting.png"));

	for (i = 0; i < n; i++)
		assert_int_equal(kill(workers[i], SIGCONT), 0);
	tassert_ends(f->c, id, "succeeded");
	cdp_wait_true(f->b, "document.querySelector('#recent "
	    "tr[data-job=\"%lld\"] .state')?.textContent === 'succeeded' && "
	    "!document.getElementById('running-none').hidden", (long long)id);
	fx_end(f);
}

/*
 * Without a credential the API answers 401 and does nothing; with the
 * session's cookie, a POST from another origin, or without the CSRF
 * header, is 403 and does nothing; the same POST done right works.
 */
static void
refusals_without_credential_or_from_another_site(void **state)
{
	struct fx *f = *state;
	char cookie[256], headers[1024], path[128], body[200], *csrf;
	struct thttp_resp r;
	json_t *v;
	int64_t id;

	fx_start(f, "");
	json_decref(tcall(f->c, "pause", "{ss}", "priority", "low"));
	id = submit_sh(f->c, "low", "victim", "true");
	snprintf(path, sizeof path, "/api/jobs/%lld/cancel", (long long)id);

	thttp(f->addr, "GET", "/api/state", NULL, NULL, &r);
	assert_int_equal(r.status, 401);
	thttp_free(&r);
	thttp(f->addr, "GET", "/", NULL, NULL, &r);
	assert_int_equal(r.status, 401);
	assert_non_null(strstr(r.body, "login-form"));
	thttp_free(&r);
	thttp(f->addr, "POST", path, NULL, NULL, &r);
	assert_int_equal(r.status, 401);
	thttp_free(&r);
	thttp(f->addr, "POST", "/api/priorities/low/resume",
	    "Authorization: Bearer wrong", NULL, &r);
	assert_int_equal(r.status, 401);
	thttp_free(&r);
	tassert_state(f->c, id, "queued");

	/* A session, as the browser gets it. */
	snprintf(body, sizeof body, "token=%s", f->token);
	thttp(f->addr, "POST", "/login",
	    "Content-Type: application/x-www-form-urlencoded", body, &r);
	assert_int_equal(r.status, 303);
	session_cookie(&r, cookie, sizeof cookie);
	thttp_free(&r);
	snprintf(headers, sizeof headers, "Cookie: %s", cookie);
	thttp(f->addr, "GET", "/api/session", headers, NULL, &r);
	assert_int_equal(r.status, 200);
	v = json_loads(r.body, 0, NULL);
	assert_non_null(v);
	csrf = strdup(tjstr(v, "csrf"));
	json_decref(v);
	thttp_free(&r);

	/* Another site's page posting with the browser's cookie. */
	snprintf(headers, sizeof headers, "Cookie: %s\nOrigin: "
	    "http://evil.example\nX-Triage-CSRF: %s", cookie, csrf);
	thttp(f->addr, "POST", path, headers, NULL, &r);
	assert_int_equal(r.status, 403);
	thttp_free(&r);
	/* Same origin but no CSRF token (a form can send no header). */
	snprintf(headers, sizeof headers, "Cookie: %s\nOrigin: %s", cookie,
	    f->origin);
	thttp(f->addr, "POST", path, headers, NULL, &r);
	assert_int_equal(r.status, 403);
	thttp_free(&r);
	snprintf(headers, sizeof headers, "Cookie: %s\nOrigin: %s\n"
	    "X-Triage-CSRF: 00%s", cookie, f->origin, csrf);
	thttp(f->addr, "POST", "/api/priorities/low/resume", headers, NULL,
	    &r);
	assert_int_equal(r.status, 403);
	thttp_free(&r);
	tassert_state(f->c, id, "queued");
	assert_true(paused(f->c, "low"));

	/* The same request done right is what acts. */
	snprintf(headers, sizeof headers, "Cookie: %s\nOrigin: %s\n"
	    "X-Triage-CSRF: %s", cookie, f->origin, csrf);
	thttp(f->addr, "POST", path, headers, NULL, &r);
	assert_int_equal(r.status, 200);
	thttp_free(&r);
	tassert_state(f->c, id, "canceled");
	free(csrf);
	fx_end(f);
}

/* The units of gpu job id was given, comma-joined, by get over the socket,
 * into buf. */
static const char *
gpus_of(struct triage_client *c, int64_t id, char *buf, size_t size)
{
	json_t *job = tget(c, id), *u;
	size_t i, len = 0;

	buf[0] = '\0';
	json_array_foreach(json_object_get(json_object_get(job, "devices"),
	    "gpu"), i, u)
		len += (size_t)snprintf(buf + len, size - len, "%s%s",
		    i ? "," : "", json_string_value(u));
	json_decref(job);
	return buf;
}

/* The unit's holders in the page's gpu card, as "#3 #4" ("" when free). */
static void
fx_wait_holders(struct fx *f, const char *unit, const char *want)
{
	cdp_wait_true(f->b, "((li) => li !== null && [...li.querySelectorAll("
	    "'.holders a[data-job]')].map((a) => a.textContent).join(' ') === "
	    "%s)(document.querySelector('#resources [data-resource=\"gpu\"] "
	    "[data-unit=\"%s\"]'))", cdp_quote(want), unit);
}

static void
fx_wait_gpu_waiting(struct fx *f, long n)
{
	cdp_wait_true(f->b, "document.querySelector('#resources "
	    "[data-resource=\"gpu\"] [data-count=\"waiting\"]')"
	    "?.textContent === '%ld'", n);
}

/*
 * The Resources panel (protocol v1.2): the memory budget and what running
 * jobs declared of it, and two GPUs, each with the job that holds it. Job
 * a takes GPU 0, b GPU 1; once a ends, b alone holds 1 while a job asking
 * for both GPUs waits for them, and one asking for one waits behind it.
 * When b ends, the one asking for both holds both.
 */
static void
resources_panel_shows_holders_and_waiters(void **state)
{
	struct fx *f = *state;
	int64_t a, b, both, one;
	char buf[64], want[64];

	fx_start(f, "memory = 1GiB\n[resource.gpu]\nunits = 0,1\n"
	    "env = CUDA_VISIBLE_DEVICES\n");
	a = tsubmit_gated_with(f->c, f->d, "a", "{s{si}}", "resources", "gpu",
	    1);
	(void)trunning_pid(f->c, a);
	b = tsubmit_gated_with(f->c, f->d, "b", "{s{si} sI}", "resources",
	    "gpu", 1, "memory", (json_int_t)256 << 20);
	(void)trunning_pid(f->c, b);
	assert_string_equal(gpus_of(f->c, a, buf, sizeof buf), "0");
	assert_string_equal(gpus_of(f->c, b, buf, sizeof buf), "1");
	topen_gate(f->d, "a");
	tassert_ends(f->c, a, "succeeded");
	both = tsubmit_gated_with(f->c, f->d, "both", "{s{si}}", "resources",
	    "gpu", 2);
	one = tsubmit(f->c, "{s[s] s{si}}", "argv", "true", "resources", "gpu",
	    1);
	tassert_state(f->c, both, "queued");
	tassert_state(f->c, one, "queued");

	fx_login(f);
	snprintf(want, sizeof want, "#%lld", (long long)b);
	fx_wait_holders(f, "1", want);
	fx_wait_holders(f, "0", "");
	cdp_wait_true(f->b, "document.querySelector('#resources "
	    "[data-resource=\"gpu\"] [data-unit=\"0\"] .load').textContent "
	    "=== 'free'");
	fx_wait_gpu_waiting(f, 2);
	cdp_wait_true(f->b, "document.querySelector('#resources "
	    "[data-resource=\"gpu\"] [data-count=\"used\"]').textContent "
	    "=== '1' && document.querySelector('#resources [data-memory] "
	    "[data-count=\"used\"]').textContent === '256 MiB' && "
	    "document.querySelector('#resources [data-memory] "
	    "[data-count=\"budget\"]').textContent === '1 GiB'");
	/* A holder's link leads to its job; its card names its GPU. */
	cdp_wait_true(f->b, "document.querySelector('#running "
	    "[data-job=\"%lld\"] .prio')?.textContent.endsWith('gpu 1')",
	    (long long)b);
	cdp_screenshot(f->b, artifact("dashboard-resources.png"));
	assert_png(artifact("dashboard-resources.png"), WIDE_W);

	/* b ends: the job asking for both GPUs holds both, live. */
	topen_gate(f->d, "b");
	tassert_ends(f->c, b, "succeeded");
	(void)trunning_pid(f->c, both);
	snprintf(want, sizeof want, "#%lld", (long long)both);
	fx_wait_holders(f, "0", want);
	fx_wait_holders(f, "1", want);
	fx_wait_gpu_waiting(f, 1);
	cdp_click(f->b, "#resources [data-unit=\"1\"] .holders a");
	cdp_wait_true(f->b, "location.hash === '#/job/%lld' && "
	    "document.querySelector('#job-fields dd[data-field=\"devices\"]')"
	    "?.textContent === '{\"gpu\":[\"0\",\"1\"]}'",
	    (long long)both);
	topen_gate(f->d, "both");
	tassert_ends(f->c, both, "succeeded");
	tassert_ends(f->c, one, "succeeded");
	fx_end(f);
}

/*
 * The dashboard under load, saved as test artifacts (build/artifacts/):
 * a few hundred queued jobs, two running and printing, recent ones that
 * succeeded and failed. dashboard.png is the README's.
 */
static void
screenshots_under_load(void **state)
{
	static const char *const names[] = { "backup-db", "render-frames",
	    "pytest", "compress-logs", "sync-mirror" };
	struct fx *f = *state;
	int64_t run[2], last = 0, to_hold = 0, id;
	char name[64];
	char *tail, *wide;
	int i;

	fx_start(f, "");
	/* Jobs that ran: the charts, the waits and the recent list. */
	for (i = 0; i < 24; i++) {
		snprintf(name, sizeof name, "%s", names[i % 5]);
		last = submit_sh(f->c, i % 2 ? "normal" : "high", name,
		    i % 7 == 3 ? "echo oops >&2; exit 3" : "echo ok");
	}
	tassert_ends(f->c, last, "succeeded");
	run[0] = submit_printer(f->c, f->d, "high", "build-release", "gate");
	run[1] = submit_printer(f->c, f->d, "normal", "nightly-report", "gate");
	trunning_pid(f->c, run[0]);
	trunning_pid(f->c, run[1]);
	/* Queued behind them, and in the paused low priority. */
	json_decref(tcall(f->c, "pause", "{ss}", "priority", "low"));
	for (i = 0; i < 40; i++) {
		id = submit_sh(f->c, "normal", names[i % 5], "true");
		if (i == 2)
			to_hold = id;
	}
	for (i = 0; i < 300; i++)
		submit_sh(f->c, "low", names[(i + 2) % 5], "true");
	json_decref(tcall(f->c, "hold", "{sI}", "id", (json_int_t)to_hold));

	fx_login(f);
	fx_wait_count(f, "low", "queued", 300);
	fx_wait_count(f, "normal", "queued", 40);
	fx_wait_count(f, "high", "running", 1);
	/* The tails show the output, and it moves without a reload. */
	cdp_wait_true(f->b, "[...document.querySelectorAll('pre.tail')]"
	    ".filter((p) => p.textContent.includes('step ')).length === 2");
	tail = cdp_eval_str(f->b, "document.querySelector("
	    "'pre[data-tail=\"%lld\"]').textContent", (long long)run[0]);
	cdp_wait_true(f->b, "document.querySelector('pre[data-tail=\"%lld\"]')"
	    ".textContent !== %s", (long long)run[0], cdp_quote(tail));
	free(tail);
	/* The charts are drawn: the slots' line at least. */
	cdp_wait_true(f->b, "document.querySelectorAll('#chart-slots "
	    "path.line').length >= 1 && document.querySelectorAll("
	    "'#chart-rate text.axis').length > 0");
	/* Elapsed times tick in the page. */
	cdp_wait_true(f->b, "[...document.querySelectorAll('.elapsed')]"
	    ".every((e) => /\\d/.test(e.textContent))");

	cdp_screenshot(f->b, artifact("dashboard.png"));
	assert_png(artifact("dashboard.png"), WIDE_W);
	json_decref(cdp_eval(f->b, "document.getElementById('running')"
	    ".scrollIntoView({ block: 'start' })"));
	cdp_screenshot(f->b, artifact("dashboard-running.png"));
	assert_png(artifact("dashboard-running.png"), WIDE_W);

	json_decref(cdp_call(f->b, "Emulation.setEmulatedMedia",
	    json_pack("{s[{ssss}]}", "features", "name",
	    "prefers-color-scheme", "value", "dark"), false));
	json_decref(cdp_eval(f->b, "window.scrollTo(0, 0)"));
	cdp_screenshot(f->b, artifact("dashboard-dark.png"));
	assert_png(artifact("dashboard-dark.png"), WIDE_W);

	cdp_viewport(f->b, NARROW_W, NARROW_H);
	cdp_wait_true(f->b, "document.documentElement.clientWidth === %d",
	    NARROW_W);
	cdp_screenshot(f->b, artifact("dashboard-narrow.png"));
	assert_png(artifact("dashboard-narrow.png"), NARROW_W);
	/* Narrow, nothing sticks out sideways but the tables' own scroll. */
	wide = cdp_eval_str(f->b, "document.documentElement.scrollWidth <= %d ?"
	    " '' : [...document.querySelectorAll('*')].filter((e) => "
	    "e.getBoundingClientRect().right > %d).slice(0, 8).map((e) => "
	    "e.tagName + '.' + e.className).join(' ')", NARROW_W, NARROW_W);
	if (wide[0] != '\0')
		fail_msg("wider than %d px: %s", NARROW_W, wide);
	free(wide);

	/* A job's page: its record and its output. */
	cdp_viewport(f->b, WIDE_W, WIDE_H);
	json_decref(cdp_eval(f->b, "location.hash = '#/job/%lld'",
	    (long long)run[0]));
	cdp_wait_true(f->b, "document.querySelector('#job-fields "
	    "dd[data-field=\"state\"]')?.textContent === 'running' && "
	    "document.getElementById('job-stdout').textContent"
	    ".includes('step 1:')");
	cdp_screenshot(f->b, artifact("dashboard-job.png"));
	assert_png(artifact("dashboard-job.png"), WIDE_W);

	topen_gate(f->d, "gate");
	tassert_ends(f->c, run[0], "succeeded");
	tassert_ends(f->c, run[1], "succeeded");
	cdp_wait_true(f->b, "document.querySelector('#job-fields "
	    "dd[data-field=\"state\"]').textContent === 'succeeded'");
	fx_end(f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    login_form_leads_to_the_dashboard, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(lanes_follow_the_queue_live,
		    fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(actions_clicked_in_the_page,
		    fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(
		    starting_job_explains_the_busy_slot, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(
		    refusals_without_credential_or_from_another_site,
		    fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(
		    resources_panel_shows_holders_and_waiters, fx_setup,
		    fx_teardown),
		cmocka_unit_test_setup_teardown(screenshots_under_load,
		    fx_setup, fx_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
