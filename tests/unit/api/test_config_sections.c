// SPDX-License-Identifier: MIT
/*
 * The configuration file's sections and address ranges: the "hdhomerun"
 * section's defaults, bounds and refusals, the "metrics" section's
 * scrape token, and addr_list's matching of IPv4, IPv6 and IPv4-mapped
 * peers.
 */
#include <arpa/inet.h>
#include <jansson.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "api_config.h"
#include "check.h"
#include "client_addr.h"
#include "web_origin.h"

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

static const char *addr_text(const struct sockaddr_storage *ss, char *buf,
			     size_t len)
{
	const void *a =
	    ss->ss_family == AF_INET
		? (const void *)&((struct sockaddr_in *)ss)->sin_addr
		: (const void *)&((struct sockaddr_in6 *)ss)->sin6_addr;

	if (ss->ss_family != AF_INET && ss->ss_family != AF_INET6)
		return "unknown";
	return inet_ntop(ss->ss_family, a, buf, (socklen_t)len);
}

static void check_client(const struct addr_list *trusted, const char *peer,
			 const char *xff, const char *want, int forwarded)
{
	struct sockaddr_in v4 = peer4(peer);
	struct sockaddr_storage out;
	char buf[64];
	int got =
	    client_addr_resolve(trusted, (struct sockaddr *)&v4, xff, &out);
	const char *text = addr_text(&out, buf, sizeof(buf));

	if (strcmp(text, want) || got != forwarded)
		fprintf(stderr, "peer %s xff %s: got %s (%d), want %s (%d)\n",
			peer, xff ? xff : "-", text, got, want, forwarded);
	CHECK(!strcmp(text, want));
	CHECK_EQ_INT(got, forwarded);
}

