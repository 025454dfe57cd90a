// SPDX-License-Identifier: MIT
/*
 * The dashboard's static files from --web-root, GET and HEAD only.  The
 * URL (already percent-decoded by libmicrohttpd) may not contain "..";
 * the resolved path must still lie under the root, so a symlink cannot
 * lead out of it either.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "net_api.h"
#include "rest.h"

static const char *content_type(const char *path)
{
	static const struct {
		const char *ext;
		const char *type;
	} types[] = {
	    {".html", "text/html; charset=utf-8"},
	    {".js", "text/javascript; charset=utf-8"},
	    {".css", "text/css; charset=utf-8"},
	    {".svg", "image/svg+xml"},
	    {".png", "image/png"},
	    {".json", "application/json"},
	    {".yaml", "application/yaml"},
	    {".ico", "image/x-icon"},
	    {".txt", "text/plain; charset=utf-8"},
	};
	const char *dot = strrchr(path, '.');

	for (size_t i = 0; dot && i < sizeof(types) / sizeof(types[0]); i++)
		if (!strcmp(dot, types[i].ext))
			return types[i].type;
	return "application/octet-stream";
}

const char *rest_path_text(const char *url, char *buf, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = 0;

	/* A JSON string must be UTF-8, and "%ff" decodes to a lone 0xff:
	 * such a path would make the error answer itself fail. */
	for (const unsigned char *p = (const unsigned char *)url;
	     *p && n + 4 <= len; p++) {
		if (*p > ' ' && *p < 0x7f) {
			buf[n++] = (char)*p;
			continue;
		}
		buf[n++] = '%';
		buf[n++] = hex[*p >> 4];
		buf[n++] = hex[*p & 15];
	}
	if (len)
		buf[n < len ? n : len - 1] = '\0';
	return buf;
}

static enum MHD_Result not_found(struct rest_req *r, const char *url)
{
	char text[192];

	rest_path_text(url, text, sizeof(text));
	return rest_error(r, 404, "not_found", json_pack("{s:s}", "path", text),
			  "no such file: %s", text);
}

/* The real path of url under root, or -1. */
static int resolve(const char *root, const char *url, char *out)
{
	char path[PATH_MAX + 16];
	size_t rlen = strlen(root);
	struct stat st;
	int n;

	n = snprintf(path, sizeof(path), "%s%s%s", root, url,
		     url[strlen(url) - 1] == '/' ? "index.html" : "");
	if (n < 0 || (size_t)n >= sizeof(path) || !realpath(path, out))
		return -1;
	if (strncmp(out, root, rlen) || (out[rlen] && out[rlen] != '/'))
		return -1;
	if (stat(out, &st) < 0)
		return -1;
	if (S_ISDIR(st.st_mode)) {
		n = snprintf(path, sizeof(path), "%s/index.html", out);
		if (n < 0 || (size_t)n >= sizeof(path) || !realpath(path, out))
			return -1;
		if (strncmp(out, root, rlen) || out[rlen] != '/')
			return -1;
	}
	return 0;
}

enum MHD_Result rest_static(struct rest_req *r, const char *url)
{
	const char *root = r->net->web_root;
	char path[PATH_MAX];
	struct MHD_Response *resp;
	enum MHD_Result ret;
	struct stat st;
	int fd;

	if (!root || url[0] != '/' || strstr(url, "..") ||
	    resolve(root, url, path))
		return not_found(r, url);
	/* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a
	 * writer and hold the daemon's only loop; a device or socket is as
	 * unwelcome.  Only a regular file is served, checked on the open
	 * descriptor so nothing can be swapped in between. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
	if (fd < 0)
		return not_found(r, url);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return not_found(r, url);
	}
	resp = MHD_create_response_from_fd((uint64_t)st.st_size, fd);
	if (!resp) {
		close(fd);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
				content_type(path));
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL,
				"no-cache");
	ret = MHD_queue_response(r->conn, 200, resp);
	MHD_destroy_response(resp);
	return ret;
}
