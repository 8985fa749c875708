/* sqlite-ckpt.h - the job database's checkpoints on a thread of their own, so
 * that the loop's commits only append to the WAL, wherever the rows are. */
#ifndef TRIAGE_SQLITE_CKPT_H
#define TRIAGE_SQLITE_CKPT_H

#include <stdint.h>

#include <sqlite3.h>

struct sqlite_ckpt;

/*
 * The WAL's pages that make a checkpoint due, SQLite's own default: once
 * the WAL has grown by as many, a commit of writer wakes the thread, which
 * copies the WAL into the database file on a connection of its own: first
 * PASSIVE (it never waits for, nor holds up, the writer or a reader), then
 * RESTART for what the writer added meanwhile, which holds the writer back
 * for that moment and lets its next commit start the WAL over.
 */
#define SQLITE_CKPT_PAGES 1000

/*
 * Takes the checkpoints of writer's database over from writer (which then
 * makes none itself). NULL with *cause set when no thread or connection
 * could be had: writer then checkpoints itself, as SQLite does by default.
 */
struct sqlite_ckpt *sqlite_ckpt_start(sqlite3 *writer, char **cause);

/* Ends the thread and its connection, writer's own checkpoints restored;
 * before writer closes, whose close then makes the last one. */
void sqlite_ckpt_stop(struct sqlite_ckpt *ck);

/* Checkpoints made so far that copied pages into the database file. */
uint64_t sqlite_ckpt_count(struct sqlite_ckpt *ck);

#endif
