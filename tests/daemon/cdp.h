/* cdp.h - for the dashboard test: a real headless Chromium, one page of it,
 * driven over the DevTools protocol on a pipe (--remote-debugging-pipe). */
#ifndef TRIAGE_TEST_CDP_H
#define TRIAGE_TEST_CDP_H

#include <stdbool.h>

#include <jansson.h>

/* Debian's Chromium, which the Makefile's deps install. */
#define CDP_BROWSER "/usr/bin/chromium"

struct cdp;

/* Whether CDP_BROWSER can be run here: a test skips, saying so, if not. */
bool cdp_available(void);

/*
 * Starts Chromium headless with a profile in a temp dir of its own, a
 * viewport of width x height CSS pixels, and one blank page attached.
 * Fails the test when it does not come up. Every wait of this module fails
 * the test past the harness's timeout, printing the browser's recent
 * console lines and log.
 */
struct cdp *cdp_start(int width, int height);
/* Kills the browser (its whole process group), removes its temp dir and
 * frees c. NULL is fine. Safe at any point, a failed test's teardown too. */
void cdp_stop(struct cdp *c);

/*
 * Calls a method of the page's session (of the browser when browser is
 * set) with params (stolen; NULL for none) and returns its result (a new
 * reference). Events that arrive meanwhile are handled (loads counted,
 * console lines kept) and dropped. Fails the test on an error response.
 */
json_t *cdp_call(struct cdp *c, const char *method, json_t *params,
    bool browser);

/* Loads url in the page and waits for its load event. */
void cdp_navigate(struct cdp *c, const char *url);
/* The page's load events so far: a form's submit that leads to a new page
 * is seen by waiting until this grows. */
unsigned cdp_loads(const struct cdp *c);
/* Waits until the page has fired its load event more than loads times. */
void cdp_wait_loads(struct cdp *c, unsigned loads);

/* How many exceptions the page threw, and console.error lines it wrote,
 * since the browser started: a test ends asserting there were none. */
unsigned cdp_exceptions(const struct cdp *c);

/* Evaluates the printf-formatted JavaScript expression in the page (a
 * promise is awaited) and returns its value as JSON (a new reference;
 * null for undefined). Fails the test when it throws. */
json_t *cdp_eval(struct cdp *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The same, for an expression whose value is an integer, or a string
 * (allocated, the caller's). */
long long cdp_eval_int(struct cdp *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
char *cdp_eval_str(struct cdp *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * Waits until the printf-formatted expression is true in the page, polling
 * it there. An expression that throws, or a page being replaced, counts as
 * not yet. Fails the test past the timeout, naming the expression.
 */
void cdp_wait_true(struct cdp *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Waits until the element that the CSS selector names is shown, enabled
 * and not covered, and clicks its middle with the mouse, as a person
 * would. */
void cdp_click(struct cdp *c, const char *selector);
/* Types text into the element that has the focus. */
void cdp_type(struct cdp *c, const char *text);
/* Resizes the viewport, as a window resized. */
void cdp_viewport(struct cdp *c, int width, int height);
/* Saves what the page shows now as a PNG file. */
void cdp_screenshot(struct cdp *c, const char *path);

/* A JSON string literal of s, which is a JavaScript one too: to put a
 * string into an expression. In a static buffer, overwritten by the next
 * call; fails the test when too long. */
const char *cdp_quote(const char *s);

#endif
