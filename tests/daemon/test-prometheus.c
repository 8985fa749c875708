/* test-prometheus.c - a real daemon's /metrics: promtool passes it, its
 * figures follow known jobs and reloads, and a real Prometheus scrapes it. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "harness.h"
#include "promtext.h"
#include "thttp.h"

#define PROMETHEUS "/usr/bin/prometheus"

/* A daemon with /metrics on a port of its own. */
struct fixture {
	struct tdaemon *d;
	struct triage_client *c;
	char addr[64];
};

/* Starts a daemon listening for HTTP on a free port, with extra config
 * lines before its [http] section, and auth its lines there. */
static void
fx_start_auth(struct fixture *fx, const char *extra, const char *auth)
{
	char conf[1024];

	snprintf(fx->addr, sizeof fx->addr, "127.0.0.1:%d", tfree_port());
	snprintf(conf, sizeof conf, "%s[http]\nlisten = %s\n%s", extra,
	    fx->addr, auth);
	fx->d = tdaemon_start(conf);
	fx->c = tconnect(fx->d);
}

static void
fx_start(struct fixture *fx, const char *extra)
{
	fx_start_auth(fx, extra, "auth = none\n");
}

/* GET /metrics: 200, the format's content type; the body, the caller's. */
static char *
fx_scrape(struct fixture *fx)
{
	struct thttp_resp r;
	char *text, *type;

	thttp(fx->addr, "GET", "/metrics", NULL, NULL, &r);
	if (r.status != 200)
		fail_msg("GET /metrics: %ld %s", r.status, r.body);
	assert_non_null(type = thttp_header(&r, "Content-Type"));
	assert_string_equal(type, "text/plain; version=0.0.4; charset=utf-8");
	free(type);
	assert_non_null(text = strndup(r.body, r.len));
	thttp_free(&r);
	return text;
}

/* What the daemon says of known jobs, and what promtool says of that. */
static void
metrics_of_a_real_daemon(void **state)
{
	struct fixture fx;
	char *text;
	int i;

	(void)state;
	fx_start(&fx, "slots = 2\n");
	for (i = 0; i < 3; i++)
		json_decref(twait(fx.c, tsubmit(fx.c, "{s[s] ss}", "argv",
		    "true", "priority", "high")));
	json_decref(twait(fx.c, tsubmit(fx.c, "{s[s] ss}", "argv", "false",
	    "priority", "low")));
	json_decref(tcall(fx.c, "pause", "{ss}", "priority", "normal"));
	for (i = 0; i < 2; i++)
		(void)tsubmit(fx.c, "{s[s] ss}", "argv", "true", "priority",
		    "normal");
	text = fx_scrape(&fx);
	promtext_assert(text, "triage_submissions_total{priority=\"high\"}", 3);
	promtext_assert(text,
	    "triage_jobs_finished_total{priority=\"high\",state=\"succeeded\"}",
	    3);
	promtext_assert(text,
	    "triage_jobs_finished_total{priority=\"low\",state=\"failed\"}", 1);
	promtext_assert(text,
	    "triage_job_wait_seconds_count{priority=\"high\"}", 3);
	/* Each run's peak memory; no OOM kill. */
	promtext_assert(text,
	    "triage_job_peak_memory_bytes_count{priority=\"high\"}", 3);
	promtext_assert(text,
	    "triage_job_peak_memory_bytes_count{priority=\"low\"}", 1);
	assert_true(promtext_value(text,
	    "triage_job_peak_memory_bytes_sum{priority=\"high\"}") > 0);
	promtext_assert(text,
	    "triage_jobs_oom_killed_total{priority=\"high\"}", 0);
	promtext_assert(text, "triage_jobs_queued{priority=\"normal\"}", 2);
	promtext_assert(text, "triage_priority_paused{priority=\"normal\"}", 1);
	promtext_assert(text, "triage_slots", 2);
	assert_true(promtext_value(text,
	    "triage_connections_accepted_total") >= 1);
	assert_true(promtext_value(text, "triage_store_commits_total") > 0);
	assert_true(promtext_value(text, "process_open_fds") > 0);
	assert_true(promtext_value(text, "process_start_time_seconds") > 0);
	if (promtext_have_promtool())
		promtext_check(fx.d->dir, text);
	free(text);
	tdaemon_end(fx.d, fx.c);
}

