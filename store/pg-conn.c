/* pg-conn.c - one PostgreSQL connection driven by a libevent loop: batches of
 * statements pipelined, LISTEN/NOTIFY, reconnection with backoff. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <event2/event.h>
#include <libpq-fe.h>

#include "pg-util.h"
#include "pg-conn.h"
#include "vec.h"

/* Reconnection: the first attempt at once, then this doubling... */
#define PG_CONN_BACKOFF_MIN_MS	100
/* ...up to this, each delay a random 75% to 125% of it. */
#define PG_CONN_BACKOFF_MAX_MS	5000
/* libpq's connect_timeout does not hold for an asynchronous connection:
 * an attempt that takes longer (a host that drops packets) is given up. */
#define PG_CONN_CONNECT_TIMEOUT_SEC	10
/* libpq's limit on a statement's parameters (a uint16 in the protocol). */
#define PG_CONN_PARAMS_MAX	65535

/* A batch given to the connection, from pg_conn_batch to its callback. */
struct pg_conn_batch {
	TAILQ_ENTRY(pg_conn_batch) entry;
	pg_conn_batch_cb	 cb;
	void		*arg;
	char		*cause;		/* on c->failed: what cb is told */
	size_t		 n;		/* statements */
	size_t		 next;		/* the statement results come for */
	bool		 got;		/* results[next] came (NULL ends it) */
	PGresult	*results[];	/* n, at least 1 */
};
TAILQ_HEAD(pg_conn_batches, pg_conn_batch);

/* A statement prepared on every connection. */
struct pg_conn_prep {
	char	*name;
	char	*sql;
};

enum pg_conn_phase {
	PG_CONN_NEW,		/* pg_conn_start not called yet */
	PG_CONN_WAITING,		/* down: the timer starts the next
	    attempt */
	PG_CONN_CONNECTING,	/* PQconnectPoll under way */
	PG_CONN_SETTING_UP,	/* prepares and LISTENs sent */
	PG_CONN_UP,
};

struct pg_conn {
	struct event_base	*base;
	char			*conninfo;
	pg_conn_state_cb		 state_cb;
	pg_conn_notify_cb	 notify_cb;
	void			*arg;
	/* what every (re)connection sets up */
	struct vec		 preps;		/* of struct pg_conn_prep */
	struct vec		 channels;	/* of char *, allocated */
	int			 backoff_max_ms;

	enum pg_conn_phase	 phase;
	PGconn			*conn;
	int			 reported;	/* -1: nothing yet; 0 down; 1 up
	    */
	char			*cause;		/* why it is down, one line */
	unsigned		 attempts;	/* failed since it was last up
	    */
	/*
	 * While connecting, a one-shot wait for what PQconnectPoll asked;
	 * once connected, the socket's reads (persistent) and its writes,
	 * waited for only while libpq holds output it could not send.
	 */
	struct event		*io;
	struct event		*wr;
	struct event		*timer;		/* reconnection, connect timeout
	    */
	/* While batches are out: nothing read for silence_max_ms (0: no
	 * bound), the connection is taken for dead. */
	struct event		*hush;
	int			 silence_max_ms;
	bool			 heard;		/* a result or a notification
						 * came in this read */
	/* Work for the loop that pg_conn_batch may not do itself: callbacks
	 * of failed batches, results libpq read while sending, a loss. */
	struct event		*defer;
	char			*lost;		/* a loss pg_conn_batch saw */
	/* The error that ends the session the server sent (FATAL: a
	 * shutdown...), which says more than libpq's "server closed the
	 * connection unexpectedly" that follows it. */
	char			*fatal;
	struct pg_conn_batches	 sent;		/* in flight, in order */
	struct pg_conn_batches	 failed;	/* for defer to fail */
	int			 busy;		/* our callbacks under way */
	bool			 freeing;
};

static void pg_conn_lose(struct pg_conn *, const char *);
static void pg_conn_input(struct pg_conn *);
static void pg_conn_timer_cb(evutil_socket_t, short, void *);
static void pg_conn_hush_cb(evutil_socket_t, short, void *);
static void pg_conn_defer_cb(evutil_socket_t, short, void *);

