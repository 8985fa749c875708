/* test-wmsg.c - the daemon<->worker messages: round trips, and every kind of
 * malformed header and payload rejected before anything trusts it. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "wmsg.h"

#define ARGV(...)	((const char *const []){ __VA_ARGS__, NULL })

static const char *const spec_argv[] = { "ls", "-l", "", NULL };
static const char *const spec_envp[] = { "PATH=/bin", "A=b c", NULL };

static void
spec_init(struct pool_spec *spec)
{
	memset(spec, 0, sizeof *spec);
	spec->job_id = 42;
	spec->argv = spec_argv;
	spec->envp = spec_envp;
	spec->cwd = "/tmp";
	spec->set_creds = true;
	spec->uid = 1000;
	spec->gid = 1001;
	spec->stdout_path = "/var/x.out";
	spec->stderr_path = "/var/x.err";
	spec->max_output = 123456789;
	spec->keep_tail = true;
	spec->merge_output = true;
	spec->nice = 19;
	spec->io_idle = true;
}

/* Encodes spec and returns a malloc'd copy of the payload alone. */
static char *
encode_payload(const struct pool_spec *spec, size_t *len)
{
	struct wmsg_hdr hdr;
	char *msg, *payload;
	size_t total;

	assert_non_null(msg = wmsg_run_encode(spec, &total));
	memcpy(&hdr, msg, sizeof hdr);
	assert_int_equal(hdr.type, WMSG_RUN);
	assert_int_equal(hdr.len, total - sizeof hdr);
	assert_int_equal(wmsg_check(&hdr, WMSG_TO_WORKER), 0);
	assert_int_equal(wmsg_check(&hdr, WMSG_TO_DAEMON), -1);
	assert_int_equal(errno, EPROTO);
	*len = hdr.len;
	assert_non_null(payload = malloc(*len + 1));
	memcpy(payload, msg + sizeof hdr, *len);
	free(msg);
	return payload;
}

static void
assert_rejected(char *payload, size_t len)
{
	struct wmsg_run run;

	assert_int_equal(wmsg_run_decode(&run, payload, len), -1);
	assert_int_equal(errno, EPROTO);
	assert_null(run.buf);
	free(payload);
}

static void
test_run_roundtrip(void **state)
{
	struct pool_spec spec;
	struct wmsg_run run;
	char *payload;
	size_t len;

	(void)state;
	spec_init(&spec);
	payload = encode_payload(&spec, &len);
	assert_int_equal(wmsg_run_decode(&run, payload, len), 0);
	assert_int_equal(run.spec.job_id, 42);
	assert_string_equal(run.spec.argv[0], "ls");
	assert_string_equal(run.spec.argv[1], "-l");
	assert_string_equal(run.spec.argv[2], "");
	assert_null(run.spec.argv[3]);
	assert_string_equal(run.envp[0], "PATH=/bin");
	assert_string_equal(run.envp[1], "A=b c");
	assert_null(run.envp[2]);
	assert_string_equal(run.spec.cwd, "/tmp");
	assert_string_equal(run.spec.stdout_path, "/var/x.out");
	assert_string_equal(run.spec.stderr_path, "/var/x.err");
	assert_true(run.spec.set_creds);
	assert_int_equal(run.spec.uid, 1000);
	assert_int_equal(run.spec.gid, 1001);
	assert_int_equal(run.spec.max_output, 123456789);
	assert_true(run.spec.keep_tail);
	assert_true(run.spec.merge_output);
	assert_int_equal(run.spec.nice, 19);
	assert_true(run.spec.io_idle);
	assert_int_equal(run.spec.max_result, 0);
	wmsg_run_clear(&run);

	/* a result file of POOL_RESULT_MAX, and no more */
	spec.max_result = POOL_RESULT_MAX;
	payload = encode_payload(&spec, &len);
	assert_int_equal(wmsg_run_decode(&run, payload, len), 0);
	assert_int_equal(run.spec.max_result, POOL_RESULT_MAX);
	wmsg_run_clear(&run);
	spec.max_result = POOL_RESULT_MAX + 1;
	payload = encode_payload(&spec, &len);
	assert_int_equal(wmsg_run_decode(&run, payload, len), -1);
	assert_int_equal(errno, EPROTO);
	free(payload);
	spec.max_result = 0;

	/* an empty environment is fine */
	spec.envp = ARGV(NULL);
	spec.set_creds = false;
	payload = encode_payload(&spec, &len);
	assert_int_equal(wmsg_run_decode(&run, payload, len), 0);
	assert_null(run.envp[0]);
	assert_false(run.spec.set_creds);
	wmsg_run_clear(&run);

	/* every v1.1 setting off, as a v1 job runs */
	spec.keep_tail = spec.merge_output = spec.io_idle = false;
	spec.nice = 0;
	payload = encode_payload(&spec, &len);
	assert_int_equal(wmsg_run_decode(&run, payload, len), 0);
	assert_false(run.spec.keep_tail);
	assert_false(run.spec.merge_output);
	assert_false(run.spec.io_idle);
	assert_int_equal(run.spec.nice, 0);
	wmsg_run_clear(&run);
}

