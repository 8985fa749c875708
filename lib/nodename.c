/* nodename.c - the names daemons of a cluster go by, checked the same way in
 * the config, in submit's params and in the client. */
#include <string.h>

#include "nodename.h"

#define NODENAME_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" \
	"0123456789_.-"

bool
nodename_valid(const char *s)
{
	size_t len = strlen(s);

	return len >= 1 && len <= NODENAME_MAX &&
	    strspn(s, NODENAME_CHARS) == len;
}

int
nodename_from_host(const char *host, char *out)
{
	size_t len = strcspn(host, ".");

	out[0] = '\0';
	/* The label alone is checked: its own '.'s are cut off already. */
	if (len < 1 || len > NODENAME_MAX || strspn(host, NODENAME_CHARS) < len)
		return -1;
	memcpy(out, host, len);
	out[len] = '\0';
	return 0;
}
