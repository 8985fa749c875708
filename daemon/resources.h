/* resources.h - admission beyond slots: the semaphore's dimensions from the
 * config (the memory budget, [resource.NAME]), jobs' wants and their units. */
#ifndef TRIAGED_RESOURCES_H
#define TRIAGED_RESOURCES_H

#include <stdint.h>

#include <jansson.h>

struct config;
struct job;
struct triaged;

/* The semaphore's dimension of declared memory. */
#define RESOURCES_DIM_MEMORY 1

/* Sets the semaphore up for cfg and budget bytes of memory (at start). 0,
 * or -1 with *cause allocated. */
int resources_init(struct triaged *td, const struct config *cfg,
    uint64_t budget, char **cause);
void resources_free(struct triaged *td);

/*
 * Whether cfg and budget may replace the config in force: a resource no
 * queued or running job names may go, a size may change but never below
 * what running jobs hold, a unit a job holds keeps its place. 0, or -1 with
 * *cause allocated saying which and why.
 */
int resources_reload_check(struct triaged *td, const struct config *cfg,
    uint64_t budget, char **cause);
/* Applies what resources_reload_check allowed. */
void resources_reload(struct triaged *td, const struct config *cfg,
    uint64_t budget);

/*
 * Gives job's waiter what it wants beyond slots (its memory and resources)
 * as the config is now: before it acquires, and after an edit of them
 * while it is out of the queue. 0, or -1 with the job's reason set (out of
 * memory, or a resource no longer configured).
 */
int resources_want(struct triaged *td, struct job *job);

/*
 * Counts what job holds of the resources as held on another node (on:
 * the row says it is begun or runs there), or no more: a cluster-scoped
 * counter's free units here are its count less those. Counts each job
 * once whatever the calls, and gives back what it counted, whatever the
 * job's resources say by then.
 */
void resources_elsewhere(struct triaged *td, struct job *job, bool on);

/*
 * A job adopted from an earlier daemon takes back, before anything is
 * granted, its slots, its memory and the very units its devices name
 * (psem_hold), even beyond what is free. 0, or -1 with the job's reason
 * set (a resource no longer configured, a bad need).
 */
int resources_hold(struct triaged *td, struct job *job);
/* After a grant: the job's devices, the units it was given, named. 0, or
 * -1 out of memory (it has none then). */
int resources_devices(struct triaged *td, struct job *job);

/* The name of a dimension for pending_reason ("memory", "resource:gpu"),
 * static; NULL for none. */
const char *resources_reason(const struct triaged *td, int dim);

/* stats: memory {budget, used, available} and resources {NAME: {units,
 * used, kept, waiting, scope, share, holders}}, used by every node for a
 * cluster-scoped counter. New references. */
json_t *resources_stats_memory(const struct triaged *td);
json_t *resources_stats(const struct triaged *td);

#endif
