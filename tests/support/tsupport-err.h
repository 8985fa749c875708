/* tsupport-err.h - for tests and benchmarks: what went wrong in the support
 * library, a message its caller reports its own way (fail_msg, stderr). */
#ifndef TRIAGE_TSUPPORT_ERR_H
#define TRIAGE_TSUPPORT_ERR_H

/* The library never prints and never exits: a call that fails fills one
 * of these, which the caller owns. */
struct tsupport_err {
	char msg[512];
};

/* Sets err's message, printf-style, errno left as it was. Returns -1, for
 * a failing function's `return tsupport_err_set(...)`. */
int tsupport_err_set(struct tsupport_err *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
