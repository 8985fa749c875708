/* test-http.c - the [http] listener of a real triaged: who gets in (token,
 * sessions, auth = none), the cross-site checks, the API over JSON-RPC, the
 * event stream, and the bounds (headers, bodies, connections, slow clients). */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "thttp.h"

#define TOKEN "s3cret-token-of-the-tests-0123456789"
#define PAUSED "[priority.held]\nrank = 5\n[priority.normal]\nrank = 10\n"

static int raw_connect(const char *addr);
static void raw_send(int fd, const char *text);
static bool raw_read_until(int fd, char *buf, size_t size, size_t *len,
    const char *needle, int64_t deadline);

/* A GET /api/state with headers (each line ending in CRLF) over a
 * connection of its own is answered with status. */
static void
assert_raw_status(const char *addr, const char *headers, const char *status)
{
	char req[512], buf[8192] = "", want[32];
	size_t len = 0;
	int fd = raw_connect(addr);

	snprintf(req, sizeof req, "GET /api/state HTTP/1.1\r\n%s"
	    "Connection: close\r\n\r\n", headers);
	snprintf(want, sizeof want, "HTTP/1.1 %s ", status);
	raw_send(fd, req);
	if (!raw_read_until(fd, buf, sizeof buf, &len, "\r\n",
	    tdeadline(HARNESS_TIMEOUT_MS)) || strncmp(buf, want,
	    strlen(want)) != 0)
		fail_msg("%s: not %s but: %.60s", headers, status, buf);
	close(fd);
}

/* A daemon with [http] on a free port, auth = token. */
struct hd {
	struct tdaemon *d;
	struct triage_client *c;
	char addr[64];
	char token_file[300];
	char dash[300];
};

/* The page files the listener serves, as small stand-ins of our own, so
 * that these tests do not depend on the dashboard's content. */
static void
write_dashboard(const char *dir)
{
	char path[400];

	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(path, sizeof path, "%s/index.html", dir);
	twrite_text(path, "<p>the dashboard</p>\n");
	snprintf(path, sizeof path, "%s/login.html", dir);
	twrite_text(path, "<form>login</form>\n");
	snprintf(path, sizeof path, "%s/dashboard.js", dir);
	twrite_text(path, "\"use strict\";\n");
	snprintf(path, sizeof path, "%s/dashboard.css", dir);
	twrite_text(path, "body { margin: 0 }\n");
	snprintf(path, sizeof path, "%s/secret.txt", dir);
	twrite_text(path, "not served\n");
}

/* http_lines: more [http] keys. */
static struct hd *
hd_start(const char *http_lines)
{
	struct hd *h = calloc(1, sizeof *h);
	char conf[2048], dir[] = "/tmp/test-http-XXXXXX";

	assert_non_null(h);
	/* The token file and page files live outside the daemon's dir,
	 * which only exists once it is started. */
	assert_non_null(mkdtemp(dir));
	snprintf(h->token_file, sizeof h->token_file, "%s/token", dir);
	twrite_text(h->token_file, "%s\n", TOKEN);
	assert_int_equal(chmod(h->token_file, 0600), 0);
	snprintf(h->dash, sizeof h->dash, "%s/dash", dir);
	write_dashboard(h->dash);
	snprintf(h->addr, sizeof h->addr, "127.0.0.1:%d", tfree_port());
	snprintf(conf, sizeof conf, "%s[http]\nlisten = %s\n"
	    "dashboard_dir = %s\ntoken_file = %s\n%s", PAUSED, h->addr,
	    h->dash, h->token_file, http_lines);
	h->d = tdaemon_start(conf);
	h->c = tconnect(h->d);
	return h;
}

static void
hd_end(struct hd *h)
{
	char dir[sizeof h->token_file];

	tdaemon_end(h->d, h->c);
	snprintf(dir, sizeof dir, "%.*s", (int)(strrchr(h->token_file, '/') -
	    h->token_file), h->token_file);
	tremove_dir(dir);
	free(h);
}

static json_t *
body_json(const struct thttp_resp *r)
{
	json_error_t err;
	json_t *v = json_loads(r->body, 0, &err);

	if (v == NULL)
		fail_msg("not JSON (%s): %s", err.text, r->body);
	return v;
}

static void
assert_status(const struct thttp_resp *r, long status)
{
	if (r->status != status)
		fail_msg("HTTP %ld, not %ld: %s", r->status, status, r->body);
}

/* A session logged in through the form: its cookie and CSRF token. */
struct session {
	char cookie[128];
	char csrf[64];
};

