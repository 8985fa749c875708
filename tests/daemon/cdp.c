/* cdp.c - for the dashboard test: a real headless Chromium, one page of it,
 * driven over the DevTools protocol on a pipe (--remote-debugging-pipe). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <resolv.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cdp.h"
#include "harness.h"
#include "tsupport-dir.h"

/* The pipe's ends in Chromium, which --remote-debugging-pipe fixes: it
 * reads our commands on 3 and writes its answers and events on 4. */
#define CDP_FD_IN 3
#define CDP_FD_OUT 4
/* Console lines and exceptions of the page kept for a failure's report. */
#define CDP_CONSOLE_LINES 24
#define CDP_CONSOLE_LEN 300
/* How long one in-page poll of cdp_wait_true lasts before we look again. */
#define CDP_POLL_SLICE_MS 5000

struct cdp {
	pid_t	 owner;		/* the test process, which alone may stop it */
	pid_t	 pid;		/* the browser, leader of its process group */
	int	 to;		/* our end of its fd 3 */
	int	 from;		/* our end of its fd 4 */
	char	 dir[64];	/* the temp profile, and chromium.log */
	char	*buf;		/* bytes read, not yet a whole message */
	size_t	 len, cap;
	json_int_t next_id;
	char	*session;	/* the page's session id */
	unsigned loads;		/* the page's load events */
	unsigned exceptions;	/* and its exceptions and console.error */
	char	 console[CDP_CONSOLE_LINES][CDP_CONSOLE_LEN];
	unsigned nconsole;	/* lines ever kept; the ring holds the last */
};

/* A browser that a failed test leaves is stopped at exit at the latest. */
static struct cdp *cdp_live;

bool
cdp_available(void)
{
	return access(CDP_BROWSER, X_OK) == 0;
}

/* Prints the page's last console lines and the end of Chromium's own log,
 * for a failure. */
static void
cdp_report(const struct cdp *c)
{
	char tail[4096], path[128];
	unsigned i, first;
	size_t n;
	FILE *f;

	first = c->nconsole > CDP_CONSOLE_LINES ?
	    c->nconsole - CDP_CONSOLE_LINES : 0;
	if (c->nconsole > 0)
		fprintf(stderr, "---- the page's last console lines ----\n");
	for (i = first; i < c->nconsole; i++)
		fprintf(stderr, "%s\n", c->console[i % CDP_CONSOLE_LINES]);
	snprintf(path, sizeof path, "%s/chromium.log", c->dir);
	if ((f = fopen(path, "r")) == NULL)
		return;
	if (fseek(f, -(long)(sizeof tail - 1), SEEK_END) != 0)
		rewind(f);
	n = fread(tail, 1, sizeof tail - 1, f);
	tail[n] = '\0';
	fclose(f);
	fprintf(stderr, "---- the end of chromium's log ----\n%s\n", tail);
}

#define cdp_fail(c, ...) do {						\
	cdp_report(c);							\
	fail_msg(__VA_ARGS__);						\
} while (0)

static void
cdp_keep_line(struct cdp *c, const char *kind, const char *text)
{
	snprintf(c->console[c->nconsole++ % CDP_CONSOLE_LINES],
	    CDP_CONSOLE_LEN, "%s: %s", kind, text);
}

/* Keeps what an event tells that a test may need: loads and the console. */
static void
cdp_event(struct cdp *c, const json_t *msg)
{
	const char *method = json_string_value(json_object_get(msg, "method"));
	json_t *params = json_object_get(msg, "params"), *arg;
	char line[CDP_CONSOLE_LEN];
	size_t i, used = 0;
	const char *s;

	if (strcmp(method, "Page.loadEventFired") == 0) {
		c->loads++;
	} else if (strcmp(method, "Runtime.consoleAPICalled") == 0) {
		line[0] = '\0';
		json_array_foreach(json_object_get(params, "args"), i, arg) {
			s = json_string_value(json_object_get(arg, "value"));
			if (s == NULL)
				s = json_string_value(json_object_get(arg,
				    "description"));
			if (s != NULL && used < sizeof line)
				used += (size_t)snprintf(line + used,
				    sizeof line - used, "%s%s", i ? " " : "", s);
		}
		s = json_string_value(json_object_get(params, "type"));
		if (s != NULL && strcmp(s, "error") == 0)
			c->exceptions++;
		cdp_keep_line(c, s, line);
	} else if (strcmp(method, "Runtime.exceptionThrown") == 0) {
		params = json_object_get(params, "exceptionDetails");
		arg = json_object_get(params, "exception");
		s = json_string_value(json_object_get(arg, "description"));
		c->exceptions++;
		cdp_keep_line(c, "exception", s != NULL ? s :
		    json_string_value(json_object_get(params, "text")));
	} else if (strcmp(method, "Log.entryAdded") == 0) {
		params = json_object_get(params, "entry");
		cdp_keep_line(c, json_string_value(json_object_get(params,
		    "level")), json_string_value(json_object_get(params,
		    "text")));
	}
}