static void
test_run_malformed(void **state)
{
	struct pool_spec spec;
	struct wmsg_run_head head;
	char *p;
	size_t len;

	(void)state;
	spec_init(&spec);

	/* the last string runs off the end */
	p = encode_payload(&spec, &len);
	p[len - 1] = 'x';
	assert_rejected(p, len);
	/* a byte after the last string */
	p = encode_payload(&spec, &len);
	p[len] = '\0';
	assert_rejected(p, len + 1);
	/* cut short: a string missing */
	p = encode_payload(&spec, &len);
	assert_rejected(p, len - strlen(spec.stderr_path) - 1);
	/* shorter than the head */
	p = encode_payload(&spec, &len);
	assert_rejected(p, sizeof head - 1);

	/* counts that do not match the strings */
	p = encode_payload(&spec, &len);
	memcpy(&head, p, sizeof head);
	head.argc++;
	memcpy(p, &head, sizeof head);
	assert_rejected(p, len);
	p = encode_payload(&spec, &len);
	memcpy(&head, p, sizeof head);
	head.envc--;
	memcpy(p, &head, sizeof head);
	assert_rejected(p, len);
	/* a lying count must not size an allocation */
	p = encode_payload(&spec, &len);
	memcpy(&head, p, sizeof head);
	head.envc = UINT32_MAX;
	head.argc = UINT32_MAX;
	memcpy(p, &head, sizeof head);
	assert_rejected(p, len);
	/* no argv[0] */
	p = encode_payload(&spec, &len);
	memcpy(&head, p, sizeof head);
	head.argc = 0;
	head.envc += 3;
	memcpy(p, &head, sizeof head);
	assert_rejected(p, len);
	/* a nice value out of 0..19, and unknown flags */
	p = encode_payload(&spec, &len);
	memcpy(&head, p, sizeof head);
	head.nice = 20;
	memcpy(p, &head, sizeof head);
	assert_rejected(p, len);
	p = encode_payload(&spec, &len);
	memcpy(&head, p, sizeof head);
	head.nice = -1;
	memcpy(p, &head, sizeof head);
	assert_rejected(p, len);
	p = encode_payload(&spec, &len);
	memcpy(&head, p, sizeof head);
	head.flags |= 0x100;
	memcpy(p, &head, sizeof head);
	assert_rejected(p, len);
}

static void
test_run_encode_errors(void **state)
{
	struct pool_spec spec;
	size_t len, big = WMSG_RUN_MAX;
	char *huge;
	const char *env[2] = { NULL, NULL };

	(void)state;
	spec_init(&spec);
	spec.argv = ARGV(NULL);
	assert_null(wmsg_run_encode(&spec, &len));
	assert_int_equal(errno, EINVAL);
	spec_init(&spec);
	spec.stderr_path = NULL;
	assert_null(wmsg_run_encode(&spec, &len));
	assert_int_equal(errno, EINVAL);

	/* over the maximum */
	spec_init(&spec);
	assert_non_null(huge = malloc(big));
	memset(huge, 'x', big - 1);
	huge[big - 1] = '\0';
	env[0] = huge;
	spec.envp = env;
	assert_null(wmsg_run_encode(&spec, &len));
	assert_int_equal(errno, E2BIG);
	free(huge);
}

