// SPDX-License-Identifier: MIT
/*
 * test_box_app - the box's app socket (JSON lines): requests served
 * through a hand-played daemon, every kind of bad request answered with
 * an error, and the limits.
 */
#include <jansson.h>
#include <sys/wait.h>

#include "box_test.h"

/* The box serves this many app connections at once. */
#define APP_CONN_TEST 32

static int app_connect(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	memcpy(sa.sun_path, t_box.app, sizeof(sa.sun_path) - 1);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("connect app");
		exit(2);
	}
	sim_box_run(t_box.box, 0);
	return fd;
}

static void app_send(int fd, const char *text)
{
	CHECK(send(fd, text, strlen(text), MSG_NOSIGNAL) ==
	      (ssize_t)strlen(text));
}

/* One reply line, parsed; NULL at EOF or after timeout_ms. */
static json_t *app_read(int fd, int timeout_ms)
{
	uint64_t end = bt_now_ms() + (uint64_t)timeout_ms;
	char line[65536];
	size_t len = 0;

	while (bt_now_ms() < end && len + 1 < sizeof(line)) {
		ssize_t n = recv(fd, line + len, 1, MSG_DONTWAIT);

		if (n == 0)
			return NULL;
		if (n < 0) {
			sim_box_run(t_box.box, 2);
			continue;
		}
		if (line[len] == '\n')
			return json_loadb(line, len, 0, NULL);
		len++;
	}
	return NULL;
}

static json_t *app_call(const char *text)
{
	int fd = app_connect();
	json_t *r;

	app_send(fd, text);
	app_send(fd, "\n");
	r = app_read(fd, BT_WAIT_MS);
	close(fd);
	return r;
}

static int is_ok(json_t *r)
{
	return json_is_true(json_object_get(r, "ok"));
}

static const char *errname(json_t *r)
{
	const char *s = json_string_value(json_object_get(r, "errname"));

	return s ? s : "";
}

static void check_error(const char *req, const char *want)
{
	json_t *r = app_call(req);

	CHECK(r && !is_ok(r));
	if (strcmp(errname(r), want))
		fprintf(stderr, "%s -> %s, want %s\n", req, errname(r), want);
	CHECK(strcmp(errname(r), want) == 0);
	CHECK(json_is_integer(json_object_get(r, "error")));
	CHECK(json_is_string(json_object_get(r, "message")));
	json_decref(r);
}

static void test_app_errors(void)
{
	static const char *const einval[] = {
	    "{bad json",
	    "[1,2]",
	    "{\"op\":\"nope\"}",
	    "{\"noop\":1}",
	    "{\"op\":7}",
	    "{\"op\":\"set_params\",\"delivery_system\":\"DVBT\","
	    "\"frequency\":474000000}",
	    "{\"op\":\"set_params\",\"client\":1,\"delivery_system\":\"DVBX\","
	    "\"frequency\":474000000}",
	    "{\"op\":\"set_params\",\"client\":1,\"delivery_system\":\"DVBT\","
	    "\"frequency\":\"474\"}",
	    "{\"op\":\"set_params\",\"client\":1,\"delivery_system\":\"DVBT\","
	    "\"frequency\":8589934592}",
	    "{\"op\":\"set_params\",\"client\":1,\"delivery_system\":\"DVBT\","
	    "\"frequency\":474000000,\"bandwidth\":-1}",
	    "{\"op\":\"get_status\",\"client\":-1}",
	    /* The gate request was retired with stub ABI 1.2. */
	    "{\"op\":\"gate\",\"client\":1,\"open\":true}",
	    "{\"op\":\"fault\",\"client\":1,\"nak_rate\":2}",
	    "{\"op\":\"fault\",\"client\":1,\"hang\":\"x\"}",
	    "{\"op\":\"list\",\"op\":\"stats\"}",
	};
	json_t *r;

	bt_setup(&t_box, "mt2060,qt1010");
	CHECK(bt_start(&t_box) == 0);
	for (size_t i = 0; i < sizeof(einval) / sizeof(einval[0]); i++)
		check_error(einval[i], "EINVAL");
	check_error("{\"op\":\"fault\",\"client\":99,\"hang\":true}", "ENOENT");
	check_error("{\"op\":\"init\",\"client\":99}", "ENOENT");
	r = app_call("{\"op\":\"set_params\",\"client\":1,"
		     "\"delivery_system\":\"DVBT\",\"frequency\":474000000}");
	CHECK(r && !is_ok(r) && strcmp(errname(r), "ENOTCONN") == 0);
	CHECK(json_is_integer(json_object_get(r, "elapsed_us")));
	json_decref(r);
	/* Still serving, and nothing was bound or tuned by any of it. */
	r = app_call("{\"op\":\"list\"}");
	CHECK(is_ok(r));
	CHECK(json_is_false(json_object_get(r, "daemon")));
	CHECK_EQ_INT(json_array_size(json_object_get(r, "tuners")), 2);
	CHECK(json_is_null(json_object_get(
	    json_array_get(json_object_get(r, "tuners"), 0), "params")));
	json_decref(r);
	bt_stop(&t_box);
}

