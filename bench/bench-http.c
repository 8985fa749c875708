/* bench-http.c - a bare HTTP/1.0 client on a Unix socket: the request in
 * one write, the reply read until the server closes, its status checked. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "bench-http.h"

/* The reply kept so far, dropped: a failed GET keeps none. */
static void
bench_http_drop(FILE *keep, char **body)
{
	if (keep != NULL)
		fclose(keep);
	if (body != NULL) {
		free(*body);
		*body = NULL;
	}
}

int
bench_http_get(const char *sock, const char *path, size_t *bytes,
    char **body, char **cause)
{
	FILE *keep = NULL;
	size_t kept = 0;
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char req[512], buf[65536], status[16] = "";
	size_t total = 0;
	ssize_t n;
	int fd, len;

	*bytes = 0;
	if (body != NULL) {
		*body = NULL;
		if ((keep = open_memstream(body, &kept)) == NULL) {
			*cause = strdup("out of memory");
			return -1;
		}
	}
	snprintf(sun.sun_path, sizeof sun.sun_path, "%s", sock);
	len = snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nHost: localhost\r\n"
	    "\r\n", path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    connect(fd, (struct sockaddr *)&sun, sizeof sun) != 0 ||
	    write(fd, req, (size_t)len) != len) {
		if (asprintf(cause, "GET %s on %s: %s", path, sock,
		    strerror(errno)) < 0)
			*cause = NULL;
		if (fd >= 0)
			close(fd);
		bench_http_drop(keep, body);
		return -1;
	}
	while ((n = read(fd, buf, sizeof buf)) > 0) {
		if (total == 0)
			snprintf(status, sizeof status, "%.*s",
			    n < 12 ? (int)n : 12, buf);
		total += (size_t)n;
		if (keep != NULL)
			fwrite(buf, 1, (size_t)n, keep);
	}
	close(fd);
	if (keep != NULL && fclose(keep) != 0)
		n = -1;
	keep = NULL;
	if (n < 0 || strncmp(status, "HTTP/1.", 7) != 0 ||
	    strncmp(status + 9, "200", 3) != 0) {
		if (asprintf(cause, "GET %s on %s: %s", path, sock, n < 0 ?
		    strerror(errno) : status[0] != '\0' ? status :
		    "no reply") < 0)
			*cause = NULL;
		bench_http_drop(keep, body);
		return -1;
	}
	*bytes = total;
	return 0;
}