/* Two GPUs named 0 and 1, a licence of three, a budget of 1 GiB. */
#define RESOURCES "slots = 4\nmemory = 1GiB\n[resource.gpu]\nunits = 0,1\n" \
	"env = CUDA_VISIBLE_DEVICES\n[resource.licence]\ncount = 3\n"
#define MIB ((json_int_t)1 << 20)

/* Asserts the four gauges of resource name in text. */
static void
assert_resource(const char *text, const char *name, double units,
    double used, double kept, double waiting)
{
	static const char *const families[] = { "units", "used", "kept",
	    "waiting_jobs" };
	const double want[] = { units, used, kept, waiting };
	char series[128];
	size_t i;

	for (i = 0; i < sizeof want / sizeof want[0]; i++) {
		snprintf(series, sizeof series,
		    "triage_resource_%s{resource=\"%s\"}", families[i], name);
		promtext_assert(text, series, want[i]);
	}
}

/*
 * Admission beyond slots (protocol v1.2): a job of 256 MiB holds a GPU and
 * two licences; one that asks for both GPUs waits and keeps the free one,
 * one that asks for two licences waits and keeps the free one.
 */
static void
resource_figures_follow_their_jobs(void **state)
{
	struct fixture fx;
	int64_t holder, two_gpus, two_licences;
	char *text;

	(void)state;
	fx_start(&fx, RESOURCES);
	holder = tsubmit_gated_with(fx.c, fx.d, "g", "{sI s{sisi}}", "memory",
	    256 * MIB, "resources", "gpu", 1, "licence", 2);
	(void)trunning_pid(fx.c, holder);
	two_gpus = tsubmit(fx.c, "{s[s] s{si}}", "argv", "true", "resources",
	    "gpu", 2);
	two_licences = tsubmit(fx.c, "{s[s] s{si}}", "argv", "true",
	    "resources", "licence", 2);
	twait_resource(fx.c, "gpu", "kept", 1);
	twait_resource(fx.c, "licence", "kept", 1);
	text = fx_scrape(&fx);
	promtext_assert(text, "triage_memory_budget_bytes", 1024.0 * MIB);
	promtext_assert(text, "triage_memory_used_bytes", 256.0 * MIB);
	assert_resource(text, "gpu", 2, 1, 1, 1);
	assert_resource(text, "licence", 3, 2, 1, 1);
	if (promtext_have_promtool())
		promtext_check(fx.d->dir, text);
	free(text);

	/* Once the holder ends, both waiters run and end: nothing is held,
	 * kept or waited for. */
	topen_gate(fx.d, "g");
	tassert_ends(fx.c, holder, "succeeded");
	tassert_ends(fx.c, two_gpus, "succeeded");
	tassert_ends(fx.c, two_licences, "succeeded");
	text = fx_scrape(&fx);
	promtext_assert(text, "triage_memory_used_bytes", 0);
	assert_resource(text, "gpu", 2, 0, 0, 0);
	assert_resource(text, "licence", 3, 0, 0, 0);
	free(text);
	tdaemon_end(fx.d, fx.c);
}

/* With tokens, /metrics still needs none; the API beside it does. */
static void
metrics_need_no_credential(void **state)
{
	struct fixture fx;
	struct thttp_resp r;
	char token[] = "/tmp/test-prometheus-token.XXXXXX", auth[128];
	char *text;
	int fd;

	(void)state;
	assert_true((fd = mkstemp(token)) >= 0);
	assert_int_equal(write(fd, "0123456789abcdef0123456789abcdef\n", 33),
	    33);
	close(fd);
	snprintf(auth, sizeof auth, "auth = token\ntoken_file = %s\n", token);
	fx_start_auth(&fx, "", auth);
	thttp(fx.addr, "GET", "/api/state", NULL, NULL, &r);
	assert_int_equal(r.status, 401);
	thttp_free(&r);
	text = fx_scrape(&fx);
	promtext_assert(text, "triage_jobs_queued{priority=\"normal\"}", 0);
	free(text);
	thttp(fx.addr, "POST", "/metrics", NULL, "x", &r);
	assert_int_equal(r.status, 405);
	thttp_free(&r);
	unlink(token);
	tdaemon_end(fx.d, fx.c);
}