/* Start a request line, serve it as the daemon with `reply`, read the
 * reply line.  The request the box sent is left in *req. */
static json_t *served(int fd, const char *line, uint16_t opcode, int err,
		      const void *body, size_t len, union tstub_buf *req)
{
	int afd = app_connect();
	json_t *r;

	app_send(afd, line);
	app_send(afd, "\n");
	CHECK(bt_expect(&t_box, fd, opcode, 0, req) == 0);
	bt_reply(fd, &req->hdr, err, body, len);
	r = app_read(afd, BT_WAIT_MS);
	close(afd);
	return r;
}

static void check_list_after_tune(void)
{
	json_t *r = app_call("{\"op\":\"list\"}");
	json_t *t = json_array_get(json_object_get(r, "tuners"), 0);
	json_t *p = json_object_get(t, "params");

	CHECK(is_ok(r));
	CHECK(json_is_true(json_object_get(r, "daemon")));
	CHECK_EQ_INT(json_integer_value(json_object_get(t, "client")), 1);
	CHECK_EQ_INT(json_integer_value(json_object_get(t, "addr")), 0x60);
	CHECK(json_is_true(json_object_get(t, "bound")));
	CHECK(json_is_true(json_object_get(t, "attached")));
	CHECK(strcmp(json_string_value(json_object_get(t, "bridge")),
		     "sim-bridge0") == 0);
	CHECK_EQ_INT(json_integer_value(json_object_get(p, "frequency")),
		     474000000);
	CHECK(strcmp(json_string_value(json_object_get(p, "delivery_system")),
		     "DVBT") == 0);
	CHECK(json_is_object(json_object_get(t, "tuned")));
	json_decref(r);
}

static void check_status_json(int fd)
{
	struct tstub_status st = {.valid = TSTUB_ST_FE_STATUS |
					   TSTUB_ST_STRENGTH_DBM |
					   TSTUB_ST_CNR_DB | TSTUB_ST_PLL_LOCK,
				  .fe_status = 0x1f,
				  .strength_mdbm = -50500,
				  .cnr_mdb = 30000,
				  .pll_locked = 1,
				  .frequency = 474000000};
	union tstub_buf req;
	json_t *r, *s;

	r = served(fd, "{\"op\":\"get_status\",\"client\":1}", TSTUB_GET_STATUS,
		   0, &st, sizeof(st), &req);
	s = json_object_get(r, "status");
	CHECK(json_is_true(json_object_get(s, "lock")));
	CHECK(json_is_true(json_object_get(s, "signal")));
	CHECK(json_is_true(json_object_get(s, "pll_locked")));
	CHECK(json_real_value(json_object_get(s, "strength_dbm")) == -50.5);
	CHECK(json_real_value(json_object_get(s, "cnr_db")) == 30.0);
	CHECK(json_object_get(s, "afc_hz") == NULL); /* not reported */
	CHECK_EQ_INT(json_integer_value(json_object_get(s, "frequency")),
		     474000000);
	json_decref(r);
}