static void
login(const struct hd *h, struct session *s)
{
	struct thttp_resp r;
	char *v, *semi;
	json_t *o;
	char hdr[256];

	thttp(h->addr, "POST", "/login", "Content-Type: "
	    "application/x-www-form-urlencoded", "token=" TOKEN, &r);
	assert_status(&r, 303);
	assert_non_null(v = thttp_header(&r, "Location"));
	assert_string_equal(v, "/");
	free(v);
	assert_non_null(v = thttp_header(&r, "Set-Cookie"));
	assert_non_null(strstr(v, "HttpOnly"));
	assert_non_null(strstr(v, "SameSite=Strict"));
	if ((semi = strchr(v, ';')) != NULL)
		*semi = '\0';
	snprintf(s->cookie, sizeof s->cookie, "%s", v);
	free(v);
	thttp_free(&r);
	snprintf(hdr, sizeof hdr, "Cookie: %s", s->cookie);
	thttp(h->addr, "GET", "/api/session", hdr, NULL, &r);
	assert_status(&r, 200);
	o = body_json(&r);
	snprintf(s->csrf, sizeof s->csrf, "%s", tjstr(o, "csrf"));
	assert_string_equal(tjstr(o, "auth"), "token");
	json_decref(o);
	thttp_free(&r);
}

/* Without a credential only /metrics and /login answer: / with the login
 * page (401), the API with a JSON error; a wrong token is no better. */
static void
test_no_credential_is_refused(void **state)
{
	struct hd *h = hd_start("");
	char *v;
	static const char *const paths[] = { "/api/state", "/api/session",
	    "/api/events", "/api/jobs", "/api/jobs/1", "/dashboard.js" };
	struct thttp_resp r;
	size_t i;
	json_t *o;

	(void)state;
	thttp(h->addr, "GET", "/", NULL, NULL, &r);
	assert_status(&r, 401);
	assert_string_equal(r.body, "<form>login</form>\n");
	thttp_free(&r);
	for (i = 0; i < sizeof paths / sizeof *paths; i++) {
		thttp(h->addr, "GET", paths[i], NULL, NULL, &r);
		assert_status(&r, 401);
		o = body_json(&r);
		assert_non_null(strstr(json_string_value(json_object_get(
		    json_object_get(o, "error"), "message")),
		    "needs a credential"));
		json_decref(o);
		thttp_free(&r);
	}
	thttp(h->addr, "GET", "/api/state", "Authorization: Bearer "
	    "not-the-token-at-all", NULL, &r);
	assert_status(&r, 401);
	thttp_free(&r);
	thttp(h->addr, "POST", "/api/priorities/held/pause", NULL, "", &r);
	assert_status(&r, 401);
	thttp_free(&r);
	thttp(h->addr, "GET", "/login", NULL, NULL, &r);
	assert_status(&r, 200);
	thttp_free(&r);
	/* The login page's style is the one file open to anyone. */
	thttp(h->addr, "GET", "/dashboard.css", NULL, NULL, &r);
	assert_status(&r, 200);
	thttp_free(&r);
	/* A wrong token at the form goes back to it, saying so. */
	thttp(h->addr, "POST", "/login", NULL, "token=wrong", &r);
	assert_status(&r, 303);
	assert_null(thttp_header(&r, "Set-Cookie"));
	assert_non_null(v = thttp_header(&r, "Location"));
	assert_string_equal(v, "/login?failed=1#failed");
	free(v);
	thttp_free(&r);
	twait_log(h->d, "a login with a wrong token");
	hd_end(h);
}