/* The daemon's config from now on: its own [daemon] lines, then extra. */
static void
fx_rewrite(struct fixture *fx, const char *extra)
{
	tdaemon_rewrite(fx->d, "log_level = debug\n%s[http]\nlisten = %s\n"
	    "auth = none\n", extra, fx->addr);
}

/* A reload that puts a priority between two: the label sets are the new
 * config's, and the counts stay with their priorities. */
static void
counts_stay_with_their_priority_across_a_reload(void **state)
{
	struct fixture fx;
	char *text;

	(void)state;
	fx_start(&fx, "[priority.a]\nrank = 0\n[priority.b]\nrank = 10\n");
	json_decref(twait(fx.c, tsubmit(fx.c, "{s[s] ss}", "argv", "true",
	    "priority", "b")));
	fx_rewrite(&fx, "[priority.a]\nrank = 0\n[priority.new]\nrank = 5\n"
	    "[priority.b]\nrank = 10\n");
	json_decref(tcall(fx.c, "reload", "{}"));
	text = fx_scrape(&fx);
	promtext_assert(text, "triage_submissions_total{priority=\"b\"}", 1);
	promtext_assert(text,
	    "triage_jobs_finished_total{priority=\"b\",state=\"succeeded\"}",
	    1);
	promtext_assert(text, "triage_submissions_total{priority=\"new\"}", 0);
	promtext_assert(text, "triage_submissions_total{priority=\"a\"}", 0);
	free(text);
	tdaemon_end(fx.d, fx.c);
}

/* Starts Prometheus in d's dir, scraping addr every second; its pid. It
 * joins d's process group, which the harness kills should the test fail
 * before prometheus_stop. */
