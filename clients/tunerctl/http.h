/* SPDX-License-Identifier: MIT */
/*
 * http.h - one API request to one box over libcurl, alone or many at once,
 * and the mapping of its outcome to tunerctl's exit codes.
 */
#ifndef TUNERCTL_HTTP_H
#define TUNERCTL_HTTP_H

#include "tunerctl.h"
#include "util.h"

#include <curl/curl.h>
#include <jansson.h>

struct ctl_req {
	const struct ctl_box *box;
	CURL *easy;
	struct curl_slist *headers;
	char *body; /* request body, owned */
	struct ctl_buf resp;
	long status;
	CURLcode result;
	char errbuf[CURL_ERROR_SIZE];
};

/* Adds the bearer token, the user agent and the timeouts. */
int ctl_http_prepare(CURL *easy, struct curl_slist **headers,
		     const struct ctl_box *box, long timeout_ms);

/*
 * method "GET", "POST" or "DELETE"; path from "/api/v1/..."; body may be
 * NULL (POST then sends an empty body).  Returns 0 or -ENOMEM.
 */
int ctl_req_init(struct ctl_req *r, const struct ctl_box *box,
		 const char *method, const char *path, json_t *body,
		 long timeout_ms);
int ctl_req_header(struct ctl_req *r, const char *header);
void ctl_req_perform(struct ctl_req *r);
/* Runs all requests concurrently (curl multi) until each has finished. */
void ctl_req_perform_all(struct ctl_req **reqs, size_t n);
/*
 * 0 if the box answered 2xx, else prints the one error line and returns the
 * exit code: 3 for a transport failure, 4 for 409, 5 for 404, 1 otherwise.
 */
int ctl_req_check(const struct ctl_req *r);
/* The answer's JSON (new reference) or NULL with an error printed. */
json_t *ctl_req_json(const struct ctl_req *r);
void ctl_req_free(struct ctl_req *r);

/* Prints an error body ({"error":{...}} or anything else) of an HTTP
 * status; returns the exit code for that status. */
int ctl_report_http_error(const struct ctl_box *box, long status,
			  const char *body, size_t len);
int ctl_exit_for_status(long status);

/*
 * Reals are printed with 15 significant digits: enough for any decimal the
 * box sent to read back the same, without the binary noise of 17
 * (-49.8, not -49.799999999999997).
 */
#define CTL_JSON_REALS JSON_REAL_PRECISION(15)

/*
 * One request to one tuner (what: "/tune", "" ...); on success *answer
 * holds the JSON answer (NULL for 204).  lease, when set, also goes out as
 * X-Tunerd-Lease.  Returns an exit code, the error printed.
 */
int ctl_tuner_request(const struct ctl_target *t, const char *method,
		      const char *what, json_t *body, const char *lease,
		      long timeout_ms, json_t **answer);

/* Prints v (the answer) as indented JSON on stdout. */
void ctl_print_json(json_t *v);

#endif