/* The bearer token opens everything; the API speaks the methods. */
static void
test_bearer_token_and_the_api(void **state)
{
	struct hd *h = hd_start("");
	const char *auth = "Authorization: Bearer " TOKEN;
	struct thttp_resp r;
	int64_t id, done;
	char path[128];
	json_t *o, *jobs;
	int i;

	(void)state;
	json_decref(tcall(h->c, "pause", "{ss}", "priority", "held"));
	id = tsubmit(h->c, "{s[ss] ss}", "argv", "sleep", "60", "priority",
	    "held");
	done = tsubmit(h->c, "{s[sss]}", "argv", "sh", "-c", "echo hello");
	json_decref(twait(h->c, done));

	thttp(h->addr, "GET", "/api/state", auth, NULL, &r);
	assert_status(&r, 200);
	o = body_json(&r);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(
	    json_object_get(o, "stats"), "jobs"), "queued")), 1);
	jobs = json_object_get(json_object_get(o, "queued"), "held");
	assert_int_equal(json_array_size(jobs), 1);
	assert_int_equal(tjint(json_array_get(jobs, 0), "id"), id);
	json_decref(o);
	thttp_free(&r);
	/* A lane shows the head of its queue, never the whole of it. */
	for (i = 0; i < 12; i++)
		(void)tsubmit(h->c, "{s[ss] ss}", "argv", "sleep", "60",
		    "priority", "held");
	thttp(h->addr, "GET", "/api/state", auth, NULL, &r);
	assert_status(&r, 200);
	o = body_json(&r);
	jobs = json_object_get(json_object_get(o, "queued"), "held");
	assert_int_equal(json_array_size(jobs), 10);
	assert_int_equal(tjint(json_array_get(jobs, 0), "id"), id);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(
	    json_object_get(o, "stats"), "jobs"), "queued")), 13);
	assert_int_equal(tjint(json_array_get(json_object_get(o, "recent"),
	    0), "id"), done);
	assert_true(json_is_string(json_object_get(o, "now")));
	json_decref(o);
	thttp_free(&r);

	thttp(h->addr, "GET", "/api/jobs?state=queued,running&priority=held",
	    auth, NULL, &r);
	assert_status(&r, 200);
	o = body_json(&r);
	assert_int_equal(json_array_size(json_object_get(o, "jobs")), 13);
	json_decref(o);
	thttp_free(&r);

	snprintf(path, sizeof path, "/api/jobs/%lld", (long long)done);
	thttp(h->addr, "GET", path, auth, NULL, &r);
	assert_status(&r, 200);
	o = body_json(&r);
	assert_string_equal(tstate(o), "succeeded");
	json_decref(o);
	thttp_free(&r);

	snprintf(path, sizeof path, "/api/jobs/%lld/output?offset=-3",
	    (long long)done);
	thttp(h->addr, "GET", path, auth, NULL, &r);
	assert_status(&r, 200);
	o = body_json(&r);
	assert_string_equal(tjstr(o, "data"), "lo\n");
	json_decref(o);
	thttp_free(&r);

	/* Errors: the JSON-RPC code behind an HTTP status. */
	thttp(h->addr, "GET", "/api/jobs/999999", auth, NULL, &r);
	assert_status(&r, 404);
	o = body_json(&r);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(
	    o, "error"), "code")), -32001);
	json_decref(o);
	thttp_free(&r);
	snprintf(path, sizeof path, "/api/jobs/%lld/retry", (long long)id);
	thttp(h->addr, "POST", path, auth, "", &r);
	assert_status(&r, 409);
	thttp_free(&r);
	thttp(h->addr, "GET", "/api/jobs?limit=ten", auth, NULL, &r);
	assert_status(&r, 400);
	assert_non_null(strstr(r.body, "limit: expected a whole number"));
	thttp_free(&r);
	thttp(h->addr, "GET", "/api/jobs?color=red", auth, NULL, &r);
	assert_status(&r, 400);
	assert_non_null(strstr(r.body, "color: unknown query parameter"));
	thttp_free(&r);
	thttp(h->addr, "GET", "/api/jobs?priority=nope", auth, NULL, &r);
	assert_status(&r, 400);
	thttp_free(&r);
	thttp(h->addr, "GET", path, auth, NULL, &r);
	assert_status(&r, 405);
	thttp_free(&r);
	thttp(h->addr, "GET", "/api/nothing", auth, NULL, &r);
	assert_status(&r, 404);
	thttp_free(&r);
	thttp(h->addr, "GET", "/secret.txt", auth, NULL, &r);
	assert_status(&r, 404);
	thttp_free(&r);
	thttp(h->addr, "GET", "/../token", auth, NULL, &r);
	assert_true(r.status == 404 || r.status == 400);
	thttp_free(&r);
	thttp(h->addr, "DELETE", "/api/jobs/1", auth, NULL, &r);
	assert_true(r.status >= 400);
	thttp_free(&r);

	/* An action with the bearer token needs no CSRF token. */
	thttp(h->addr, "POST", "/api/priorities/held/resume", auth, "", &r);
	assert_status(&r, 200);
	thttp_free(&r);
	(void)trunning_pid(h->c, id);
	snprintf(path, sizeof path, "/api/jobs/%lld/cancel", (long long)id);
	thttp(h->addr, "POST", path, auth, "", &r);
	assert_status(&r, 200);
	thttp_free(&r);
	tassert_ends(h->c, id, "canceled");
	hd_end(h);
}

/* A session from the login form: its POSTs need its CSRF token and must
 * come from the page's own origin; nothing happens otherwise. */
