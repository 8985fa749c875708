/* sdunit.c - what the daemon asks systemd over D-Bus: the scope its jobs run
 * in, apart from its unit, and whether the stop under way is a restart. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-bus.h>
#include <systemd/sd-login.h>

#include "sdunit.h"
#include "timefmt.h"

#define SDUNIT_DEST	"org.freedesktop.systemd1"
#define SDUNIT_PATH	"/org/freedesktop/systemd1"
#define SDUNIT_MANAGER	"org.freedesktop.systemd1.Manager"
#define SDUNIT_UNIT	"org.freedesktop.systemd1.Unit"
#define SDUNIT_SERVICE	"org.freedesktop.systemd1.Service"
#define SDUNIT_SCOPE	"org.freedesktop.systemd1.Scope"
#define SDUNIT_JOB	"org.freedesktop.systemd1.Job"
/* Every call is made before the daemon serves, or as it stops. */
#define SDUNIT_CALL_USEC	(10 * 1000000ULL)
/* How long a new scope may take to become active. */
#define SDUNIT_ACTIVE_MS	10000

/*
 * systemd's own socket for root, which needs no bus daemon (a container
 * or a minimal host may run none), as systemctl does; else the system bus.
 */
static int
sdunit_bus(sd_bus **bus)
{
	sd_bus *b = NULL;
	int r;

	if (geteuid() == 0 && access("/run/systemd/private", F_OK) == 0 &&
	    sd_bus_new(&b) >= 0) {
		if (sd_bus_set_address(b, "unix:path=/run/systemd/private")
		    >= 0 && sd_bus_start(b) >= 0) {
			*bus = b;
			return 0;
		}
		sd_bus_unref(b);
	}
	if ((r = sd_bus_open_system(bus)) < 0) {
		errno = -r;
		return -1;
	}
	return 0;
}

/* The daemon's own unit, if it is a service. */
static int
sdunit_own(char *unit, size_t size)
{
	char *name = NULL;
	size_t len;

	if (sd_pid_get_unit(0, &name) < 0 || (len = strlen(name)) <=
	    strlen(".service") || len >= size ||
	    strcmp(name + len - strlen(".service"), ".service") != 0) {
		free(name);
		return -1;
	}
	memcpy(unit, name, len + 1);
	free(name);
	return 0;
}

int
sdunit_scope_name(char *name, size_t size)
{
	char unit[SDUNIT_NAME_MAX], *at;
	int n;

	if (sdunit_own(unit, sizeof unit) != 0)
		return -1;
	unit[strlen(unit) - strlen(".service")] = '\0';
	/* "x@y-jobs.scope" would read as an instance of a template. */
	while ((at = strchr(unit, '@')) != NULL)
		*at = '-';
	n = snprintf(name, size, "%s-jobs.scope", unit);
	return n < 0 || (size_t)n >= size ? -1 : 0;
}

/* *cause from fmt and the D-Bus error (or -r). -1. */
static int __attribute__((format(printf, 4, 5)))
sdunit_fail(char **cause, const sd_bus_error *error, int r,
    const char *fmt, ...)
{
	char *what = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&what, fmt, ap) < 0)
		what = NULL;
	va_end(ap);
	if (what == NULL || asprintf(cause, "%s: %s", what,
	    error != NULL && sd_bus_error_is_set(error) ? error->message :
	    strerror(r < 0 ? -r : r)) < 0)
		*cause = NULL;
	free(what);
	return -1;
}

/* A limit of the unit's, UINT64_MAX when it has none or cannot tell. */
static uint64_t
sdunit_limit(sd_bus *bus, const char *unit_path, const char *name)
{
	uint64_t v = UINT64_MAX;

	if (sd_bus_get_property_trivial(bus, SDUNIT_DEST, unit_path,
	    SDUNIT_SERVICE, name, NULL, 't', &v) < 0)
		return UINT64_MAX;
	return v;
}

/* The object path of unit name (loaded), into *path (allocated). */
static int
sdunit_path(sd_bus *bus, const char *name, char **path, sd_bus_error *error)
{
	sd_bus_message *reply = NULL;
	const char *p;
	int r;

	r = sd_bus_call_method(bus, SDUNIT_DEST, SDUNIT_PATH, SDUNIT_MANAGER,
	    "GetUnit", error, &reply, "s", name);
	if (r >= 0 && (r = sd_bus_message_read(reply, "o", &p)) >= 0 &&
	    (*path = strdup(p)) == NULL)
		r = -ENOMEM;
	sd_bus_message_unref(reply);
	return r;
}

