/* http-auth.c - the bearer token, checked like an ssh key file, and the
 * sessions of the dashboard's logins: a cookie and a per-session CSRF token. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "http-auth.h"
#include "timefmt.h"

/* Sessions are kept in memory: a restart logs everyone out. */
#define HTTP_SESSIONS 64
#define HTTP_SESSION_IDLE_MS (12 * 3600 * 1000LL)
#define HTTP_TOKEN_MIN 16
#define HTTP_TOKEN_MAX 4096
#define HTTP_RANDOM_BYTES 16
#define HTTP_HEX_LEN (2 * HTTP_RANDOM_BYTES)

struct http_session {
	char id[HTTP_HEX_LEN + 1];	/* empty: a free slot */
	char csrf[HTTP_HEX_LEN + 1];
	uint64_t used_ms;
};

struct http_auth {
	enum config_http_auth mode;
	char *token;
	struct http_session sessions[HTTP_SESSIONS];
};

static int
http_token_check_file(int fd, const char *path, uid_t uid, char **cause)
{
	struct stat st;
	int n = 0;

	if (fstat(fd, &st) != 0)
		n = asprintf(cause, "%s: %s", path, strerror(errno));
	else if (!S_ISREG(st.st_mode))
		n = asprintf(cause, "%s: not a regular file", path);
	else if (st.st_uid != uid)
		n = asprintf(cause, "%s: owned by uid %u, not by the daemon's "
		    "user (uid %u)", path, (unsigned)st.st_uid, (unsigned)uid);
	else if ((st.st_mode & 077) != 0)
		n = asprintf(cause, "%s: mode %04o lets others read or change "
		    "the token; chmod 600 it", path,
		    (unsigned)(st.st_mode & 07777));
	else
		return 0;
	if (n < 0)
		*cause = NULL;
	return -1;
}

char *
http_token_read(const char *path, uid_t uid, char **cause)
{
	char *line = NULL, *p;
	size_t size = 0;
	ssize_t len;
	FILE *f;
	int fd, n = 0;

	*cause = NULL;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0) {
		if (asprintf(cause, "%s: %s", path, strerror(errno)) < 0)
			*cause = NULL;
		return NULL;
	}
	if (http_token_check_file(fd, path, uid, cause) != 0 ||
	    (f = fdopen(fd, "r")) == NULL) {
		if (*cause == NULL && asprintf(cause, "%s: %s", path,
		    strerror(errno)) < 0)
			*cause = NULL;
		close(fd);
		return NULL;
	}
	len = getline(&line, &size, f);
	fclose(f);
	while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		line[--len] = '\0';
	if (len < HTTP_TOKEN_MIN || len > HTTP_TOKEN_MAX)
		n = asprintf(cause, "%s: the first line must be the token, "
		    "%d to %d bytes; it has %zd", path, HTTP_TOKEN_MIN,
		    HTTP_TOKEN_MAX, len < 0 ? 0 : len);
	else
		for (p = line; *p != '\0'; p++)
			if (!isgraph((unsigned char)*p)) {
				n = asprintf(cause, "%s: the token has a "
				    "blank or control character at byte %td",
				    path, p - line);
				break;
			}
	if (n != 0 || *cause != NULL) {
		if (n < 0)
			*cause = NULL;
		free(line);
		return NULL;
	}
	return line;
}

struct http_auth *
http_auth_new(enum config_http_auth mode, char *token)
{
	struct http_auth *a;

	if ((a = calloc(1, sizeof *a)) == NULL) {
		free(token);
		return NULL;
	}
	a->mode = mode;
	a->token = token;
	return a;
}

void
http_auth_free(struct http_auth *a)
{
	if (a == NULL)
		return;
	if (a->token != NULL)
		explicit_bzero(a->token, strlen(a->token));
	free(a->token);
	explicit_bzero(a->sessions, sizeof a->sessions);
	free(a);
}

/* Compares all of a and b whatever they hold, so that the time taken
 * tells nothing of where they differ. */
static bool
http_same_secret(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i;
	unsigned char diff = la != lb;

	for (i = 0; i < lb; i++)
		diff |= (unsigned char)(a[i % (la + 1)] ^ b[i]);
	return diff == 0;
}

void
http_auth_set(struct http_auth *a, enum config_http_auth mode, char *token)
{
	bool same = a->mode == mode && (a->token == NULL ? token == NULL :
	    token != NULL && http_same_secret(a->token, token));

	if (!same)
		memset(a->sessions, 0, sizeof a->sessions);
	if (a->token != NULL)
		explicit_bzero(a->token, strlen(a->token));
	free(a->token);
	a->token = token;
	a->mode = mode;
}

bool
http_auth_needs_token(const struct http_auth *a)
{
	return a->mode == CONFIG_HTTP_AUTH_TOKEN;
}

bool
http_auth_token_ok(const struct http_auth *a, const char *token)
{
	return a->token != NULL && token != NULL &&
	    http_same_secret(a->token, token);
}

