/* endrec.c - the files of state_dir/adopt: a job attempt's end record, which
 * its orphaned worker leaves, and the socket it waits on for the next daemon. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "bytestr.h"
#include "endrec.h"

int
endrec_path(const char *dir, uint64_t id, unsigned attempt,
    const char *suffix, char *buf, size_t size)
{
	struct sockaddr_un sun;
	size_t max = size;
	int n;

	/* A socket's path is bound by sun_path, whatever buf could take. */
	if (strcmp(suffix, "sock") == 0 && max > sizeof sun.sun_path)
		max = sizeof sun.sun_path;
	n = snprintf(buf, size, "%s/%llu.%u.%s", dir, (unsigned long long)id,
	    attempt, suffix);
	if (n < 0 || (size_t)n >= max) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/* write(2) of all of buf. 0, or -1 with errno. */
static int
endrec_write_all(int fd, const char *buf, size_t len)
{
	ssize_t n;

	while (len > 0) {
		if ((n = write(fd, buf, len)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The directory's entry made durable: a rename is only on disk once the
 * directory is. */
static int
endrec_sync_dir(const char *dir)
{
	int fd, rc;

	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

int
endrec_write(const char *dir, uint64_t id, unsigned attempt,
    const struct pool_result *res, int64_t finished_at)
{
	char path[PATH_MAX], tmp[PATH_MAX], *text;
	json_t *o;
	int fd, saved;

	if (endrec_path(dir, id, attempt, "end", path, sizeof path) == -1 ||
	    endrec_path(dir, id, attempt, "end.tmp", tmp, sizeof tmp) == -1)
		return -1;
	o = json_pack("{sI sI sb si si si sf sf sI sI sb si sI sI sb sb sI sI "
	    "sb sI}",
	    "job", (json_int_t)id, "attempt", (json_int_t)attempt,
	    "started", res->started, "status", res->status,
	    "exit_code", WIFEXITED(res->status) ? WEXITSTATUS(res->status) : -1,
	    "signal", WIFSIGNALED(res->status) ? WTERMSIG(res->status) : 0,
	    "user_time", res->user_time, "system_time", res->system_time,
	    "max_rss_kb", (json_int_t)res->max_rss_kb,
	    "peak_memory", (json_int_t)res->peak_memory, "oom", res->oom,
	    "left", (int)res->left,
	    "stdout_bytes", (json_int_t)res->stdout_bytes,
	    "stderr_bytes", (json_int_t)res->stderr_bytes,
	    "stdout_truncated", res->stdout_truncated,
	    "stderr_truncated", res->stderr_truncated,
	    "stdout_dropped", (json_int_t)res->stdout_dropped,
	    "stderr_dropped", (json_int_t)res->stderr_dropped,
	    "lease_ended", res->lease_ended,
	    "finished_at", (json_int_t)finished_at);
	if (o == NULL) {
		errno = ENOMEM;
		return -1;
	}
	/* Its result, as the wire carries one (a string, or {"base64":
	 * ...}): there only when it left one. */
	if (res->result_len > 0 && (json_object_set_new(o, "result",
	    bytestr_json_bytes(res->result, res->result_len)) != 0 ||
	    json_object_set_new(o, "result_truncated",
	    json_boolean(res->result_truncated)) != 0)) {
		json_decref(o);
		errno = ENOMEM;
		return -1;
	}
	text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (text == NULL) {
		errno = ENOMEM;
		return -1;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
	    0600);
	if (fd == -1 || endrec_write_all(fd, text, strlen(text)) == -1 ||
	    fsync(fd) == -1 || close(fd) == -1 || (fd = -1,
	    rename(tmp, path) == -1) || endrec_sync_dir(dir) == -1) {
		saved = errno;
		if (fd != -1)
			close(fd);
		(void)unlink(tmp);
		free(text);
		errno = saved;
		return -1;
	}
	free(text);
	return 0;
}

/* An integer member of o, or dflt when it has none. */
static json_int_t
endrec_int(const json_t *o, const char *key, json_int_t dflt)
{
	const json_t *v = json_object_get(o, key);

	return json_is_integer(v) ? json_integer_value(v) : dflt;
}

static double
endrec_real(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : -1;
}

static bool
endrec_bool(const json_t *o, const char *key)
{
	return json_is_true(json_object_get(o, key));
}

int
endrec_read(const char *dir, uint64_t id, unsigned attempt,
    struct pool_result *res, int64_t *finished_at)
{
	char path[PATH_MAX];
	const json_t *result;
	json_error_t jerr;
	const char *why;
	json_t *o;

	if (endrec_path(dir, id, attempt, "end", path, sizeof path) == -1)
		return -1;
	if (access(path, F_OK) == -1)
		return errno == ENOENT ? 0 : -1;
	if ((o = json_load_file(path, 0, &jerr)) == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (!json_is_object(o) ||
	    endrec_int(o, "job", 0) != (json_int_t)id ||
	    endrec_int(o, "attempt", 0) != (json_int_t)attempt ||
	    !json_is_integer(json_object_get(o, "status"))) {
		json_decref(o);
		errno = EINVAL;
		return -1;
	}
	memset(res, 0, sizeof *res);
	res->started = endrec_bool(o, "started");
	res->status = (int)endrec_int(o, "status", 0);
	res->user_time = endrec_real(o, "user_time");
	res->system_time = endrec_real(o, "system_time");
	res->max_rss_kb = endrec_int(o, "max_rss_kb", -1);
	res->peak_memory = endrec_int(o, "peak_memory", -1);
	res->oom = endrec_bool(o, "oom");
	res->left = (unsigned)endrec_int(o, "left", 0);
	res->stdout_bytes = (uint64_t)endrec_int(o, "stdout_bytes", 0);
	res->stderr_bytes = (uint64_t)endrec_int(o, "stderr_bytes", 0);
	res->stdout_truncated = endrec_bool(o, "stdout_truncated");
	res->stderr_truncated = endrec_bool(o, "stderr_truncated");
	res->stdout_dropped = (uint64_t)endrec_int(o, "stdout_dropped", 0);
	res->stderr_dropped = (uint64_t)endrec_int(o, "stderr_dropped", 0);
	res->lease_ended = endrec_bool(o, "lease_ended");
	*finished_at = endrec_int(o, "finished_at", -1);
	/* A record of a worker from before results has none. */
	if ((result = json_object_get(o, "result")) != NULL) {
		if (bytestr_bytes_from_json(result, &res->result,
		    &res->result_len, &why) == -1) {
			json_decref(o);
			if (errno != ENOMEM)
				errno = EINVAL;
			return -1;
		}
		res->result_truncated = endrec_bool(o, "result_truncated");
		if (res->result_len == 0) {
			free(res->result);
			res->result = NULL;
		}
	}
	json_decref(o);
	return 1;
}
