// SPDX-License-Identifier: MIT
/*
 * http.c - API requests over libcurl.
 */
#include "http.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tunerd_version.h"

/* An answer larger than this is not a tunerd answer. */
#define CTL_MAX_ANSWER (16u << 20)

static size_t ctl_req_write(char *p, size_t size, size_t n, void *arg)
{
	struct ctl_req *r = arg;

	if (ctl_buf_append(&r->resp, p, size * n))
		return 0; /* makes curl fail the transfer */
	return size * n;
}

int ctl_http_prepare(CURL *easy, struct curl_slist **headers,
		     const struct ctl_box *box, long timeout_ms)
{
	struct curl_slist *h;

	if (box->token && *box->token) {
		size_t len = strlen(box->token) + 32;
		char *auth = malloc(len);

		if (!auth)
			return -ENOMEM;
		snprintf(auth, len, "Authorization: Bearer %s", box->token);
		h = curl_slist_append(*headers, auth);
		free(auth);
		if (!h)
			return -ENOMEM;
		*headers = h;
	}
	curl_easy_setopt(easy, CURLOPT_USERAGENT, "tunerctl/" TUNERD_VERSION);
	curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
	curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(easy, CURLOPT_TCP_KEEPALIVE, 1L);
	/* boxes are reached directly, never through a proxy from the env */
	curl_easy_setopt(easy, CURLOPT_PROXY, "");
	return 0;
}

static int ctl_req_set_body(struct ctl_req *r, json_t *body)
{
	if (body) {
		r->body = json_dumps(body, JSON_COMPACT);
		if (!r->body || ctl_req_header(r, "Content-Type: "
						  "application/json"))
			return -ENOMEM;
	}
	curl_easy_setopt(r->easy, CURLOPT_POSTFIELDS, r->body ? r->body : "");
	return 0;
}

int ctl_req_init(struct ctl_req *r, const struct ctl_box *box,
		 const char *method, const char *path, json_t *body,
		 long timeout_ms)
{
	size_t len = strlen(box->url) + strlen(path) + 1;
	char *url;
	int ret = -ENOMEM;

	memset(r, 0, sizeof(*r));
	r->box = box;
	r->result = CURLE_FAILED_INIT;
	r->resp.max = CTL_MAX_ANSWER;
	r->easy = curl_easy_init();
	url = malloc(len);
	if (!r->easy || !url)
		goto out;
	snprintf(url, len, "%s%s", box->url, path);
	curl_easy_setopt(r->easy, CURLOPT_URL, url);
	curl_easy_setopt(r->easy, CURLOPT_PRIVATE, r);
	curl_easy_setopt(r->easy, CURLOPT_ERRORBUFFER, r->errbuf);
	curl_easy_setopt(r->easy, CURLOPT_WRITEFUNCTION, ctl_req_write);
	curl_easy_setopt(r->easy, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(r->easy, CURLOPT_TIMEOUT_MS, timeout_ms);
	if (ctl_http_prepare(r->easy, &r->headers, box, timeout_ms) ||
	    ctl_req_header(r, "Accept: application/json"))
		goto out;
	if (!strcmp(method, "POST")) {
		if (ctl_req_set_body(r, body))
			goto out;
	} else if (strcmp(method, "GET")) {
		curl_easy_setopt(r->easy, CURLOPT_CUSTOMREQUEST, method);
	}
	ret = 0;
out:
	free(url);
	return ret;
}

int ctl_req_header(struct ctl_req *r, const char *header)
{
	struct curl_slist *h = curl_slist_append(r->headers, header);

	if (!h)
		return -ENOMEM;
	r->headers = h;
	return 0;
}

static void ctl_req_finish(struct ctl_req *r, CURLcode result)
{
	r->result = result;
	curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &r->status);
}

void ctl_req_perform(struct ctl_req *r)
{
	curl_easy_setopt(r->easy, CURLOPT_HTTPHEADER, r->headers);
	ctl_req_finish(r, curl_easy_perform(r->easy));
}

void ctl_req_perform_all(struct ctl_req **reqs, size_t n)
{
	CURLM *multi = curl_multi_init();
	int running = 1, left;
	CURLMsg *msg;
	size_t i;

	if (!multi)
		return; /* every request keeps CURLE_FAILED_INIT */
	for (i = 0; i < n; i++) {
		curl_easy_setopt(reqs[i]->easy, CURLOPT_HTTPHEADER,
				 reqs[i]->headers);
		curl_multi_add_handle(multi, reqs[i]->easy);
	}
	while (running) {
		if (curl_multi_perform(multi, &running) != CURLM_OK)
			break;
		while ((msg = curl_multi_info_read(multi, &left))) {
			struct ctl_req *r = NULL;

			if (msg->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE,
					  (char **)&r);
			ctl_req_finish(r, msg->data.result);
		}
		if (running && curl_multi_poll(multi, NULL, 0, 1000, NULL))
			break;
	}
	for (i = 0; i < n; i++)
		curl_multi_remove_handle(multi, reqs[i]->easy);
	curl_multi_cleanup(multi);
}

int ctl_exit_for_status(long status)
{
	if (status == 404)
		return CTL_EXIT_NOTFOUND;
	if (status == 409)
		return CTL_EXIT_CONFLICT;
	return CTL_EXIT_API;
}

int ctl_report_http_error(const struct ctl_box *box, long status,
			  const char *body, size_t len)
{
	json_t *root = body ? json_loadb(body, len, 0, NULL) : NULL;
	json_t *err = json_object_get(root, "error");
	const char *code = json_string_value(json_object_get(err, "code"));
	const char *msg = json_string_value(json_object_get(err, "message"));

	if (code && msg) {
		ctl_err("%s: %s: %s", box->name, code, msg);
	} else {
		/* not tunerd's error shape: show the status, a line at most */
		int n = body ? (int)strcspn(body, "\r\n") : 0;

		ctl_err("%s: http_%ld: %.*s", box->name, status,
			n > 200 ? 200 : n, n ? body : "no error description");
	}
	json_decref(root);
	return ctl_exit_for_status(status);
}

int ctl_req_check(const struct ctl_req *r)
{
	if (r->result != CURLE_OK) {
		ctl_err("%s: %s", r->box->name,
			r->errbuf[0] ? r->errbuf
				     : curl_easy_strerror(r->result));
		return CTL_EXIT_CONN;
	}
	if (r->status >= 200 && r->status < 300)
		return CTL_EXIT_OK;
	return ctl_report_http_error(r->box, r->status, r->resp.data,
				     r->resp.len);
}

json_t *ctl_req_json(const struct ctl_req *r)
{
	json_error_t jerr;
	json_t *v;

	v = json_loadb(r->resp.data ? r->resp.data : "", r->resp.len, 0, &jerr);
	if (!v)
		ctl_err("%s: answer is not JSON: %s", r->box->name, jerr.text);
	return v;
}

void ctl_req_free(struct ctl_req *r)
{
	if (r->easy)
		curl_easy_cleanup(r->easy);
	curl_slist_free_all(r->headers);
	free(r->body);
	ctl_buf_free(&r->resp);
	memset(r, 0, sizeof(*r));
}

void ctl_print_json(json_t *v)
{
	json_dumpf(v, stdout,
		   JSON_INDENT(2) | JSON_ENCODE_ANY | CTL_JSON_REALS);
	fputc('\n', stdout);
	fflush(stdout);
}
