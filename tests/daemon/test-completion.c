/* test-completion.c - triage's bash and zsh completions, loaded into the
 * real shells, offering commands, options and what a real triaged knows. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli.h"
#include "harness.h"

/* make test runs the tests from the top of the repository. */
#define BASH_COMPLETION "/usr/share/bash-completion/bash_completion"
#define BASH_SCRIPT "client/triage.bash-completion"
#define ZSH_DIR "client"
#define ZSH_DRIVER "tests/daemon/complete.zsh"

/* bash: the line's words in "$@", the last one being completed. */
#define BASH_RUN							\
	"source " BASH_COMPLETION " && source " BASH_SCRIPT " && "	\
	"COMP_WORDS=(\"$@\"); COMP_CWORD=$(($# - 1)); "			\
	"COMP_LINE=\"$*\"; COMP_POINT=${#COMP_LINE}; _triage; "		\
	"printf '%s\\n' \"${COMPREPLY[@]}\""

static char held_id[32], done_id[32];

static int
setup(void **state)
{
	struct triage_client *c;
	json_t *job;
	int64_t id;

	if (access(BASH_COMPLETION, R_OK) != 0)
		fail_msg("no %s: make deps installs bash-completion",
		    BASH_COMPLETION);
	tcli_setup(state);
	c = tconnect(tcli_daemon);
	id = tsubmit(c, "{s[s]sb}", "argv", "true", "hold", 1);
	snprintf(held_id, sizeof held_id, "%lld", (long long)id);
	id = tsubmit(c, "{s[s]}", "argv", "true");
	job = twait(c, id);
	json_decref(job);
	snprintf(done_id, sizeof done_id, "%lld", (long long)id);
	triage_client_free(c);
	return 0;
}

/* Runs argv with the daemon's socket and the built triage first in PATH,
 * its stdout into path; fails unless it exits 0. */
static void
run_shell(const char *const argv[], const char *path)
{
	char bindir[400], newpath[4096];
	int status, fd;
	pid_t pid;

	snprintf(bindir, sizeof bindir, "%s", tbin("triage"));
	*strrchr(bindir, '/') = '\0';
	snprintf(newpath, sizeof newpath, "%s:%s", bindir, getenv("PATH"));
	if ((pid = fork()) == 0) {
		setenv("TRIAGE_SOCKET", tcli_daemon->sock, 1);
		setenv("PATH", newpath, 1);
		if ((fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0600)) < 0 ||
		    dup2(fd, 1) < 0)
			_exit(99);
		/* execvp's argv is not const; the strings are not written. */
		execvp(argv[0], (char *const *)(uintptr_t)argv);
		_exit(98);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("%s exited with status %d", argv[0], status);
}

/* The candidates for the last word of line, by bash or by zsh, one a
 * line, sorted and without repeats; allocated. */
static char *
complete(const char *shell, const char *line)
{
	char path[400], sorted[400], cmd[1300], *copy, *w, *save;
	const char *words[32], *argv[40];
	int n = 0, k;

	snprintf(path, sizeof path, "%s/candidates", tcli_daemon->dir);
	snprintf(sorted, sizeof sorted, "%s/candidates.sorted", tcli_daemon->dir);
	unlink(path);
	if (strcmp(shell, "bash") == 0) {
		copy = strdup(line);
		for (w = strtok_r(copy, " ", &save); w != NULL && n < 30;
		    w = strtok_r(NULL, " ", &save))
			words[n++] = w;
		/* A line ending in a space completes a new, empty word. */
		if (line[strlen(line) - 1] == ' ')
			words[n++] = "";
		argv[0] = "bash";
		argv[1] = "-c";
		argv[2] = BASH_RUN;
		argv[3] = "bash";
		for (k = 0; k < n; k++)
			argv[4 + k] = words[k];
		argv[4 + n] = NULL;
		run_shell(argv, path);
		free(copy);
	} else {
		argv[0] = "zsh";
		argv[1] = "-f";
		argv[2] = ZSH_DRIVER;
		argv[3] = ZSH_DIR;
		argv[4] = path;
		argv[5] = line;
		argv[6] = NULL;
		run_shell(argv, path);
	}
	snprintf(cmd, sizeof cmd, "touch %s; sort -u %s | sed '/^$/d' > %s",
	    path, path, sorted);
	assert_int_equal(system(cmd), 0);
	return tslurp(sorted);
}

