// SPDX-License-Identifier: MIT
/*
 * Unit tests of the network API's building blocks: params from JSON,
 * status to JSON, lease arithmetic and the lease table, tokens, roles and
 * the loopback rule, the configuration file.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "api_config.h"
#include "auth.h"
#include "check.h"
#include "json_api.h"
#include "lease.h"
#include "tstub_codec.h"

static struct tstub_chip_info mt2060(void)
{
	struct tstub_chip_info c = {0};

	strcpy(c.name, "MT2060");
	strcpy(c.vendor, "Microtune");
	strcpy(c.plugin, "mt2060");
	c.chip_id = TSTUB_CHIP_MT2060;
	c.delsys_mask = 1u << TSTUB_DELSYS_DVBT | 1u << TSTUB_DELSYS_DVBT2 |
			1u << TSTUB_DELSYS_DVBC_A;
	c.bandwidth_mask = TSTUB_BW_6MHZ | TSTUB_BW_7MHZ | TSTUB_BW_8MHZ;
	c.freq_min = 48000000;
	c.freq_max = 860000000;
	c.freq_step = 50000;
	return c;
}

static int parse(const char *text, struct tstub_params *p, struct api_error *e)
{
	struct tstub_chip_info chip = mt2060();
	json_t *v = json_loads(text, 0, NULL);
	int ret;

	api_error_clear(e);
	ret = params_from_json(v, &chip, p, e);
	json_decref(v);
	return ret;
}

static const char *detail_str(const struct api_error *e, const char *key)
{
	return json_string_value(json_object_get(e->details, key));
}

static void test_params(void)
{
	struct api_error e = {0};
	struct tstub_params p;

	CHECK_EQ_INT(parse("{\"delivery_system\":\"DVBT\",\"frequency\":"
			   "474000000,\"bandwidth\":8000000}",
			   &p, &e),
		     0);
	CHECK_EQ_INT(p.delsys, TSTUB_DELSYS_DVBT);
	CHECK_EQ_INT(p.frequency, 474000000);
	CHECK_EQ_INT(p.bandwidth, 8000000);
	CHECK_EQ_INT(p.flags, TSTUB_PARAMS_VALID);

	CHECK_EQ_INT(parse("{\"delivery_system\":\"DVBT\",\"frequency\":1,"
			   "\"colour\":2}",
			   &p, &e),
		     -1);
	CHECK_EQ_INT(e.status, 400);
	CHECK(detail_str(&e, "field") &&
	      !strcmp(detail_str(&e, "field"), "colour"));

	CHECK_EQ_INT(parse("{\"delivery_system\":\"DVBT\",\"frequency\":"
			   "\"474\"}",
			   &p, &e),
		     -1);
	CHECK_EQ_INT(e.status, 400);
	CHECK(!strcmp(detail_str(&e, "field"), "frequency"));

	CHECK_EQ_INT(parse("{\"frequency\":474000000}", &p, &e), -1);
	CHECK(!strcmp(detail_str(&e, "field"), "delivery_system"));

	CHECK_EQ_INT(parse("{\"delivery_system\":\"DVBT\",\"frequency\":"
			   "1500000000}",
			   &p, &e),
		     -1);
	CHECK_EQ_INT(e.status, 422);
	CHECK(!strcmp(e.code, "unsupported_params"));
	CHECK_EQ_INT(
	    json_integer_value(json_object_get(e.details, "frequency_max")),
	    860000000);
	CHECK_EQ_INT(
	    json_array_size(json_object_get(e.details, "delivery_systems")), 3);
	CHECK_EQ_INT(json_array_size(json_object_get(e.details, "bandwidths")),
		     3);

	api_error_clear(&e);
}

static void test_params_limits(void)
{
	struct api_error e = {0};
	struct tstub_params p;

	CHECK_EQ_INT(parse("{\"delivery_system\":\"DVBS2\",\"frequency\":"
			   "1200000000,\"symbol_rate\":27500000}",
			   &p, &e),
		     -1);
	CHECK_EQ_INT(e.status, 422);

	CHECK_EQ_INT(parse("{\"delivery_system\":\"DVBT\",\"frequency\":"
			   "474000000,\"bandwidth\":5000000}",
			   &p, &e),
		     -1);
	CHECK_EQ_INT(e.status, 422);

	CHECK_EQ_INT(parse("{\"delivery_system\":\"DVBT\",\"frequency\":"
			   "474000000,\"symbol_rate\":6900000}",
			   &p, &e),
		     -1);
	CHECK_EQ_INT(e.status, 400);
	CHECK(!strcmp(detail_str(&e, "field"), "symbol_rate"));

	CHECK_EQ_INT(
	    parse("{\"delivery_system\":\"DVBC_ANNEX_A\",\"frequency\":"
		  "474000000,\"symbol_rate\":6900000}",
		  &p, &e),
	    0);
	CHECK_EQ_INT(p.symbol_rate, 6900000);

	CHECK_EQ_INT(parse("[1]", &p, &e), -1);
	CHECK_EQ_INT(e.status, 400);
	api_error_clear(&e);
}

static void test_params_analog(void)
{
	struct api_error e = {0};
	struct tstub_params p;
	json_t *v = json_loads("{\"delivery_system\":\"ANALOG_TV\","
			       "\"frequency\":175250000,\"standard\":"
			       "\"PAL-BG\"}",
			       0, NULL),
	       *out;

	CHECK_EQ_INT(params_from_json(v, NULL, &p, &e), 0);
	CHECK_EQ_INT(p.std, 0x7);
	out = params_to_json(&p);
	CHECK(!strcmp(json_string_value(json_object_get(out, "standard")),
		      "PAL-BG"));
	json_decref(out);
	json_object_set_new(v, "standard", json_string("PAL-XYZ"));
	CHECK_EQ_INT(params_from_json(v, NULL, &p, &e), -1);
	CHECK_EQ_INT(e.status, 400);
	json_decref(v);
	api_error_clear(&e);
}

static void test_status(void)
{
	struct tstub_status st = {0};
	json_t *o, *m;
	char *text;

	st.valid = TSTUB_ST_FE_STATUS | TSTUB_ST_STRENGTH_DBM |
		   TSTUB_ST_STRENGTH_REL | TSTUB_ST_CNR_REL;
	st.fe_status = TSTUB_FE_HAS_SIGNAL | TSTUB_FE_HAS_LOCK;
	st.strength_mdbm = -50200;
	st.strength_rel = 40000;
	st.cnr_rel = 26214; /* 40.0 % */
	st.frequency = 474000000;
	o = status_to_json(&st, 1764736758123ull);
	m = json_object_get(o, "signal_strength");
	CHECK(!strcmp(json_string_value(json_object_get(m, "unit")), "dBm"));
	CHECK(json_real_value(json_object_get(m, "value")) == -50.2);
	m = json_object_get(o, "cnr");
	CHECK(!strcmp(json_string_value(json_object_get(m, "unit")), "%"));
	CHECK(json_real_value(json_object_get(m, "value")) == 40.0);
	CHECK(json_is_null(json_object_get(o, "afc_hz")));
	CHECK(json_is_null(json_object_get(o, "pll_locked")));
	CHECK(json_is_true(
	    json_object_get(json_object_get(o, "fe_status"), "lock")));
	CHECK(json_is_false(
	    json_object_get(json_object_get(o, "fe_status"), "carrier")));
	CHECK(!strcmp(json_string_value(json_object_get(o, "changed_at")),
		      "2025-12-03T04:39:18.123Z"));
	text = json_dumps(o, API_JSON_DUMP_FLAGS);
	CHECK(strstr(text, "\"value\":-50.2,") != NULL);
	free(text);
	json_decref(o);

	memset(&st, 0, sizeof(st));
	st.valid = TSTUB_ST_CNR_DB | TSTUB_ST_AFC | TSTUB_ST_PLL_LOCK;
	st.cnr_mdb = 29800;
	st.afc_hz = -1200;
	st.pll_locked = 1;
	o = status_to_json(&st, 0);
	CHECK(json_is_null(json_object_get(o, "signal_strength")));
	m = json_object_get(o, "cnr");
	CHECK(!strcmp(json_string_value(json_object_get(m, "unit")), "dB"));
	CHECK_EQ_INT(json_integer_value(json_object_get(o, "afc_hz")), -1200);
	CHECK(json_is_true(json_object_get(o, "pll_locked")));
	CHECK(json_is_null(json_object_get(o, "changed_at")));
	CHECK_EQ_INT(api_status_locked(&st), 1);
	json_decref(o);
}