static void
test_session_and_cross_site_posts(void **state)
{
	struct hd *h = hd_start("");
	struct thttp_resp r;
	struct session s;
	char hdr[512], path[128], *v;
	int64_t id;

	(void)state;
	json_decref(tcall(h->c, "pause", "{ss}", "priority", "held"));
	id = tsubmit(h->c, "{s[ss] ss}", "argv", "sleep", "60", "priority",
	    "held");
	login(h, &s);
	snprintf(path, sizeof path, "/api/jobs/%lld/cancel", (long long)id);

	snprintf(hdr, sizeof hdr, "Cookie: %s", s.cookie);
	thttp(h->addr, "GET", "/", hdr, NULL, &r);
	assert_status(&r, 200);
	assert_string_equal(r.body, "<p>the dashboard</p>\n");
	assert_non_null(v = thttp_header(&r, "Content-Security-Policy"));
	assert_non_null(strstr(v, "default-src 'self'"));
	free(v);
	thttp_free(&r);

	/* No CSRF token. */
	thttp(h->addr, "POST", path, hdr, "", &r);
	assert_status(&r, 403);
	assert_non_null(strstr(r.body, "X-Triage-CSRF"));
	thttp_free(&r);
	/* A wrong one. */
	snprintf(hdr, sizeof hdr, "Cookie: %s\nX-Triage-CSRF: %s", s.cookie,
	    "0123456789abcdef0123456789abcdef");
	thttp(h->addr, "POST", path, hdr, "", &r);
	assert_status(&r, 403);
	thttp_free(&r);
	/* The right one, from another site. */
	snprintf(hdr, sizeof hdr, "Cookie: %s\nX-Triage-CSRF: %s\n"
	    "Origin: http://evil.example", s.cookie, s.csrf);
	thttp(h->addr, "POST", path, hdr, "", &r);
	assert_status(&r, 403);
	assert_non_null(strstr(r.body, "cross-site"));
	thttp_free(&r);
	snprintf(hdr, sizeof hdr, "Cookie: %s\nX-Triage-CSRF: %s\n"
	    "Sec-Fetch-Site: cross-site", s.cookie, s.csrf);
	thttp(h->addr, "POST", path, hdr, "", &r);
	assert_status(&r, 403);
	thttp_free(&r);
	tassert_state(h->c, id, "queued");

	/* The right one from the page itself. */
	snprintf(hdr, sizeof hdr, "Cookie: %s\nX-Triage-CSRF: %s\n"
	    "Origin: http://%s\nSec-Fetch-Site: same-origin", s.cookie, s.csrf,
	    h->addr);
	thttp(h->addr, "POST", path, hdr, "", &r);
	assert_status(&r, 200);
	thttp_free(&r);
	tassert_state(h->c, id, "canceled");
	twait_log(h->d, "canceled");

	/* A cookie that is no session is no credential. */
	thttp(h->addr, "GET", "/api/state", "Cookie: triage_session="
	    "0123456789abcdef0123456789abcdef", NULL, &r);
	assert_status(&r, 401);
	thttp_free(&r);
	hd_end(h);
}

/* A reload reads the token again: a new one ends the sessions, a bad
 * file is rejected and the old token stays; listen needs a restart. */
static void
test_reload_reads_the_token_again(void **state)
{
	struct hd *h = hd_start("");
	struct triage_error e;
	struct thttp_resp r;
	struct session s;
	char hdr[256], conf[4096], *p;

	(void)state;
	login(h, &s);
	snprintf(hdr, sizeof hdr, "Cookie: %s", s.cookie);
	/* A token readable by others is refused: the old one stays. */
	assert_int_equal(chmod(h->token_file, 0644), 0);
	assert_int_equal(tcall_error(h->c, "reload", &e, "{}"), -32006);
	assert_non_null(strstr(e.message, "chmod 600"));
	thttp(h->addr, "GET", "/api/state", hdr, NULL, &r);
	assert_status(&r, 200);
	thttp_free(&r);
	/* A new token: the session is over, the new token works. */
	twrite_text(h->token_file, "another-token-0123456789\n");
	assert_int_equal(chmod(h->token_file, 0600), 0);
	json_decref(tcall(h->c, "reload", "{}"));
	thttp(h->addr, "GET", "/api/state", hdr, NULL, &r);
	assert_status(&r, 401);
	thttp_free(&r);
	thttp(h->addr, "GET", "/api/state", "Authorization: Bearer "
	    "another-token-0123456789", NULL, &r);
	assert_status(&r, 200);
	thttp_free(&r);
	/* listen is bound: changing it is for a restart. */
	tread_text(h->d->conf, conf, sizeof conf);
	assert_non_null(p = strstr(conf, "listen = 127.0.0.1:"));
	p[17] = '2';	/* 127.0.0.2: another address */
	twrite_text(h->d->conf, "%s", conf);
	assert_int_equal(tcall_error(h->c, "reload", &e, "{}"), -32006);
	assert_non_null(strstr(e.message, "listen changed"));
	hd_end(h);
}

