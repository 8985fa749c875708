/* wmsg.h - the typed messages between the daemon and its workers, framed over
 * their SOCK_STREAM socketpair: a header {type, len}, then len payload bytes. */
#ifndef TRIAGED_WMSG_H
#define TRIAGED_WMSG_H

#include <stddef.h>
#include <stdint.h>

#include "pool-spec.h"

/*
 * Both ends are the same binary (a worker is a fork without exec), so the
 * wire is native-endian; every struct below has its padding spelled out so
 * that nothing uninitialised is ever sent.
 */
struct wmsg_hdr {
	uint32_t type;		/* WMSG_* */
	uint32_t len;		/* payload bytes after the header */
};

enum wmsg_type {
	WMSG_RUN = 1,		/* daemon -> worker: wmsg_run_head + strings */
	WMSG_SIGNAL,		/* daemon -> worker: struct wmsg_signal */
	WMSG_STARTED,		/* worker -> daemon: struct wmsg_started */
	WMSG_FINISHED,		/* worker -> daemon: struct wmsg_finished */
	WMSG_LEASE,		/* daemon -> worker: struct wmsg_lease */
	WMSG_ADOPTED,		/* worker -> daemon: struct wmsg_adopted */
	WMSG_ACK,		/* daemon -> worker: struct wmsg_ack */
	WMSG_RESULT,		/* worker -> daemon: wmsg_result_head + bytes */
};

/* Who reads the message: wmsg_check() accepts only what flows that way. */
enum wmsg_dir {
	WMSG_TO_WORKER,
	WMSG_TO_DAEMON,
};

/* A RUN payload is a whole job description; this bounds what a worker
 * allocates for one, and pool_start() refuses larger specs (E2BIG). */
#define WMSG_RUN_MAX	(64u * 1024 * 1024)

/*
 * RUN: this head, then exactly argc + envc + 3 NUL-terminated strings back
 * to back (argv..., envp..., cwd, stdout_path, stderr_path) and nothing more.
 */
struct wmsg_run_head {
	uint64_t job_id;
	uint64_t max_output;
	uint32_t uid;
	uint32_t gid;
	uint32_t flags;
#define WMSG_RUN_SET_CREDS	0x1
#define WMSG_RUN_NO_NEW_PRIVS	0x2
#define WMSG_RUN_KEEP_TAIL	0x4
#define WMSG_RUN_MERGE_OUTPUT	0x8
#define WMSG_RUN_IO_IDLE	0x10
#define WMSG_RUN_CGROUP		0x20
	uint32_t argc;		/* >= 1 */
	uint32_t envc;
	int32_t nice;		/* 0 to 19 */
	uint32_t groups_epoch;	/* pool_spec's */
	uint32_t attempt;
	uint32_t pids_max;	/* 0 none */
	uint32_t cpu_weight;	/* 0 none, else 1 to 10000 */
	uint64_t memory_max;	/* 0 none */
	uint64_t max_result;	/* 0 none, at most POOL_RESULT_MAX */
};

struct wmsg_signal {
	uint64_t job_id;
	int32_t sig;
	uint32_t pad;		/* 0 */
};

/*
 * A cluster node's lease, for the job the worker runs: unless another comes
 * first, at until_us (CLOCK_MONOTONIC, which every process of the host
 * shares) the job's group gets SIGTERM, and SIGKILL grace_ms later; so a
 * daemon that cannot act (stopped) still stops its jobs in time.
 */
struct wmsg_lease {
	uint64_t job_id;
	uint64_t until_us;
	uint64_t grace_ms;
};

/*
 * The end the worker reported last (FINISHED) is on the daemon's disk: until
 * this comes, a worker whose daemon goes records that end in the adopt
 * directory, so that a daemon that died before storing it does not run
 * the job again.
 */
struct wmsg_ack {
	uint64_t job_id;
};

struct wmsg_started {
	uint64_t job_id;
	int32_t pid;
	uint32_t pad;		/* 0 */
	uint64_t start_ticks;	/* the process's start (procstat.h); 0 unknown */
};

/*
 * The version of the messages between the daemon and its workers. A worker
 * is a fork of the daemon without exec, and it may outlive that daemon
 * (issue 26): after an upgrade, the next daemon talks to workers of the
 * old binary. It must be raised whenever any message here changes its
 * layout or its meaning: a worker of another version is never taken over.
 */
#define WMSG_ADOPT_VERSION	2
/* The hello of the workers from before there was a version (version 0):
 * its job_id is where the version is now. */
#define WMSG_ADOPTED_UNVERSIONED	32
/* The most a daemon reads of a hello, whatever the version. */
#define WMSG_ADOPTED_MAX	4096

/*
 * The first message on a connection a new daemon made to an orphaned
 * worker's socket (state_dir/adopt/ID.ATTEMPT.sock): which version it
 * speaks, which attempt of which job it holds, and its process, for the
 * daemon to check against its store and /proc before it takes the worker
 * (fencing by attempt and by process). From then on the connection is as
 * a worker's socketpair. The version stays first in every later version.
 */