/* msg on one line, allocated: libpq ends its messages with a newline and
 * puts hints on lines of their own. NULL when out of memory. */
static char *
pg_conn_oneline(const char *msg)
{
	char *line, *p;
	size_t len, i, j = 0;

	len = strlen(msg);
	while (len > 0 && (msg[len - 1] == '\n' || msg[len - 1] == ' ' ||
	    msg[len - 1] == '\t'))
		len--;
	if ((line = malloc(2 * len + 1)) == NULL)
		return NULL;
	for (i = 0; i < len; i++) {
		if (msg[i] != '\n') {
			line[j++] = msg[i];
			continue;
		}
		while (j > 0 && line[j - 1] == ' ')
			j--;
		while (i + 1 < len && (msg[i + 1] == ' ' || msg[i + 1] == '\t'))
			i++;
		/* A line that goes on with a sentence, or a new one. */
		if (i + 1 < len && msg[i + 1] >= 'a' && msg[i + 1] <= 'z')
			line[j++] = ' ';
		else {
			line[j++] = ';';
			line[j++] = ' ';
		}
	}
	line[j] = '\0';
	if (j == 0 && (p = strdup("unknown error")) != NULL) {
		free(line);
		return p;
	}
	return line;
}

static bool
pg_conn_has_alnum(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' &&
		    s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9'))
			return true;
	return false;
}

/*
 * PQconninfoParse's message on one line, with what it quotes of the string
 * kept only when it is a connection option's name: its other quotes may be
 * part of a password.
 */
static char *
pg_conn_parse_error(const char *msg)
{
	PQconninfoOption *opts = PQconndefaults(), *o;
	char *line, *p, *q, *out;
	size_t len;
	bool known;

	if ((line = pg_conn_oneline(msg)) == NULL)
		return NULL;
	if ((out = malloc(strlen(line) + 1)) == NULL) {
		free(line);
		PQconninfoFree(opts);
		return NULL;
	}
	out[0] = '\0';
	for (p = line; (q = strchr(p, '"')) != NULL; p = q + 1) {
		strncat(out, p, (size_t)(q - p) + 1);
		p = q + 1;
		if ((q = strchr(p, '"')) == NULL) {
			q = p + strlen(p) - 1;
			break;
		}
		len = (size_t)(q - p);
		/* Punctuation ("=") tells nothing of a password either. */
		known = len > 0 && !pg_conn_has_alnum(p, len);
		for (o = opts; o != NULL && o->keyword != NULL; o++)
			if (strlen(o->keyword) == len &&
			    strncmp(o->keyword, p, len) == 0)
				known = true;
		strncat(out, known ? p : "...", known ? len : 3);
		strcat(out, "\"");
	}
	if (p <= line + strlen(line))
		strcat(out, p);
	free(line);
	PQconninfoFree(opts);
	return out;
}

struct pg_conn *
pg_conn_new(struct event_base *base, const char *conninfo,
    pg_conn_state_cb state_cb, pg_conn_notify_cb notify_cb, void *arg,
    char **cause)
{
	PQconninfoOption *opts;
	struct pg_conn *c;
	char *err = NULL, *why;

	if ((opts = PQconninfoParse(conninfo, &err)) == NULL) {
		why = err != NULL ? pg_conn_parse_error(err) : NULL;
		if (asprintf(cause, "bad PostgreSQL connection string: %s",
		    why != NULL ? why : "out of memory") == -1)
			*cause = NULL;
		free(why);
		PQfreemem(err);
		return NULL;
	}
	PQconninfoFree(opts);
	if ((c = calloc(1, sizeof *c)) == NULL)
		goto oom;
	c->base = base;
	c->backoff_max_ms = PG_CONN_BACKOFF_MAX_MS;
	c->state_cb = state_cb;
	c->notify_cb = notify_cb;
	c->arg = arg;
	c->reported = -1;
	TAILQ_INIT(&c->sent);
	TAILQ_INIT(&c->failed);
	if ((c->conninfo = strdup(conninfo)) == NULL ||
	    (c->cause = strdup("not started")) == NULL ||
	    (c->timer = evtimer_new(base, pg_conn_timer_cb, c)) == NULL ||
	    (c->hush = evtimer_new(base, pg_conn_hush_cb, c)) == NULL ||
	    (c->defer = event_new(base, -1, 0, pg_conn_defer_cb, c)) == NULL)
		goto oom;
	return c;
oom:
	pg_conn_free(c);
	*cause = strdup("out of memory");
	return NULL;
}