/*
 * The next message from the browser, read until deadline: a new reference,
 * or NULL when the deadline passed first. Fails the test when the browser
 * closed its end (it died) or sent what is not JSON.
 */
static json_t *
cdp_read(struct cdp *c, int64_t deadline)
{
	struct pollfd pfd = { c->from, POLLIN, 0 };
	json_error_t jerr;
	json_t *msg;
	char *nul;
	size_t n;
	ssize_t r;

	for (;;) {
		if (c->len > 0 &&
		    (nul = memchr(c->buf, '\0', c->len)) != NULL) {
			n = (size_t)(nul - c->buf);
			msg = json_loadb(c->buf, n, 0, &jerr);
			memmove(c->buf, nul + 1, c->len - n - 1);
			c->len -= n + 1;
			if (msg == NULL)
				cdp_fail(c, "chromium sent what is not JSON: "
				    "%s", jerr.text);
			return msg;
		}
		if (c->cap - c->len < 65536) {
			c->cap = c->cap * 2 + 65536;
			if ((c->buf = realloc(c->buf, c->cap)) == NULL)
				fail_msg("out of memory");
		}
		r = poll(&pfd, 1, tleft_ms(deadline));
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1)
			fail_msg("poll: %s", strerror(errno));
		if (r == 0)
			return NULL;
		r = read(c->from, c->buf + c->len, c->cap - c->len);
		if (r == -1 && errno == EINTR)
			continue;
		if (r <= 0)
			cdp_fail(c, "chromium closed its pipe (did it die?)%s%s",
			    r == -1 ? ": " : "", r == -1 ? strerror(errno) : "");
		c->len += (size_t)r;
	}
}

