/* reload.h - a new config while the daemon runs (SIGHUP, `reload`): read
 * as at the start, checked against what runs, applied whole or not at all. */
#ifndef TRIAGED_RELOAD_H
#define TRIAGED_RELOAD_H

struct config_opts;
struct reload;
struct triaged;

/*
 * Remembers where the config came from: a copy of opts and of the
 * environment it points to, so a reload reads the same file the same way.
 * NULL when out of memory.
 */
struct reload *reload_new(const struct config_opts *opts);
void reload_free(struct reload *rl);

/*
 * Reads the config again and, when it fits, puts it in force: td->cfg is
 * the new one and the old is freed. Logs the outcome ("reloaded: ..." or
 * one "reload: rejected: ..." line per reason). Returns 0; or -1 when it
 * was rejected and nothing changed, with *errors (when errors is not NULL)
 * an allocated text of one line per reason, joined by '\n'.
 *
 * Rejected: a config that does not parse (its errors, PATH:LINE: ...); a
 * change of state_dir, socket, socket_mode, socket_group or
 * run_as_submitter (they need a restart); a priority left out that still
 * has queued, running or submitted jobs; slots, or a priority's
 * max_running, below what a queued job needs; any config once the daemon
 * is stopping.
 */
int reload_config(struct triaged *td, char **errors);

#endif