/* The value of cookie name in a Cookie header, copied into out. */
static bool
http_cookie(const char *header, const char *name, char *out, size_t size)
{
	size_t nlen = strlen(name), vlen;
	const char *p = header, *end;

	while (p != NULL && *p != '\0') {
		while (*p == ' ' || *p == ';')
			p++;
		end = strchr(p, ';');
		if (end == NULL)
			end = p + strlen(p);
		if ((size_t)(end - p) > nlen && strncmp(p, name, nlen) == 0 &&
		    p[nlen] == '=') {
			vlen = (size_t)(end - p) - nlen - 1;
			if (vlen >= size)
				return false;
			memcpy(out, p + nlen + 1, vlen);
			out[vlen] = '\0';
			return true;
		}
		p = *end == ';' ? end + 1 : NULL;
	}
	return false;
}

static struct http_session *
http_session_find(struct http_auth *a, const char *id)
{
	uint64_t now = timefmt_mono_ms();
	struct http_session *s;
	size_t i;

	for (i = 0; i < HTTP_SESSIONS; i++) {
		s = &a->sessions[i];
		if (s->id[0] == '\0')
			continue;
		if (now - s->used_ms > HTTP_SESSION_IDLE_MS) {
			memset(s, 0, sizeof *s);
			continue;
		}
		if (http_same_secret(s->id, id)) {
			s->used_ms = now;
			return s;
		}
	}
	return NULL;
}

const struct http_session *
http_auth_check(struct http_auth *a, struct evhttp_request *req, bool *bearer)
{
	struct evkeyvalq *in = evhttp_request_get_input_headers(req);
	const char *v;
	char id[HTTP_HEX_LEN + 1];
	const struct http_session *s = NULL;

	*bearer = false;
	if ((v = evhttp_find_header(in, "Cookie")) != NULL &&
	    http_cookie(v, HTTP_SESSION_COOKIE, id, sizeof id))
		s = http_session_find(a, id);
	if (s != NULL)
		return s;
	if (a->mode == CONFIG_HTTP_AUTH_NONE)
		*bearer = true;
	else if ((v = evhttp_find_header(in, "Authorization")) != NULL &&
	    strncasecmp(v, "Bearer ", 7) == 0)
		*bearer = http_auth_token_ok(a, v + 7);
	return NULL;
}

static int
http_random_hex(char *out)
{
	unsigned char raw[HTTP_RANDOM_BYTES];
	size_t i;

	if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw)
		return -1;
	for (i = 0; i < sizeof raw; i++)
		snprintf(out + 2 * i, 3, "%02x", raw[i]);
	explicit_bzero(raw, sizeof raw);
	return 0;
}

const struct http_session *
http_auth_open(struct http_auth *a, struct evhttp_request *req)
{
	struct http_session *s, *oldest = &a->sessions[0];
	char cookie[128];
	size_t i;

	for (i = 0; i < HTTP_SESSIONS; i++) {
		s = &a->sessions[i];
		if (s->id[0] == '\0') {
			oldest = s;
			break;
		}
		if (s->used_ms < oldest->used_ms)
			oldest = s;
	}
	s = oldest;
	if (http_random_hex(s->id) != 0 || http_random_hex(s->csrf) != 0) {
		memset(s, 0, sizeof *s);
		return NULL;
	}
	s->used_ms = timefmt_mono_ms();
	snprintf(cookie, sizeof cookie, "%s=%s; HttpOnly; SameSite=Strict; "
	    "Path=/", HTTP_SESSION_COOKIE, s->id);
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Set-Cookie", cookie);
	return s;
}

const char *
http_session_csrf(const struct http_session *s)
{
	return s->csrf;
}

/* Origin's host[:port] is the Host the request was sent to. The scheme is
 * not compared: a proxy in front may speak TLS to the browser. */
static bool
http_same_origin(const char *origin, const char *host)
{
	const char *p = strstr(origin, "://");

	if (p == NULL || host == NULL)
		return false;
	return strcasecmp(p + 3, host) == 0;
}

int
http_auth_post_ok(struct evhttp_request *req, const struct http_session *s,
    const char **why)
{
	struct evkeyvalq *in = evhttp_request_get_input_headers(req);
	const char *origin, *site, *csrf;

	origin = evhttp_find_header(in, "Origin");
	site = evhttp_find_header(in, "Sec-Fetch-Site");
	if (origin != NULL && !http_same_origin(origin,
	    evhttp_find_header(in, "Host"))) {
		*why = "a cross-site request (its Origin is not this site)";
		return -1;
	}
	if (origin == NULL && site != NULL && strcmp(site, "same-origin") != 0
	    && strcmp(site, "none") != 0) {
		*why = "a cross-site request (Sec-Fetch-Site)";
		return -1;
	}
	if (s == NULL)
		return 0;
	csrf = evhttp_find_header(in, "X-Triage-CSRF");
	if (csrf == NULL || !http_same_secret(s->csrf, csrf)) {
		*why = "no valid X-Triage-CSRF header (GET /api/session gives "
		    "the session's)";
		return -1;
	}
	return 0;
}
