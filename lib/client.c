/* client.c - libtriage's connection (<triage/client.h>): blocking JSON-RPC
 * over newline-framed JSON, keeping what arrives out of turn for later
 * calls. */
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "version.h"

#define CLIENT_BUF_MIN 8192

struct triage_client {
	int fd;
	char *path;		/* for messages */
	int64_t next_id;

	/* Bytes read and not yet returned are buf[start..end). */
	char *buf;
	size_t size;
	size_t start;
	size_t end;
	size_t scanned;		/* from start, bytes known to hold no '\n' */

	json_t *responses;	/* array of response objects, oldest first */
	json_t *notifications;	/* array of whole messages, oldest first */

	/* triage_client_reconnect(): 0 when off. */
	int reconnect_ms;
	triage_outage_cb outage_cb;
	void *outage_arg;
	json_t *watches;	/* params of each watch made, to renew */
};

/* Copies src into dst as one line: control characters become spaces, and a
 * UTF-8 sequence cut by the size is dropped whole. */
static void
client_copy_line(char *dst, size_t size, const char *src)
{
	size_t i, n;

	for (n = 0; src[n] != '\0' && n < size - 1; n++) {
		unsigned char ch = (unsigned char)src[n];

		dst[n] = ch < 0x20 || ch == 0x7f ? ' ' : (char)ch;
	}
	if (src[n] != '\0') {
		/* Back to the start of the last sequence, if it is cut. */
		i = n;
		while (i > 0 && ((unsigned char)dst[i - 1] & 0xc0) == 0x80)
			i--;
		if (i > 0 && ((unsigned char)dst[i - 1] & 0xc0) == 0xc0)
			n = i - 1;
	}
	dst[n] = '\0';
}

