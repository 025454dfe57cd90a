// SPDX-License-Identifier: MIT
/*
 * The configuration file's sections and address ranges: the "hdhomerun"
 * section's defaults, bounds and refusals, and addr_list's matching of
 * IPv4, IPv6 and IPv4-mapped peers.
 */
#include <arpa/inet.h>
#include <jansson.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "api_config.h"
#include "check.h"

static struct sockaddr_in6 peer6(const char *text)
{
	struct sockaddr_in6 sa = {.sin6_family = AF_INET6};

	CHECK_EQ_INT(inet_pton(AF_INET6, text, &sa.sin6_addr), 1);
	return sa;
}

static struct sockaddr_in peer4(const char *text)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};

	CHECK_EQ_INT(inet_pton(AF_INET, text, &sa.sin_addr), 1);
	return sa;
}

static int matches(const struct addr_list *l, const char *peer)
{
	struct sockaddr_in v4;
	struct sockaddr_in6 v6;

	if (strchr(peer, ':')) {
		v6 = peer6(peer);
		return addr_list_match(l, (struct sockaddr *)&v6);
	}
	v4 = peer4(peer);
	return addr_list_match(l, (struct sockaddr *)&v4);
}

static void test_addr_list(void)
{
	static const char *const ranges[] = {"192.168.1.0/24", "10.0.0.7",
					     "fd00::/8", "172.16.0.0/12"};
	struct addr_list l = {0};
	struct addr_range r;
	char err[160];

	CHECK(!matches(&l, "192.168.1.5")); /* empty: nothing */
	for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++) {
		CHECK_EQ_INT(addr_range_parse(ranges[i], &r, err, sizeof(err)),
			     0);
		CHECK_EQ_INT(addr_list_add(&l, &r), 0);
	}
	CHECK(matches(&l, "192.168.1.5"));
	CHECK(matches(&l, "192.168.1.255"));
	CHECK(!matches(&l, "192.168.2.1"));
	CHECK(matches(&l, "10.0.0.7"));
	CHECK(!matches(&l, "10.0.0.8"));
	CHECK(matches(&l, "172.31.255.1"));
	CHECK(!matches(&l, "172.32.0.1"));
	CHECK(matches(&l, "fd12::1"));
	CHECK(!matches(&l, "fe80::1"));
	CHECK(matches(&l, "::ffff:192.168.1.9")); /* v4-mapped as IPv4 */
	CHECK(!matches(&l, "::ffff:192.168.3.9"));
	CHECK_EQ_INT(addr_range_parse("192.168.1.5/24", &r, err, sizeof(err)),
		     -1);
	CHECK(strstr(err, "prefix") != NULL);
	CHECK_EQ_INT(addr_range_parse("10.0.0.0/33", &r, err, sizeof(err)), -1);
	CHECK_EQ_INT(addr_range_parse("10.0.0.0/", &r, err, sizeof(err)), -1);
	CHECK_EQ_INT(addr_range_parse("eth0", &r, err, sizeof(err)), -1);
	CHECK_EQ_INT(addr_range_parse("", &r, err, sizeof(err)), -1);
	CHECK_EQ_INT(addr_range_parse("0.0.0.0/0", &r, err, sizeof(err)), 0);
	addr_list_free(&l);
}

static void test_hdhomerun_defaults(void)
{
	struct api_config cfg;
	char err[256];

	CHECK_EQ_INT(api_config_parse("{}", &cfg, err, sizeof(err)), 0);
	CHECK_EQ_INT(cfg.hdhomerun.enabled, 0);
	CHECK_EQ_INT(cfg.hdhomerun.allow.n, 0);
	CHECK_EQ_INT(cfg.hdhomerun.control_port, HDHR_DEFAULT_PORT);
	CHECK_EQ_INT(cfg.hdhomerun.lockkey_ttl_s, HDHR_DEFAULT_LOCKKEY_TTL_S);
	CHECK_EQ_INT(cfg.hdhomerun.role, ROLE_OPERATOR);
	api_config_free(&cfg);

	CHECK_EQ_INT(api_config_parse(
			 "{\"hdhomerun\":{\"enabled\":true,\"allow\":["
			 "\"192.168.1.0/24\",\"::1\"],\"discovery\":[\"lo\"],"
			 "\"http_port\":5004,\"control_port\":0,"
			 "\"lockkey_ttl_s\":5,\"role\":\"viewer\","
			 "\"scan\":{\"band\":\"uhf\"}}}",
			 &cfg, err, sizeof(err)),
		     0);
	CHECK_EQ_INT(cfg.hdhomerun.enabled, 1);
	CHECK_EQ_INT(cfg.hdhomerun.allow.n, 2);
	CHECK_EQ_INT(cfg.hdhomerun.ndiscovery, 1);
	CHECK(!strcmp(cfg.hdhomerun.discovery[0], "lo"));
	CHECK_EQ_INT(cfg.hdhomerun.http_port, 5004);
	CHECK_EQ_INT(cfg.hdhomerun.control_port, 0);
	CHECK_EQ_INT(cfg.hdhomerun.lockkey_ttl_s, 5);
	CHECK_EQ_INT(cfg.hdhomerun.role, ROLE_VIEWER);
	CHECK(json_is_object(cfg.hdhomerun.scan));
	api_config_free(&cfg);
}

static void test_hdhomerun_refused(void)
{
	static const struct {
		const char *text, *says;
	} bad[] = {
	    {"{\"hdhomerun\":[]}", "must be an object"},
	    {"{\"hdhomerun\":{\"enabled\":1}}", "true or false"},
	    {"{\"hdhomerun\":{\"allow\":[\"10.0.0.1/8\"]}}", "allow[0]"},
	    {"{\"hdhomerun\":{\"allow\":\"10.0.0.0/8\"}}", "array"},
	    {"{\"hdhomerun\":{\"http_port\":0}}", "port number"},
	    {"{\"hdhomerun\":{\"control_port\":70000}}", "port number"},
	    {"{\"hdhomerun\":{\"lockkey_ttl_s\":0}}", "1..86400"},
	    {"{\"hdhomerun\":{\"role\":\"admin\"}}", "never admin"},
	    {"{\"hdhomerun\":{\"discovery\":[\"\"]}}", "discovery[0]"},
	    {"{\"hdhomerun\":{\"enable\":true}}", "hdhomerun.enable"},
	    {"{\"hdhomerun\":{\"scan\":\"uhf\"}}", "hdhomerun.scan"},
	};
	struct api_config cfg;
	char err[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_EQ_INT(
		    api_config_parse(bad[i].text, &cfg, err, sizeof(err)), -1);
		if (!strstr(err, bad[i].says))
			fprintf(stderr, "%s: \"%s\" lacks \"%s\"\n",
				bad[i].text, err, bad[i].says);
		CHECK(strstr(err, bad[i].says) != NULL);
	}
}

int main(void)
{
	test_addr_list();
	test_hdhomerun_defaults();
	test_hdhomerun_refused();
	return check_done("test_config_sections");
}