static void test_depth(void)
{
	json_t *v = json_loads("[[[1]]]", 0, NULL);

	CHECK_EQ_INT(json_depth(v), 3);
	json_decref(v);
	v = json_loads("{\"a\":{\"b\":[]},\"c\":1}", 0, NULL);
	CHECK_EQ_INT(json_depth(v), 3);
	json_decref(v);
	v = json_integer(1);
	CHECK_EQ_INT(json_depth(v), 0);
	json_decref(v);
}

static void test_lease_arithmetic(void)
{
	CHECK_EQ_INT(lease_deadline(1000, 30), 31000);
	CHECK(!lease_is_expired(31000, 30999));
	CHECK(lease_is_expired(31000, 31000));
	CHECK(lease_is_expired(31000, 40000));
	CHECK_EQ_INT(lease_deadline(UINT64_C(1) << 40, LEASE_TTL_MAX),
		     (UINT64_C(1) << 40) + 3600000);
}

static void test_lease_table(void)
{
	struct lease_table *lt = lease_table_new(NULL, NULL);
	struct lease a, b, other;
	char wrong[LEASE_ID_LEN + 1];

	CHECK_EQ_INT(lease_acquire(lt, 1, "rec", 300, 30, &a, &other), 0);
	CHECK_EQ_INT(strlen(a.id), LEASE_ID_LEN);
	CHECK_EQ_INT(strspn(a.id, "0123456789abcdef"), LEASE_ID_LEN);
	CHECK(lease_allows(lt, 1, a.id, &other));
	CHECK(!lease_allows(lt, 1, NULL, &other));
	CHECK(!strcmp(other.holder, "rec"));
	CHECK(lease_allows(lt, 2, NULL, &other));

	/* equal or lower priority: refused, the holder is told */
	CHECK_EQ_INT(lease_acquire(lt, 1, "live", 300, 30, &b, &other), -EBUSY);
	CHECK_EQ_INT(other.priority, 300);
	/* higher: pre-empts */
	CHECK_EQ_INT(lease_acquire(lt, 1, "urgent", 301, 5, &b, &other), 1);
	CHECK(!strcmp(other.holder, "rec"));
	CHECK(strcmp(a.id, b.id) != 0);
	CHECK(!lease_allows(lt, 1, a.id, &other));
	CHECK(lease_allows(lt, 1, b.id, &other));

	strcpy(wrong, b.id);
	wrong[0] = wrong[0] == 'a' ? 'b' : 'a';
	CHECK_EQ_INT(lease_renew(lt, 1, wrong, 10, &a, &other), -EPERM);
	CHECK_EQ_INT(lease_renew(lt, 1, b.id, 10, &a, &other), 0);
	CHECK_EQ_INT(a.ttl_s, 10);
	CHECK_EQ_INT(lease_renew(lt, 2, b.id, 10, &a, &other), -ENOENT);
	CHECK_EQ_INT(lease_release(lt, 1, wrong, &other), -EPERM);
	CHECK_EQ_INT(lease_release(lt, 1, b.id, &other), 0);
	CHECK_EQ_INT(lease_release(lt, 1, b.id, &other), -ENOENT);

	/* expiry: the table drops what is over */
	CHECK_EQ_INT(lease_acquire(lt, 3, "x", 0, 1, &a, &other), 0);
	CHECK_EQ_INT(lease_get(lt, 3, &b), 1);
	lease_table_expire(lt, a.expires_ms - 1);
	CHECK_EQ_INT(lease_get(lt, 3, &b), 1);
	lease_table_expire(lt, a.expires_ms);
	CHECK_EQ_INT(lease_get(lt, 3, &b), 0);
	lease_table_free(lt);
}