static void
client_set_error(struct triage_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
client_set_error(struct triage_error *err, int code, const char *fmt, ...)
{
	char line[sizeof err->message];
	va_list ap;

	if (err == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	err->code = code;
	client_copy_line(err->message, sizeof err->message, line);
	err->field[0] = '\0';
	err->errors[0] = '\0';
}

/* A transport error: fills err and leaves errnum in errno for the caller. */
static void
client_transport(struct triage_error *err, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
client_transport(struct triage_error *err, int errnum, const char *fmt, ...)
{
	char line[sizeof err->message];
	va_list ap;

	if (err != NULL) {
		va_start(ap, fmt);
		vsnprintf(line, sizeof line, fmt, ap);
		va_end(ap);
		client_set_error(err, TRIAGE_ERR_TRANSPORT, "%s", line);
	}
	errno = errnum;
}

/* A new connection to path: its socket, or -1 with errno. */
static int
client_dial(const char *path)
{
	struct sockaddr_un sun;
	int fd, saved;

	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof sun.sun_path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(sun.sun_path, path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	if (connect(fd, (struct sockaddr *)&sun, sizeof sun) == -1) {
		saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

const char *
triage_client_version(void)
{
	return TRIAGE_VERSION;
}

struct triage_client *
triage_client_connect(const char *path, char **cause)
{
	struct triage_client *c;
	const char *hint;
	int fd, saved;

	if ((fd = client_dial(path)) == -1 && errno == ENAMETOOLONG) {
		if (asprintf(cause, "cannot connect to %s: path too long",
		    path) == -1)
			*cause = NULL;
		errno = ENAMETOOLONG;
		return NULL;
	}
	if (fd == -1)
		goto fail;
	if ((c = calloc(1, sizeof *c)) == NULL)
		goto fail;
	c->fd = fd;
	c->next_id = 1;
	c->size = CLIENT_BUF_MIN;
	c->path = strdup(path);
	c->buf = malloc(c->size);
	c->responses = json_array();
	c->notifications = json_array();
	c->watches = json_array();
	if (c->path == NULL || c->buf == NULL || c->responses == NULL ||
	    c->notifications == NULL || c->watches == NULL) {
		triage_client_free(c);
		fd = -1;
		errno = ENOMEM;
		goto fail;
	}
	return c;

fail:
	saved = errno;
	if (fd != -1)
		close(fd);
	if (saved == EACCES || saved == EPERM)
		hint = "are you in the socket's group?";
	else
		hint = "is triaged running?";
	if (asprintf(cause, "cannot connect to %s: %s (%s)", path,
	    strerror(saved), hint) == -1)
		*cause = NULL;
	errno = saved;
	return NULL;
}

int
triage_client_fd(const struct triage_client *c)
{
	return c->fd;
}

void
triage_client_free(struct triage_client *c)
{
	if (c == NULL)
		return;
	if (c->fd != -1)
		close(c->fd);
	free(c->path);
	free(c->buf);
	json_decref(c->responses);
	json_decref(c->notifications);
	json_decref(c->watches);
	free(c);
}

/*
 * CLOCK_MONOTONIC in milliseconds. The library's own, not timefmt.c's: the
 * rest of that file (its thread-local cache) would make libtriage.so.0 need
 * ld.so's TLS for a clock it does not read.
 */
static int64_t
client_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The monotonic ms timeout_ms from now, or -1 for no timeout. */
static int64_t
client_deadline(int timeout_ms)
{
	if (timeout_ms < 0)
		return -1;
	return client_mono_ms() + timeout_ms;
}

/* Milliseconds left until deadline; -1 for none. */
static int
client_remaining(int64_t deadline)
{
	int64_t ms;

	if (deadline < 0)
		return -1;
	ms = deadline - client_mono_ms();
	if (ms < 0)
		return 0;
	return ms > 86400000 ? 86400000 : (int)ms;
}

/* Reads more bytes into the buffer, waiting until deadline. 0 or -1. */
static int
client_fill(struct triage_client *c, int64_t deadline,
    struct triage_error *err)
{
	struct pollfd pfd;
	ssize_t n;
	char *nbuf;
	bool read_first;
	int ready;

	if (c->fd == -1) {
		client_transport(err, ENOTCONN, "not connected to triaged at %s",
		    c->path);
		return -1;
	}
	if (c->start > 0) {
		memmove(c->buf, c->buf + c->start, c->end - c->start);
		c->end -= c->start;
		c->start = 0;
	}
	if (c->end == c->size) {
		if (c->size > SIZE_MAX / 2 ||
		    (nbuf = realloc(c->buf, c->size * 2)) == NULL) {
			client_transport(err, ENOMEM,
			    "out of memory reading from %s", c->path);
			return -1;
		}
		c->buf = nbuf;
		c->size *= 2;
	}

	/* Without a deadline the socket's own blocking read waits: no
	 * poll(2) first, unless the read says the socket does not block. */
	read_first = deadline < 0;
	for (;;) {
		pfd.fd = c->fd;
		pfd.events = POLLIN;
		ready = read_first ? 1 :
		    poll(&pfd, 1, client_remaining(deadline));
		if (ready == -1 && errno == EINTR)
			continue;
		if (ready == -1) {
			client_transport(err, errno, "cannot read from %s: %s",
			    c->path, strerror(errno));
			return -1;
		}
		if (ready == 0) {
			client_transport(err, ETIMEDOUT,
			    "timed out waiting for triaged at %s", c->path);
			return -1;
		}
		n = recv(c->fd, c->buf + c->end, c->size - c->end, 0);
		if (n == -1 && errno == EAGAIN)
			read_first = false;
		if (n == -1 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n == -1) {
			client_transport(err, errno, "cannot read from %s: %s",
			    c->path, strerror(errno));
			return -1;
		}
		if (n == 0) {
			client_transport(err, ECONNRESET,
			    "triaged at %s closed the connection", c->path);
			return -1;
		}
		c->end += (size_t)n;
		return 0;
	}
}

static bool
client_blank(const char *line, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
			return false;
	}
	return true;
}

/*
 * Returns the next line that is not blank, without its '\n', and sets *len.
 * It stays valid until the next read. NULL with err set on error; bytes of a
 * line not yet complete stay buffered, so a timeout loses nothing.
 */
static char *
client_read_line(struct triage_client *c, int64_t deadline,
    size_t *len, struct triage_error *err)
{
	char *line, *nl;

	for (;;) {
		line = c->buf + c->start;
		nl = memchr(line + c->scanned, '\n',
		    c->end - c->start - c->scanned);
		if (nl != NULL) {
			*len = (size_t)(nl - line);
			c->start += *len + 1;
			c->scanned = 0;
			if (client_blank(line, *len))
				continue;
			return line;
		}
		c->scanned = c->end - c->start;
		if (client_fill(c, deadline, err) == -1)
			return NULL;
	}
}

static json_t *
client_read_until(struct triage_client *c, int64_t deadline,
    struct triage_error *err)
{
	json_error_t jerr;
	json_t *msg;
	size_t len;
	char *line;

	if ((line = client_read_line(c, deadline, &len, err)) == NULL)
		return NULL;
	/* NUL is allowed: output data may hold it, escaped as \u0000. */
	if ((msg = json_loadb(line, len, JSON_ALLOW_NUL, &jerr)) == NULL) {
		client_transport(err, EPROTO,
		    "malformed message from triaged at %s: %s", c->path,
		    jerr.text);
		return NULL;
	}
	return msg;
}

json_t *
client_read_message(struct triage_client *c, int timeout_ms,
    struct triage_error *err)
{

	return client_read_until(c, client_deadline(timeout_ms), err);
}

static bool
client_is_response(const json_t *msg)
{
	return json_is_object(msg) && json_object_get(msg, "id") != NULL &&
	    json_object_get(msg, "method") == NULL &&
	    (json_object_get(msg, "result") != NULL ||
	    json_object_get(msg, "error") != NULL);
}

/* Reads one message and files it with the responses or the notifications.
 * 0, or -1 with err set. */
static int
client_pump(struct triage_client *c, int64_t deadline,
    struct triage_error *err)
{
	json_t *msg, *elem;
	size_t i;
	int rc;

	if ((msg = client_read_until(c, deadline, err)) == NULL)
		return -1;
	if (json_is_object(msg) && json_object_get(msg, "id") == NULL &&
	    json_is_string(json_object_get(msg, "method")))
		rc = json_array_append(c->notifications, msg);
	else if (client_is_response(msg))
		rc = json_array_append(c->responses, msg);
	else if (json_is_array(msg) && json_array_size(msg) > 0) {
		/* A batch's responses, each on its own. */
		rc = 0;
		json_array_foreach(msg, i, elem) {
			if (!client_is_response(elem))
				rc = 1;
		}
		if (rc == 0)
			rc = json_array_extend(c->responses, msg);
	} else
		rc = 1;
	json_decref(msg);
	if (rc == 1) {
		client_transport(err, EPROTO,
		    "unexpected message from triaged at %s", c->path);
		return -1;
	}
	if (rc == -1) {
		client_transport(err, ENOMEM, "out of memory");
		return -1;
	}
	return 0;
}

/* The id of a response: its value, or -1 for null or not an integer. */
static int64_t
client_response_id(const json_t *resp)
{
	const json_t *id = json_object_get(resp, "id");

	return json_is_integer(id) ? (int64_t)json_integer_value(id) : -1;
}

/* error.data.errors into err->errors, each string a line of its own. */
static void
client_errors(struct triage_error *err, const json_t *errors)
{
	char line[512];
	size_t i, len = 0;
	const json_t *v;
	int n;

	json_array_foreach(errors, i, v) {
		if (!json_is_string(v))
			continue;
		client_copy_line(line, sizeof line, json_string_value(v));
		n = snprintf(err->errors + len, sizeof err->errors - len,
		    "%s%s", len ? "\n" : "", line);
		if (n < 0 || (size_t)n >= sizeof err->errors - len)
			break;
		len += (size_t)n;
	}
}

/* Takes a response apart: its result (a new reference), or NULL with *err
 * filled from its error. */
static json_t *
client_result(struct triage_client *c, const json_t *resp,
    struct triage_error *err)
{
	const json_t *error, *code;
	const char *msg, *field;
	json_t *result;

	error = json_object_get(resp, "error");
	if (json_is_object(error)) {
		code = json_object_get(error, "code");
		msg = json_string_value(json_object_get(error, "message"));
		field = json_string_value(json_object_get(json_object_get(error,
		    "data"), "field"));
		if (msg == NULL || *msg == '\0')
			msg = "the daemon gave an error without a message";
		client_set_error(err, json_is_integer(code) ?
		    (int)json_integer_value(code) : -32603, "%s", msg);
		if (err != NULL && field != NULL)
			client_copy_line(err->field, sizeof err->field, field);
		if (err != NULL)
			client_errors(err, json_object_get(json_object_get(
			    error, "data"), "errors"));
		errno = 0;
		return NULL;
	}
	if ((result = json_object_get(resp, "result")) == NULL) {
		client_transport(err, EPROTO,
		    "unexpected message from triaged at %s", c->path);
		return NULL;
	}
	return json_incref(result);
}

static int
client_send_all(struct triage_client *c, const char *buf, size_t len)
{
	ssize_t n;

	if (c->fd == -1) {
		errno = ENOTCONN;
		return -1;
	}
	while (len > 0) {
		n = send(c->fd, buf, len, MSG_NOSIGNAL);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

int
client_send_raw(struct triage_client *c, const void *buf, size_t len)
{
	return client_send_all(c, buf, len);
}

int64_t
triage_client_send(struct triage_client *c, const char *method,
    json_t *params, struct triage_error *err)
{
	json_t *req;
	char *text = NULL;
	size_t len;
	int64_t id = c->next_id;
	int rc = -1;

	req = json_object();
	if (req != NULL &&
	    json_object_set_new(req, "jsonrpc", json_string("2.0")) == 0 &&
	    json_object_set_new(req, "id", json_integer(id)) == 0 &&
	    json_object_set_new(req, "method", json_string(method)) == 0 &&
	    (params == NULL || json_object_set(req, "params", params) == 0))
		text = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	json_decref(params);
	if (text == NULL) {
		client_transport(err, ENOMEM,
		    "cannot encode the %s request (out of memory or invalid "
		    "UTF-8)", method);
		return -1;
	}
	len = strlen(text);
	text[len] = '\n';	/* over the NUL: json_dumps never writes one */
	rc = client_send_all(c, text, len + 1);
	free(text);
	if (rc == -1) {
		if (errno == EPIPE || errno == ECONNRESET)
			client_transport(err, errno,
			    "triaged at %s closed the connection", c->path);
		else
			client_transport(err, errno, "cannot send to %s: %s",
			    c->path, strerror(errno));
		return -1;
	}
	c->next_id++;
	return id;
}

/* Removes and returns queue[i] (a new reference). */
static json_t *
client_take(json_t *queue, size_t i)
{
	json_t *msg = json_incref(json_array_get(queue, i));

	json_array_remove(queue, i);
	return msg;
}

/*
 * The index of the response to id among those kept, or -1. An error with id
 * null answers a request the daemon could not read (a line too long): with
 * one call at a time, it is the caller's.
 */
static ssize_t
client_find(struct triage_client *c, int64_t id)
{
	json_t *resp;
	int64_t rid;
	size_t i;

	json_array_foreach(c->responses, i, resp) {
		rid = client_response_id(resp);
		if (rid == id ||
		    (rid == -1 && json_is_null(json_object_get(resp, "id"))))
			return (ssize_t)i;
	}
	return -1;
}

/*
 * After a send failed because the daemon closed the connection, reads what
 * it said before closing: a request too long is answered with an error
 * first, which tells more than "connection closed". Replaces *err with that
 * error if it is there.
 */
static void
client_salvage(struct triage_client *c, int64_t id,
    struct triage_error *err)
{
	struct triage_error ignored;
	json_t *resp;
	ssize_t i;
	int saved = errno;

	while (client_pump(c, client_deadline(0), &ignored) == 0)
		continue;
	if ((i = client_find(c, id)) != -1) {
		resp = client_take(c->responses, (size_t)i);
		json_decref(client_result(c, resp, err));
		json_decref(resp);
	}
	errno = saved;
}

/* Sends one request and waits until deadline for its response: the result,
 * or NULL with *err filled in. */
static json_t *
client_call_once(struct triage_client *c, const char *method,
    json_t *params, int64_t deadline, struct triage_error *err)
{
	json_t *resp, *result;
	int64_t id;
	ssize_t i;

	if ((id = triage_client_send(c, method, params, err)) == -1) {
		if (errno == EPIPE || errno == ECONNRESET)
			client_salvage(c, c->next_id, err);
		return NULL;
	}
	for (;;) {
		if ((i = client_find(c, id)) != -1) {
			resp = client_take(c->responses, (size_t)i);
			result = client_result(c, resp, err);
			json_decref(resp);
			return result;
		}
		if (client_pump(c, deadline, err) == -1)
			return NULL;
	}
}

void
triage_client_reconnect(struct triage_client *c, int give_up_ms,
    triage_outage_cb cb, void *arg)
{
	c->reconnect_ms = give_up_ms > 0 ? give_up_ms : 0;
	c->outage_cb = cb;
	c->outage_arg = arg;
}

/*
 * Whether what failed with err (errnum its errno) may be done again on a
 * new connection: the connection broke, and method (NULL: waiting for a
 * notification) only reads, so that doing it twice changes nothing.
 */
static bool
client_may_redo(const struct triage_client *c, const char *method,
    const struct triage_error *err, int errnum)
{
	static const char *const readers[] = {
		"get", "wait", "output", "list", "stats", "watch", NULL,
	};
	const char *const *m;

	if (c->reconnect_ms == 0 || err->code != TRIAGE_ERR_TRANSPORT ||
	    (errnum != ECONNRESET && errnum != EPIPE))
		return false;
	if (method == NULL)
		return true;
	for (m = readers; *m != NULL; m++) {
		if (strcmp(*m, method) == 0)
			return true;
	}
	return false;
}

static void
client_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		continue;
}

/* On a new connection: every watch made again, with its own params. 0, or
 * -1 with *err filled in. */
static int
client_renew(struct triage_client *c, int64_t deadline,
    struct triage_error *err)
{
	json_t *params, *result;
	size_t i;

	json_array_foreach(c->watches, i, params) {
		result = client_call_once(c, "watch", json_incref(params),
		    deadline, err);
		if (result == NULL)
			return -1;
		json_decref(result);
	}
	return 0;
}

/*
 * The connection broke: connects to the same path again, waiting between
 * attempts while the daemon is away, and renews the watches. Returns 0, or
 * -1 with *err filled in and no socket left when the daemon stays away past
 * c->reconnect_ms or cannot be reached for another reason.
 */
static int
client_redial(struct triage_client *c, struct triage_error *err)
{
	int64_t give_up = client_deadline(c->reconnect_ms);
	int pause = TRIAGE_RECONNECT_FIRST_MS, left, fd, errnum;

	if (c->outage_cb != NULL)
		c->outage_cb(c->path, TRIAGE_OUTAGE_LOST, c->outage_arg);
	for (;;) {
		if (c->fd != -1)
			close(c->fd);
		c->fd = -1;
		/* What the old connection left half read is of no use. */
		c->start = c->end = c->scanned = 0;
		if ((fd = client_dial(c->path)) != -1) {
			c->fd = fd;
			if (client_renew(c, give_up, err) == 0)
				break;
			if (err->code != TRIAGE_ERR_TRANSPORT ||
			    (errno != ECONNRESET && errno != EPIPE))
				return -1;
			errnum = errno;	/* broke again: a daemon stopping */
		} else if ((errnum = errno) != ECONNREFUSED &&
		    errnum != ENOENT && errnum != EAGAIN) {
			client_transport(err, errnum, "lost triaged at %s and "
			    "cannot connect again: %s", c->path,
			    strerror(errnum));
			return -1;
		}
		if ((left = client_remaining(give_up)) == 0) {
			if (c->fd != -1)
				close(c->fd);
			c->fd = -1;
			client_transport(err, errnum, "lost triaged at %s, and "
			    "it has not come back in %d s", c->path,
			    c->reconnect_ms / 1000);
			return -1;
		}
		client_sleep_ms(pause < left ? pause : left);
		if ((pause *= 2) > TRIAGE_RECONNECT_MAX_MS)
			pause = TRIAGE_RECONNECT_MAX_MS;
	}
	if (c->outage_cb != NULL)
		c->outage_cb(c->path, TRIAGE_OUTAGE_BACK, c->outage_arg);
	return 0;
}

json_t *
triage_client_call(struct triage_client *c, const char *method,
    json_t *params, int timeout_ms, struct triage_error *err)
{
	int64_t deadline = client_deadline(timeout_ms);
	struct triage_error e;
	json_t *result;
	bool again;

	/* The reference stolen is kept for a call made again, and for a
	 * watch to renew; each attempt gets one of its own. */
	do {
		result = client_call_once(c, method, json_incref(params),
		    deadline, &e);
		again = result == NULL && client_may_redo(c, method, &e, errno);
	} while (again && client_redial(c, &e) == 0);
	if (result != NULL && strcmp(method, "watch") == 0 &&
	    json_array_append_new(c->watches, params != NULL ?
	    json_incref(params) : json_object()) == -1) {
		json_decref(result);
		result = NULL;
		client_transport(&e, ENOMEM, "out of memory");
	}
	json_decref(params);
	if (result == NULL && err != NULL)
		*err = e;
	return result;
}

json_t *
triage_client_recv(struct triage_client *c, int64_t *id, int timeout_ms,
    struct triage_error *err)
{
	int64_t deadline;
	json_t *resp, *result;

	*id = -1;
	deadline = client_deadline(timeout_ms);
	while (json_array_size(c->responses) == 0) {
		if (client_pump(c, deadline, err) == -1)
			return NULL;
	}
	resp = client_take(c->responses, 0);
	*id = client_response_id(resp);
	result = client_result(c, resp, err);
	json_decref(resp);
	return result;
}

json_t *
triage_client_notification(struct triage_client *c, int timeout_ms,
    struct triage_error *err)
{
	struct triage_error e;
	int64_t deadline;

	deadline = client_deadline(timeout_ms);
	while (json_array_size(c->notifications) == 0) {
		if (client_pump(c, deadline, &e) == 0)
			continue;
		if (client_may_redo(c, NULL, &e, errno) &&
		    client_redial(c, &e) == 0)
			continue;
		if (err != NULL)
			*err = e;
		return NULL;
	}
	return client_take(c->notifications, 0);
}
