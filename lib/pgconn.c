/* pgconn.c - one PostgreSQL connection driven by a libevent loop: batches of
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
#include "pgconn.h"
#include "vec.h"

/* Reconnection: the first attempt at once, then this doubling... */
#define PGCONN_BACKOFF_MIN_MS	100
/* ...up to this, each delay a random 75% to 125% of it. */
#define PGCONN_BACKOFF_MAX_MS	5000
/* libpq's connect_timeout does not hold for an asynchronous connection:
 * an attempt that takes longer (a host that drops packets) is given up. */
#define PGCONN_CONNECT_TIMEOUT_SEC	10
/* libpq's limit on a statement's parameters (a uint16 in the protocol). */
#define PGCONN_PARAMS_MAX	65535

/* A batch given to the connection, from pgconn_batch to its callback. */
struct pgconn_batch {
	TAILQ_ENTRY(pgconn_batch) entry;
	pgconn_batch_cb	 cb;
	void		*arg;
	char		*cause;		/* on c->failed: what cb is told */
	size_t		 n;		/* statements */
	size_t		 next;		/* the statement results come for */
	bool		 got;		/* results[next] came (NULL ends it) */
	PGresult	*results[];	/* n, at least 1 */
};
TAILQ_HEAD(pgconn_batches, pgconn_batch);

/* A statement prepared on every connection. */
struct pgconn_prep {
	char	*name;
	char	*sql;
};

enum pgconn_phase {
	PGCONN_NEW,		/* pgconn_start not called yet */
	PGCONN_WAITING,		/* down: the timer starts the next attempt */
	PGCONN_CONNECTING,	/* PQconnectPoll under way */
	PGCONN_SETTING_UP,	/* prepares and LISTENs sent */
	PGCONN_UP,
};

struct pgconn {
	struct event_base	*base;
	char			*conninfo;
	pgconn_state_cb		 state_cb;
	pgconn_notify_cb	 notify_cb;
	void			*arg;
	/* what every (re)connection sets up */
	struct vec		 preps;		/* of struct pgconn_prep */
	struct vec		 channels;	/* of char *, allocated */
	int			 backoff_max_ms;

	enum pgconn_phase	 phase;
	PGconn			*conn;
	int			 reported;	/* -1: nothing yet; 0 down; 1 up */
	char			*cause;		/* why it is down, one line */
	unsigned		 attempts;	/* failed since it was last up */
	/*
	 * While connecting, a one-shot wait for what PQconnectPoll asked;
	 * once connected, the socket's reads (persistent) and its writes,
	 * waited for only while libpq holds output it could not send.
	 */
	struct event		*io;
	struct event		*wr;
	struct event		*timer;		/* reconnection, connect timeout */
	/* Work for the loop that pgconn_batch may not do itself: callbacks
	 * of failed batches, results libpq read while sending, a loss. */
	struct event		*defer;
	char			*lost;		/* a loss pgconn_batch saw */
	/* The error that ends the session the server sent (FATAL: a
	 * shutdown...), which says more than libpq's "server closed the
	 * connection unexpectedly" that follows it. */
	char			*fatal;
	struct pgconn_batches	 sent;		/* in flight, in order */
	struct pgconn_batches	 failed;	/* for defer to fail */
	int			 busy;		/* our callbacks under way */
	bool			 freeing;
};

static void pgconn_lose(struct pgconn *, const char *);
static void pgconn_input(struct pgconn *);
static void pgconn_timer_cb(evutil_socket_t, short, void *);
static void pgconn_defer_cb(evutil_socket_t, short, void *);

/* msg on one line, allocated: libpq ends its messages with a newline and
 * puts hints on lines of their own. NULL when out of memory. */
