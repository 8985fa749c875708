/* http-static.c - the dashboard's own files from dashboard_dir, by a fixed
 * list of names (never a path from the request), sent with sendfile. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/http.h>

#include "http-private.h"
#include "log.h"

static const char *
http_static_type(const char *name)
{
	const char *dot = strrchr(name, '.');

	if (dot != NULL && strcmp(dot, ".html") == 0)
		return "text/html; charset=utf-8";
	if (dot != NULL && strcmp(dot, ".css") == 0)
		return "text/css; charset=utf-8";
	if (dot != NULL && strcmp(dot, ".js") == 0)
		return "text/javascript; charset=utf-8";
	return "application/octet-stream";
}

void
http_static_serve(struct http *h, struct evhttp_request *req,
    const char *name, int status)
{
	struct evkeyvalq *out = evhttp_request_get_output_headers(req);
	struct evbuffer *buf;
	struct stat st;
	char path[4200];
	int fd;

	snprintf(path, sizeof path, "%s/%s", h->dashboard_dir, name);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0 ||
	    fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		log_warnx("http: %s: %s (dashboard_dir)", path, fd < 0 ?
		    strerror(errno) : "not a regular file");
		if (fd >= 0)
			close(fd);
		http_error(req, 500, 0, "the dashboard's file %s is missing "
		    "from the server (dashboard_dir)", name);
		return;
	}
	/* The buffer owns fd once the file is added, and only then. */
	if ((buf = evbuffer_new()) == NULL ||
	    evbuffer_add_file(buf, fd, 0, st.st_size) != 0) {
		if (buf != NULL)
			evbuffer_free(buf);
		close(fd);
		http_error(req, 500, 0, "out of memory");
		return;
	}
	http_common_headers(req);
	evhttp_add_header(out, "Content-Type", http_static_type(name));
	evhttp_add_header(out, "Content-Security-Policy", "default-src 'self'; "
	    "img-src 'self' data:; frame-ancestors 'none'; form-action 'self'");
	evhttp_send_reply(req, status, NULL, buf);
	evbuffer_free(buf);
}