static void test_token_compare(void)
{
	CHECK(auth_token_equal("secret-1", 8, "secret-1", 8));
	CHECK(!auth_token_equal("secret-1", 8, "secret-2", 8));
	CHECK(!auth_token_equal("secret", 6, "secret-1", 8));
	CHECK(!auth_token_equal("secret-1", 8, "secret", 6));
	CHECK(!auth_token_equal("", 0, "x", 1));
	CHECK(auth_token_equal("", 0, "", 0));
}

static struct sockaddr_storage addr(const char *text)
{
	struct sockaddr_storage ss = {0};
	struct sockaddr_in *in = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

	if (inet_pton(AF_INET, text, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
	} else {
		inet_pton(AF_INET6, text, &in6->sin6_addr);
		in6->sin6_family = AF_INET6;
	}
	return ss;
}

static int loopback(const char *text)
{
	struct sockaddr_storage ss = addr(text);

	return auth_peer_is_loopback((struct sockaddr *)&ss);
}

static void test_loopback_rule(void)
{
	struct api_config cfg;
	struct auth_result res;
	struct sockaddr_storage lo = addr("127.0.0.1"),
				far = addr("192.168.1.20");

	CHECK(loopback("127.0.0.1"));
	CHECK(loopback("127.0.0.2"));
	CHECK(loopback("127.255.255.254"));
	CHECK(loopback("::1"));
	CHECK(loopback("::ffff:127.0.0.1"));
	CHECK(!loopback("10.0.0.1"));
	CHECK(!loopback("128.0.0.1"));
	CHECK(!loopback("::ffff:10.0.0.1"));
	CHECK(!loopback("::2"));
	CHECK(!auth_peer_is_loopback(NULL));

	api_config_init(&cfg);
	auth_check_config(&cfg, NULL, (struct sockaddr *)&lo, ROLE_ADMIN, &res);
	CHECK(res.ok);
	CHECK_EQ_INT(res.role, ROLE_ADMIN);
	auth_check_config(&cfg, "whatever", (struct sockaddr *)&far,
			  ROLE_VIEWER, &res);
	CHECK(!res.ok);
	CHECK_EQ_INT(res.http_status, 403);
	CHECK(strstr(res.message, "no tokens configured") != NULL);
}

static void test_tokens(void)
{
	struct api_config cfg;
	struct auth_result res;
	struct sockaddr_storage lo = addr("127.0.0.1");
	const struct sockaddr *peer = (struct sockaddr *)&lo;
	char err[256];

	CHECK_EQ_INT(
	    api_config_parse("{\"name\":\"box1\",\"status_interval_ms\":250,"
			     "\"tokens\":[{\"name\":\"ops\",\"token\":"
			     "\"ops-token-1\",\"role\":\"operator\"},"
			     "{\"name\":\"tv\",\"token\":\"tv-token-1\","
			     "\"role\":\"viewer\"}]}",
			     &cfg, err, sizeof(err)),
	    0);
	CHECK(!strcmp(cfg.name, "box1"));
	CHECK_EQ_INT(cfg.status_interval_ms, 250);
	CHECK_EQ_INT(cfg.ntokens, 2);
	/* with tokens, loopback needs one too */
	auth_check_config(&cfg, NULL, peer, ROLE_VIEWER, &res);
	CHECK_EQ_INT(res.http_status, 401);
	auth_check_config(&cfg, "ops-token-2", peer, ROLE_VIEWER, &res);
	CHECK_EQ_INT(res.http_status, 401);
	auth_check_config(&cfg, "tv-token-1", peer, ROLE_VIEWER, &res);
	CHECK(res.ok);
	CHECK(!strcmp(res.token_name, "tv"));
	auth_check_config(&cfg, "tv-token-1", peer, ROLE_OPERATOR, &res);
	CHECK(!res.ok);
	CHECK_EQ_INT(res.http_status, 403);
	CHECK_EQ_INT(res.role, ROLE_VIEWER);
	auth_check_config(&cfg, "ops-token-1", peer, ROLE_OPERATOR, &res);
	CHECK(res.ok);
	auth_check_config(&cfg, "ops-token-1", peer, ROLE_ADMIN, &res);
	CHECK_EQ_INT(res.http_status, 403);
	api_config_free(&cfg);

	CHECK_EQ_INT(api_config_parse("{\"tokens\":[{\"name\":\"a\",\"token\":"
				      "\"12345678\",\"role\":\"root\"}]}",
				      &cfg, err, sizeof(err)),
		     -1);
	CHECK(strstr(err, "role") != NULL);
	CHECK(strstr(err, "12345678") == NULL);
	CHECK_EQ_INT(
	    api_config_parse("{\"tokenz\":[]}", &cfg, err, sizeof(err)), -1);
	CHECK_EQ_INT(api_config_parse("{\"tokens\":", &cfg, err, sizeof(err)),
		     -1);
}

/* A token with a space, a comma, a control character or a non-ASCII byte
 * could never arrive in a header: the config refuses it, naming the
 * entry and not the secret. */
static void test_token_chars(void)
{
	static const char *const bad[] = {"with space1", "tab\\tinside",
					  "comma,token", "caf\\u00e9-token",
					  " leading-sp"};
	struct api_config cfg;
	char text[256], err[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text),
			 "{\"tokens\":[{\"name\":\"ok\",\"token\":"
			 "\"good-token-1\",\"role\":\"viewer\"},"
			 "{\"name\":\"odd\",\"token\":\"%s\","
			 "\"role\":\"viewer\"}]}",
			 bad[i]);
		CHECK_EQ_INT(api_config_parse(text, &cfg, err, sizeof(err)),
			     -1);
		CHECK(strstr(err, "tokens[1] (\"odd\")") != NULL);
		CHECK(strstr(err, "visible ASCII") != NULL);
	}
	CHECK_EQ_INT(api_config_parse("{\"tokens\":[{\"name\":\"a\",\"token\":"
				      "\"A-z.0_9~+/=\",\"role\":\"admin\"}]}",
				      &cfg, err, sizeof(err)),
		     0);
	api_config_free(&cfg);
}

