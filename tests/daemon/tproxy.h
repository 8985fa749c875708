/* tproxy.h - for the cluster's tests: a forwarding proxy in front of the
 * tests' PostgreSQL, which a test cuts (a network split: nothing passes,
 * nothing is closed) and heals. */
#ifndef TRIAGE_TEST_TPROXY_H
#define TRIAGE_TEST_TPROXY_H

struct tproxy;

/*
 * A proxy process listening on .s.PGSQL.port in a temp dir of its own and
 * forwarding each connection to the same name in server_dir. It dies with
 * the test (its control socket closes). Fails the test on error.
 */
struct tproxy *tproxy_start(const char *server_dir, int port);
/* Its socket's dir, for a conninfo's host. */
const char *tproxy_dir(const struct tproxy *p);
/*
 * Nothing passes any more, either way, and nothing is accepted; nothing
 * is closed. Returns once it holds.
 */
void tproxy_cut(struct tproxy *p);
/*
 * New connections pass again (those waiting to be accepted among them);
 * the connections the cut held stay as they are, open and silent for
 * ever, as TCP connections a split broke are for the peer that was not
 * told (the server). Returns once it holds.
 */
void tproxy_heal(struct tproxy *p);
/* Stops the process, removes its dir, frees p. NULL is a no-op. */
void tproxy_free(struct tproxy *p);

#endif
