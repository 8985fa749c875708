/* served.c - for the daemon tests of what answers clients about jobs (wait,
 * watch): a machine that also serves JSON-RPC over socket pairs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "conn.h"
#include "loop.h"
#include "machine.h"
#include "peer.h"
#include "rpc.h"
#include "served.h"

struct served *
served_new(const char *name, rpc_dispatch_cb dispatch)
{
	struct served *s;

	if ((s = calloc(1, sizeof *s)) == NULL)
		return NULL;
	if ((s->m = machine_new(name)) == NULL ||
	    conn_start(&s->m->td) != 0 ||
	    rpc_start(&s->m->td, dispatch) != 0) {
		served_free(s);
		return NULL;
	}
	return s;
}

void
served_free(struct served *s)
{
	int i;

	for (i = 0; i < s->npeers; i++)
		peer_free(s->peers[i]);
	if (s->m != NULL) {
		rpc_stop(&s->m->td);
		conn_stop(&s->m->td);
		machine_free(s->m);
	}
	free(s);
}

uint64_t
served_submit(struct served *s, struct job *job)
{
	uint64_t id = machine_submit(s->m, job);

	LOOP_WAIT_FOR(&s->m->loop, machine_nevents(s->m, id) > 0);
	return id;
}

struct peer *
served_peer(struct served *s)
{
	struct peer *p;

	assert_true(s->npeers < SERVED_NPEERS);
	p = s->peers[s->npeers++] = peer_new(&s->m->loop);
	assert_int_equal(rpc_attach(peer_conn(p, &s->m->td)), 0);
	return p;
}

json_t *
served_result(struct peer *p, json_int_t id)
{
	char prefix[64], *line;
	json_t *msg, *result;
	size_t n;

	n = (size_t)snprintf(prefix, sizeof prefix,
	    "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":", (long long)id);
	if ((line = peer_line(p)) == NULL)
		fail_msg("the connection closed; expected the reply to %lld",
		    (long long)id);
	msg = json_loads(line, 0, NULL);
	if (strncmp(line, prefix, n) != 0 || msg == NULL)
		fail_msg("not the result of %lld: %s", (long long)id, line);
	free(line);
	result = json_incref(json_object_get(msg, "result"));
	json_decref(msg);
	return result;
}