static pid_t
prometheus_start(const struct tdaemon *d, const char *addr, const char *web)
{
	const char *dir = d->dir;
	char path[512], flag[3][600];
	FILE *f;
	pid_t pid;
	int fd;

	snprintf(path, sizeof path, "%s/prometheus.yml", dir);
	assert_non_null(f = fopen(path, "we"));
	fprintf(f, "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
	    "scrape_configs:\n  - job_name: triage\n"
	    "    static_configs:\n      - targets: ['%s']\n", addr);
	assert_int_equal(fclose(f), 0);
	snprintf(flag[0], sizeof flag[0], "--config.file=%s", path);
	snprintf(flag[1], sizeof flag[1], "--storage.tsdb.path=%s/tsdb", dir);
	snprintf(flag[2], sizeof flag[2], "--web.listen-address=%s", web);
	snprintf(path, sizeof path, "%s/prometheus.log", dir);
	assert_true((pid = fork()) >= 0);
	if (pid == 0) {
		setpgid(0, d->pid);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execl(PROMETHEUS, "prometheus", flag[0], flag[1], flag[2],
		    (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* Whether something accepts connections on addr ("127.0.0.1:PORT") now:
 * thttp fails the test on a refused one. */
static bool
tcp_answers(const char *addr)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	int fd, ok;

	sin.sin_port = htons((uint16_t)atoi(strchr(addr, ':') + 1));
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_true((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) >= 0);
	ok = connect(fd, (struct sockaddr *)&sin, sizeof sin) == 0;
	close(fd);
	return ok;
}

static void
prometheus_stop(pid_t pid)
{
	int status;

	kill(pid, SIGTERM);
	waitpid(pid, &status, 0);
}

/* The value Prometheus's query API gives for query now: the first
 * result's, as text, into buf; "" while it has none (or is not up). */
static void
prometheus_query(const char *web, const char *query, char *buf, size_t len)
{
	struct thttp_resp r;
	char path[512];
	json_t *res, *v;

	buf[0] = '\0';
	if (!tcp_answers(web))
		return;
	snprintf(path, sizeof path, "/api/v1/query?query=%s", query);
	thttp(web, "GET", path, NULL, NULL, &r);
	if (r.status == 200 && (res = json_loadb(r.body, r.len, 0, NULL))
	    != NULL) {
		v = json_array_get(json_object_get(json_array_get(
		    json_object_get(json_object_get(res, "data"), "result"),
		    0), "value"), 1);
		if (json_is_string(v))
			snprintf(buf, len, "%s", json_string_value(v));
		json_decref(res);
	}
	thttp_free(&r);
}

/* A real Prometheus scrapes the daemon, and its query API says how many
 * jobs wait in the paused priority, what the peak memory histogram and
 * the OOM counter hold, and a resource's units by its label. */
static void
prometheus_scrapes_the_daemon(void **state)
{
	struct fixture fx;
	char web[64], got[64], log[600];
	int64_t deadline;
	pid_t prom;
	int i;

	(void)state;
	if (access(PROMETHEUS, X_OK) != 0) {
		print_message("skipped: no " PROMETHEUS " (Debian package "
		    "prometheus; make deps installs it)\n");
		skip();
	}
	fx_start(&fx, RESOURCES);
	/* One run's peak, ended before the first scrape. */
	json_decref(twait(fx.c, tsubmit(fx.c, "{s[s] ss}", "argv", "true",
	    "priority", "high")));
	json_decref(tcall(fx.c, "pause", "{ss}", "priority", "low"));
	for (i = 0; i < 3; i++)
		(void)tsubmit(fx.c, "{s[s] ss}", "argv", "true", "priority",
		    "low");
	snprintf(web, sizeof web, "127.0.0.1:%d", tfree_port());
	prom = prometheus_start(fx.d, fx.addr, web);
	/* Up, scraped, and the sample stored: polled, with a deadline. */
	deadline = tdeadline(2 * HARNESS_TIMEOUT_MS);
	for (;;) {
		prometheus_query(web,
		    "triage_jobs_queued%7Bpriority%3D%22low%22%7D", got,
		    sizeof got);
		if (strcmp(got, "3") == 0)
			break;
		if (tleft_ms(deadline) == 0) {
			snprintf(log, sizeof log, "cat %s/prometheus.log >&2",
			    fx.d->dir);
			if (system(log) != 0)
				print_message("no prometheus.log\n");
			prometheus_stop(prom);
			fail_msg("Prometheus never had triage_jobs_queued{"
			    "priority=\"low\"} 3 (last: \"%s\")", got);
		}
		usleep(100000);
	}
	/* The same scrape had the peak histogram: its count, and a quantile
	 * Prometheus makes of its buckets (within 1 MiB to 64 GiB). */
	prometheus_query(web, "triage_job_peak_memory_bytes_count%7Bpriority"
	    "%3D%22high%22%7D", got, sizeof got);
	assert_string_equal(got, "1");
	prometheus_query(web, "histogram_quantile(0.5%2C%20"
	    "triage_job_peak_memory_bytes_bucket%7Bpriority%3D%22high%22%7D)",
	    got, sizeof got);
	if (strtod(got, NULL) <= 0 || strtod(got, NULL) > 68719476736.0)
		fail_msg("the median peak is \"%s\"", got);
	prometheus_query(web, "triage_jobs_oom_killed_total%7Bpriority"
	    "%3D%22high%22%7D", got, sizeof got);
	assert_string_equal(got, "0");
	prometheus_query(web, "triage_resource_units%7Bresource%3D%22gpu%22"
	    "%7D", got, sizeof got);
	assert_string_equal(got, "2");
	prometheus_query(web, "triage_memory_budget_bytes", got, sizeof got);
	assert_string_equal(got, "1073741824");
	/* It follows the daemon: two more. */
	for (i = 0; i < 2; i++)
		(void)tsubmit(fx.c, "{s[s] ss}", "argv", "true", "priority",
		    "low");
	deadline = tdeadline(2 * HARNESS_TIMEOUT_MS);
	do {
		prometheus_query(web,
		    "triage_jobs_queued%7Bpriority%3D%22low%22%7D", got,
		    sizeof got);
		if (tleft_ms(deadline) == 0) {
			prometheus_stop(prom);
			fail_msg("Prometheus never had 5 (last: \"%s\")", got);
		}
		if (strcmp(got, "5") != 0)
			usleep(100000);
	} while (strcmp(got, "5") != 0);
	prometheus_stop(prom);
	tdaemon_end(fx.d, fx.c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(metrics_of_a_real_daemon),
		cmocka_unit_test(metrics_need_no_credential),
		cmocka_unit_test(resource_figures_follow_their_jobs),
		cmocka_unit_test(
		    counts_stay_with_their_priority_across_a_reload),
		cmocka_unit_test(prometheus_scrapes_the_daemon),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
