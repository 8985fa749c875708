/* sqlite-ckpt.c - the job database's checkpoints on a thread of their own: a
 * checkpoint writes pages wherever their rows are, and the loop does not. */
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cause.h"
#include "sqlite-ckpt.h"

/* How long a RESTART checkpoint waits for the writer and the readers. */
#define SQLITE_CKPT_RESTART_WAIT_MS 100

struct sqlite_ckpt {
	sqlite3 *writer;
	sqlite3 *conn;		/* the thread's alone */
	pthread_t thread;
	pthread_mutex_t lock;	/* over what follows */
	pthread_cond_t wake;
	/* The WAL's pages when the last checkpoint was asked for: the next
	 * is asked for SQLITE_CKPT_PAGES later, not at every commit past
	 * them (the writer's alone). */
	int asked_at;
	bool due;
	bool stop;
	uint64_t count;
};

/* After each of writer's commits, in its thread (the loop's): the WAL's
 * size in pages. */
static int
sqlite_ckpt_hook(void *arg, sqlite3 *db, const char *name, int pages)
{
	struct sqlite_ckpt *ck = arg;

	(void)db;
	(void)name;
	/* Fewer pages than last time: the WAL started over. */
	if (pages < ck->asked_at)
		ck->asked_at = 0;
	if (pages < ck->asked_at + SQLITE_CKPT_PAGES)
		return SQLITE_OK;
	ck->asked_at = pages;
	pthread_mutex_lock(&ck->lock);
	ck->due = true;
	pthread_cond_signal(&ck->wake);
	pthread_mutex_unlock(&ck->lock);
	return SQLITE_OK;
}

static void *
sqlite_ckpt_main(void *arg)
{
	struct sqlite_ckpt *ck = arg;
	int log, done, copied;

	pthread_mutex_lock(&ck->lock);
	for (;;) {
		while (!ck->due && !ck->stop)
			pthread_cond_wait(&ck->wake, &ck->lock);
		if (ck->stop)
			break;
		ck->due = false;
		pthread_mutex_unlock(&ck->lock);
		copied = 0;
		/* What it could not copy (frames a reader still needs, or an
		 * I/O error, which the next commit meets too) waits for the
		 * next. */
		if (sqlite3_wal_checkpoint_v2(ck->conn, NULL,
		    SQLITE_CHECKPOINT_PASSIVE, &log, &done) == SQLITE_OK &&
		    done > 0)
			copied += done;
		/* A PASSIVE checkpoint beside a writer never ends with the
		 * whole WAL copied, so the WAL never starts over and grows
		 * as long as the writes go on. Then RESTART: it holds the
		 * writer back (a moment: what the writer added since the
		 * pass above) while it copies the rest and waits for the
		 * readers, so that the next commit starts the WAL over. */
		if (sqlite3_wal_checkpoint_v2(ck->conn, NULL,
		    SQLITE_CHECKPOINT_RESTART, &log, &done) == SQLITE_OK &&
		    done > 0)
			copied += done;
		pthread_mutex_lock(&ck->lock);
		if (copied > 0)
			ck->count++;
	}
	pthread_mutex_unlock(&ck->lock);
	return NULL;
}

struct sqlite_ckpt *
sqlite_ckpt_start(sqlite3 *writer, char **cause)
{
	const char *path = sqlite3_db_filename(writer, "main");
	struct sqlite_ckpt *ck;
	sigset_t all, old;
	int rc;

	if (path == NULL || *path == '\0') {
		cause_fail(cause, "checkpoints: the database has no file");
		return NULL;
	}
	if ((ck = calloc(1, sizeof *ck)) == NULL) {
		cause_fail(cause, "out of memory");
		return NULL;
	}
	ck->writer = writer;
	/* The name is absolute: never read as a "file:" URI. */
	rc = sqlite3_open_v2(path, &ck->conn, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE, NULL);
	if (rc != SQLITE_OK) {
		cause_fail(cause, "checkpoints: cannot open %s: %s", path,
		    ck->conn != NULL ? sqlite3_errmsg(ck->conn) :
		    sqlite3_errstr(rc));
		sqlite3_close(ck->conn);
		free(ck);
		return NULL;
	}
	/* A connection knows the database is in WAL mode only once it has
	 * read it: until then a checkpoint does nothing. */
	if (sqlite3_exec(ck->conn, "SELECT count(*) FROM sqlite_master", NULL,
	    NULL, NULL) != SQLITE_OK) {
		cause_fail(cause, "checkpoints: cannot read %s: %s", path,
		    sqlite3_errmsg(ck->conn));
		sqlite3_close(ck->conn);
		free(ck);
		return NULL;
	}
	/* RESTART waits this long for the writer and the readers, and the
	 * writer for it meanwhile: a reader that stays (an operator's
	 * sqlite3 shell) costs the loop that much once a checkpoint. */
	sqlite3_busy_timeout(ck->conn, SQLITE_CKPT_RESTART_WAIT_MS);
	pthread_mutex_init(&ck->lock, NULL);
	pthread_cond_init(&ck->wake, NULL);
	/* The daemon's signals are the loop's: the thread is born with every
	 * one blocked. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&ck->thread, NULL, sqlite_ckpt_main, ck);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		cause_fail(cause, "checkpoints: no thread: %s", strerror(rc));
		pthread_cond_destroy(&ck->wake);
		pthread_mutex_destroy(&ck->lock);
		sqlite3_close(ck->conn);
		free(ck);
		return NULL;
	}
	/* Replaces writer's own checkpoints (sqlite3_wal_autocheckpoint is
	 * this hook of SQLite's). */
	sqlite3_wal_hook(writer, sqlite_ckpt_hook, ck);
	return ck;
}

void
sqlite_ckpt_stop(struct sqlite_ckpt *ck)
{
	if (ck == NULL)
		return;
	sqlite3_wal_autocheckpoint(ck->writer, SQLITE_CKPT_PAGES);
	pthread_mutex_lock(&ck->lock);
	ck->stop = true;
	pthread_cond_signal(&ck->wake);
	pthread_mutex_unlock(&ck->lock);
	pthread_join(ck->thread, NULL);
	pthread_cond_destroy(&ck->wake);
	pthread_mutex_destroy(&ck->lock);
	sqlite3_close(ck->conn);
	free(ck);
}

uint64_t
sqlite_ckpt_count(struct sqlite_ckpt *ck)
{
	uint64_t n;

	pthread_mutex_lock(&ck->lock);
	n = ck->count;
	pthread_mutex_unlock(&ck->lock);
	return n;
}
