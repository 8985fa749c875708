/* wmsg.c - encoding and complete validation of the daemon<->worker messages;
 * a message that fails here means its sender is broken. */
#include <errno.h>
#include <stddef.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "wmsg.h"

_Static_assert(sizeof(uid_t) == sizeof(uint32_t), "uid_t is 32 bits");
_Static_assert(sizeof(gid_t) == sizeof(uint32_t), "gid_t is 32 bits");
_Static_assert(sizeof(pid_t) == sizeof(int32_t), "pid_t is 32 bits");
_Static_assert(sizeof(struct wmsg_run_head) == 72, "no hidden padding");
_Static_assert(sizeof(struct wmsg_result_head) == 16, "no hidden padding");

#define WMSG_RUN_FLAGS (WMSG_RUN_SET_CREDS | WMSG_RUN_NO_NEW_PRIVS | \
	WMSG_RUN_KEEP_TAIL | WMSG_RUN_MERGE_OUTPUT | WMSG_RUN_IO_IDLE | \
	WMSG_RUN_CGROUP)
_Static_assert(sizeof(struct wmsg_signal) == 16, "no hidden padding");
_Static_assert(sizeof(struct wmsg_started) == 24, "no hidden padding");
_Static_assert(sizeof(struct wmsg_lease) == 24, "no hidden padding");
_Static_assert(sizeof(struct wmsg_adopted) == 40, "no hidden padding");
_Static_assert(offsetof(struct wmsg_adopted, version) == 0,
    "the version comes first");
_Static_assert(sizeof(struct wmsg_finished) == 344, "no hidden padding");
_Static_assert(sizeof(((struct wmsg_finished *)0)->error) ==
    sizeof(((struct pool_result *)0)->error), "same error buffer");

int
wmsg_check(const struct wmsg_hdr *hdr, enum wmsg_dir dir)
{
	size_t want;

	switch (hdr->type) {
	case WMSG_RUN:
		if (dir != WMSG_TO_WORKER)
			goto proto;
		if (hdr->len < sizeof(struct wmsg_run_head) ||
		    hdr->len > WMSG_RUN_MAX)
			goto size;
		return 0;
	case WMSG_SIGNAL:
		if (dir != WMSG_TO_WORKER)
			goto proto;
		want = sizeof(struct wmsg_signal);
		break;
	case WMSG_LEASE:
		if (dir != WMSG_TO_WORKER)
			goto proto;
		want = sizeof(struct wmsg_lease);
		break;
	case WMSG_STARTED:
		if (dir != WMSG_TO_DAEMON)
			goto proto;
		want = sizeof(struct wmsg_started);
		break;
	case WMSG_FINISHED:
		if (dir != WMSG_TO_DAEMON)
			goto proto;
		want = sizeof(struct wmsg_finished);
		break;
	case WMSG_ADOPTED:
		if (dir != WMSG_TO_DAEMON)
			goto proto;
		want = sizeof(struct wmsg_adopted);
		break;
	case WMSG_ACK:
		if (dir != WMSG_TO_WORKER)
			goto proto;
		want = sizeof(struct wmsg_ack);
		break;
	case WMSG_RESULT:
		if (dir != WMSG_TO_DAEMON)
			goto proto;
		if (hdr->len <= sizeof(struct wmsg_result_head) ||
		    hdr->len > WMSG_RESULT_MAX)
			goto size;
		return 0;
	default:
		goto proto;
	}
	if (hdr->len == want)
		return 0;
size:
	errno = EMSGSIZE;
	return -1;
proto:
	errno = EPROTO;
	return -1;
}

/* Adds strlen(s) + 1 to *total, failing past WMSG_RUN_MAX (no overflow:
 * *total stays bounded before each addition of a bounded length). */
static int
wmsg_run_add(size_t *total, const char *s)
{
	size_t n;

	if (s == NULL) {
		errno = EINVAL;
		return -1;
	}
	n = strnlen(s, WMSG_RUN_MAX);
	if (n >= WMSG_RUN_MAX - *total) {
		errno = E2BIG;
		return -1;
	}
	*total += n + 1;
	return 0;
}

static char *
wmsg_run_put(char *p, const char *s)
{
	size_t n = strlen(s) + 1;

	memcpy(p, s, n);
	return p + n;
}