static void
write_conf(const char *path, const char *dir, const char *http)
{
	twrite_text(path, "[daemon]\nsocket = %s/sock\nstate_dir = %s/state\n"
	    "[http]\n%s", dir, dir, http);
}

/* A token file others may read, or no token at all: no start, and a
 * message naming the file. */
static void
test_bad_token_files_refuse_the_start(void **state)
{
	char dir[] = "/tmp/test-http-XXXXXX", conf[300], out[300],
	    token[300], http[700], log[2048];
	static const struct {
		const char *text;
		int mode;
		const char *says;
	} cases[] = {
		{ TOKEN "\n", 0644, "mode 0644 lets others read" },
		{ "short\n", 0600, "the first line must be the token, 16 to" },
		{ "with a blank in it, long enough\n", 0600, "blank" },
		{ NULL, 0, "No such file" },
	};
	size_t i;
	int status;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(conf, sizeof conf, "%s/triage.conf", dir);
	snprintf(out, sizeof out, "%s/out", dir);
	snprintf(token, sizeof token, "%s/token", dir);
	snprintf(http, sizeof http, "listen = 127.0.0.1:%d\ntoken_file = %s\n",
	    tfree_port(), token);
	write_conf(conf, dir, http);
	for (i = 0; i < sizeof cases / sizeof *cases; i++) {
		unlink(token);
		if (cases[i].text != NULL) {
			twrite_text(token, "%s", cases[i].text);
			assert_int_equal(chmod(token, (mode_t)cases[i].mode),
			    0);
		}
		status = trun_refused(conf, out);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 0);
		tread_text(out, log, sizeof log);
		if (strstr(log, cases[i].says) == NULL ||
		    strstr(log, token) == NULL)
			fail_msg("case %zu: \"%s\" does not say \"%s\" of %s",
			    i, log, cases[i].says, token);
	}
	tremove_dir(dir);
}

/* With auth = none on a Unix socket, GET / opens a session by itself;
 * its POSTs still need its CSRF token. */
