/* thttp.c - a blocking HTTP client for the tests, on libcurl, which speaks
 * to Unix sockets too; nothing of the daemon's own HTTP code is used. */
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "harness.h"
#include "thttp.h"

struct thttp_buf {
	char *data;
	size_t len;
};

static size_t
thttp_write_cb(char *p, size_t size, size_t n, void *arg)
{
	struct thttp_buf *b = arg;
	size_t len = size * n;

	b->data = realloc(b->data, b->len + len + 1);
	assert_non_null(b->data);
	memcpy(b->data + b->len, p, len);
	b->len += len;
	b->data[b->len] = '\0';
	return len;
}

void
thttp(const char *addr, const char *method, const char *path,
    const char *headers, const char *body, struct thttp_resp *out)
{
	struct thttp_buf bbuf = { NULL, 0 }, hbuf = { NULL, 0 };
	struct curl_slist *list = NULL;
	char url[512], *copy, *line, *save;
	CURLcode rc;
	CURL *c;

	memset(out, 0, sizeof *out);
	assert_non_null(c = curl_easy_init());
	if (addr[0] == '/') {
		curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, addr);
		snprintf(url, sizeof url, "http://localhost%s", path);
	} else
		snprintf(url, sizeof url, "http://%s%s", addr, path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	if (strcmp(method, "HEAD") == 0)
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	if (body != NULL) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	}
	if (headers != NULL) {
		assert_non_null(copy = strdup(headers));
		for (line = strtok_r(copy, "\n", &save); line != NULL;
		    line = strtok_r(NULL, "\n", &save))
			assert_non_null(list = curl_slist_append(list, line));
		free(copy);
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, list);
	}
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, thttp_write_cb);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &bbuf);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, thttp_write_cb);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, &hbuf);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)HARNESS_TIMEOUT_MS);
	rc = curl_easy_perform(c);
	if (rc != CURLE_OK)
		fail_msg("%s %s on %s: %s", method, path, addr,
		    curl_easy_strerror(rc));
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out->status);
	curl_slist_free_all(list);
	curl_easy_cleanup(c);
	out->body = bbuf.data != NULL ? bbuf.data : strdup("");
	out->len = bbuf.len;
	out->headers = hbuf.data != NULL ? hbuf.data : strdup("");
}

void
thttp_free(struct thttp_resp *r)
{
	free(r->body);
	free(r->headers);
	memset(r, 0, sizeof *r);
}

char *
thttp_header(const struct thttp_resp *r, const char *name)
{
	size_t nlen = strlen(name), vlen;
	const char *p = r->headers, *eol;

	for (; p != NULL && *p != '\0'; p = eol != NULL ? eol + 1 : NULL) {
		eol = strchr(p, '\n');
		if (strncasecmp(p, name, nlen) != 0 || p[nlen] != ':')
			continue;
		p += nlen + 1;
		while (*p == ' ')
			p++;
		vlen = eol != NULL ? (size_t)(eol - p) : strlen(p);
		while (vlen > 0 && (p[vlen - 1] == '\r' || p[vlen - 1] == ' '))
			vlen--;
		return strndup(p, vlen);
	}
	return NULL;
}

int
tfree_port(void)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof sin;
	int fd;

	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_true((fd = socket(AF_INET, SOCK_STREAM, 0)) >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof sin), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
	close(fd);
	return ntohs(sin.sin_port);
}
