/* membudget.h - the memory budget (protocol v1.2) that jobs' declared memory
 * is counted against: [daemon] memory, and the memory the daemon may use. */
#ifndef TRIAGED_MEMBUDGET_H
#define TRIAGED_MEMBUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct config;

/* What auto leaves to the system and the daemon, and its least. */
#define MEMBUDGET_AUTO_RESERVE	(UINT64_C(512) << 20)
#define MEMBUDGET_AUTO_MIN	(UINT64_C(256) << 20)

/*
 * The budget cfg's memory gives, in bytes: a size as it is; a percentage
 * of what the daemon may use; auto, that less a tenth and less
 * MEMBUDGET_AUTO_RESERVE, at least MEMBUDGET_AUTO_MIN. What it may use is
 * MemTotal (/proc/meminfo), lowered by the smallest memory.max of its own
 * cgroup v2 and every one above it. Never fails: what cannot be read
 * limits nothing (sysconf's physical pages stand in for MemTotal).
 */
uint64_t membudget_compute(const struct config *cfg);

/* The kernel's MemAvailable in bytes, or -1 when /proc/meminfo cannot
 * tell. */
int64_t membudget_available(void);

/* "14.2 GiB", "64 GiB", "512 B": bytes for people, to a tenth of the
 * largest unit that is at least 1, rounded down or, with up set, up (a
 * need said against a budget must never read as less than it is). */
#define MEMBUDGET_WORDS_MAX 32
void membudget_words(uint64_t bytes, bool up, char *buf, size_t size);

/* The pure parts, for the tests. */

/* The value of key ("MemTotal") in meminfo, /proc/meminfo's text, in
 * bytes into *bytes. 0, or -1 when there is no such line or it is not
 * "KEY: N kB". */
int membudget_meminfo(const char *meminfo, const char *key,
    uint64_t *bytes);
/* The limit a cgroup's memory.max text sets, in bytes; 0 for none ("max",
 * and NULL or malformed text: what cannot be read limits nothing). */
uint64_t membudget_max_of(const char *text);
/* The smallest limit of the memory.max files of the cgroup at path (as
 * /proc/self/cgroup names it, "/a/b") and of each cgroup above it, under
 * mount (where cgroup2 is mounted); 0 for none. */
uint64_t membudget_cgroup_limit(const char *mount, const char *path);
/* The budget of cfg's memory for may_use bytes (see membudget_compute). */
uint64_t membudget_of(const struct config *cfg, uint64_t may_use);

#endif