static void
test_check_lengths(void **state)
{
	struct wmsg_hdr h;

	(void)state;
	h = (struct wmsg_hdr){ WMSG_SIGNAL, sizeof(struct wmsg_signal) };
	assert_int_equal(wmsg_check(&h, WMSG_TO_WORKER), 0);
	h.len--;
	assert_int_equal(wmsg_check(&h, WMSG_TO_WORKER), -1);
	assert_int_equal(errno, EMSGSIZE);
	h = (struct wmsg_hdr){ WMSG_STARTED, sizeof(struct wmsg_started) };
	assert_int_equal(wmsg_check(&h, WMSG_TO_DAEMON), 0);
	assert_int_equal(wmsg_check(&h, WMSG_TO_WORKER), -1);
	assert_int_equal(errno, EPROTO);
	h.len++;
	assert_int_equal(wmsg_check(&h, WMSG_TO_DAEMON), -1);
	assert_int_equal(errno, EMSGSIZE);
	h = (struct wmsg_hdr){ WMSG_FINISHED, sizeof(struct wmsg_finished) };
	assert_int_equal(wmsg_check(&h, WMSG_TO_DAEMON), 0);
	h.len = 0;
	assert_int_equal(wmsg_check(&h, WMSG_TO_DAEMON), -1);
	/* An orphaned worker's hello to the daemon that takes it over. */
	h = (struct wmsg_hdr){ WMSG_ADOPTED, sizeof(struct wmsg_adopted) };
	assert_int_equal(wmsg_check(&h, WMSG_TO_DAEMON), 0);
	assert_int_equal(wmsg_check(&h, WMSG_TO_WORKER), -1);
	assert_int_equal(errno, EPROTO);
	h.len--;
	assert_int_equal(wmsg_check(&h, WMSG_TO_DAEMON), -1);
	assert_int_equal(errno, EMSGSIZE);
	/* The daemon's word that the last end reported is stored. */
	h = (struct wmsg_hdr){ WMSG_ACK, sizeof(struct wmsg_ack) };
	assert_int_equal(wmsg_check(&h, WMSG_TO_WORKER), 0);
	assert_int_equal(wmsg_check(&h, WMSG_TO_DAEMON), -1);
	assert_int_equal(errno, EPROTO);
	/* A result: its head and 1 to POOL_RESULT_MAX bytes. */
	h = (struct wmsg_hdr){ WMSG_RESULT, sizeof(struct wmsg_result_head) +
	    1 };
	assert_int_equal(wmsg_check(&h, WMSG_TO_DAEMON), 0);
	assert_int_equal(wmsg_check(&h, WMSG_TO_WORKER), -1);
	assert_int_equal(errno, EPROTO);
	h.len--;
	assert_int_equal(wmsg_check(&h, WMSG_TO_DAEMON), -1);
	assert_int_equal(errno, EMSGSIZE);
	h.len = WMSG_RESULT_MAX;
	assert_int_equal(wmsg_check(&h, WMSG_TO_DAEMON), 0);
	h.len++;
	assert_int_equal(wmsg_check(&h, WMSG_TO_DAEMON), -1);
	h = (struct wmsg_hdr){ WMSG_RUN, WMSG_RUN_MAX };
	assert_int_equal(wmsg_check(&h, WMSG_TO_WORKER), 0);
	h.len++;
	assert_int_equal(wmsg_check(&h, WMSG_TO_WORKER), -1);
	assert_int_equal(errno, EMSGSIZE);
	h.len = sizeof(struct wmsg_run_head) - 1;
	assert_int_equal(wmsg_check(&h, WMSG_TO_WORKER), -1);
	h = (struct wmsg_hdr){ 0, 0 };
	assert_int_equal(wmsg_check(&h, WMSG_TO_DAEMON), -1);
	assert_int_equal(errno, EPROTO);
	h = (struct wmsg_hdr){ 99, 16 };
	assert_int_equal(wmsg_check(&h, WMSG_TO_WORKER), -1);
	assert_int_equal(errno, EPROTO);
	assert_true(WMSG_TO_DAEMON_MAX >= sizeof(struct wmsg_hdr) +
	    sizeof(struct wmsg_started));
	assert_true(WMSG_TO_DAEMON_MAX >= sizeof(struct wmsg_hdr) +
	    sizeof(struct wmsg_adopted));
}

static void
test_finished(void **state)
{
	struct pool_result res, back;
	struct wmsg_finished msg;

	(void)state;
	memset(&res, 0, sizeof res);
	res.started = true;
	res.status = 3 << 8;
	res.user_time = 1.5;
	res.system_time = 0.25;
	res.max_rss_kb = 2048;
	res.stdout_bytes = 10;
	res.stderr_bytes = 20;
	res.stderr_truncated = true;
	res.stderr_dropped = 1000000;
	wmsg_finished_encode(&msg, 7, &res);
	assert_int_equal(msg.job_id, 7);
	assert_int_equal(wmsg_finished_decode(&msg, &back), 0);
	assert_memory_equal(&res, &back, sizeof res);

	/* an error of the full size still ends with a NUL */
	memset(&res, 0, sizeof res);
	memset(res.error, 'e', sizeof res.error - 1);
	wmsg_finished_encode(&msg, 7, &res);
	assert_int_equal(wmsg_finished_decode(&msg, &back), 0);
	assert_string_equal(back.error, res.error);

	memset(msg.error, 'e', sizeof msg.error);
	assert_int_equal(wmsg_finished_decode(&msg, &back), -1);
	assert_int_equal(errno, EPROTO);
	wmsg_finished_encode(&msg, 7, &res);
	msg.started = 2;
	assert_int_equal(wmsg_finished_decode(&msg, &back), -1);
	wmsg_finished_encode(&msg, 7, &res);
	msg.user_time = -1;
	assert_int_equal(wmsg_finished_decode(&msg, &back), -1);
	msg.user_time = NAN;
	assert_int_equal(wmsg_finished_decode(&msg, &back), -1);
	wmsg_finished_encode(&msg, 7, &res);
	msg.lease_ended = 2;
	assert_int_equal(wmsg_finished_decode(&msg, &back), -1);
	/* bytes dropped from a stream that says it lost none */
	wmsg_finished_encode(&msg, 7, &res);
	msg.stdout_dropped = 1;
	assert_int_equal(wmsg_finished_decode(&msg, &back), -1);
	assert_int_equal(errno, EPROTO);
}