static void
test_auth_none_on_a_unix_socket(void **state)
{
	char extra[1024], dir[] = "/tmp/test-http-sock-XXXXXX", dash[300],
	    sockpath[300];
	struct thttp_resp r;
	struct tdaemon *d;
	struct triage_client *c;
	char *cookie, *semi, hdr[256];
	json_t *o;
	struct stat st;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(dash, sizeof dash, "%s/dash", dir);
	write_dashboard(dash);
	snprintf(sockpath, sizeof sockpath, "%s/http.sock", dir);
	snprintf(extra, sizeof extra, "socket_mode = 0600\n[http]\nlisten = %s\n"
	    "auth = none\ndashboard_dir = %s\n", sockpath, dash);
	d = tdaemon_start(extra);
	c = tconnect(d);
	assert_int_equal(stat(sockpath, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	thttp(sockpath, "GET", "/", NULL, NULL, &r);
	assert_status(&r, 200);
	assert_non_null(cookie = thttp_header(&r, "Set-Cookie"));
	thttp_free(&r);
	if ((semi = strchr(cookie, ';')) != NULL)
		*semi = '\0';
	snprintf(hdr, sizeof hdr, "Cookie: %s", cookie);
	free(cookie);
	thttp(sockpath, "GET", "/api/session", hdr, NULL, &r);
	o = body_json(&r);
	assert_string_equal(tjstr(o, "auth"), "none");
	assert_int_equal(strlen(tjstr(o, "csrf")), 32);
	json_decref(o);
	thttp_free(&r);
	thttp(sockpath, "POST", "/api/priorities/normal/pause", hdr, "", &r);
	assert_status(&r, 403);
	thttp_free(&r);
	/* A program that sends no cookie acts without one. */
	thttp(sockpath, "POST", "/api/priorities/normal/pause", NULL, "", &r);
	assert_status(&r, 200);
	o = body_json(&r);
	assert_true(json_is_array(json_object_get(o, "priorities")));
	json_decref(o);
	thttp_free(&r);
	thttp(sockpath, "GET", "/login", NULL, NULL, &r);
	assert_status(&r, 303);
	thttp_free(&r);
	tdaemon_end(d, c);
	/* The socket goes with the daemon. */
	assert_int_equal(stat(sockpath, &st), -1);
	tremove_dir(dir);
}

/* auth = none on loopback: a page of another name that points here (DNS
 * rebinding) is refused by its Host. */
static void
test_auth_none_on_loopback_checks_the_host(void **state)
{
	static const struct {
		const char *headers, *status;
	} hosts[] = {
		/* Not a Host at all: one header, exactly a name and maybe
		 * a port. */
		{ "Host: [::1].evil\r\n", "400" },
		{ "Host: [::1]evil\r\n", "400" },
		{ "Host: localhost:80x\r\n", "400" },
		{ "Host: localhost:\r\n", "400" },
		{ "Host: 127.0.0.1:99999\r\n", "400" },
		{ "Host:\r\n", "400" },
		{ "Host: \r\n", "400" },
		{ "Host: localhost\r\nHost: evil.example\r\n", "400" },
		{ "Host: localhost\r\nHost: localhost\r\n", "400" },
		/* HTTP/1.1 needs one. */
		{ "", "400" },
		{ "Host: localhost\r\n", "200" },
		{ "Host: 127.0.0.1:1\r\n", "200" },
	};
	char extra[512], addr[64], hdr[128], buf[4096] = "";
	struct thttp_resp r;
	struct tdaemon *d;
	struct triage_client *c;
	size_t len = 0, i;
	int fd;

	(void)state;
	snprintf(addr, sizeof addr, "127.0.0.1:%d", tfree_port());
	snprintf(extra, sizeof extra, "[http]\nlisten = %s\nauth = none\n",
	    addr);
	d = tdaemon_start(extra);
	c = tconnect(d);
	thttp(addr, "GET", "/api/state", NULL, NULL, &r);
	assert_status(&r, 200);
	thttp_free(&r);
	thttp(addr, "GET", "/api/state", "Host: localhost", NULL, &r);
	assert_status(&r, 200);
	thttp_free(&r);
	snprintf(hdr, sizeof hdr, "Host: evil.example:%s", strchr(addr, ':') +
	    1);
	thttp(addr, "GET", "/api/state", hdr, NULL, &r);
	assert_status(&r, 403);
	assert_non_null(strstr(r.body, "Host"));
	thttp_free(&r);
	thttp(addr, "GET", "/api/state", "Host: 127.evil.example", NULL, &r);
	assert_status(&r, 403);
	thttp_free(&r);
	snprintf(hdr, sizeof hdr, "Host: [::1]:%s", strchr(addr, ':') + 1);
	thttp(addr, "GET", "/api/state", hdr, NULL, &r);
	assert_status(&r, 200);
	thttp_free(&r);
	for (i = 0; i < sizeof hosts / sizeof *hosts; i++)
		assert_raw_status(addr, hosts[i].headers, hosts[i].status);
	/* An absolute URI's host is the request's host too. */
	fd = raw_connect(addr);
	raw_send(fd, "GET http://evil.example/api/state HTTP/1.1\r\n"
	    "Host: localhost\r\n\r\n");
	assert_true(raw_read_until(fd, buf, sizeof buf, &len, "\r\n",
	    tdeadline(HARNESS_TIMEOUT_MS)));
	assert_int_equal(strncmp(buf, "HTTP/1.1 403 ", 13), 0);
	close(fd);
	tdaemon_end(d, c);
}

static int
raw_connect(const char *addr)
{
	struct sockaddr_in sin;
	char host[32];
	int fd, port;

	assert_int_equal(sscanf(addr, "%31[^:]:%d", host, &port), 2);
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)port);
	assert_int_equal(inet_pton(AF_INET, host, &sin.sin_addr), 1);
	assert_true((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sin, sizeof sin), 0);
	return fd;
}

static void
raw_send(int fd, const char *text)
{
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
}

/* Reads fd into buf until it holds needle (true), or EOF (false); fails
 * past the deadline. */
static bool
raw_read_until(int fd, char *buf, size_t size, size_t *len,
    const char *needle, int64_t deadline)
{
	struct pollfd p = { fd, POLLIN, 0 };
	ssize_t n;

	while (strstr(buf, needle) == NULL) {
		tcheck_deadline(deadline, "\"%s\" from the server", needle);
		if (poll(&p, 1, tleft_ms(deadline)) <= 0)
			continue;
		if (*len + 1 >= size) {
			/* Keep the tail: needles are short. */
			memmove(buf, buf + size / 2, size - size / 2);
			*len -= size / 2;
		}
		n = read(fd, buf + *len, size - 1 - *len);
		if (n <= 0)
			return false;
		*len += (size_t)n;
		buf[*len] = '\0';
	}
	return true;
}

/* The event stream: the state at once, again when a job comes, ticks
 * while one runs, and nothing while nothing changes. */
