/* example.c - a program on libtriage: runs `echo hello` through triaged,
 * then prints how it ended and what it wrote. libtriage(3) shows it too. */
#include <stdio.h>
#include <stdlib.h>

#include <triage/client.h>

int
main(int argc, char **argv)
{
	struct triage_client *c;
	struct triage_error err;
	json_t *job, *page;
	json_int_t id;
	char *path, *cause;
	int status = 1;

	/* argv[1] if given, else $TRIAGE_SOCKET, else the usual places. */
	if ((path = triage_client_socket_path(argc > 1 ? argv[1] : NULL))
	    == NULL) {
		perror("example");
		return 1;
	}
	if ((c = triage_client_connect(path, &cause)) == NULL) {
		fprintf(stderr, "example: %s\n",
		    cause != NULL ? cause : "out of memory");
		free(cause);
		free(path);
		return 1;
	}
	free(path);
	printf("libtriage %s\n", triage_client_version());

	/* The params are stolen; the result is ours to json_decref(). */
	job = triage_client_call(c, "submit",
	    json_pack("{s[ss]}", "argv", "echo", "hello"), -1, &err);
	if (job == NULL)
		goto fail;
	id = json_integer_value(json_object_get(job, "id"));
	json_decref(job);

	if ((job = triage_client_call(c, "wait", json_pack("{sI}", "id", id),
	    -1, &err)) == NULL)
		goto fail;
	printf("job %lld %s, exit code %lld\n", (long long)id,
	    json_string_value(json_object_get(job, "state")),
	    (long long)json_integer_value(json_object_get(job, "exit_code")));
	json_decref(job);

	if ((page = triage_client_call(c, "output", json_pack("{sIss}", "id",
	    id, "stream", "stdout"), -1, &err)) == NULL)
		goto fail;
	printf("stdout: %s", json_string_value(json_object_get(page, "data")));
	json_decref(page);
	status = 0;
	goto out;

fail:
	fprintf(stderr, "example: %s\n", err.message);
out:
	triage_client_free(c);
	return status;
}