static char *
pgconn_oneline(const char *msg)
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
pgconn_has_alnum(const char *s, size_t len)
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
pgconn_parse_error(const char *msg)
{
	PQconninfoOption *opts = PQconndefaults(), *o;
	char *line, *p, *q, *out;
	size_t len;
	bool known;

	if ((line = pgconn_oneline(msg)) == NULL)
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
		known = len > 0 && !pgconn_has_alnum(p, len);
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

struct pgconn *
pgconn_new(struct event_base *base, const char *conninfo,
    pgconn_state_cb state_cb, pgconn_notify_cb notify_cb, void *arg,
    char **cause)
{
	PQconninfoOption *opts;
	struct pgconn *c;
	char *err = NULL, *why;

	if ((opts = PQconninfoParse(conninfo, &err)) == NULL) {
		why = err != NULL ? pgconn_parse_error(err) : NULL;
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
	c->backoff_max_ms = PGCONN_BACKOFF_MAX_MS;
	c->state_cb = state_cb;
	c->notify_cb = notify_cb;
	c->arg = arg;
	c->reported = -1;
	TAILQ_INIT(&c->sent);
	TAILQ_INIT(&c->failed);
	if ((c->conninfo = strdup(conninfo)) == NULL ||
	    (c->cause = strdup("not started")) == NULL ||
	    (c->timer = evtimer_new(base, pgconn_timer_cb, c)) == NULL ||
	    (c->defer = event_new(base, -1, 0, pgconn_defer_cb, c)) == NULL)
		goto oom;
	return c;
oom:
	pgconn_free(c);
	*cause = strdup("out of memory");
	return NULL;
}

int
pgconn_prepare(struct pgconn *c, const char *name, const char *sql)
{
	struct pgconn_prep p;

	if (c->phase != PGCONN_NEW) {
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
pgconn_set_backoff_max(struct pgconn *c, int ms)
{
	c->backoff_max_ms = ms < PGCONN_BACKOFF_MIN_MS ? PGCONN_BACKOFF_MIN_MS :
	    ms > PGCONN_BACKOFF_MAX_MS ? PGCONN_BACKOFF_MAX_MS : ms;
}

int
pgconn_listen(struct pgconn *c, const char *channel)
{
	char *copy;

	if (c->phase != PGCONN_NEW) {
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
pgconn_up(const struct pgconn *c)
{
	return c->phase == PGCONN_UP && c->lost == NULL && !c->freeing;
}

/* Entering one of our libevent callbacks... */
static void
pgconn_enter(struct pgconn *c)
{
	c->busy++;
}

/* ...and leaving it: the place where a pgconn_free from inside a callback
 * takes effect. */
static void pgconn_destroy(struct pgconn *);
static void
pgconn_leave(struct pgconn *c)
{
	if (--c->busy == 0 && c->freeing)
		pgconn_destroy(c);
}

/* Whether what called a callback must stop: c is going, or its
 * connection is. */
static bool
pgconn_gone(const struct pgconn *c)
{
	return c->freeing || c->conn == NULL;
}

static struct pgconn_batch *
pgconn_batch_new(size_t n, pgconn_batch_cb cb, void *arg)
{
	struct pgconn_batch *b;

	b = calloc(1, sizeof *b + (n > 0 ? n : 1) * sizeof b->results[0]);
	if (b == NULL)
		return NULL;
	b->cb = cb;
	b->arg = arg;
	b->n = n;
	return b;
}

static void
pgconn_batch_free(struct pgconn_batch *b)
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
pgconn_deliver(struct pgconn *c, struct pgconn_batch *b, const char *cause)
{
	c->busy++;
	if (cause == NULL)
		b->cb(b->results, b->n, NULL, b->arg);
	else
		b->cb(NULL, 0, cause, b->arg);
	c->busy--;
	pgconn_batch_free(b);
}

/* Fails every batch of list with cause (NULL: each its own), those its
 * callbacks add too. */
static void
pgconn_fail_all(struct pgconn *c, struct pgconn_batches *list,
    const char *cause)
{
	struct pgconn_batch *b;

	while ((b = TAILQ_FIRST(list)) != NULL) {
		TAILQ_REMOVE(list, b, entry);
		pgconn_deliver(c, b, cause != NULL ? cause : b->cause);
	}
}

/* Tells state_cb of a change of state, only of a change. */
static void
pgconn_report(struct pgconn *c, bool up)
{
	if (c->reported == (int)up)
		return;
	c->reported = up;
	c->busy++;
	c->state_cb(up, up ? NULL : c->cause, c->arg);
	c->busy--;
}

static void
pgconn_defer(struct pgconn *c)
{
	event_active(c->defer, EV_TIMEOUT, 1);
}

/* Sends what libpq holds: waits for the socket to take more while it
 * cannot take everything. 0, or -1 when the connection was lost. */
static int
pgconn_flush(struct pgconn *c)
{
	switch (PQflush(c->conn)) {
	case 0:
		event_del(c->wr);
		return 0;
	case 1:
		event_add(c->wr, NULL);
		return 0;
	default:
		pgconn_lose(c, PQerrorMessage(c->conn));
		return -1;
	}
}

/* Closes the connection and its events (c->conn NULL after). */
static void
pgconn_close(struct pgconn *c)
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
	if (c->conn != NULL) {
		PQfinish(c->conn);
		c->conn = NULL;
	}
	free(c->fatal);
	c->fatal = NULL;
}

/* Keeps res's message when it is an error that ends the session. */
static void
pgconn_keep_fatal(struct pgconn *c, const PGresult *res)
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
pgconn_backoff_ms(const struct pgconn *c)
{
	int ms = PGCONN_BACKOFF_MIN_MS;
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
pgconn_lose(struct pgconn *c, const char *msg)
{
	struct timeval tv;
	char *line, *cause = NULL;
	int ms;

	if ((line = pgconn_oneline(c->fatal != NULL ? c->fatal : msg)) !=
	    NULL) {
		free(c->cause);
		c->cause = line;
	}
	pgconn_close(c);
	if (c->freeing)
		return;
	c->phase = PGCONN_WAITING;
	ms = pgconn_backoff_ms(c);
	c->attempts++;
	tv.tv_sec = ms / 1000;
	tv.tv_usec = ms % 1000 * 1000;
	evtimer_add(c->timer, &tv);
	pgconn_report(c, false);
	if (!TAILQ_EMPTY(&c->sent) && asprintf(&cause,
	    "connection to PostgreSQL lost: %s", c->cause) == -1)
		cause = NULL;
	pgconn_fail_all(c, &c->sent, cause != NULL ? cause :
	    "connection to PostgreSQL lost");
	free(cause);
}

void
pgconn_drop(struct pgconn *c, const char *why)
{
	if (c == NULL || c->freeing || c->conn == NULL)
		return;
	pgconn_enter(c);
	pgconn_lose(c, why);
	pgconn_leave(c);
}

int
pgconn_backend_pid(const struct pgconn *c)
{
	return pgconn_up(c) ? PQbackendPID(c->conn) : 0;
}

/* The set-up's results: up, or down saying which statement failed. */
static void
pgconn_setup_cb(PGresult *const *results, size_t n, const char *cause,
    void *arg)
{
	struct pgconn *c = arg;
	const struct pgconn_prep *preps = c->preps.v;
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
		pgconn_lose(c, why != NULL ? why : "set-up failed");
		free(why);
		return;
	}
	c->phase = PGCONN_UP;
	c->attempts = 0;
	pgconn_report(c, true);
}

/* Reads the results that have come, in order, and hands each batch over
 * at its sync point. */
static void
pgconn_results(struct pgconn *c)
{
	struct pgconn_batch *b;
	PGresult *res;

	while (!pgconn_gone(c) && !PQisBusy(c->conn)) {
		b = TAILQ_FIRST(&c->sent);
		if ((res = PQgetResult(c->conn)) == NULL) {
			/* The end of one statement's results. */
			if (b == NULL || !b->got)
				break;
			b->got = false;
			b->next++;
			continue;
		}
		if (PQresultStatus(res) == PGRES_FATAL_ERROR)
			pgconn_keep_fatal(c, res);
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
			pgconn_deliver(c, b, NULL);
			continue;
		}
		PQclear(b->results[b->next]);
		b->results[b->next] = res;
		b->got = true;
	}
}

/* What the server sent: results, notifications, or the end. */
static void
pgconn_input(struct pgconn *c)
{
	PGnotify *n;

	/* First what waits to be sent, as reading may have made room: libpq
	 * reads what came while it sends, which is then read below. */
	if (event_pending(c->wr, EV_WRITE, NULL) && pgconn_flush(c) == -1)
		return;
	if (!PQconsumeInput(c->conn)) {
		pgconn_lose(c, PQerrorMessage(c->conn));
		return;
	}
	pgconn_results(c);
	while (!pgconn_gone(c) && (n = PQnotifies(c->conn)) != NULL) {
		if (c->notify_cb != NULL) {
			c->busy++;
			c->notify_cb(n->relname, n->extra, c->arg);
			c->busy--;
		}
		PQfreemem(n);
	}
	if (pgconn_gone(c))
		return;
	if (PQstatus(c->conn) == CONNECTION_BAD)
		pgconn_lose(c, PQerrorMessage(c->conn));
}

static void pgconn_connect_step(struct pgconn *);

/* The socket is ready: for the connection's making, or to read, or to
 * write (c->wr). */
static void
pgconn_io_cb(evutil_socket_t fd, short what, void *arg)
{
	struct pgconn *c = arg;

	(void)fd;
	(void)what;
	pgconn_enter(c);
	if (pgconn_gone(c))
		;
	else if (c->phase == PGCONN_CONNECTING)
		pgconn_connect_step(c);
	else
		pgconn_input(c);	/* writes, then reads */
	pgconn_leave(c);
}

/* Connected: pipeline mode, then the set-up as the first batch. */
static void
pgconn_setup(struct pgconn *c)
{
	const struct pgconn_prep *preps = c->preps.v;
	char *const *channels = c->channels.v;
	struct pgconn_batch *b;
	evutil_socket_t fd = PQsocket(c->conn);
	char *quoted, *sql;
	size_t i;
	int ok;

	if (PQsetnonblocking(c->conn, 1) != 0 ||
	    PQenterPipelineMode(c->conn) != 1) {
		pgconn_lose(c, PQerrorMessage(c->conn));
		return;
	}
	event_free(c->io);
	c->io = event_new(c->base, fd, EV_READ | EV_PERSIST, pgconn_io_cb, c);
	c->wr = event_new(c->base, fd, EV_WRITE | EV_PERSIST, pgconn_io_cb,
	    c);
	b = pgconn_batch_new(c->preps.n + c->channels.n, pgconn_setup_cb, c);
	if (c->io == NULL || c->wr == NULL || b == NULL ||
	    event_add(c->io, NULL) == -1) {
		free(b);
		pgconn_lose(c, "out of memory");
		return;
	}
	c->phase = PGCONN_SETTING_UP;
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
		pgconn_lose(c, PQerrorMessage(c->conn));
		return;
	}
	/* What libpq read while sending is read from the loop. */
	if (pgconn_flush(c) == 0)
		pgconn_defer(c);
}

/* Waits for what PQconnectPoll asked for. */
static void
pgconn_connect_wait(struct pgconn *c, short what)
{
	if (c->io != NULL)
		event_free(c->io);
	c->io = event_new(c->base, PQsocket(c->conn), what, pgconn_io_cb, c);
	if (c->io == NULL || event_add(c->io, NULL) == -1)
		pgconn_lose(c, "out of memory");
}

/* One step of the connection's making. */
static void
pgconn_connect_step(struct pgconn *c)
{
	switch (PQconnectPoll(c->conn)) {
	case PGRES_POLLING_READING:
		pgconn_connect_wait(c, EV_READ);
		break;
	case PGRES_POLLING_WRITING:
		pgconn_connect_wait(c, EV_WRITE);
		break;
	case PGRES_POLLING_OK:
		evtimer_del(c->timer);
		pgconn_setup(c);
		break;
	default:
		pgconn_lose(c, PQerrorMessage(c->conn));
		break;
	}
}

/* The server's notices and warnings, which libpq would print to stderr:
 * lib/ prints nothing. What a caller needs to know comes with results, or
 * with a loss, whose cause an error ending the session becomes. */
static void
pgconn_notice_cb(void *arg, const PGresult *res)
{
	pgconn_keep_fatal(arg, res);
}

/* An attempt to connect, without blocking (but for the resolution of a
 * host name, which libpq does itself). */
static void
pgconn_connect(struct pgconn *c)
{
	struct timeval tv = { PGCONN_CONNECT_TIMEOUT_SEC, 0 };

	c->phase = PGCONN_CONNECTING;
	if ((c->conn = pg_connect(c->conninfo, true)) == NULL) {
		pgconn_lose(c, "out of memory");
		return;
	}
	if (PQstatus(c->conn) == CONNECTION_BAD) {
		pgconn_lose(c, PQerrorMessage(c->conn));
		return;
	}
	/* libpq's own would print the server's notices to stderr. */
	PQsetNoticeReceiver(c->conn, pgconn_notice_cb, c);
	evtimer_add(c->timer, &tv);
	/* PQconnectStartParams's own step was writing. */
	pgconn_connect_wait(c, EV_WRITE);
}

/* Reconnection time, or an attempt that took too long. */
static void
pgconn_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct pgconn *c = arg;

	(void)fd;
	(void)what;
	pgconn_enter(c);
	if (c->freeing)
		;
	else if (c->phase == PGCONN_WAITING)
		pgconn_connect(c);
	else if (c->phase == PGCONN_CONNECTING)
		pgconn_lose(c, "timed out connecting to PostgreSQL");
	pgconn_leave(c);
}

static void
pgconn_defer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct pgconn *c = arg;
	char *lost;

	(void)fd;
	(void)what;
	pgconn_enter(c);
	if (c->lost != NULL) {
		lost = c->lost;
		c->lost = NULL;
		pgconn_lose(c, lost);
		free(lost);
	} else if (!pgconn_gone(c) && c->phase >= PGCONN_SETTING_UP)
		pgconn_input(c);
	if (!c->freeing)
		pgconn_fail_all(c, &c->failed, NULL);
	pgconn_leave(c);
}

int
pgconn_start(struct pgconn *c)
{
	if (c->phase != PGCONN_NEW) {
		errno = EBUSY;
		return -1;
	}
	free(c->cause);
	if ((c->cause = strdup("connecting")) == NULL)
		return -1;
	c->phase = PGCONN_WAITING;
	/* This is the attempt made at once: a failure waits before the
	 * next. */
	c->attempts = 1;
	event_active(c->timer, EV_TIMEOUT, 1);
	return 0;
}

/* Why stmt, number i of a batch, cannot be sent; NULL when it can. */
static const char *
pgconn_stmt_error(const struct pgconn_stmt *stmt)
{
	if (stmt->name == NULL && stmt->sql == NULL)
		return "neither a prepared statement's name nor SQL";
	if (stmt->nparams < 0 || stmt->nparams > PGCONN_PARAMS_MAX)
		return "a number of parameters out of 0 to 65535";
	if (stmt->nparams > 0 && stmt->values == NULL)
		return "parameters without values";
	return NULL;
}

/* Queues b to fail from the loop with cause (allocated, taken; NULL when
 * out of memory). 0, or -1 when out of memory. */
static int
pgconn_fail_later(struct pgconn *c, struct pgconn_batch *b, char *cause)
{
	if ((b->cause = cause) == NULL)
		return -1;
	TAILQ_INSERT_TAIL(&c->failed, b, entry);
	pgconn_defer(c);
	return 0;
}

/* The cause of a batch refused; NULL when out of memory. */
static char *
pgconn_refusal(const struct pgconn *c, size_t n, const char *bad)
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
pgconn_batch(struct pgconn *c, const struct pgconn_stmt *stmts, size_t n,
    pgconn_batch_cb cb, void *arg)
{
	const struct pgconn_stmt *s;
	struct pgconn_batch *b;
	const char *bad = NULL;
	size_t i;
	int ok = 1, flushed;

	if ((b = pgconn_batch_new(n, cb, arg)) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	for (i = 0; bad == NULL && i < n; i++)
		bad = pgconn_stmt_error(&stmts[i]);
	if (bad != NULL || !pgconn_up(c))
		ok = pgconn_fail_later(c, b, pgconn_refusal(c, i - 1, bad));
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
		flushed = ok && PQpipelineSync(c->conn) ? PQflush(c->conn) :
		    -1;
		if (flushed == 1)
			event_add(c->wr, NULL);
		else if (flushed == 0)
			event_del(c->wr);
		else if (c->lost == NULL) {
			/* The loss is handled from the loop: no callback
			 * runs inside this call. */
			if ((c->lost = pgconn_oneline(
			    PQerrorMessage(c->conn))) == NULL)
				c->lost = strdup("out of memory");
		}
		/* What libpq read while sending is read from the loop. */
		pgconn_defer(c);
		return 0;
	}
	if (ok == -1) {
		pgconn_batch_free(b);
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

/* Frees c, and anything it still holds; nothing of ours is under way. */
static void
pgconn_destroy(struct pgconn *c)
{
	struct pgconn_prep *preps = c->preps.v;
	char **channels = c->channels.v;
	size_t i;

	c->busy++;	/* a pgconn_free from these callbacks does nothing */
	pgconn_fail_all(c, &c->sent, "closing");
	pgconn_fail_all(c, &c->failed, "closing");
	pgconn_close(c);
	if (c->timer != NULL)
		event_free(c->timer);
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
pgconn_free(struct pgconn *c)
{
	if (c == NULL || c->freeing)
		return;
	c->freeing = true;
	c->busy++;
	pgconn_fail_all(c, &c->sent, "closing");
	pgconn_fail_all(c, &c->failed, "closing");
	pgconn_leave(c);
}