void *
wmsg_run_encode(const struct pool_spec *spec, size_t *lenp)
{
	struct wmsg_hdr hdr;
	struct wmsg_run_head head;
	size_t total = sizeof head, argc = 0, envc = 0, i;
	char *msg, *p;

	if (spec->argv == NULL || spec->argv[0] == NULL || spec->envp == NULL) {
		errno = EINVAL;
		return NULL;
	}
	for (; spec->argv[argc] != NULL; argc++)
		if (wmsg_run_add(&total, spec->argv[argc]) == -1)
			return NULL;
	for (; spec->envp[envc] != NULL; envc++)
		if (wmsg_run_add(&total, spec->envp[envc]) == -1)
			return NULL;
	if (wmsg_run_add(&total, spec->cwd) == -1 ||
	    wmsg_run_add(&total, spec->stdout_path) == -1 ||
	    wmsg_run_add(&total, spec->stderr_path) == -1)
		return NULL;

	memset(&head, 0, sizeof head);
	head.job_id = spec->job_id;
	head.max_output = spec->max_output;
	head.uid = spec->uid;
	head.gid = spec->gid;
	head.flags = (spec->set_creds ? WMSG_RUN_SET_CREDS : 0) |
	    (spec->no_new_privs ? WMSG_RUN_NO_NEW_PRIVS : 0) |
	    (spec->keep_tail ? WMSG_RUN_KEEP_TAIL : 0) |
	    (spec->merge_output ? WMSG_RUN_MERGE_OUTPUT : 0) |
	    (spec->io_idle ? WMSG_RUN_IO_IDLE : 0) |
	    (spec->cgroup ? WMSG_RUN_CGROUP : 0);
	head.nice = spec->nice;
	head.groups_epoch = spec->groups_epoch;
	head.attempt = spec->attempt;
	head.pids_max = spec->pids_max;
	head.cpu_weight = spec->cpu_weight;
	head.memory_max = spec->memory_max;
	head.max_result = spec->max_result;
	head.argc = (uint32_t)argc;	/* each string takes a byte: fits */
	head.envc = (uint32_t)envc;
	hdr.type = WMSG_RUN;
	hdr.len = (uint32_t)total;

	if ((msg = malloc(sizeof hdr + total)) == NULL)
		return NULL;
	memcpy(msg, &hdr, sizeof hdr);
	memcpy(msg + sizeof hdr, &head, sizeof head);
	p = msg + sizeof hdr + sizeof head;
	for (i = 0; i < argc; i++)
		p = wmsg_run_put(p, spec->argv[i]);
	for (i = 0; i < envc; i++)
		p = wmsg_run_put(p, spec->envp[i]);
	p = wmsg_run_put(p, spec->cwd);
	p = wmsg_run_put(p, spec->stdout_path);
	wmsg_run_put(p, spec->stderr_path);
	*lenp = sizeof hdr + total;
	return msg;
}

void
wmsg_run_clear(struct wmsg_run *run)
{
	free(run->buf);
	free(run->argv);
	free(run->envp);
	memset(run, 0, sizeof *run);
}

int
wmsg_run_decode(struct wmsg_run *run, char *buf, size_t len)
{
	struct wmsg_run_head head;
	char *p, *end, *nul;
	size_t nstr, want, i;

	memset(run, 0, sizeof *run);
	if (len < sizeof head || len > WMSG_RUN_MAX)
		goto proto;
	memcpy(&head, buf, sizeof head);
	if ((head.flags & ~(uint32_t)WMSG_RUN_FLAGS) != 0 ||
	    head.argc == 0 || head.nice < 0 || head.nice > 19 ||
	    head.cpu_weight > 10000 || head.max_result > POOL_RESULT_MAX)
		goto proto;

	/* Count the strings first: the counts only size the arrays once the
	 * payload has shown that many strings, so a lying head allocates
	 * nothing. Every string must end inside the payload, and nothing may
	 * follow the last one. */
	want = (size_t)head.argc + head.envc + 3;
	p = buf + sizeof head;
	end = buf + len;
	for (nstr = 0; p < end; nstr++) {
		if (nstr == want || (nul = memchr(p, '\0', end - p)) == NULL)
			goto proto;
		p = nul + 1;
	}
	if (nstr != want)
		goto proto;

	run->argv = calloc((size_t)head.argc + 1, sizeof *run->argv);
	run->envp = calloc((size_t)head.envc + 1, sizeof *run->envp);
	if (run->argv == NULL || run->envp == NULL) {
		free(run->argv);
		free(run->envp);
		memset(run, 0, sizeof *run);
		errno = ENOMEM;
		return -1;
	}
	p = buf + sizeof head;
	for (i = 0; i < head.argc; i++, p += strlen(p) + 1)
		run->argv[i] = p;
	for (i = 0; i < head.envc; i++, p += strlen(p) + 1)
		run->envp[i] = p;
	run->spec.cwd = p;
	p += strlen(p) + 1;
	run->spec.stdout_path = p;
	p += strlen(p) + 1;
	run->spec.stderr_path = p;

	run->buf = buf;
	run->spec.job_id = head.job_id;
	run->spec.argv = (const char *const *)run->argv;
	run->spec.envp = (const char *const *)run->envp;
	run->spec.set_creds = (head.flags & WMSG_RUN_SET_CREDS) != 0;
	run->spec.no_new_privs = (head.flags & WMSG_RUN_NO_NEW_PRIVS) != 0;
	run->spec.keep_tail = (head.flags & WMSG_RUN_KEEP_TAIL) != 0;
	run->spec.merge_output = (head.flags & WMSG_RUN_MERGE_OUTPUT) != 0;
	run->spec.io_idle = (head.flags & WMSG_RUN_IO_IDLE) != 0;
	run->spec.nice = head.nice;
	run->spec.groups_epoch = head.groups_epoch;
	run->spec.cgroup = (head.flags & WMSG_RUN_CGROUP) != 0;
	run->spec.attempt = head.attempt;
	run->spec.pids_max = head.pids_max;
	run->spec.cpu_weight = head.cpu_weight;
	run->spec.memory_max = head.memory_max;
	run->spec.uid = head.uid;
	run->spec.gid = head.gid;
	run->spec.max_output = head.max_output;
	run->spec.max_result = head.max_result;
	return 0;
proto:
	errno = EPROTO;
	return -1;
}

