// SPDX-License-Identifier: MIT
/*
 * test_box_simctl - tunerd-simctl against an in-process box: its output
 * and its exit status (0 ok, 1 the box answered an error, 2 usage or
 * connection error).
 *
 * argv[1]: the tunerd-simctl binary.
 */
#define _GNU_SOURCE /* pipe2 */
#include <fcntl.h>
#include <sys/wait.h>

#include "box_test.h"

static const char *simctl;

struct run {
	int status;
	char out[16384];
};

/* Answer whatever the box sends on fd: GET_STATUS with a locked status,
 * anything else with success. */
static void serve_one(int fd)
{
	struct tstub_status st = {.valid = TSTUB_ST_FE_STATUS |
					   TSTUB_ST_STRENGTH_DBM,
				  .fe_status = 0x1f,
				  .strength_mdbm = -50500};
	union tstub_buf m;

	if (recv(fd, m.bytes, sizeof(m), MSG_DONTWAIT) <= 0 ||
	    m.hdr.opcode == TSTUB_INTERRUPT)
		return;
	if (m.hdr.opcode == TSTUB_GET_STATUS)
		bt_reply(fd, &m.hdr, 0, &st, sizeof(st));
	else
		bt_reply(fd, &m.hdr, 0, NULL, 0);
}

/* Run simctl with args (NULL-terminated, after the program name) while
 * the box (and the daemon on serve_fd, if >= 0) keeps running. */
static int run_simctl(struct run *r, int serve_fd, const char *const *args)
{
	const char *argv[16] = {simctl};
	int pipefd[2], status = 0;
	size_t n = 0, argc = 1;
	ssize_t got;
	pid_t pid;

	while (args[argc - 1] && argc < 15) {
		argv[argc] = args[argc - 1];
		argc++;
	}
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(pipefd[1], 1);
		dup2(pipefd[1], 2);
		execv(simctl, (char *const *)argv);
		_exit(127);
	}
	close(pipefd[1]);
	fcntl(pipefd[0], F_SETFL, O_NONBLOCK);
	while (waitpid(pid, &status, WNOHANG) == 0) {
		sim_box_run(t_box.box, 2);
		if (serve_fd >= 0)
			serve_one(serve_fd);
		got = read(pipefd[0], r->out + n, sizeof(r->out) - 1 - n);
		n += got > 0 ? (size_t)got : 0;
	}
	while ((got = read(pipefd[0], r->out + n, sizeof(r->out) - 1 - n)) > 0)
		n += (size_t)got;
	r->out[n] = '\0';
	close(pipefd[0]);
	r->status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	return r->status;
}

#define SIMCTL(r, fd, ...)                                                     \
	run_simctl(r, fd, (const char *const[]){__VA_ARGS__, NULL})

static void test_without_daemon(void)
{
	struct sim_box_fault f;
	struct run r;

	CHECK_EQ_INT(SIMCTL(&r, -1, "-s", t_box.app, "list"), 0);
	CHECK(strstr(r.out, "mt2060") && strstr(r.out, "qt1010"));
	CHECK(strstr(r.out, "not connected") != NULL);
	CHECK_EQ_INT(SIMCTL(&r, -1, "-s", t_box.app, "--json", "list"), 0);
	CHECK(strncmp(r.out, "{\"ok\":true", 10) == 0);
	CHECK_EQ_INT(SIMCTL(&r, -1, "-s", t_box.app, "tune", "1", "DVBT",
			    "474000000", "8000000"),
		     1);
	CHECK(strstr(r.out, "ENOTCONN") != NULL);
	CHECK_EQ_INT(SIMCTL(&r, -1, "-s", t_box.app, "raw", "{bad"), 1);
	CHECK(strstr(r.out, "EINVAL") != NULL);
	CHECK_EQ_INT(SIMCTL(&r, -1, "-s", t_box.app, "fault", "2", "hang=on",
			    "nak_rate=0.25"),
		     0);
	sim_box_get_fault(t_box.box, 2, &f);
	CHECK(f.hang);
	CHECK(f.nak_rate == 0.25);
	CHECK_EQ_INT(SIMCTL(&r, -1, "-s", t_box.app, "fault", "2",
			    "nak_rate=global", "hang=off"),
		     0);
	sim_box_get_fault(t_box.box, 2, &f);
	CHECK(!f.hang);
	CHECK(f.nak_rate < 0);
	CHECK_EQ_INT(SIMCTL(&r, -1, "-s", t_box.app, "stats"), 0);
	CHECK(strstr(r.out, "i2c_transfers: 0") != NULL);
}

static void test_usage_errors(void)
{
	struct run r;

	CHECK_EQ_INT(SIMCTL(&r, -1, "-s", t_box.app), 2);
	CHECK_EQ_INT(SIMCTL(&r, -1, "-s", t_box.app, "frobnicate"), 2);
	CHECK_EQ_INT(
	    SIMCTL(&r, -1, "-s", t_box.app, "tune", "1", "DVBX", "474000000"),
	    2);
	CHECK_EQ_INT(SIMCTL(&r, -1, "-s", t_box.app, "tune", "1", "DVBT"), 2);
	CHECK_EQ_INT(SIMCTL(&r, -1, "-s", t_box.app, "status", "x"), 2);
	CHECK_EQ_INT(SIMCTL(&r, -1, "-s", t_box.app, "fault", "1", "bogus=1"),
		     2);
	CHECK_EQ_INT(
	    SIMCTL(&r, -1, "-s", t_box.app, "fault", "1", "hang=maybe"), 2);
	CHECK_EQ_INT(SIMCTL(&r, -1, "-s", "/nonexistent/app.sock", "list"), 2);
}

static void test_with_daemon(void)
{
	struct sim_box_client_info ci;
	struct run r;
	int ctl = bt_daemon(&t_box);
	int fd = bt_bind(&t_box, 1, NULL);

	CHECK_EQ_INT(SIMCTL(&r, fd, "-s", t_box.app, "tune", "1", "DVBT",
			    "474000000", "8000000"),
		     0);
	CHECK(strstr(r.out, "ok") != NULL);
	sim_box_client_info(t_box.box, 1, &ci);
	CHECK_EQ_INT(ci.params.frequency, 474000000);
	CHECK_EQ_INT(ci.params.bandwidth, 8000000);
	CHECK_EQ_INT(SIMCTL(&r, fd, "-s", t_box.app, "tune", "1",
			    "DVBC_ANNEX_A", "474000000", "6900000"),
		     0);
	sim_box_client_info(t_box.box, 1, &ci);
	CHECK_EQ_INT(ci.params.symbol_rate, 6900000);
	CHECK_EQ_INT(SIMCTL(&r, fd, "-s", t_box.app, "status", "1"), 0);
	CHECK(strstr(r.out, "lock") != NULL);
	CHECK(strstr(r.out, "strength: -50.5 dBm") != NULL);
	CHECK_EQ_INT(SIMCTL(&r, fd, "-s", t_box.app, "list"), 0);
	CHECK(strstr(r.out, "DVBC_ANNEX_A 474000000 Hz") != NULL);
	close(fd);
	close(ctl);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s TUNERD_SIMCTL\n", argv[0]);
		return 2;
	}
	simctl = argv[1];
	bt_setup(&t_box, "mt2060,qt1010");
	CHECK(bt_start(&t_box) == 0);
	test_without_daemon();
	test_usage_errors();
	test_with_daemon();
	bt_stop(&t_box);
	return check_done("test_box_simctl");
}