static void
cdp_write(struct cdp *c, const char *s, size_t len)
{
	ssize_t n;

	while (len > 0) {
		n = write(c->to, s, len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			cdp_fail(c, "writing to chromium: %s", strerror(errno));
		s += n;
		len -= (size_t)n;
	}
}

/*
 * Sends a command and waits until deadline for its response: its result (a
 * new reference), or NULL with *error set (allocated, one line) on an error
 * response or when the deadline passed. Events meanwhile go to cdp_event.
 */
static json_t *
cdp_try(struct cdp *c, const char *method, json_t *params, bool browser,
    int64_t deadline, char **error)
{
	json_t *req, *msg, *id, *res;
	json_int_t want = ++c->next_id;
	const char *text;
	char *s;

	req = json_pack("{sIss}", "id", want, "method", method);
	if (req == NULL)
		fail_msg("out of memory");
	if (params != NULL)
		json_object_set_new(req, "params", params);
	if (!browser)
		json_object_set_new(req, "sessionId", json_string(c->session));
	if ((s = json_dumps(req, JSON_COMPACT)) == NULL)
		fail_msg("out of memory");
	json_decref(req);
	cdp_write(c, s, strlen(s) + 1);		/* the NUL ends the message */
	free(s);

	while ((msg = cdp_read(c, deadline)) != NULL) {
		id = json_object_get(msg, "id");
		if (id == NULL) {
			if (json_is_string(json_object_get(msg, "method")))
				cdp_event(c, msg);
			json_decref(msg);
			continue;
		}
		if (json_integer_value(id) != want) {
			json_decref(msg);	/* of an earlier call given up */
			continue;
		}
		if ((res = json_object_get(msg, "result")) != NULL) {
			json_incref(res);
			json_decref(msg);
			return res;
		}
		text = json_string_value(json_object_get(json_object_get(msg,
		    "error"), "message"));
		if (asprintf(error, "%s: %s", method, text != NULL ? text :
		    "an error without a message") == -1)
			fail_msg("out of memory");
		json_decref(msg);
		return NULL;
	}
	if (asprintf(error, "%s: no answer in time", method) == -1)
		fail_msg("out of memory");
	return NULL;
}

json_t *
cdp_call(struct cdp *c, const char *method, json_t *params, bool browser)
{
	char *error = NULL;
	json_t *res;

	res = cdp_try(c, method, params, browser,
	    tdeadline(HARNESS_TIMEOUT_MS), &error);
	if (res == NULL)
		cdp_fail(c, "%s", error);
	return res;
}

static void
cdp_call_void(struct cdp *c, const char *method, json_t *params, bool browser)
{
	json_decref(cdp_call(c, method, params, browser));
}

/* The browser's process, to exec in the forked child: never returns. */
static void __attribute__((noreturn))
cdp_exec(const struct cdp *c, int in, int out, int width, int height)
{
	char profile[128], size[64], log[128];
	sigset_t none;
	int fd;

	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* Out of the way of 3 and 4 first, so that neither dup2 below
	 * overwrites the other end; dup2 clears their FD_CLOEXEC. */
	if ((in = fcntl(in, F_DUPFD_CLOEXEC, 10)) == -1 ||
	    (out = fcntl(out, F_DUPFD_CLOEXEC, 10)) == -1 ||
	    dup2(in, CDP_FD_IN) == -1 || dup2(out, CDP_FD_OUT) == -1)
		_exit(127);
	snprintf(log, sizeof log, "%s/chromium.log", c->dir);
	if ((fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
	    0600)) == -1 || dup2(fd, 1) == -1 || dup2(fd, 2) == -1)
		_exit(127);
	if ((fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) == -1 ||
	    dup2(fd, 0) == -1)
		_exit(127);
	/* Its caches and config too go in the temp dir, not in $HOME. */
	setenv("HOME", c->dir, 1);
	setenv("XDG_CONFIG_HOME", c->dir, 1);
	setenv("XDG_CACHE_HOME", c->dir, 1);
	snprintf(profile, sizeof profile, "--user-data-dir=%s/profile", c->dir);
	snprintf(size, sizeof size, "--window-size=%d,%d", width, height);
	/*
	 * --no-sandbox: the tests run as root, where Chromium's sandbox
	 * refuses to start. The rest keep it from reaching any network
	 * (updates, sync, safe browsing, metrics) and from asking anything.
	 */
	execl(CDP_BROWSER, CDP_BROWSER, "--headless", "--no-sandbox",
	    "--remote-debugging-pipe", profile, size, "--hide-scrollbars",
	    "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
	    "--no-default-browser-check", "--disable-background-networking",
	    "--disable-component-update", "--disable-sync",
	    "--disable-extensions", "--disable-default-apps", "--no-pings",
	    "--disable-domain-reliability", "--mute-audio",
	    "--disable-client-side-phishing-detection",
	    "--disable-features=Translate,MediaRouter,OptimizationHints",
	    "--password-store=basic", "--use-mock-keychain", "about:blank",
	    (char *)NULL);
	_exit(127);
}

/* The first page target's id (allocated), or NULL when there is none. */
static char *
cdp_page_target(struct cdp *c)
{
	json_t *res, *info;
	char *id = NULL;
	size_t i;

	res = cdp_call(c, "Target.getTargets", NULL, true);
	json_array_foreach(json_object_get(res, "targetInfos"), i, info)
		if (id == NULL && strcmp(tjstr(info, "type"), "page") == 0 &&
		    (id = strdup(tjstr(info, "targetId"))) == NULL)
			fail_msg("out of memory");
	json_decref(res);
	return id;
}

