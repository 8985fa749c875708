/* wmsg.c - fuzz target: the daemon-worker message codec: header checks,
 * RUN decode then encode (exact round trip), FINISHED decode and encode. */
#include <errno.h>
#include <stdbool.h>

#include "fuzz.h"
#include "wmsg.h"

static void
fuzz_header(struct fuzz_in *in)
{
	struct wmsg_hdr hdr;
	enum wmsg_dir dir = fuzz_u8(in) & 1 ? WMSG_TO_DAEMON : WMSG_TO_WORKER;

	hdr.type = fuzz_u8(in) % 6;
	hdr.len = fuzz_u32(in);
	if (wmsg_check(&hdr, dir) != 0)
		FUZZ_ASSERT(errno == EPROTO || errno == EMSGSIZE);
	else
		FUZZ_ASSERT(hdr.len <= WMSG_RUN_MAX);
}

/* A RUN payload that decodes must encode back to the very same bytes. */
static void
fuzz_run(struct fuzz_in *in)
{
	struct wmsg_run run;
	size_t len;
	char *buf, *again;

	if ((buf = malloc(in->n + 1)) == NULL)
		return;
	memcpy(buf, in->p, in->n);
	if (wmsg_run_decode(&run, buf, in->n) != 0) {
		FUZZ_ASSERT(errno == EPROTO || errno == ENOMEM);
		free(buf);
		return;
	}
	FUZZ_ASSERT(run.argv[0] != NULL);
	if ((again = wmsg_run_encode(&run.spec, &len)) != NULL) {
		FUZZ_ASSERT(len == sizeof(struct wmsg_hdr) + in->n);
		FUZZ_ASSERT(memcmp(again + sizeof(struct wmsg_hdr), in->p,
		    in->n) == 0);
		free(again);
	}
	wmsg_run_clear(&run);
}

/* A FINISHED payload that decodes encodes to one that decodes the same. */
static void
fuzz_finished(struct fuzz_in *in)
{
	struct wmsg_finished msg, again;
	struct pool_result res, res2;

	if (in->n < sizeof msg)
		return;
	memcpy(&msg, in->p, sizeof msg);
	if (wmsg_finished_decode(&msg, &res) != 0) {
		FUZZ_ASSERT(errno == EPROTO);
		return;
	}
	wmsg_finished_encode(&again, msg.job_id, &res);
	FUZZ_ASSERT(wmsg_finished_decode(&again, &res2) == 0);
	FUZZ_ASSERT(res.started == res2.started &&
	    res.status == res2.status &&
	    strcmp(res.error, res2.error) == 0 &&
	    res.max_rss_kb == res2.max_rss_kb &&
	    res.stdout_bytes == res2.stdout_bytes &&
	    res.stderr_bytes == res2.stderr_bytes &&
	    res.stdout_truncated == res2.stdout_truncated &&
	    res.stderr_truncated == res2.stderr_truncated &&
	    res.stdout_dropped == res2.stdout_dropped &&
	    res.stderr_dropped == res2.stderr_dropped);
	FUZZ_ASSERT(memcmp(&res.user_time, &res2.user_time,
	    sizeof res.user_time) == 0);
}

/* Input: which part (one byte), then its bytes. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };

	switch (fuzz_u8(&in) % 3) {
	case 0:
		fuzz_header(&in);
		break;
	case 1:
		fuzz_run(&in);
		break;
	default:
		fuzz_finished(&in);
		break;
	}
	return 0;
}
