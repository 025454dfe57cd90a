// SPDX-License-Identifier: MIT
#include "stub.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "log.h"

int stub_parse(const char *spec, struct stub_addr *addr)
{
	const char *path;

	memset(addr, 0, sizeof(*addr));
	if (strncmp(spec, "sim:", 4) == 0) {
		addr->transport = STUB_TRANSPORT_SIM;
		path = spec + 4;
		if (!*path ||
		    strlen(path) >= sizeof(((struct sockaddr_un *)0)->sun_path))
			return -EINVAL;
	} else if (strcmp(spec, "kernel") == 0) {
		addr->transport = STUB_TRANSPORT_KERNEL;
		path = STUB_DEFAULT_DEVICE;
	} else if (strncmp(spec, "kernel:", 7) == 0) {
		addr->transport = STUB_TRANSPORT_KERNEL;
		path = spec + 7;
		if (!*path)
			return -EINVAL;
	} else {
		return -EINVAL;
	}
	if (strlen(path) >= sizeof(addr->path))
		return -EINVAL;
	strcpy(addr->path, path);
	return 0;
}

const char *stub_addr_str(const struct stub_addr *addr, char *buf, size_t len)
{
	snprintf(buf, len, "%s:%s",
		 addr->transport == STUB_TRANSPORT_SIM ? "sim" : "kernel",
		 addr->path);
	return buf;
}

static int stub_open_sim(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd, err;

	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		close(fd);
		return -ENAMETOOLONG;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	/* Connect blocking: a local socket connects at once or fails. */
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		goto err;
	if (fcntl(fd, F_SETFL, O_NONBLOCK) < 0)
		goto err;
	return fd;
err:
	err = -errno;
	close(fd);
	return err;
}

int stub_open(const struct stub_addr *addr)
{
	int fd;

	if (addr->transport == STUB_TRANSPORT_SIM)
		return stub_open_sim(addr->path);
	fd = open(addr->path, O_RDWR | O_CLOEXEC | O_NONBLOCK);
	return fd < 0 ? -errno : fd;
}

static int stub_read(int fd, union tstub_buf *buf, int flags)
{
	ssize_t n;
	int err;

	/* MSG_TRUNC makes a socket report a datagram's full size, so an
	 * oversized message is refused, not silently cut; a character
	 * device answers ENOTSOCK and is read plainly. */
	n = recv(fd, buf->bytes, sizeof(buf->bytes), MSG_TRUNC | flags);
	if (n < 0 && errno == ENOTSOCK)
		n = read(fd, buf->bytes, sizeof(buf->bytes));
	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return -EAGAIN;
		return -errno;
	}
	if (n == 0)
		return 0;
	err = tstub_validate(buf->bytes, (size_t)n);
	if (err) {
		log_warn("stub: dropped a message of %zd bytes (opcode 0x%x): "
			 "%s",
			 n,
			 n >= (ssize_t)sizeof(buf->hdr) ? buf->hdr.opcode : 0,
			 strerror(-err));
		return -ENOMSG;
	}
	return (int)n;
}

int stub_recv(int fd, union tstub_buf *buf)
{
	return stub_read(fd, buf, MSG_DONTWAIT);
}

int stub_recv_wait(int fd, union tstub_buf *buf)
{
	return stub_read(fd, buf, 0);
}

int stub_recv_wait_set(int fd, unsigned int wait_ms)
{
	struct timeval tv = {.tv_sec = wait_ms / 1000,
			     .tv_usec = (suseconds_t)(wait_ms % 1000) * 1000};
	int fl;

	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)
		return -errno;
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

static int stub_wait_writable(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLOUT};
	int n;

	do
		n = poll(&p, 1, STUB_SEND_WAIT_MS);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0)
		return -ETIMEDOUT;
	return 0;
}

int stub_send(int fd, const union tstub_buf *buf)
{
	size_t len = buf->hdr.len;
	int waited = 0;

	for (;;) {
		ssize_t n =
		    send(fd, buf->bytes, len, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == ENOTSOCK)
			n = write(fd, buf->bytes, len);
		if (n == (ssize_t)len)
			return 0;
		if (n >= 0)
			return -EIO; /* a message channel never writes part */
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN || waited)
			return -errno;
		waited = 1;
		int err = stub_wait_writable(fd);
		if (err)
			return err;
	}
}

int stub_reply(int fd, const struct tstub_hdr *req, int32_t error,
	       const void *body, size_t body_len)
{
	union tstub_buf out;
	int n = tstub_build_reply(&out, req, error, body, body_len);

	if (n < 0)
		return n;
	return stub_send(fd, &out);
}