static void
test_event_stream_pushes_changes(void **state)
{
	struct hd *h = hd_start("");
	char buf[65536] = "", needle[64];
	size_t len = 0;
	int64_t id, deadline = tdeadline(HARNESS_TIMEOUT_MS);
	int fd;

	(void)state;
	fd = raw_connect(h->addr);
	raw_send(fd, "GET /api/events HTTP/1.1\r\nHost: x\r\n"
	    "Authorization: Bearer " TOKEN "\r\n\r\n");
	assert_true(raw_read_until(fd, buf, sizeof buf, &len,
	    "text/event-stream", deadline));
	assert_true(raw_read_until(fd, buf, sizeof buf, &len,
	    "event: state\ndata: {", deadline));
	buf[0] = '\0';
	len = 0;
	id = tsubmit_gated(h->c, h->d, "gate", false);
	snprintf(needle, sizeof needle, "\"id\":%lld,", (long long)id);
	assert_true(raw_read_until(fd, buf, sizeof buf, &len, needle,
	    deadline));
	assert_true(raw_read_until(fd, buf, sizeof buf, &len, "event: tick",
	    deadline));
	topen_gate(h->d, "gate");
	tassert_ends(h->c, id, "succeeded");
	buf[0] = '\0';
	len = 0;
	assert_true(raw_read_until(fd, buf, sizeof buf, &len,
	    "\"state\":\"succeeded\"", deadline));
	close(fd);
	hd_end(h);
}

/* Opens an event stream on a connection of its own: a connection busy
 * with its request for as long as it stays open. */
static int
raw_event_stream(const char *addr)
{
	char buf[65536] = "";
	size_t len = 0;
	int fd = raw_connect(addr);

	raw_send(fd, "GET /api/events HTTP/1.1\r\nHost: x\r\n"
	    "Authorization: Bearer " TOKEN "\r\n\r\n");
	assert_true(raw_read_until(fd, buf, sizeof buf, &len,
	    "event: state\ndata: {", tdeadline(HARNESS_TIMEOUT_MS)));
	return fd;
}

/* The server closes fd (EOF) without answering; fails past the
 * deadline. */
static void
assert_closed(int fd, int64_t deadline)
{
	char buf[4096] = "";
	size_t len = 0;

	assert_false(raw_read_until(fd, buf, sizeof buf, &len, "HTTP/1.",
	    deadline));
}

