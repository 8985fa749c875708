/* pool-spec.h - a job as the pool hands it to a worker, and how its run
 * ended: what the daemon, the wire and the worker process all speak of. */
#ifndef TRIAGED_POOL_SPEC_H
#define TRIAGED_POOL_SPEC_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* On a keep_tail capture file, the extended attribute holding how many
 * bytes of the stream it no longer stores before its first, in decimal:
 * the worker sets it, `output` reads it while the job runs. */
#define POOL_DROPPED_XATTR	"user.triage.dropped"

/*
 * A job's result (protocol v1.3): the worker gives each attempt an
 * anonymous in-memory file (memfd), open in the job as this descriptor
 * and named TRIAGE_RESULT=/dev/fd/10, which any process of it may open
 * with > or >>; a process of it that closes its inherited descriptors
 * (sudo, Python's subprocess) must be handed it. Above 9, where no
 * shell's N> reaches it by accident. At most POOL_RESULT_MAX bytes of it
 * are ever read (the config's max_result bound).
 */
#define POOL_RESULT_FD		10
#define POOL_RESULT_PATH	"/dev/fd/10"
#define POOL_RESULT_MAX		(16u * 1024 * 1024)

/* Everything a worker needs to run one job; borrowed for the call only. */
struct pool_spec {
	uint64_t job_id;
	const char *const *argv;	/* NULL-terminated, argv[0] looked up in envp's PATH */
	const char *const *envp;	/* NULL-terminated, complete (TRIAGE_* included) */
	const char *cwd;
	bool set_creds;		/* become uid/gid/user's groups (root daemon) */
	bool no_new_privs;	/* PR_SET_NO_NEW_PRIVS before exec */
	uid_t uid;
	gid_t gid;
	/* A worker resolves uid's supplementary groups once and keeps them
	 * while this stays the same: the daemon changes it on a reload. */
	uint32_t groups_epoch;
	/* Made (O_EXCL, mode 0600) at the stream's first byte, none for a
	 * stream without one: the daemon removes the last attempt's first. */
	const char *stdout_path;
	const char *stderr_path;
	uint64_t max_output;	/* bytes kept per stream; the rest is dropped */
	bool keep_tail;		/* keep the last max_output bytes, not the first */
	/* Bytes of its result read back at its end, at most
	 * POOL_RESULT_MAX; 0: no result file (and no TRIAGE_RESULT). */
	uint64_t max_result;
	bool merge_output;	/* stderr into stdout's capture, like 2>&1 */
	int nice;		/* of the job's process, 0 to 19 */
	bool io_idle;		/* ioprio class idle, else the kernel's default */
	/* A cgroup of its own, "ID.ATTEMPT" under the workers' cgroup_fd
	 * (struct pool_setup), limited as below where the controller is
	 * there; 0 is no limit. */
	bool cgroup;
	unsigned attempt;
	uint64_t memory_max;	/* memory.max; swap none, OOM kills all */
	unsigned pids_max;	/* pids.max */
	unsigned cpu_weight;	/* cpu.weight, 1 to 10000 */
};

/* What every worker is given when it is forked. */
struct pool_setup {
	/* The directory the jobs' cgroups are made in, -1 for none; the
	 * workers keep it open. */
	int cgroup_fd;
	unsigned cgroup_ctls;	/* its controllers (cgroup.h's mask) */
	/* The cgroup a new worker is moved into at once, -1 for none: it
	 * stays in the daemon's. */
	int workers_cgroup_fd;
	/* A job's oom_score_adj: the daemon's own as it started, before it
	 * made itself the OOM killer's last choice; or the one below. */
	int job_oom_score_adj;
#define POOL_OOM_SCORE_ADJ_SAME	INT_MIN	/* the worker's own, unchanged */
	/* Where a worker that loses its daemon while it runs a job waits
	 * for the next one and leaves the job's end (endrec.h); NULL: such a
	 * worker kills its job and dies with the daemon. */
	const char *adopt_dir;
	/* 0, or why a file of the output directory takes no
	 * POOL_DROPPED_XATTR (ENOTSUP): a keep_tail job is refused then. */
	int tail_errno;
};

/* How a job's run ended: its process exited and both streams closed. */
struct pool_result {
	bool started;		/* false: it never ran; see error */
	int status;		/* wait status, valid when started */
	char error[256];	/* why it never ran ("exec ls: No such file or directory") */
	double user_time;	/* seconds, the job's process tree */
	double system_time;
	int64_t max_rss_kb;
	uint64_t stdout_bytes;	/* kept */
	uint64_t stderr_bytes;
	bool stdout_truncated;
	bool stderr_truncated;
	uint64_t stdout_dropped;	/* keep_tail: bytes before the kept ones */
	uint64_t stderr_dropped;
	bool lease_ended;	/* the worker stopped it: the node's lease ran
				 * out unrenewed (WMSG_LEASE) */
	/* With a cgroup of its own: */
	int64_t peak_memory;	/* bytes at most at once; -1 unknown */
	bool oom;		/* a process of it was killed for memory */
	unsigned left;		/* processes left when its main one ended,
				 * killed then */
	/* The first bytes of its result file, at most max_result of them
	 * (NUL-terminated past result_len; NULL: none, or empty), allocated
	 * and owned by whoever holds the struct: a copy of the struct
	 * moves it. result_truncated: the file held more. */
	char *result;
	size_t result_len;
	bool result_truncated;
};

#endif