/* Asserts that shell offers exactly want ("a\nb\n", sorted) for line. */
static void
assert_offers(const char *shell, const char *line, const char *want)
{
	char *got = complete(shell, line);

	if (strcmp(got, want) != 0)
		fail_msg("%s completes \"%s\" with \"%s\", not \"%s\"", shell,
		    line, got, want);
	free(got);
}

/* Asserts that shell offers word among others for line. */
static void
assert_offers_one(const char *shell, const char *line, const char *word,
    bool offered)
{
	char *got = complete(shell, line), want[64];

	snprintf(want, sizeof want, "\n%s\n", word);
	memmove(got + 1, got, strlen(got) + 1);
	got[0] = '\n';
	if ((strstr(got, want) != NULL) != offered)
		fail_msg("%s completes \"%s\" with \"%s\", %s \"%s\"", shell,
		    line, got + 1, offered ? "without" : "with", word);
	free(got);
}

static void
test_both_shells(const char *shell)
{
	assert_offers(shell, "triage ca", "cancel\n");
	assert_offers(shell, "triage fr", "freeze\n");
	assert_offers(shell, "triage th", "thaw\n");
	assert_offers_one(shell, "triage freeze --l", "--label", true);
	assert_offers(shell, "triage re", "release\nreload\nremove\n"
	    "resources\nresume\nretry\n");
	assert_offers(shell, "triage resources --j", "--json\n");
	assert_offers(shell, "triage help reso", "resources\n");
	assert_offers(shell, "triage cancel -p ", "high\nlow\nnormal\n");
	assert_offers(shell, "triage submit --priority ", "high\nlow\nnormal\n");
	assert_offers(shell, "triage pause ", "high\nlow\nnormal\n");
	assert_offers(shell, "triage submit --ni", "--nice\n");
	assert_offers(shell, "triage submit --no", "--node\n");
	assert_offers(shell, "triage submit --mem", "--mem\n--memory\n");
	assert_offers(shell, "triage update --mem", "--mem\n--memory\n");
	assert_offers(shell, "triage submit --gp", "--gpus\n");
	assert_offers(shell, "triage update --gp", "--gpus\n");
	assert_offers(shell, "triage submit --res", "--res\n");
	assert_offers(shell, "triage update --res", "--res\n");
	assert_offers(shell, "triage output --ta", "--tail\n");
	assert_offers_one(shell, "triage cancel --s", "--signal", true);
	assert_offers_one(shell, "triage cancel --s", "--state", true);
	assert_offers_one(shell, "triage status ", held_id, true);
	assert_offers_one(shell, "triage status ", done_id, true);
	/* Each command's own ids: queued ones to hold, ended ones to
	 * remove. */
	assert_offers_one(shell, "triage update ", held_id, true);
	assert_offers_one(shell, "triage update ", done_id, false);
	assert_offers_one(shell, "triage remove ", done_id, true);
	assert_offers_one(shell, "triage remove ", held_id, false);
	/* Running ones to freeze or thaw: neither of these. */
	assert_offers_one(shell, "triage freeze ", held_id, false);
	assert_offers_one(shell, "triage thaw ", done_id, false);
}

static void
test_bash(void **state)
{
	(void)state;
	test_both_shells("bash");
	assert_offers("bash", "triage clean --state ", "canceled\nfailed\n"
	    "lost\nsucceeded\ntimed_out\n");
	assert_offers("bash", "triage list --state running,s",
	    "running,succeeded\n");
	assert_offers("bash", "triage cancel --signal U", "USR1\nUSR2\n");
	/* No daemon there: nothing to offer, and nothing said. */
	assert_offers("bash", "triage --socket /nonexistent/sock cancel -p ",
	    "");
}

static void
test_zsh(void **state)
{
	(void)state;
	test_both_shells("zsh");
	assert_offers("zsh", "triage cancel --signal U", "USR1\nUSR2\n");
	/* No daemon there: no priority to offer. */
	assert_offers_one("zsh", "triage --socket /nonexistent/sock pause ",
	    "high", false);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bash),
		cmocka_unit_test(test_zsh),
	};

	return cmocka_run_group_tests_name("completion", tests, setup,
	    tdaemon_group_teardown);
}