static void check_other_requests(int fd)
{
	struct tstub_freq fr = {474000000, 8000000, 36150000, 0};
	union tstub_buf req;
	json_t *r;

	r = served(fd, "{\"op\":\"get_frequency\",\"client\":1}",
		   TSTUB_GET_FREQUENCY, 0, &fr, sizeof(fr), &req);
	CHECK_EQ_INT(json_integer_value(json_object_get(r, "if_frequency")),
		     36150000);
	json_decref(r);
	r = served(fd, "{\"op\":\"init\",\"client\":1}", TSTUB_TUNER_INIT, -EIO,
		   NULL, 0, &req);
	CHECK(!is_ok(r) && strcmp(errname(r), "EIO") == 0);
	CHECK(json_is_integer(json_object_get(r, "elapsed_us")));
	json_decref(r);

	/* Nobody answers: ETIMEDOUT at the deadline. */
	r = app_call("{\"op\":\"sleep\",\"client\":1}");
	CHECK(!is_ok(r) && strcmp(errname(r), "ETIMEDOUT") == 0);
	CHECK(json_integer_value(json_object_get(r, "elapsed_us")) >= 450000);
	json_decref(r);
	CHECK(bt_expect(&t_box, fd, TSTUB_TUNER_SLEEP, 0, &req) == 0);
	CHECK(bt_expect(&t_box, fd, TSTUB_INTERRUPT, 0, &req) == 0);
}

static void test_app_requests(void)
{
	union tstub_buf req;
	json_t *r;
	int ctl, fd;

	bt_setup(&t_box, "mt2060,qt1010");
	t_box.cfg.deadline_ms = 500;
	CHECK(bt_start(&t_box) == 0);
	ctl = bt_daemon(&t_box);
	fd = bt_bind(&t_box, 1, NULL);
	r = served(fd,
		   "{\"op\":\"set_params\",\"client\":1,\"delivery_system\":"
		   "\"DVBT\",\"frequency\":474000000,\"bandwidth\":8000000}",
		   TSTUB_SET_PARAMS, 0, NULL, 0, &req);
	CHECK(is_ok(r));
	CHECK(json_integer_value(json_object_get(r, "elapsed_us")) >= 0);
	CHECK_EQ_INT(((struct tstub_params *)tstub_body(&req.hdr))->bandwidth,
		     8000000);
	json_decref(r);
	check_list_after_tune();
	check_status_json(fd);
	check_other_requests(fd);
	close(fd);
	close(ctl);
	bt_stop(&t_box);
}

static void test_app_connections(void)
{
	char big[5000];
	int fds[APP_CONN_TEST], extra, fd;
	json_t *r, *r2;

	bt_setup(&t_box, "mt2060");
	CHECK(bt_start(&t_box) == 0);
	/* Two requests in one write: two replies, in order; then a
	 * half-closed client still gets its answer. */
	fd = app_connect();
	app_send(fd, "{\"op\":\"stats\"}\n{\"op\":\"list\"}\n"
		     "{\"op\":\"fault\",\"client\":1,\"never_lock\":true}");
	shutdown(fd, SHUT_WR);
	r = app_read(fd, BT_WAIT_MS);
	CHECK(json_is_object(json_object_get(r, "stats")));
	json_decref(r);
	r = app_read(fd, BT_WAIT_MS);
	CHECK(json_is_array(json_object_get(r, "tuners")));
	json_decref(r);
	r = app_read(fd, BT_WAIT_MS);
	r2 = json_object_get(r, "fault");
	CHECK(json_is_true(json_object_get(r2, "never_lock")));
	CHECK(json_is_false(json_object_get(r2, "hang")));
	json_decref(r);
	CHECK(app_read(fd, 500) == NULL); /* then closed */
	close(fd);

	/* An endless line is refused and the connection closed. */
	memset(big, 'x', sizeof(big));
	fd = app_connect();
	CHECK(send(fd, big, sizeof(big), MSG_NOSIGNAL) > 0);
	r = app_read(fd, BT_WAIT_MS);
	CHECK(r && strcmp(errname(r), "EINVAL") == 0);
	json_decref(r);
	CHECK(app_read(fd, 500) == NULL);
	close(fd);

	/* A bounded number of connections. */
	for (int i = 0; i < APP_CONN_TEST; i++)
		fds[i] = app_connect();
	extra = app_connect();
	r = app_read(extra, BT_WAIT_MS);
	CHECK(r && strcmp(errname(r), "EBUSY") == 0);
	json_decref(r);
	close(extra);
	for (int i = 0; i < APP_CONN_TEST; i++)
		close(fds[i]);
	bt_pump(&t_box, 20);
	r = app_call("{\"op\":\"list\"}");
	CHECK(is_ok(r));
	json_decref(r);
	bt_stop(&t_box);
}

int main(void)
{
	test_app_errors();
	test_app_requests();
	test_app_connections();
	return check_done("test_box_app");
}