int
pg_conn_prepare(struct pg_conn *c, const char *name, const char *sql)
{
	struct pg_conn_prep p;

	if (c->phase != PG_CONN_NEW) {
		errno = EBUSY;
		return -1;
	}
	p.name = strdup(name);
	p.sql = strdup(sql);
	if (p.name == NULL || p.sql == NULL ||
	    vec_push(&c->preps, sizeof p, &p) == -1) {
		free(p.name);
		free(p.sql);
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

void
pg_conn_set_backoff_max(struct pg_conn *c, int ms)
{
	c->backoff_max_ms = ms < PG_CONN_BACKOFF_MIN_MS ? PG_CONN_BACKOFF_MIN_MS
	    :
	    ms > PG_CONN_BACKOFF_MAX_MS ? PG_CONN_BACKOFF_MAX_MS : ms;
}

void
pg_conn_set_silence_max(struct pg_conn *c, int ms)
{
	c->silence_max_ms = ms > 0 ? ms : 0;
}

/*
 * The bound on silence from now, while batches are out: restart it once
 * something was read (restart), else start it unless it runs; none once
 * nothing is out.
 */
static void
pg_conn_hush_arm(struct pg_conn *c, bool restart)
{
	struct timeval tv;

	if (c->silence_max_ms == 0 || c->hush == NULL)
		return;
	if (TAILQ_EMPTY(&c->sent) || c->conn == NULL) {
		evtimer_del(c->hush);
		return;
	}
	if (!restart && evtimer_pending(c->hush, NULL))
		return;
	tv.tv_sec = c->silence_max_ms / 1000;
	tv.tv_usec = c->silence_max_ms % 1000 * 1000;
	evtimer_add(c->hush, &tv);
}

int
pg_conn_listen(struct pg_conn *c, const char *channel)
{
	char *copy;

	if (c->phase != PG_CONN_NEW) {
		errno = EBUSY;
		return -1;
	}
	if ((copy = strdup(channel)) == NULL ||
	    vec_push(&c->channels, sizeof copy, &copy) == -1) {
		free(copy);
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

bool
pg_conn_up(const struct pg_conn *c)
{
	return c->phase == PG_CONN_UP && c->lost == NULL && !c->freeing;
}

/* Entering one of our libevent callbacks... */
static void
pg_conn_enter(struct pg_conn *c)
{
	c->busy++;
}

/* ...and leaving it: the place where a pg_conn_free from inside a callback
 * takes effect. */
static void pg_conn_destroy(struct pg_conn *);
static void
pg_conn_leave(struct pg_conn *c)
{
	if (--c->busy == 0 && c->freeing)
		pg_conn_destroy(c);
}

/* Whether what called a callback must stop: c is going, or its
 * connection is. */
static bool
pg_conn_gone(const struct pg_conn *c)
{
	return c->freeing || c->conn == NULL;
}

static struct pg_conn_batch *
pg_conn_batch_new(size_t n, pg_conn_batch_cb cb, void *arg)
{
	struct pg_conn_batch *b;

	b = calloc(1, sizeof *b + (n > 0 ? n : 1) * sizeof b->results[0]);
	if (b == NULL)
		return NULL;
	b->cb = cb;
	b->arg = arg;
	b->n = n;
	return b;
}

static void
pg_conn_batch_free(struct pg_conn_batch *b)
{
	size_t i;

	for (i = 0; i < b->n; i++)
		PQclear(b->results[i]);
	free(b->cause);
	free(b);
}

/* Calls b's callback (results when cause is NULL) and frees b, which is
 * on no list any more. */
static void
pg_conn_deliver(struct pg_conn *c, struct pg_conn_batch *b, const char *cause)
{
	c->busy++;
	if (cause == NULL)
		b->cb(b->results, b->n, NULL, b->arg);
	else
		b->cb(NULL, 0, cause, b->arg);
	c->busy--;
	pg_conn_batch_free(b);
}

/* Fails every batch of list with cause (NULL: each its own), those its
 * callbacks add too. */
static void
pg_conn_fail_all(struct pg_conn *c, struct pg_conn_batches *list,
    const char *cause)
{
	struct pg_conn_batch *b;

	while ((b = TAILQ_FIRST(list)) != NULL) {
		TAILQ_REMOVE(list, b, entry);
		pg_conn_deliver(c, b, cause != NULL ? cause : b->cause);
	}
}

/* Tells state_cb of a change of state, only of a change. */
static void
pg_conn_report(struct pg_conn *c, bool up)
{
	if (c->reported == (int)up)
		return;
	c->reported = up;
	c->busy++;
	c->state_cb(up, up ? NULL : c->cause, c->arg);
	c->busy--;
}

static void
pg_conn_defer(struct pg_conn *c)
{
	event_active(c->defer, EV_TIMEOUT, 1);
}

/* Sends what libpq holds: waits for the socket to take more while it
 * cannot take everything. 0, or -1 when the connection was lost. */
static int
pg_conn_flush(struct pg_conn *c)
{
	switch (PQflush(c->conn)) {
	case 0:
		event_del(c->wr);
		return 0;
	case 1:
		event_add(c->wr, NULL);
		return 0;
	default:
		pg_conn_lose(c, PQerrorMessage(c->conn));
		return -1;
	}
}

/* Closes the connection and its events (c->conn NULL after). */
static void
pg_conn_close(struct pg_conn *c)
{
	if (c->io != NULL) {
		event_free(c->io);
		c->io = NULL;
	}
	if (c->wr != NULL) {
		event_free(c->wr);
		c->wr = NULL;
	}
	if (c->timer != NULL)
		evtimer_del(c->timer);
	if (c->hush != NULL)
		evtimer_del(c->hush);
	if (c->conn != NULL) {
		PQfinish(c->conn);
		c->conn = NULL;
	}
	free(c->fatal);
	c->fatal = NULL;
}

/* Keeps res's message when it is an error that ends the session. */
static void
pg_conn_keep_fatal(struct pg_conn *c, const PGresult *res)
{
	const char *severity, *msg;

	severity = PQresultErrorField(res, PG_DIAG_SEVERITY_NONLOCALIZED);
	msg = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
	if (severity == NULL || msg == NULL || c->fatal != NULL ||
	    (strcmp(severity, "FATAL") != 0 && strcmp(severity, "PANIC") != 0))
		return;
	c->fatal = strdup(msg);
}

/* The delay before reconnection attempt number c->attempts (from 0). */
static int
pg_conn_backoff_ms(const struct pg_conn *c)
{
	int ms = PG_CONN_BACKOFF_MIN_MS;
	unsigned i;

	if (c->attempts == 0)
		return 0;
	for (i = 1; i < c->attempts && ms < c->backoff_max_ms; i++)
		ms *= 2;
	if (ms > c->backoff_max_ms)
		ms = c->backoff_max_ms;
	/* So that the daemons of a cluster that lost the same server do
	 * not all come back to it at the same instant. */
	return ms * 3 / 4 + (int)arc4random_uniform((uint32_t)ms / 2 + 1);
}

/*
 * The connection, or an attempt to make it, failed with msg: it is closed,
 * the batches in flight fail, a change of state is told, and the next
 * attempt is timed.
 */
static void
pg_conn_lose(struct pg_conn *c, const char *msg)
{
	struct timeval tv;
	char *line, *cause = NULL;
	int ms;

	if ((line = pg_conn_oneline(c->fatal != NULL ? c->fatal : msg)) !=
	    NULL) {
		free(c->cause);
		c->cause = line;
	}
	pg_conn_close(c);
	if (c->freeing)
		return;
	c->phase = PG_CONN_WAITING;
	ms = pg_conn_backoff_ms(c);
	c->attempts++;
	tv.tv_sec = ms / 1000;
	tv.tv_usec = ms % 1000 * 1000;
	evtimer_add(c->timer, &tv);
	pg_conn_report(c, false);
	if (!TAILQ_EMPTY(&c->sent) && asprintf(&cause,
	    "connection to PostgreSQL lost: %s", c->cause) == -1)
		cause = NULL;
	pg_conn_fail_all(c, &c->sent, cause != NULL ? cause :
	    "connection to PostgreSQL lost");
	free(cause);
}

void
pg_conn_drop(struct pg_conn *c, const char *why)
{
	if (c == NULL || c->freeing || c->conn == NULL)
		return;
	pg_conn_enter(c);
	pg_conn_lose(c, why);
	pg_conn_leave(c);
}

int
pg_conn_backend_pid(const struct pg_conn *c)
{
	return pg_conn_up(c) ? PQbackendPID(c->conn) : 0;
}

/* The set-up's results: up, or down saying which statement failed. */
static void
pg_conn_setup_cb(PGresult *const *results, size_t n, const char *cause,
    void *arg)
{
	struct pg_conn *c = arg;
	const struct pg_conn_prep *preps = c->preps.v;
	char *const *channels = c->channels.v;
	const char *msg;
	char *why;
	size_t i;

	if (cause != NULL)
		return;		/* lost or closing: said already */
	for (i = 0; i < n; i++) {
		if (PQresultStatus(results[i]) == PGRES_COMMAND_OK)
			continue;
		msg = PQresultErrorField(results[i], PG_DIAG_MESSAGE_PRIMARY);
		if (asprintf(&why, "%s %s: %s", i < c->preps.n ?
		    "preparing statement" : "listening to channel",
		    i < c->preps.n ? preps[i].name :
		    channels[i - c->preps.n], msg != NULL ? msg :
		    PQresultErrorMessage(results[i])) == -1)
			why = NULL;
		pg_conn_lose(c, why != NULL ? why : "set-up failed");
		free(why);
		return;
	}
	c->phase = PG_CONN_UP;
	c->attempts = 0;
	pg_conn_report(c, true);
}

/* Reads the results that have come, in order, and hands each batch over
 * at its sync point. */
static void
pg_conn_results(struct pg_conn *c)
{
	struct pg_conn_batch *b;
	PGresult *res;

	while (!pg_conn_gone(c) && !PQisBusy(c->conn)) {
		b = TAILQ_FIRST(&c->sent);
		if ((res = PQgetResult(c->conn)) != NULL)
			c->heard = true;
		if (res == NULL) {
			/* The end of one statement's results. */
			if (b == NULL || !b->got)
				break;
			b->got = false;
			b->next++;
			continue;
		}
		if (PQresultStatus(res) == PGRES_FATAL_ERROR)
			pg_conn_keep_fatal(c, res);
		if (b == NULL || (b->next >= b->n &&
		    PQresultStatus(res) != PGRES_PIPELINE_SYNC)) {
			/* Nobody's (the error of a server going away):
			 * the loss itself says it. */
			PQclear(res);
			continue;
		}
		if (PQresultStatus(res) == PGRES_PIPELINE_SYNC) {
			PQclear(res);
			TAILQ_REMOVE(&c->sent, b, entry);
			pg_conn_deliver(c, b, NULL);
			continue;
		}
		PQclear(b->results[b->next]);
		b->results[b->next] = res;
		b->got = true;
	}
}

/* What the server sent: results, notifications, or the end. */
static void
pg_conn_input(struct pg_conn *c)
{
	PGnotify *n;

	/* First what waits to be sent, as reading may have made room: libpq
	 * reads what came while it sends, which is then read below. */
	if (event_pending(c->wr, EV_WRITE, NULL) && pg_conn_flush(c) == -1)
		return;
	if (!PQconsumeInput(c->conn)) {
		pg_conn_lose(c, PQerrorMessage(c->conn));
		return;
	}
	/* Only what the server said restarts the bound on its silence: a
	 * read that found nothing (the loop's own turn after a batch is
	 * sent) does not. */
	c->heard = false;
	pg_conn_results(c);
	while (!pg_conn_gone(c) && (n = PQnotifies(c->conn)) != NULL) {
		c->heard = true;
		if (c->notify_cb != NULL) {
			c->busy++;
			c->notify_cb(n->relname, n->extra, c->arg);
			c->busy--;
		}
		PQfreemem(n);
	}
	if (pg_conn_gone(c))
		return;
	pg_conn_hush_arm(c, c->heard);
	if (PQstatus(c->conn) == CONNECTION_BAD)
		pg_conn_lose(c, PQerrorMessage(c->conn));
}

static void pg_conn_connect_step(struct pg_conn *);

/* The socket is ready: for the connection's making, or to read, or to
 * write (c->wr). */
static void
pg_conn_io_cb(evutil_socket_t fd, short what, void *arg)
{
	struct pg_conn *c = arg;

	(void)fd;
	(void)what;
	pg_conn_enter(c);
	if (pg_conn_gone(c))
		;
	else if (c->phase == PG_CONN_CONNECTING)
		pg_conn_connect_step(c);
	else
		pg_conn_input(c);	/* writes, then reads */
	pg_conn_leave(c);
}

/* Connected: pipeline mode, then the set-up as the first batch. */
static void
pg_conn_setup(struct pg_conn *c)
{
	const struct pg_conn_prep *preps = c->preps.v;
	char *const *channels = c->channels.v;
	struct pg_conn_batch *b;
	evutil_socket_t fd = PQsocket(c->conn);
	char *quoted, *sql;
	size_t i;
	int ok;

	if (PQsetnonblocking(c->conn, 1) != 0 ||
	    PQenterPipelineMode(c->conn) != 1) {
		pg_conn_lose(c, PQerrorMessage(c->conn));
		return;
	}
	event_free(c->io);
	c->io = event_new(c->base, fd, EV_READ | EV_PERSIST, pg_conn_io_cb, c);
	c->wr = event_new(c->base, fd, EV_WRITE | EV_PERSIST, pg_conn_io_cb,
	    c);
	b = pg_conn_batch_new(c->preps.n + c->channels.n, pg_conn_setup_cb, c);
	if (c->io == NULL || c->wr == NULL || b == NULL ||
	    event_add(c->io, NULL) == -1) {
		free(b);
		pg_conn_lose(c, "out of memory");
		return;
	}
	c->phase = PG_CONN_SETTING_UP;
	TAILQ_INSERT_TAIL(&c->sent, b, entry);
	for (i = 0, ok = 1; ok && i < c->preps.n; i++)
		ok = PQsendPrepare(c->conn, preps[i].name, preps[i].sql, 0,
		    NULL);
	for (i = 0; ok && i < c->channels.n; i++) {
		quoted = PQescapeIdentifier(c->conn, channels[i],
		    strlen(channels[i]));
		if (quoted == NULL || asprintf(&sql, "LISTEN %s", quoted) == -1)
			ok = 0;
		else {
			ok = PQsendQueryParams(c->conn, sql, 0, NULL, NULL,
			    NULL, NULL, 0);
			free(sql);
		}
		PQfreemem(quoted);
	}
	if (!ok || !PQpipelineSync(c->conn)) {
		pg_conn_lose(c, PQerrorMessage(c->conn));
		return;
	}
	/* What libpq read while sending is read from the loop. */
	if (pg_conn_flush(c) == 0)
		pg_conn_defer(c);
}

/* Waits for what PQconnectPoll asked for. */
static void
pg_conn_connect_wait(struct pg_conn *c, short what)
{
	if (c->io != NULL)
		event_free(c->io);
	c->io = event_new(c->base, PQsocket(c->conn), what, pg_conn_io_cb, c);
	if (c->io == NULL || event_add(c->io, NULL) == -1)
		pg_conn_lose(c, "out of memory");
}

/* One step of the connection's making. */
static void
pg_conn_connect_step(struct pg_conn *c)
{
	switch (PQconnectPoll(c->conn)) {
	case PGRES_POLLING_READING:
		pg_conn_connect_wait(c, EV_READ);
		break;
	case PGRES_POLLING_WRITING:
		pg_conn_connect_wait(c, EV_WRITE);
		break;
	case PGRES_POLLING_OK:
		evtimer_del(c->timer);
		pg_conn_setup(c);
		break;
	default:
		pg_conn_lose(c, PQerrorMessage(c->conn));
		break;
	}
}

/* The server's notices and warnings, which libpq would print to stderr:
 * lib/ prints nothing. What a caller needs to know comes with results, or
 * with a loss, whose cause an error ending the session becomes. */
static void
pg_conn_notice_cb(void *arg, const PGresult *res)
{
	pg_conn_keep_fatal(arg, res);
}

/* An attempt to connect, without blocking (but for the resolution of a
 * host name, which libpq does itself). */
static void
pg_conn_connect(struct pg_conn *c)
{
	struct timeval tv = { PG_CONN_CONNECT_TIMEOUT_SEC, 0 };

	c->phase = PG_CONN_CONNECTING;
	if ((c->conn = pg_util_connect(c->conninfo, true)) == NULL) {
		pg_conn_lose(c, "out of memory");
		return;
	}
	if (PQstatus(c->conn) == CONNECTION_BAD) {
		pg_conn_lose(c, PQerrorMessage(c->conn));
		return;
	}
	/* libpq's own would print the server's notices to stderr. */
	PQsetNoticeReceiver(c->conn, pg_conn_notice_cb, c);
	evtimer_add(c->timer, &tv);
	/* PQconnectStartParams's own step was writing. */
	pg_conn_connect_wait(c, EV_WRITE);
}

/* Reconnection time, or an attempt that took too long. */
static void
pg_conn_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct pg_conn *c = arg;

	(void)fd;
	(void)what;
	pg_conn_enter(c);
	if (c->freeing)
		;
	else if (c->phase == PG_CONN_WAITING)
		pg_conn_connect(c);
	else if (c->phase == PG_CONN_CONNECTING)
		pg_conn_lose(c, "timed out connecting to PostgreSQL");
	pg_conn_leave(c);
}

/*
 * Batches are out and the server has said nothing for silence_max_ms: a
 * split that closes nothing (a peer gone silent, packets dropped) leaves
 * the socket open for ever, and the batches unanswered, so the connection
 * is given up as lost and made again.
 */
static void
pg_conn_hush_cb(evutil_socket_t fd, short what, void *arg)
{
	struct pg_conn *c = arg;
	char why[96];

	(void)fd;
	(void)what;
	pg_conn_enter(c);
	if (!c->freeing && c->conn != NULL && !TAILQ_EMPTY(&c->sent) &&
	    c->phase >= PG_CONN_SETTING_UP) {
		snprintf(why, sizeof why, "no answer from PostgreSQL for %d "
		    "ms", c->silence_max_ms);
		pg_conn_lose(c, why);
	}
	pg_conn_leave(c);
}

static void
pg_conn_defer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct pg_conn *c = arg;
	char *lost;

	(void)fd;
	(void)what;
	pg_conn_enter(c);
	if (c->lost != NULL) {
		lost = c->lost;
		c->lost = NULL;
		pg_conn_lose(c, lost);
		free(lost);
	} else if (!pg_conn_gone(c) && c->phase >= PG_CONN_SETTING_UP)
		pg_conn_input(c);
	if (!c->freeing)
		pg_conn_fail_all(c, &c->failed, NULL);
	pg_conn_leave(c);
}

int
pg_conn_start(struct pg_conn *c)
{
	if (c->phase != PG_CONN_NEW) {
		errno = EBUSY;
		return -1;
	}
	free(c->cause);
	if ((c->cause = strdup("connecting")) == NULL)
		return -1;
	c->phase = PG_CONN_WAITING;
	/* This is the attempt made at once: a failure waits before the
	 * next. */
	c->attempts = 1;
	event_active(c->timer, EV_TIMEOUT, 1);
	return 0;
}

/* Why stmt, number i of a batch, cannot be sent; NULL when it can. */
static const char *
pg_conn_stmt_error(const struct pg_conn_stmt *stmt)
{
	if (stmt->name == NULL && stmt->sql == NULL)
		return "neither a prepared statement's name nor SQL";
	if (stmt->nparams < 0 || stmt->nparams > PG_CONN_PARAMS_MAX)
		return "a number of parameters out of 0 to 65535";
	if (stmt->nparams > 0 && stmt->values == NULL)
		return "parameters without values";
	return NULL;
}

/* Queues b to fail from the loop with cause (allocated, taken; NULL when
 * out of memory). 0, or -1 when out of memory. */
static int
pg_conn_fail_later(struct pg_conn *c, struct pg_conn_batch *b, char *cause)
{
	if ((b->cause = cause) == NULL)
		return -1;
	TAILQ_INSERT_TAIL(&c->failed, b, entry);
	pg_conn_defer(c);
	return 0;
}

/* The cause of a batch refused; NULL when out of memory. */
static char *
pg_conn_refusal(const struct pg_conn *c, size_t n, const char *bad)
{
	char *cause;

	if (bad != NULL && asprintf(&cause, "statement %zu: %s", n, bad) != -1)
		return cause;
	if (bad == NULL && c->freeing)
		return strdup("closing");
	if (bad == NULL && asprintf(&cause, "not connected to PostgreSQL: %s",
	    c->lost != NULL ? c->lost : c->cause) != -1)
		return cause;
	return NULL;
}

int
pg_conn_batch(struct pg_conn *c, const struct pg_conn_stmt *stmts, size_t n,
    pg_conn_batch_cb cb, void *arg)
{
	const struct pg_conn_stmt *s;
	struct pg_conn_batch *b;
	const char *bad = NULL;
	size_t i;
	int ok = 1, flushed;

	if ((b = pg_conn_batch_new(n, cb, arg)) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	for (i = 0; bad == NULL && i < n; i++)
		bad = pg_conn_stmt_error(&stmts[i]);
	if (bad != NULL || !pg_conn_up(c))
		ok = pg_conn_fail_later(c, b, pg_conn_refusal(c, i - 1, bad));
	else {
		for (i = 0; ok && i < n; i++) {
			s = &stmts[i];
			ok = s->name != NULL ? PQsendQueryPrepared(c->conn,
			    s->name, s->nparams, s->values, s->lengths,
			    s->formats, 0) : PQsendQueryParams(c->conn, s->sql,
			    s->nparams, NULL, s->values, s->lengths,
			    s->formats, 0);
		}
		TAILQ_INSERT_TAIL(&c->sent, b, entry);
		pg_conn_hush_arm(c, false);
		flushed = ok && PQpipelineSync(c->conn) ? PQflush(c->conn) :
		    -1;
		if (flushed == 1)
			event_add(c->wr, NULL);
		else if (flushed == 0)
			event_del(c->wr);
		else if (c->lost == NULL) {
			/* The loss is handled from the loop: no callback
			 * runs inside this call. */
			if ((c->lost = pg_conn_oneline(
			    PQerrorMessage(c->conn))) == NULL)
				c->lost = strdup("out of memory");
		}
		/* What libpq read while sending is read from the loop. */
		pg_conn_defer(c);
		return 0;
	}
	if (ok == -1) {
		pg_conn_batch_free(b);
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

/* Frees c, and anything it still holds; nothing of ours is under way. */
static void
pg_conn_destroy(struct pg_conn *c)
{
	struct pg_conn_prep *preps = c->preps.v;
	char **channels = c->channels.v;
	size_t i;

	c->busy++;	/* a pg_conn_free from these callbacks does nothing */
	pg_conn_fail_all(c, &c->sent, "closing");
	pg_conn_fail_all(c, &c->failed, "closing");
	pg_conn_close(c);
	if (c->timer != NULL)
		event_free(c->timer);
	if (c->hush != NULL)
		event_free(c->hush);
	if (c->defer != NULL)
		event_free(c->defer);
	for (i = 0; i < c->preps.n; i++) {
		free(preps[i].name);
		free(preps[i].sql);
	}
	vec_free(&c->preps);
	for (i = 0; i < c->channels.n; i++)
		free(channels[i]);
	vec_free(&c->channels);
	free(c->conninfo);
	free(c->cause);
	free(c->lost);
	free(c);
}

void
pg_conn_free(struct pg_conn *c)
{
	if (c == NULL || c->freeing)
		return;
	c->freeing = true;
	c->busy++;
	pg_conn_fail_all(c, &c->sent, "closing");
	pg_conn_fail_all(c, &c->failed, "closing");
	pg_conn_leave(c);
}
