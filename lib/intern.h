/* intern.h - strings and string vectors that many jobs hold alike (a cwd, a
 * priority's name, an environment), kept once with a count of their holders. */
#ifndef TRIAGE_INTERN_H
#define TRIAGE_INTERN_H

/*
 * The shared copy of s, one more holder counted; NULL (errno ENOMEM) when
 * out of memory. s may be anything; the copy is never changed in place.
 * One table for the process, not thread-safe: the daemon's loop uses it.
 */
const char *intern_str(const char *s);
/* One more holder of a copy intern_str() returned, in O(1); returns it. */
const char *intern_str_hold(const char *shared);
/* One holder fewer of a copy intern_str() returned; the last frees it.
 * NULL is fine. */
void intern_str_drop(const char *s);

/* The same for a NULL-terminated vector of strings, shared whole. */
char *const *intern_strv(char *const *v);
char *const *intern_strv_hold(char *const *shared);
void intern_strv_drop(char *const *v);

/* How many different strings and vectors are held, for the tests. */
unsigned long intern_count(void);

#endif