/* The connection caps: integers 1..65536, unset by default. */
static void test_config_conn_caps(void)
{
	static const char *const bad[] = {"0", "-1", "65537", "\"256\"", "2.5"};
	struct api_config cfg;
	char text[128], err[256];

	CHECK_EQ_INT(api_config_parse("{}", &cfg, err, sizeof(err)), 0);
	CHECK_EQ_INT(cfg.max_request_connections, -1);
	CHECK_EQ_INT(cfg.max_stream_connections, -1);
	api_config_free(&cfg);
	CHECK_EQ_INT(api_config_parse("{\"max_request_connections\":64,"
				      "\"max_stream_connections\":4096}",
				      &cfg, err, sizeof(err)),
		     0);
	CHECK_EQ_INT(cfg.max_request_connections, 64);
	CHECK_EQ_INT(cfg.max_stream_connections, 4096);
	api_config_free(&cfg);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "{\"max_stream_connections\":%s}",
			 bad[i]);
		CHECK_EQ_INT(api_config_parse(text, &cfg, err, sizeof(err)),
			     -1);
		CHECK(strstr(err, "max_stream_connections") != NULL);
	}
}

/* The API's delivery system names are case-sensitive. */
static void test_params_case(void)
{
	struct api_error e = {0};
	struct tstub_params p;

	CHECK_EQ_INT(parse("{\"delivery_system\":\"dvbt\",\"frequency\":"
			   "474000000,\"bandwidth\":8000000}",
			   &p, &e),
		     -1);
	CHECK_EQ_INT(e.status, 400);
	CHECK(!strcmp(e.code, "bad_request"));
	CHECK(detail_str(&e, "field") &&
	      !strcmp(detail_str(&e, "field"), "delivery_system"));
	api_error_clear(&e);
}

static void test_ws_protocols(void)
{
	char buf[64];

	CHECK(auth_token_from_ws_protocols("tunerd.v1, bearer.abc-123", buf,
					   sizeof(buf)) != NULL);
	CHECK(!strcmp(buf, "abc-123"));
	CHECK(auth_token_from_ws_protocols("bearer.xyz,tunerd.v1", buf,
					   sizeof(buf)) != NULL);
	CHECK(!strcmp(buf, "xyz"));
	CHECK(auth_token_from_ws_protocols("tunerd.v1", buf, sizeof(buf)) ==
	      NULL);
	CHECK(auth_token_from_ws_protocols(NULL, buf, sizeof(buf)) == NULL);
	CHECK(auth_token_from_ws_protocols("tunerd.v1, bearer.0123456789", buf,
					   8) == NULL);
}

int main(void)
{
	test_params();
	test_params_limits();
	test_params_analog();
	test_status();
	test_depth();
	test_lease_arithmetic();
	test_lease_table();
	test_token_compare();
	test_loopback_rule();
	test_tokens();
	test_ws_protocols();
	test_token_chars();
	test_config_conn_caps();
	test_params_case();
	return check_done("test_api_units");
}
