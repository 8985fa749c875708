/* watch.h - the `watch` method's subscriptions: which jobs a connection
 * follows, and the notification sent on each of their state changes. */
#ifndef TRIAGED_WATCH_H
#define TRIAGED_WATCH_H

#include <stddef.h>
#include <stdint.h>

struct conn;
struct job;
struct triaged;
struct watch;

/* A filter: ids (n of them; none = any job) and priority (NULL = any).
 * NULL when out of memory. */
struct watch *watch_new(const uint64_t *ids, size_t n, const char *priority);
/* Frees w; a connection that followed it follows nothing any more. */
void watch_free(struct watch *w);

/* From now on conn also follows w: w is conn's, freed when it closes.
 * 0; -2 when conn has max watches already, -1 when out of memory (w is
 * then still the caller's). */
int watch_add(struct conn *conn, struct watch *w, unsigned max);

/* Sends {"method":"job","params":job} once to every connection one of
 * whose filters matches job. */
void watch_notify(struct triaged *td, const struct job *job);

#endif
