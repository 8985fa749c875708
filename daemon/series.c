/* series.c - the dashboard's last five minutes in steps of 5 s: slots held,
 * jobs started, and waits per priority, kept up from job events. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "attempts.h"
#include "config.h"
#include "hist.h"
#include "jobs.h"
#include "prioremap.h"
#include "psem.h"
#include "series.h"
#include "timefmt.h"
#include "triaged.h"

/*
 * A ring of steps, each the step number it holds (its start / STEP_MS):
 * a slot whose number is not in the window is left over from an earlier
 * pass, and reads as zeros. Moving on resets only the slots it enters.
 */
struct series_step {
	int64_t index;		/* -1: never used */
	double busy_ms;		/* slots held, times the ms they were */
	uint32_t dispatched;
};

/* Waits of one priority in one step: histogram counts (hist_job_seconds)
 * without a sum, which quantiles do not need. */
struct series_waits {
	uint32_t counts[HIST_BOUNDS_MAX + 1];
};

struct series {
	struct attempts attempts;
	int64_t start_ms;	/* series_init's time */
	int64_t last_ms;	/* busy is counted into the steps up to here */
	unsigned busy;		/* slots held since last_ms */
	struct series_step steps[SERIES_STEPS];
	/* By priority first: the priorities in use are what is touched. */
	struct series_waits waits[CONFIG_PRIORITIES_MAX][SERIES_STEPS];
};

static unsigned
series_slot(int64_t index)
{
	return (unsigned)(index % SERIES_STEPS);
}

