/* watch.h - the `watch` method's subscriptions: which jobs a connection
 * follows, and the notification sent on each of their state changes. */
#ifndef TRIAGED_WATCH_H
#define TRIAGED_WATCH_H

#include <stddef.h>
#include <stdint.h>

struct job;
struct triaged;
struct watch;

/* A filter: ids (n of them; none = any job) and priority (NULL = any).
 * NULL when out of memory. */
struct watch *watch_new(const uint64_t *ids, size_t n, const char *priority);
void watch_free(struct watch *w);

/* Sends {"method":"job","params":job} to every connection whose filter
 * matches job. */
void watch_notify(struct triaged *td, const struct job *job);

#endif
