/* worker-groups.c - a job user's name and supplementary groups, looked up by
 * the worker once per (uid, gid) and kept, so that no job child asks NSS. */
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passwd.h"
#include "worker-groups.h"

/* Users a worker keeps: jobs come from few of them; past this the oldest
 * entry makes room. */
#define WORKER_GROUPS_MAX	16

struct worker_groups_entry {
	uid_t uid;
	gid_t gid;
	uint32_t epoch;
	uint64_t used;		/* when last asked for, in lookups */
	char *user;
	gid_t *groups;
	size_t n;
};

/*
 * The cache is the worker process's, not a daemon's: a worker is a fork
 * that runs worker_main until it ends and has no struct triaged; one
 * worker per process, and the cache lives as long as it does (cleared at
 * its end). So it stays here, global to the process.
 */
static struct worker_groups_entry worker_groups_cache[WORKER_GROUPS_MAX];
static size_t worker_groups_count;
static uint64_t worker_groups_clock;

static void
worker_groups_drop(struct worker_groups_entry *e)
{
	free(e->user);
	free(e->groups);
	memset(e, 0, sizeof *e);
}

/* user's groups with gid, from NSS (getgrouplist reads what initgroups
 * would). Returns the allocated list, or NULL with errno. */
static gid_t *
worker_groups_list(const char *user, gid_t gid, size_t *n)
{
	gid_t *v = NULL, *nv;
	int want = 32, got;

	for (;;) {
		if ((nv = reallocarray(v, (size_t)want, sizeof *v)) == NULL) {
			free(v);
			return NULL;
		}
		v = nv;
		got = want;
		if (getgrouplist(user, gid, v, &got) != -1) {
			*n = (size_t)got;
			return v;
		}
		/* -1: too small, and got says how many there are */
		if (got <= want)
			want *= 2;
		else
			want = got;
		if (want > NGROUPS_MAX * 2) {
			free(v);
			errno = EINVAL;
			return NULL;
		}
	}
}

/* Looks (uid, gid) up into e. 0, or -1 with err filled. */
static int
worker_groups_lookup(struct worker_groups_entry *e, uid_t uid, gid_t gid,
    char *err, size_t errsize)
{
	char *user = NULL;

	if (passwd_lookup(uid, &user, NULL, NULL) == -1 && errno != ENOENT) {
		snprintf(err, errsize, "getpwuid %lu: %s", (unsigned long)uid,
		    strerror(errno));
		return -1;
	}
	if (user != NULL) {
		if ((e->groups = worker_groups_list(user, gid, &e->n)) == NULL) {
			snprintf(err, errsize, "getgrouplist %s: %s", user,
			    strerror(errno));
			free(user);
			return -1;
		}
	} else {
		/* No passwd entry, so no name to find groups by: only its
		 * own group, as before with setgroups(1, &gid). */
		if ((e->groups = malloc(sizeof *e->groups)) == NULL) {
			snprintf(err, errsize, "malloc: %s", strerror(errno));
			return -1;
		}
		e->groups[0] = gid;
		e->n = 1;
	}
	e->user = user;
	e->uid = uid;
	e->gid = gid;
	return 0;
}

int
worker_groups_get(uid_t uid, gid_t gid, uint32_t epoch,
    struct worker_groups *g, char *err, size_t errsize)
{
	struct worker_groups_entry *e = NULL, *oldest = NULL;
	size_t i;

	for (i = 0; i < worker_groups_count; i++) {
		if (worker_groups_cache[i].uid == uid &&
		    worker_groups_cache[i].gid == gid) {
			e = &worker_groups_cache[i];
			break;
		}
		if (oldest == NULL || worker_groups_cache[i].used < oldest->used)
			oldest = &worker_groups_cache[i];
	}
	if (e != NULL && e->epoch != epoch)
		worker_groups_drop(e);
	else if (e == NULL && worker_groups_count < WORKER_GROUPS_MAX)
		e = &worker_groups_cache[worker_groups_count++];
	else if (e == NULL) {
		e = oldest;
		worker_groups_drop(e);
	}
	if (e->groups == NULL) {
		if (worker_groups_lookup(e, uid, gid, err, errsize) == -1) {
			/* An empty entry stays, to be looked up next time. */
			e->uid = uid;
			e->gid = gid;
			return -1;
		}
		e->epoch = epoch;
	}
	e->used = ++worker_groups_clock;
	g->user = e->user;
	g->groups = e->groups;
	g->n = e->n;
	return 0;
}

void
worker_groups_clear(void)
{
	size_t i;

	for (i = 0; i < worker_groups_count; i++)
		worker_groups_drop(&worker_groups_cache[i]);
	worker_groups_count = 0;
}