struct cdp *
cdp_start(int width, int height)
{
	struct cdp *c;
	char *target, *error = NULL;
	json_t *res;
	int in[2], out[2];
	int64_t deadline;

	if ((c = calloc(1, sizeof *c)) == NULL)
		fail_msg("out of memory");
	c->to = c->from = -1;
	c->owner = getpid();
	snprintf(c->dir, sizeof c->dir, "/tmp/triage-cdp.XXXXXX");
	if (mkdtemp(c->dir) == NULL) {
		free(c);
		fail_msg("mkdtemp: %s", strerror(errno));
	}
	/* One browser at a time: one still here was left by a test that
	 * failed without a teardown. */
	if (cdp_live != NULL)
		cdp_stop(cdp_live);
	cdp_live = c;
	if (pipe2(in, O_CLOEXEC) == -1 || pipe2(out, O_CLOEXEC) == -1)
		fail_msg("pipe: %s", strerror(errno));
	if ((c->pid = fork()) == 0)
		cdp_exec(c, in[0], out[1], width, height);
	if (c->pid == -1)
		fail_msg("fork: %s", strerror(errno));
	setpgid(c->pid, c->pid);
	close(in[0]);
	close(out[1]);
	c->to = in[1];
	c->from = out[0];

	/* Up once it answers: the first call waits for it. */
	deadline = tdeadline(HARNESS_TIMEOUT_MS);
	res = cdp_try(c, "Target.getTargets", NULL, true, deadline, &error);
	if (res == NULL)
		cdp_fail(c, "chromium did not come up: %s", error);
	json_decref(res);
	if ((target = cdp_page_target(c)) == NULL) {
		res = cdp_call(c, "Target.createTarget",
		    json_pack("{ss}", "url", "about:blank"), true);
		target = strdup(tjstr(res, "targetId"));
		json_decref(res);
		if (target == NULL)
			fail_msg("out of memory");
	}
	res = cdp_call(c, "Target.attachToTarget", json_pack("{sssb}",
	    "targetId", target, "flatten", 1), true);
	free(target);
	if ((c->session = strdup(tjstr(res, "sessionId"))) == NULL)
		fail_msg("out of memory");
	json_decref(res);
	cdp_call_void(c, "Page.enable", NULL, false);
	cdp_call_void(c, "Runtime.enable", NULL, false);
	cdp_call_void(c, "Log.enable", NULL, false);
	cdp_viewport(c, width, height);
	return c;
}

void
cdp_stop(struct cdp *c)
{
	struct tsupport_err err;
	int status;

	if (c == NULL)
		return;
	if (c == cdp_live)
		cdp_live = NULL;
	if (c->to != -1)
		close(c->to);
	if (c->from != -1)
		close(c->from);
	if (c->pid > 0) {
		/* Its renderers and helpers are in its process group. */
		kill(-c->pid, SIGKILL);
		while (waitpid(c->pid, &status, 0) == -1 && errno == EINTR)
			continue;
	}
	/* Twice: a helper still dying may have written a last file. */
	if (tsupport_dir_remove(c->dir, &err) == -1 &&
	    tsupport_dir_remove(c->dir, &err) == -1)
		fprintf(stderr, "cdp: %s\n", err.msg);
	free(c->session);
	free(c->buf);
	free(c);
}

/* A failed test longjmps past its cdp_stop when it has no teardown. */
static void __attribute__((destructor))
cdp_at_exit(void)
{
	/* Not from a fork of the test that exits. */
	if (cdp_live != NULL && cdp_live->owner == getpid())
		cdp_stop(cdp_live);
}

unsigned
cdp_loads(const struct cdp *c)
{
	return c->loads;
}

unsigned
cdp_exceptions(const struct cdp *c)
{
	return c->exceptions;
}

void
cdp_wait_loads(struct cdp *c, unsigned loads)
{
	int64_t deadline = tdeadline(HARNESS_TIMEOUT_MS);
	json_t *msg;

	while (c->loads <= loads) {
		if ((msg = cdp_read(c, deadline)) == NULL)
			cdp_fail(c, "timed out waiting for the page to load");
		if (json_object_get(msg, "id") == NULL &&
		    json_is_string(json_object_get(msg, "method")))
			cdp_event(c, msg);
		json_decref(msg);
	}
}

void
cdp_navigate(struct cdp *c, const char *url)
{
	unsigned loads = c->loads;
	const char *error;
	json_t *res;

	res = cdp_call(c, "Page.navigate", json_pack("{ss}", "url", url),
	    false);
	error = json_string_value(json_object_get(res, "errorText"));
	if (error != NULL && error[0] != '\0')
		cdp_fail(c, "cannot load %s: %s", url, error);
	json_decref(res);
	cdp_wait_loads(c, loads);
}

/*
 * Evaluates expr in the page until deadline: its value (a new reference),
 * or NULL with *error set (allocated) when it threw, the page went away
 * meanwhile, or no answer came.
 */