/* A GET /metrics on a new connection is answered: the scraper gets in. */
static void
assert_scraped(const char *addr)
{
	char buf[65536] = "";
	size_t len = 0;
	int fd = raw_connect(addr);

	raw_send(fd, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
	assert_true(raw_read_until(fd, buf, sizeof buf, &len,
	    "triage_build_info", tdeadline(HARNESS_TIMEOUT_MS)));
	close(fd);
}

/*
 * Bounds: too many header fields (431), too large a header (evhttp's own
 * 400, see triaged(8)), too large a body; at max_connections, with every
 * connection busy with its request, the next one waits for a free place;
 * an idle connection is closed by timeout.
 */
static void
test_bounds(void **state)
{
	struct hd *h = hd_start("max_connections = 2\ntimeout = 1s\n");
	const char *auth = "Authorization: Bearer " TOKEN;
	char headers[8192] = "", *big, buf[4096] = "";
	struct thttp_resp r;
	int i, fd[3];
	size_t len = 0;
	struct pollfd p;

	(void)state;
	for (i = 0; i < 70; i++)
		snprintf(headers + strlen(headers), sizeof headers -
		    strlen(headers), "X-Many-%d: %d\n", i, i);
	strcat(headers, auth);
	thttp(h->addr, "GET", "/api/state", headers, NULL, &r);
	assert_status(&r, 431);
	thttp_free(&r);
	assert_non_null(big = malloc(100 * 1024));
	memset(big, 'a', 100 * 1024 - 1);
	big[100 * 1024 - 1] = '\0';
	thttp(h->addr, "POST", "/login", NULL, big, &r);
	assert_status(&r, 413);
	thttp_free(&r);
	memcpy(big, "X-Big: ", 7);
	big[70 * 1024] = '\0';
	thttp(h->addr, "GET", "/metrics", big, NULL, &r);
	assert_status(&r, 400);
	thttp_free(&r);
	free(big);
	/* Two Host headers are no request, whatever the auth. */
	assert_raw_status(h->addr, "Host: a\r\nHost: b\r\n", "400");

	/* Two event streams take both places; a third connection is
	 * accepted by the kernel but not served until one of them goes. */
	fd[0] = raw_event_stream(h->addr);
	fd[1] = raw_event_stream(h->addr);
	fd[2] = raw_connect(h->addr);
	raw_send(fd[2], "GET /api/session HTTP/1.1\r\nHost: x\r\n"
	    "Authorization: Bearer " TOKEN "\r\n\r\n");
	p = (struct pollfd){ fd[2], POLLIN, 0 };
	/* A slow machine can only make this pass, never fail. */
	assert_int_equal(poll(&p, 1, 200), 0);
	close(fd[0]);
	assert_true(raw_read_until(fd[2], buf, sizeof buf, &len, "\"csrf\"",
	    tdeadline(HARNESS_TIMEOUT_MS)));
	/* timeout = 1s: the connection left idle after its reply goes. */
	assert_closed(fd[2], tdeadline(HARNESS_TIMEOUT_MS));
	close(fd[1]);
	close(fd[2]);
	hd_end(h);
}

#define IDLE_CLIENTS 70

/*
 * Clients that connect and never finish their headers (slowloris) cannot
 * lock out a scraper from the same address, by the cap of connections per
 * address or by max_connections: a new connection closes the oldest one
 * that has sent no whole request. timeout and header_timeout are long
 * here, so that only that can let the scraper in.
 */
static void
test_idle_clients_cannot_lock_out_a_scraper(void **state)
{
	struct hd *h;
	int fd[IDLE_CLIENTS], busy[4], i, round;
	int64_t deadline;

	(void)state;
	for (round = 0; round < 2; round++) {
		/* First the default cap per address (16) and max_connections
		 * (64); then a max_connections below the cap, with event
		 * streams that must stay. */
		h = hd_start(round == 0 ? "timeout = 1h\nheader_timeout = 1h\n" :
		    "timeout = 1h\nheader_timeout = 1h\nmax_connections = 8\n");
		for (i = 0; round == 1 && i < 4; i++)
			busy[i] = raw_event_stream(h->addr);
		for (i = 0; i < IDLE_CLIENTS; i++) {
			fd[i] = raw_connect(h->addr);
			raw_send(fd[i], "GET /metrics HTTP/1.1\r\nHost: x\r\n");
		}
		assert_scraped(h->addr);
		assert_scraped(h->addr);
		/* The oldest idle ones went first. */
		deadline = tdeadline(HARNESS_TIMEOUT_MS);
		for (i = 0; i < IDLE_CLIENTS / 2; i++)
			assert_closed(fd[i], deadline);
		for (i = 0; i < IDLE_CLIENTS; i++)
			close(fd[i]);
		/* The streams were never taken for idle. */
		for (i = 0; round == 1 && i < 4; i++) {
			struct pollfd p = { busy[i], POLLIN, 0 };
			char c;

			assert_true(poll(&p, 1, 0) == 0 ||
			    recv(busy[i], &c, 1, MSG_PEEK) == 1);
			close(busy[i]);
		}
		hd_end(h);
	}
}

/* header_timeout: a connection that has not sent a whole request in
 * time is closed, however long timeout is; so is one left idle after its
 * reply. */
static void
test_header_timeout_closes_idle_connections(void **state)
{
	struct hd *h = hd_start("timeout = 1h\nheader_timeout = 1s\n");
	int64_t deadline = tdeadline(HARNESS_TIMEOUT_MS);
	char buf[4096] = "";
	size_t len = 0;
	int fd[4], i;

	(void)state;
	fd[0] = raw_connect(h->addr);		/* nothing at all */
	fd[1] = raw_connect(h->addr);
	raw_send(fd[1], "GET /metrics HTTP/1.1\r\n");
	fd[2] = raw_connect(h->addr);
	raw_send(fd[2], "GET /metrics HTTP/1.1\r\nHost: x\r\n");
	/* Served, then idle: kept alive no longer than that. */
	fd[3] = raw_connect(h->addr);
	raw_send(fd[3], "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
	assert_true(raw_read_until(fd[3], buf, sizeof buf, &len,
	    "triage_build_info", deadline));
	for (i = 0; i < 3; i++)
		assert_closed(fd[i], deadline);
	len = 0;
	buf[0] = '\0';
	assert_false(raw_read_until(fd[3], buf, sizeof buf, &len, "never",
	    deadline));
	for (i = 0; i < 4; i++)
		close(fd[i]);
	assert_scraped(h->addr);
	hd_end(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_credential_is_refused),
		cmocka_unit_test(test_bearer_token_and_the_api),
		cmocka_unit_test(test_session_and_cross_site_posts),
		cmocka_unit_test(test_reload_reads_the_token_again),
		cmocka_unit_test(test_bad_token_files_refuse_the_start),
		cmocka_unit_test(test_auth_none_on_a_unix_socket),
		cmocka_unit_test(test_auth_none_on_loopback_checks_the_host),
		cmocka_unit_test(test_event_stream_pushes_changes),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_idle_clients_cannot_lock_out_a_scraper),
		cmocka_unit_test(test_header_timeout_closes_idle_connections),
	};

	return cmocka_run_group_tests_name("http", tests, NULL, NULL);
}