struct wmsg_adopted {
	uint32_t version;	/* WMSG_ADOPT_VERSION */
	uint32_t attempt;
	uint64_t job_id;
	int32_t pid;		/* the job's process */
	int32_t worker;		/* the worker's own pid */
	uint64_t start_ticks;	/* the job's process's (procstat.h); 0 when
				 * exited */
	uint8_t exited;		/* 0 or 1: the job's process has been reaped */
	uint8_t pad[7];		/* 0 */
};

/* The fields of struct pool_result, laid out for the wire. */
struct wmsg_finished {
	uint64_t job_id;
	int32_t status;
	uint8_t started;	/* 0 or 1, like the two below */
	uint8_t stdout_truncated;
	uint8_t stderr_truncated;
	uint8_t lease_ended;	/* 0 or 1: the worker stopped it (WMSG_LEASE) */
	uint8_t oom;		/* 0 or 1 */
	uint8_t pad[3];		/* 0 */
	uint32_t left;
	int64_t peak_memory;	/* -1 unknown */
	double user_time;
	double system_time;
	int64_t max_rss_kb;
	uint64_t stdout_bytes;
	uint64_t stderr_bytes;
	uint64_t stdout_dropped;	/* non-zero only when truncated */
	uint64_t stderr_dropped;
	char error[256];	/* NUL-terminated */
};

/*
 * RESULT, sent just before the FINISHED of a run whose process started and
 * left a result (none for an empty one): this head, then the result's
 * bytes, 1 to POOL_RESULT_MAX of them (the spec's max_result at most).
 */
struct wmsg_result_head {
	uint64_t job_id;
	uint8_t truncated;	/* 0 or 1: the file held more */
	uint8_t pad[7];		/* 0 */
};
#define WMSG_RESULT_MAX	(sizeof(struct wmsg_result_head) + POOL_RESULT_MAX)

/* The largest fixed-size message a worker sends; a RESULT is up to
 * WMSG_RESULT_MAX, which the daemon reads into a buffer of its own. */
#define WMSG_TO_DAEMON_MAX	(sizeof(struct wmsg_hdr) + sizeof(struct wmsg_finished))

/* A decoded RUN: spec points into buf, argv and envp, which it owns. */
struct wmsg_run {
	struct pool_spec spec;
	char *buf;
	char **argv;		/* NULL-terminated */
	char **envp;		/* NULL-terminated */
};

/*
 * Checks a header read from the peer: a type that flows in direction dir
 * and a length that is exact for fixed payloads, at most WMSG_RUN_MAX for
 * RUN. Returns 0, or -1 with errno EPROTO (unknown type or wrong direction)
 * or EMSGSIZE (bad length).
 */
int wmsg_check(const struct wmsg_hdr *hdr, enum wmsg_dir dir);

/*
 * Returns the whole RUN message for spec (header included, *lenp bytes),
 * allocated, the caller's to free; or NULL with errno EINVAL (no argv[0], a
 * NULL string), E2BIG (over WMSG_RUN_MAX) or ENOMEM.
 */
void *wmsg_run_encode(const struct pool_spec *spec, size_t *lenp);

/*
 * Validates a RUN payload completely and fills run, which then owns buf
 * (allocated with malloc); wmsg_run_clear() releases it. Returns 0, or -1
 * with errno EPROTO (malformed) or ENOMEM, and then buf is still the
 * caller's and run is cleared.
 */
int wmsg_run_decode(struct wmsg_run *run, char *buf, size_t len);
void wmsg_run_clear(struct wmsg_run *run);

/*
 * Checks a hello (WMSG_ADOPTED) of len bytes, the version before anything
 * else, and fills am. Returns 0, or -1 with errno EPROTONOSUPPORT (another
 * version: *version says which), EMSGSIZE (the length is not this
 * version's) or EPROTO (a field out of range).
 */
int wmsg_adopted_decode(struct wmsg_adopted *am, const void *buf, size_t len,
    uint32_t *version);

/*
 * Checks a RESULT payload of len bytes (the head's flags and padding, at
 * least one byte of result) into *head; the bytes are the len - sizeof
 * *head after it. 0, or -1 with errno EPROTO.
 */
int wmsg_result_decode(struct wmsg_result_head *head, const void *buf,
    size_t len);

/* Fills a FINISHED payload from res (every byte, padding included). */
void wmsg_finished_encode(struct wmsg_finished *msg, uint64_t job_id,
    const struct pool_result *res);
/* Checks a FINISHED payload (flags 0/1, error NUL-terminated, sizes sane,
 * bytes dropped only from a truncated stream) and fills res. Returns 0, or -1 with errno EPROTO. */
int wmsg_finished_decode(const struct wmsg_finished *msg,
    struct pool_result *res);

#endif