/* A hello in this version's layout, from worker 77 of job 12's attempt 3. */
static void
adopted_fill(struct wmsg_adopted *am)
{
	memset(am, 0, sizeof *am);
	am->version = WMSG_ADOPT_VERSION;
	am->job_id = 12;
	am->attempt = 3;
	am->pid = 78;
	am->worker = 77;
	am->start_ticks = 5000;
}

/* The hello's version is read before anything else: a worker of another
 * version (or of none, from before versions) is refused whatever its
 * length, a hello of this version must have this version's length. */
static void
test_adopted(void **state)
{
	struct wmsg_adopted am, back;
	char buf[WMSG_ADOPTED_MAX + 1];
	uint32_t version = 0;

	(void)state;
	adopted_fill(&am);
	assert_int_equal(wmsg_adopted_decode(&back, &am, sizeof am, &version),
	    0);
	assert_int_equal(version, WMSG_ADOPT_VERSION);
	assert_memory_equal(&am, &back, sizeof am);

	/* A later version, longer or not: its version comes out. */
	memset(buf, 0, sizeof buf);
	adopted_fill(&am);
	am.version = WMSG_ADOPT_VERSION + 1;
	memcpy(buf, &am, sizeof am);
	assert_int_equal(wmsg_adopted_decode(&back, buf, sizeof am, &version),
	    -1);
	assert_int_equal(errno, EPROTONOSUPPORT);
	assert_int_equal(version, WMSG_ADOPT_VERSION + 1);
	assert_int_equal(wmsg_adopted_decode(&back, buf, sizeof am + 16,
	    &version), -1);
	assert_int_equal(errno, EPROTONOSUPPORT);
	/* The unversioned hello: job_id first, where the version is now. */
	version = 99;
	memset(buf, 0, sizeof buf);
	buf[0] = 1;
	assert_int_equal(wmsg_adopted_decode(&back, buf,
	    WMSG_ADOPTED_UNVERSIONED, &version), -1);
	assert_int_equal(errno, EPROTONOSUPPORT);
	assert_int_equal(version, 0);

	/* This version, with another length; too short to say; too long. */
	adopted_fill(&am);
	memcpy(buf, &am, sizeof am);
	assert_int_equal(wmsg_adopted_decode(&back, buf, sizeof am - 1,
	    &version), -1);
	assert_int_equal(errno, EMSGSIZE);
	assert_int_equal(wmsg_adopted_decode(&back, buf, sizeof am + 1,
	    &version), -1);
	assert_int_equal(errno, EMSGSIZE);
	assert_int_equal(wmsg_adopted_decode(&back, buf, 3, &version), -1);
	assert_int_equal(errno, EMSGSIZE);
	assert_int_equal(wmsg_adopted_decode(&back, buf, sizeof buf,
	    &version), -1);
	assert_int_equal(errno, EMSGSIZE);

	/* Fields out of range. */
	am.pid = 0;
	assert_int_equal(wmsg_adopted_decode(&back, &am, sizeof am, &version),
	    -1);
	assert_int_equal(errno, EPROTO);
	adopted_fill(&am);
	am.worker = -1;
	assert_int_equal(wmsg_adopted_decode(&back, &am, sizeof am, &version),
	    -1);
	adopted_fill(&am);
	am.exited = 2;
	assert_int_equal(wmsg_adopted_decode(&back, &am, sizeof am, &version),
	    -1);
	adopted_fill(&am);
	am.pad[6] = 1;
	assert_int_equal(wmsg_adopted_decode(&back, &am, sizeof am, &version),
	    -1);
	assert_int_equal(errno, EPROTO);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_roundtrip),
		cmocka_unit_test(test_run_malformed),
		cmocka_unit_test(test_run_encode_errors),
		cmocka_unit_test(test_check_lengths),
		cmocka_unit_test(test_finished),
		cmocka_unit_test(test_adopted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