static void test_client_addr(void)
{
	struct api_config cfg;
	char err[256], longer[CLIENT_ADDR_XFF_MAX + 8];

	CHECK_EQ_INT(api_config_parse("{\"trusted_proxies\":[\"127.0.0.1\","
				      "\"10.9.0.0/16\"]}",
				      &cfg, err, sizeof(err)),
		     0);
	/* No header: the socket's peer. */
	check_client(&cfg.trusted_proxies, "192.0.2.1", NULL, "192.0.2.1", 0);
	/* From the trusted proxy: the nearest untrusted hop. */
	check_client(&cfg.trusted_proxies, "127.0.0.1", "198.51.100.7",
		     "198.51.100.7", 1);
	check_client(&cfg.trusted_proxies, "127.0.0.1",
		     "1.1.1.1, 198.51.100.7, 10.9.3.4", "198.51.100.7", 1);
	check_client(&cfg.trusted_proxies, "127.0.0.1", " 2001:db8::5 ",
		     "2001:db8::5", 1);
	check_client(&cfg.trusted_proxies, "127.0.0.1", "10.9.0.1", "10.9.0.1",
		     1);
	check_client(&cfg.trusted_proxies, "127.0.0.1", "198.51.100.7, junk",
		     "unknown", 1);
	memset(longer, '1', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	check_client(&cfg.trusted_proxies, "127.0.0.1", longer, "unknown", 1);
	/* From an untrusted peer: the header is not believed; a loopback
	 * peer that forwards without being listed is nobody's loopback. */
	check_client(&cfg.trusted_proxies, "192.0.2.1", "127.0.0.1",
		     "192.0.2.1", 0);
	api_config_free(&cfg);
	CHECK_EQ_INT(api_config_parse("{}", &cfg, err, sizeof(err)), 0);
	check_client(&cfg.trusted_proxies, "127.0.0.1", "198.51.100.7",
		     "unknown", 0);
	api_config_free(&cfg);
}

static void test_web_origin(void)
{
	struct api_config cfg;
	char err[256];

	CHECK_EQ_INT(api_config_parse(
			 "{\"cors\":{\"origins\":[\"https://console.example\","
			 "\"http://10.0.0.5:8080\"],\"max_age_s\":60}}",
			 &cfg, err, sizeof(err)),
		     0);
	CHECK_EQ_INT(cfg.cors.norigins, 2);
	CHECK_EQ_INT(cfg.cors.max_age_s, 60);
	CHECK(web_origin_listed(&cfg, "https://console.example"));
	CHECK(web_origin_listed(&cfg, "HTTPS://Console.Example"));
	CHECK(!web_origin_listed(&cfg, "https://console.example:444"));
	CHECK(!web_origin_listed(&cfg, "http://console.example"));
	CHECK(web_origin_allowed(&cfg, NULL, "box:8080"));
	CHECK(web_origin_allowed(&cfg, "http://box:8080", "box:8080"));
	CHECK(!web_origin_allowed(&cfg, "http://evil.example", "box:8080"));
	CHECK(!web_origin_allowed(&cfg, "http://box:8081", "box:8080"));
	CHECK(!web_origin_allowed(&cfg, "null", "box:8080"));
	CHECK(web_origin_allowed(&cfg, "http://10.0.0.5:8080", "box:8080"));
	api_config_free(&cfg);
	CHECK_EQ_INT(api_config_parse("{}", &cfg, err, sizeof(err)), 0);
	CHECK_EQ_INT(cfg.cors.max_age_s, CORS_DEFAULT_MAX_AGE_S);
	CHECK(!web_origin_allowed(&cfg, "https://console.example", "box"));
	api_config_free(&cfg);
	static const char *const bad[] = {
	    "{\"cors\":{\"origins\":[\"https://a.example/\"]}}",
	    "{\"cors\":{\"origins\":[\"a.example\"]}}",
	    "{\"cors\":{\"origins\":[\"*\"]}}",
	    "{\"cors\":{\"origins\":[\"ftp://a.example\"]}}",
	    "{\"cors\":{\"max_age_s\":-1}}",
	    "{\"cors\":{\"origin\":[]}}",
	    "{\"trusted_proxies\":[\"localhost\"]}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_EQ_INT(api_config_parse(bad[i], &cfg, err, sizeof(err)),
			     -1);
}

static void test_metrics_section(void)
{
	static const char *const bad[] = {
	    "{\"metrics\":[]}",
	    "{\"metrics\":{\"token\":\"short\"}}",
	    "{\"metrics\":{\"token\":\"has space 123\"}}",
	    "{\"metrics\":{\"token\":\"comma,comma,1\"}}",
	    "{\"metrics\":{\"token\":12345678}}",
	    "{\"metrics\":{\"tokn\":\"scrape-token-0\"}}",
	};
	struct api_config cfg;
	char err[256];

	CHECK_EQ_INT(api_config_parse("{}", &cfg, err, sizeof(err)), 0);
	CHECK(cfg.metrics.token == NULL);
	api_config_free(&cfg);
	CHECK_EQ_INT(
	    api_config_parse("{\"metrics\":{}}", &cfg, err, sizeof(err)), 0);
	CHECK(cfg.metrics.token == NULL);
	api_config_free(&cfg);
	CHECK_EQ_INT(api_config_parse("{\"metrics\":{\"token\":"
				      "\"scrape-token-0\"}}",
				      &cfg, err, sizeof(err)),
		     0);
	CHECK(cfg.metrics.token &&
	      !strcmp(cfg.metrics.token, "scrape-token-0"));
	CHECK_EQ_INT(cfg.metrics.token_len, 14);
	api_config_free(&cfg);
	CHECK(cfg.metrics.token == NULL);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_EQ_INT(api_config_parse(bad[i], &cfg, err, sizeof(err)),
			     -1);
		CHECK(strstr(err, "metrics") != NULL);
		/* a refused token is never repeated in the sentence */
		CHECK(strstr(err, "space 123") == NULL);
	}
}

int main(void)
{
	test_addr_list();
	test_hdhomerun_defaults();
	test_hdhomerun_refused();
	test_client_addr();
	test_web_origin();
	test_metrics_section();
	return check_done("test_config_sections");
}