/* StartTransientUnit of the scope; sd-bus's negative errno. */
static int
sdunit_scope_call(sd_bus *bus, const char *name, pid_t pid,
    const char *own, const char *own_path, sd_bus_error *error)
{
	static const char *const limits[] = { "MemoryMax", "MemoryHigh",
	    "TasksMax" };
	sd_bus_message *m = NULL, *reply = NULL;
	char *slice = NULL;
	uint64_t v;
	size_t i;
	int r;

	if ((r = sd_bus_message_new_method_call(bus, &m, SDUNIT_DEST,
	    SDUNIT_PATH, SDUNIT_MANAGER, "StartTransientUnit")) < 0)
		return r;
	(void)sd_pid_get_slice(0, &slice);
	if ((r = sd_bus_message_append(m, "ss", name, "fail")) < 0 ||
	    (r = sd_bus_message_open_container(m, 'a', "(sv)")) < 0 ||
	    (r = sd_bus_message_append(m, "(sv)", "Description", "s",
	    "running jobs of triaged, which outlive a restart of it")) < 0 ||
	    (r = sd_bus_message_append(m, "(sv)", "Delegate", "b", 1)) < 0 ||
	    (r = sd_bus_message_append(m, "(sv)", "PIDs", "au", 1,
	    (uint32_t)pid)) < 0 ||
	    (r = sd_bus_message_append(m, "(sv)", "Before", "as", 1,
	    own)) < 0 ||
	    (slice != NULL && (r = sd_bus_message_append(m, "(sv)", "Slice",
	    "s", slice)) < 0))
		goto out;
	/* What bound the jobs when they ran in the unit binds them here. */
	for (i = 0; i < sizeof limits / sizeof limits[0]; i++)
		if ((v = sdunit_limit(bus, own_path, limits[i])) !=
		    UINT64_MAX && (r = sd_bus_message_append(m, "(sv)",
		    limits[i], "t", v)) < 0)
			goto out;
	if ((r = sd_bus_message_close_container(m)) < 0 ||
	    (r = sd_bus_message_append(m, "a(sa(sv))", 0)) < 0)
		goto out;
	r = sd_bus_call(bus, m, SDUNIT_CALL_USEC, error, &reply);
out:
	free(slice);
	sd_bus_message_unref(reply);
	sd_bus_message_unref(m);
	return r;
}

/* Waits for the scope to be active, so that systemd has placed its
 * process, and reads its cgroup. */
static int
sdunit_scope_wait(sd_bus *bus, const char *path, char *cgroup, size_t size,
    sd_bus_error *error)
{
	const struct timespec pause = { 0, 5 * 1000000L };
	uint64_t end = timefmt_mono_ms() + SDUNIT_ACTIVE_MS;
	char *state = NULL, *cg = NULL;
	int r;

	for (;;) {
		if ((r = sd_bus_get_property_string(bus, SDUNIT_DEST, path,
		    SDUNIT_UNIT, "ActiveState", error, &state)) < 0)
			return r;
		if (strcmp(state, "active") == 0)
			break;
		free(state);
		state = NULL;
		/* A start job that systemd runs at once, unless it is
		 * busy: polled, as this is once, before the daemon serves. */
		if (timefmt_mono_ms() >= end)
			return -ETIMEDOUT;
		(void)nanosleep(&pause, NULL);
	}
	free(state);
	if ((r = sd_bus_get_property_string(bus, SDUNIT_DEST, path,
	    SDUNIT_SCOPE, "ControlGroup", error, &cg)) < 0)
		return r;
	if (cg[0] != '/' || strlen(cg) >= size) {
		free(cg);
		return -ENAMETOOLONG;
	}
	memcpy(cgroup, cg, strlen(cg) + 1);
	free(cg);
	return 0;
}

int
sdunit_scope_start(const char *name, pid_t pid, char *cgroup, size_t size,
    char **cause)
{
	sd_bus_error error = SD_BUS_ERROR_NULL;
	char own[SDUNIT_NAME_MAX], *own_path = NULL, *path = NULL;
	sd_bus *bus = NULL;
	int r, rc = -1;

	*cause = NULL;
	if (sdunit_own(own, sizeof own) != 0) {
		if (asprintf(cause, "the daemon runs in no service unit") < 0)
			*cause = NULL;
		return -1;
	}
	if (sdunit_bus(&bus) != 0)
		return sdunit_fail(cause, NULL, errno, "cannot reach systemd");
	if ((r = sdunit_path(bus, own, &own_path, &error)) < 0) {
		sdunit_fail(cause, &error, r, "%s", own);
		goto out;
	}
	r = sdunit_scope_call(bus, name, pid, own, own_path, &error);
	/* One an earlier daemon's jobs keep is theirs and ours. */
	if (r < 0 && !sd_bus_error_has_name(&error,
	    "org.freedesktop.systemd1.UnitExists")) {
		sdunit_fail(cause, &error, r, "cannot start %s", name);
		goto out;
	}
	sd_bus_error_free(&error);
	if ((r = sdunit_path(bus, name, &path, &error)) < 0 ||
	    (r = sdunit_scope_wait(bus, path, cgroup, size, &error)) < 0) {
		sdunit_fail(cause, &error, r, "%s", name);
		goto out;
	}
	rc = 0;
out:
	free(own_path);
	free(path);
	sd_bus_error_free(&error);
	sd_bus_flush_close_unref(bus);
	return rc;
}

int
sdunit_restarting(void)
{
	sd_bus_message *reply = NULL;
	char own[SDUNIT_NAME_MAX], *path = NULL, *type = NULL;
	const char *job;
	sd_bus *bus = NULL;
	uint32_t id;
	int rc = -1;

	if (sdunit_own(own, sizeof own) != 0 || sdunit_bus(&bus) != 0)
		return -1;
	if (sdunit_path(bus, own, &path, NULL) < 0 ||
	    sd_bus_get_property(bus, SDUNIT_DEST, path, SDUNIT_UNIT, "Job",
	    NULL, &reply, "(uo)") < 0 ||
	    sd_bus_message_read(reply, "(uo)", &id, &job) < 0)
		goto out;
	rc = 0;
	/* A restart stays one while it stops the unit, and becomes a start
	 * only once the unit is down. */
	if (id != 0 && sd_bus_get_property_string(bus, SDUNIT_DEST, job,
	    SDUNIT_JOB, "JobType", NULL, &type) >= 0)
		rc = strcmp(type, "restart") == 0;
out:
	free(type);
	free(path);
	sd_bus_message_unref(reply);
	sd_bus_flush_close_unref(bus);
	return rc;
}