static json_t *
cdp_eval_try(struct cdp *c, const char *expr, int64_t deadline, char **error)
{
	json_t *res, *val, *exc;
	const char *text;

	res = cdp_try(c, "Runtime.evaluate", json_pack("{sssbsbsb}",
	    "expression", expr, "returnByValue", 1, "awaitPromise", 1,
	    "userGesture", 1), false, deadline, error);
	if (res == NULL)
		return NULL;
	if ((exc = json_object_get(res, "exceptionDetails")) != NULL) {
		text = json_string_value(json_object_get(json_object_get(exc,
		    "exception"), "description"));
		if (text == NULL)
			text = json_string_value(json_object_get(exc, "text"));
		if (asprintf(error, "%s", text != NULL ? text : "it threw") == -1)
			fail_msg("out of memory");
		json_decref(res);
		return NULL;
	}
	val = json_object_get(json_object_get(res, "result"), "value");
	val = val != NULL ? json_incref(val) : json_null();
	json_decref(res);
	return val;
}

static json_t *
cdp_veval(struct cdp *c, const char *fmt, va_list ap)
{
	char *expr, *error = NULL;
	json_t *val;

	if (vasprintf(&expr, fmt, ap) == -1)
		fail_msg("out of memory");
	val = cdp_eval_try(c, expr, tdeadline(HARNESS_TIMEOUT_MS), &error);
	if (val == NULL)
		cdp_fail(c, "evaluating %s: %s", expr, error);
	free(expr);
	return val;
}

json_t *
cdp_eval(struct cdp *c, const char *fmt, ...)
{
	va_list ap;
	json_t *val;

	va_start(ap, fmt);
	val = cdp_veval(c, fmt, ap);
	va_end(ap);
	return val;
}

long long
cdp_eval_int(struct cdp *c, const char *fmt, ...)
{
	va_list ap;
	json_t *val;
	long long n;

	va_start(ap, fmt);
	val = cdp_veval(c, fmt, ap);
	va_end(ap);
	if (!json_is_number(val))
		cdp_fail(c, "%s: not a number", fmt);
	n = (long long)json_number_value(val);
	json_decref(val);
	return n;
}

char *
cdp_eval_str(struct cdp *c, const char *fmt, ...)
{
	va_list ap;
	json_t *val;
	char *s;

	va_start(ap, fmt);
	val = cdp_veval(c, fmt, ap);
	va_end(ap);
	if (!json_is_string(val))
		cdp_fail(c, "%s: not a string", fmt);
	if ((s = strdup(json_string_value(val))) == NULL)
		fail_msg("out of memory");
	json_decref(val);
	return s;
}

/*
 * expr polled in the page itself, on its own timers, for slice ms at most:
 * a promise of true once it holds, false when the slice ran out. Every 20
 * ms, and at once after every change of the document.
 */
static char *
cdp_poll_expr(const char *expr, int slice)
{
	char *s;

	if (asprintf(&s,
	    "new Promise((resolve) => {"
	    " const holds = () => { try { return !!(%s); }"
	    "  catch (e) { return false; } };"
	    " let done = false, obs = null, timer = 0, end = 0;"
	    " const finish = (v) => { if (done) return; done = true;"
	    "  clearInterval(timer); clearTimeout(end);"
	    "  if (obs) obs.disconnect(); resolve(v); };"
	    " if (holds()) return finish(true);"
	    " obs = new MutationObserver(() => { if (holds()) finish(true); });"
	    " obs.observe(document, { subtree: true, childList: true,"
	    "  attributes: true, characterData: true });"
	    " timer = setInterval(() => { if (holds()) finish(true); }, 20);"
	    " end = setTimeout(() => finish(holds()), %d);"
	    "})", expr, slice) == -1)
		fail_msg("out of memory");
	return s;
}