static int64_t
series_max(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

static int64_t
series_min(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/*
 * Moves the window on to now: the slots held since last_ms are spread over
 * the steps they were held in, and each step entered is reset first. At
 * most a window's steps, however long it has been.
 */
static void
series_advance(struct triaged *td, int64_t now)
{
	struct series *s = td->series;
	int64_t cur, k, from, t0, t1;
	struct series_step *st;
	unsigned i, slot;

	/* The clock went back: what comes counts as then. */
	if (now < s->last_ms)
		now = s->last_ms;
	cur = now / SERIES_STEP_MS;
	from = series_max(s->last_ms / SERIES_STEP_MS, cur - SERIES_STEPS + 1);
	for (k = from; k <= cur; k++) {
		slot = series_slot(k);
		st = &s->steps[slot];
		if (st->index != k) {
			st->index = k;
			st->busy_ms = 0;
			st->dispatched = 0;
			for (i = 0; i < td->cfg->npriorities; i++)
				memset(&s->waits[i][slot], 0,
				    sizeof s->waits[i][slot]);
		}
		t0 = series_max(s->last_ms, k * SERIES_STEP_MS);
		t1 = series_min(now, (k + 1) * SERIES_STEP_MS);
		if (t1 > t0)
			st->busy_ms += (double)s->busy * (double)(t1 - t0);
	}
	s->last_ms = now;
}

static void
series_job_cb(struct triaged *td, const struct jobs_event *ev, void *arg)
{
	struct series *s = arg;
	struct attempts_times t;
	int64_t now = timefmt_now();
	unsigned prio = ev->view->waiter.prio, slot;

	series_advance(td, now);
	attempts_event(&s->attempts, ev, now, &t);
	if (t.kind == ATTEMPTS_STARTED) {
		slot = series_slot(s->last_ms / SERIES_STEP_MS);
		s->steps[slot].dispatched++;
		if (prio < td->cfg->npriorities)
			s->waits[prio][slot].counts[hist_bucket(
			    &hist_job_seconds, t.wait)]++;
	}
	s->busy = psem_held(td->sem);
}

int
series_init(struct triaged *td, char **cause)
{
	struct series *s;
	unsigned i;

	*cause = NULL;
	if ((s = calloc(1, sizeof *s)) == NULL)
		return -1;
	s->start_ms = s->last_ms = timefmt_now();
	attempts_init(&s->attempts, s->start_ms);
	for (i = 0; i < SERIES_STEPS; i++)
		s->steps[i].index = -1;
	if (jobs_listen(td, series_job_cb, s) != 0) {
		free(s);
		return -1;
	}
	td->series = s;
	return 0;
}

void
series_free(struct triaged *td)
{
	if (td->series == NULL)
		return;
	attempts_clear(&td->series->attempts);
	free(td->series);
	td->series = NULL;
}

void
series_reprioritize(struct triaged *td, unsigned nold, const int *map)
{
	/* Out of memory, the waits start again; nothing else is lost. */
	if (td->series != NULL)
		(void)prioremap(td->series->waits,
		    sizeof td->series->waits[0], nold, map);
}

/* The time-weighted mean of the slots held in step k, over the part of it
 * the daemon has seen so far. */
static double
series_mean_busy(const struct series *s, int64_t k)
{
	const struct series_step *st = &s->steps[series_slot(k)];
	int64_t t0 = series_max(k * SERIES_STEP_MS, s->start_ms);
	int64_t t1 = series_min((k + 1) * SERIES_STEP_MS, s->last_ms);

	if (st->index != k || t1 <= t0)
		return 0;
	return st->busy_ms / (double)(t1 - t0);
}

/* {"p50", "p95", "count"} of priority prio's waits over the window. */
static json_t *
series_wait_json(const struct series *s, unsigned prio, int64_t cur)
{
	struct hist h;
	int64_t k;
	unsigned b, slot;
	double p50, p95;

	hist_clear(&h);
	for (k = cur - SERIES_STEPS + 1; k <= cur; k++) {
		slot = series_slot(k);
		if (k < 0 || s->steps[slot].index != k)
			continue;
		for (b = 0; b <= hist_job_seconds.nbounds; b++) {
			h.counts[b] += s->waits[prio][slot].counts[b];
			h.count += s->waits[prio][slot].counts[b];
		}
	}
	if (h.count == 0)
		return json_pack("{sn sn sI}", "p50", "p95", "count",
		    (json_int_t)0);
	p50 = hist_quantile(&h, &hist_job_seconds, 0.5);
	p95 = hist_quantile(&h, &hist_job_seconds, 0.95);
	return json_pack("{sf sf sI}", "p50", p50, "p95", p95, "count",
	    (json_int_t)h.count);
}

json_t *
series_json_at(struct triaged *td, int64_t now_ms)
{
	struct series *s = td->series;
	json_t *busy, *dispatched, *waits, *w;
	int64_t cur, k;
	unsigned i;
	bool ok = true;

	series_advance(td, now_ms);
	/* What is held now holds from now on, whatever event comes next. */
	s->busy = psem_held(td->sem);
	cur = s->last_ms / SERIES_STEP_MS;
	busy = json_array();
	dispatched = json_array();
	waits = json_object();
	if (busy == NULL || dispatched == NULL || waits == NULL)
		ok = false;
	for (k = cur - SERIES_STEPS + 1; ok && k <= cur; k++) {
		const struct series_step *st = &s->steps[series_slot(k)];

		ok = json_array_append_new(busy,
		    json_real(series_mean_busy(s, k))) == 0 &&
		    json_array_append_new(dispatched, json_integer(
		    k >= 0 && st->index == k ? st->dispatched : 0)) == 0;
	}
	for (i = 0; ok && i < td->cfg->npriorities; i++)
		ok = (w = series_wait_json(s, i, cur)) != NULL &&
		    json_object_set_new(waits, td->cfg->priorities[i].name, w)
		    == 0;
	if (!ok) {
		json_decref(busy);
		json_decref(dispatched);
		json_decref(waits);
		return NULL;
	}
	return json_pack("{si sf sI so so so}",
	    "step", SERIES_STEP_MS / 1000,
	    "end", (double)((cur + 1) * SERIES_STEP_MS) / 1000,
	    "slots", (json_int_t)psem_permits(td->sem),
	    "slots_busy", busy,
	    "dispatched", dispatched,
	    "wait", waits);
}

json_t *
series_json(struct triaged *td)
{
	return series_json_at(td, timefmt_now());
}
