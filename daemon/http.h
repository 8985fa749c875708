/* http.h - the optional HTTP listener of [http]: Prometheus metrics at
 * /metrics and the live dashboard, on the same loop as the job socket. */
#ifndef TRIAGED_HTTP_H
#define TRIAGED_HTTP_H

struct config;
struct triaged;

/* Listens as [http] says (nothing to do without a listen key): the token
 * is read and checked now. 0, or -1 with *cause set (allocated). */
int http_start(struct triaged *td, char **cause);
/*
 * A reload: new's [http] is checked (its token_file read) without
 * changing anything; 0, or -1 with *cause set, and the reload is
 * rejected. http_reload_commit() then puts it in force, once new is
 * td->cfg: a new token ends every session.
 */
int http_reload_check(struct triaged *td, const struct config *new,
    char **cause);
void http_reload_commit(struct triaged *td);
/* Closes the listener and every HTTP connection: the daemon is exiting. */
void http_stop(struct triaged *td);

#endif