void
cdp_wait_true(struct cdp *c, const char *fmt, ...)
{
	int64_t deadline = tdeadline(HARNESS_TIMEOUT_MS);
	char *expr, *poll_expr, *error = NULL;
	json_t *val, *msg;
	va_list ap;
	int slice;

	va_start(ap, fmt);
	if (vasprintf(&expr, fmt, ap) == -1)
		fail_msg("out of memory");
	va_end(ap);
	for (;;) {
		slice = tleft_ms(deadline);
		if (slice > CDP_POLL_SLICE_MS)
			slice = CDP_POLL_SLICE_MS;
		poll_expr = cdp_poll_expr(expr, slice);
		val = cdp_eval_try(c, poll_expr, deadline + 1000, &error);
		free(poll_expr);
		if (json_is_true(val)) {
			json_decref(val);
			break;
		}
		json_decref(val);
		if (tleft_ms(deadline) == 0)
			cdp_fail(c, "timed out waiting for %s%s%s", expr,
			    error != NULL ? ": " : "", error != NULL ? error : "");
		if (error != NULL) {
			/* The page was being replaced: give the new one a
			 * moment to come, taking the events meanwhile. */
			free(error);
			error = NULL;
			if ((msg = cdp_read(c, tdeadline(50))) != NULL) {
				if (json_object_get(msg, "id") == NULL &&
				    json_is_string(json_object_get(msg,
				    "method")))
					cdp_event(c, msg);
				json_decref(msg);
			}
		}
	}
	free(error);
	free(expr);
}

void
cdp_click(struct cdp *c, const char *selector)
{
	static const char *const kinds[] = { "mouseMoved", "mousePressed",
	    "mouseReleased" };
	char cond[1024];
	json_t *at;
	double x, y;
	size_t i;

	/* The element is there, enabled, and the topmost at its middle. */
	snprintf(cond, sizeof cond,
	    "((e) => { if (!e || e.disabled) return false;"
	    " e.scrollIntoView({ block: 'center', inline: 'center' });"
	    " const r = e.getBoundingClientRect();"
	    " if (r.width === 0 || r.height === 0) return false;"
	    " const t = document.elementFromPoint(r.left + r.width / 2,"
	    "  r.top + r.height / 2);"
	    " return t !== null && (t === e || e.contains(t)); })"
	    "(document.querySelector(%s))", cdp_quote(selector));
	cdp_wait_true(c, "%s", cond);
	at = cdp_eval(c, "((r) => [r.left + r.width / 2, r.top + r.height / 2])"
	    "(document.querySelector(%s).getBoundingClientRect())",
	    cdp_quote(selector));
	x = json_number_value(json_array_get(at, 0));
	y = json_number_value(json_array_get(at, 1));
	json_decref(at);
	for (i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		cdp_call_void(c, "Input.dispatchMouseEvent",
		    json_pack("{sssfsfsssi}", "type", kinds[i], "x", x, "y", y,
		    "button", i == 0 ? "none" : "left", "clickCount",
		    i == 0 ? 0 : 1), false);
}

void
cdp_type(struct cdp *c, const char *text)
{
	cdp_call_void(c, "Input.insertText", json_pack("{ss}", "text", text),
	    false);
}

void
cdp_viewport(struct cdp *c, int width, int height)
{
	cdp_call_void(c, "Emulation.setDeviceMetricsOverride",
	    json_pack("{sisisfsb}", "width", width, "height", height,
	    "deviceScaleFactor", 1.0, "mobile", 0), false);
}

void
cdp_screenshot(struct cdp *c, const char *path)
{
	unsigned char *png;
	const char *data;
	json_t *res;
	size_t cap;
	int n, fd;

	res = cdp_call(c, "Page.captureScreenshot",
	    json_pack("{ss}", "format", "png"), false);
	if ((data = json_string_value(json_object_get(res, "data"))) == NULL)
		cdp_fail(c, "Page.captureScreenshot: no data");
	cap = strlen(data) / 4 * 3 + 3;
	if ((png = malloc(cap)) == NULL)
		fail_msg("out of memory");
	if ((n = b64_pton(data, png, cap)) < 0)
		cdp_fail(c, "Page.captureScreenshot: data not in base64");
	json_decref(res);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0644)) == -1 || write(fd, png, (size_t)n) != n || close(fd) == -1)
		fail_msg("writing %s: %s", path, strerror(errno));
	free(png);
}

const char *
cdp_quote(const char *s)
{
	static char buf[4096];
	json_t *str = json_string(s);
	size_t n;

	if (str == NULL)
		fail_msg("cdp_quote: not UTF-8");
	n = json_dumpb(str, buf, sizeof buf - 1, JSON_ENCODE_ANY);
	json_decref(str);
	if (n == 0 || n >= sizeof buf)
		fail_msg("cdp_quote: too long");
	buf[n] = '\0';
	return buf;
}