void
wmsg_finished_encode(struct wmsg_finished *msg, uint64_t job_id,
    const struct pool_result *res)
{
	memset(msg, 0, sizeof *msg);
	msg->job_id = job_id;
	msg->status = res->status;
	msg->started = res->started;
	msg->stdout_truncated = res->stdout_truncated;
	msg->stderr_truncated = res->stderr_truncated;
	msg->lease_ended = res->lease_ended;
	msg->oom = res->oom;
	msg->left = res->left;
	msg->peak_memory = res->peak_memory;
	msg->user_time = res->user_time;
	msg->system_time = res->system_time;
	msg->max_rss_kb = res->max_rss_kb;
	msg->stdout_bytes = res->stdout_bytes;
	msg->stderr_bytes = res->stderr_bytes;
	msg->stdout_dropped = res->stdout_dropped;
	msg->stderr_dropped = res->stderr_dropped;
	/* the memset above leaves the rest NUL: no stale bytes go out */
	memcpy(msg->error, res->error,
	    strnlen(res->error, sizeof msg->error - 1));
}

int
wmsg_finished_decode(const struct wmsg_finished *msg, struct pool_result *res)
{
	if (msg->started > 1 || msg->stdout_truncated > 1 ||
	    msg->stderr_truncated > 1 || msg->lease_ended > 1 ||
	    msg->oom > 1 || msg->pad[0] != 0 || msg->pad[1] != 0 ||
	    msg->pad[2] != 0 || msg->peak_memory < -1 ||
	    memchr(msg->error, '\0', sizeof msg->error) == NULL ||
	    !isfinite(msg->user_time) || msg->user_time < 0 ||
	    !isfinite(msg->system_time) || msg->system_time < 0 ||
	    msg->max_rss_kb < 0 ||
	    (msg->stdout_dropped != 0 && !msg->stdout_truncated) ||
	    (msg->stderr_dropped != 0 && !msg->stderr_truncated)) {
		errno = EPROTO;
		return -1;
	}
	memset(res, 0, sizeof *res);
	res->started = msg->started;
	res->status = msg->status;
	memcpy(res->error, msg->error, sizeof res->error);
	res->user_time = msg->user_time;
	res->system_time = msg->system_time;
	res->max_rss_kb = msg->max_rss_kb;
	res->stdout_bytes = msg->stdout_bytes;
	res->stderr_bytes = msg->stderr_bytes;
	res->stdout_dropped = msg->stdout_dropped;
	res->stderr_dropped = msg->stderr_dropped;
	res->stdout_truncated = msg->stdout_truncated;
	res->stderr_truncated = msg->stderr_truncated;
	res->lease_ended = msg->lease_ended;
	res->oom = msg->oom;
	res->left = msg->left;
	res->peak_memory = msg->peak_memory;
	return 0;
}

int
wmsg_result_decode(struct wmsg_result_head *head, const void *buf, size_t len)
{
	size_t i;

	if (len <= sizeof *head || len > WMSG_RESULT_MAX) {
		errno = EPROTO;
		return -1;
	}
	memcpy(head, buf, sizeof *head);
	if (head->truncated > 1)
		goto proto;
	for (i = 0; i < sizeof head->pad; i++)
		if (head->pad[i] != 0)
			goto proto;
	return 0;
proto:
	errno = EPROTO;
	return -1;
}

int
wmsg_adopted_decode(struct wmsg_adopted *am, const void *buf, size_t len,
    uint32_t *version)
{
	size_t i;

	if (len < sizeof *version || len > WMSG_ADOPTED_MAX) {
		errno = EMSGSIZE;
		return -1;
	}
	memcpy(version, buf, sizeof *version);
	if (len == WMSG_ADOPTED_UNVERSIONED)
		*version = 0;
	if (*version != WMSG_ADOPT_VERSION) {
		errno = EPROTONOSUPPORT;
		return -1;
	}
	if (len != sizeof *am) {
		errno = EMSGSIZE;
		return -1;
	}
	memcpy(am, buf, sizeof *am);
	if (am->pid <= 0 || am->worker <= 0 || am->exited > 1)
		goto proto;
	for (i = 0; i < sizeof am->pad; i++)
		if (am->pad[i] != 0)
			goto proto;
	return 0;
proto:
	errno = EPROTO;
	return -1;
}
