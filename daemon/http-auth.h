/* http-auth.h - who may use the HTTP listener: the bearer token of
 * token_file, the sessions a login opens, and the cross-site checks. */
#ifndef TRIAGED_HTTP_AUTH_H
#define TRIAGED_HTTP_AUTH_H

#include <stdbool.h>
#include <sys/types.h>

#include "config.h"

struct evhttp_request;
struct http_auth;
struct http_session;

/* The session cookie's name. */
#define HTTP_SESSION_COOKIE "triage_session"

/*
 * The token in path's first line: the file must be a regular file owned
 * by uid with no access for group or others, and the token 16 to 4096
 * bytes of printable ASCII without blanks. The token (allocated), or NULL
 * with *cause set (allocated) saying what is wrong.
 */
char *http_token_read(const char *path, uid_t uid, char **cause);

/* token is stolen (NULL with auth = none). NULL out of memory. */
struct http_auth *http_auth_new(enum config_http_auth mode, char *token);
void http_auth_free(struct http_auth *a);
/* A reload: token stolen; when it is not the old one, every session ends. */
void http_auth_set(struct http_auth *a, enum config_http_auth mode,
    char *token);
bool http_auth_needs_token(const struct http_auth *a);

/* Whether token is the token (in constant time). */
bool http_auth_token_ok(const struct http_auth *a, const char *token);
/*
 * The credential req carries: its session (the cookie), or NULL. *bearer
 * is set when it carries the token itself (Authorization: Bearer), which
 * needs no session; with auth = none every request is let in that way
 * unless it has a session.
 */
const struct http_session *http_auth_check(struct http_auth *a,
    struct evhttp_request *req, bool *bearer);
/* A new session, its cookie set on req's reply: NULL when there is no
 * room for it (the oldest is dropped first, so never) or no randomness. */
const struct http_session *http_auth_open(struct http_auth *a,
    struct evhttp_request *req);
/* The session's token against cross-site requests. */
const char *http_session_csrf(const struct http_session *s);

/*
 * Whether a POST may act: it comes from the page's own origin (Origin, or
 * Sec-Fetch-Site, when the browser sends them) and, for a session, carries
 * its X-Triage-CSRF. 0, or -1 with *why set to a constant sentence.
 */
int http_auth_post_ok(struct evhttp_request *req,
    const struct http_session *s, const char **why);

#endif
