// SPDX-License-Identifier: MIT
/*
 * The configuration file's "mqtt" section: defaults, every key, the
 * refusals, and that no error sentence ever carries the password.
 */
#include <string.h>

#include "api_config.h"
#include "check.h"

static void test_mqtt_defaults(void)
{
	struct api_config cfg;
	char err[256];

	CHECK_EQ_INT(api_config_parse("{}", &cfg, err, sizeof(err)), 0);
	CHECK_EQ_INT(cfg.mqtt.enabled, 0);
	CHECK(cfg.mqtt.host == NULL);
	CHECK_EQ_INT(cfg.mqtt.port, 0);
	CHECK_EQ_INT(cfg.mqtt.keepalive_s, MQTT_DEFAULT_KEEPALIVE_S);
	CHECK_EQ_INT(cfg.mqtt.role, ROLE_OPERATOR);
	CHECK_EQ_INT(cfg.mqtt.max_queued, MQTT_DEFAULT_MAX_QUEUED);
	CHECK_EQ_INT(cfg.mqtt.max_inflight, MQTT_DEFAULT_INFLIGHT);
	api_config_free(&cfg);
}

static void test_mqtt_keys(void)
{
	struct api_config cfg;
	char err[256];

	CHECK_EQ_INT(
	    api_config_parse(
		"{\"mqtt\":{\"enabled\":true,\"host\":\"broker.lan\","
		"\"port\":8883,\"client_id\":\"box7\",\"username\":\"u\","
		"\"password\":\"s3cret-pw\",\"tls\":{\"ca_file\":\"/ca.pem\","
		"\"cert_file\":\"/c.pem\",\"key_file\":\"/k.pem\","
		"\"insecure\":true},\"keepalive_s\":10,"
		"\"topic_prefix\":\"site/tunerd\",\"role\":\"viewer\","
		"\"state_interval_ms\":250,\"max_queued\":64,"
		"\"max_inflight\":2}}",
		&cfg, err, sizeof(err)),
	    0);
	CHECK_EQ_INT(cfg.mqtt.enabled, 1);
	CHECK(!strcmp(cfg.mqtt.host, "broker.lan"));
	CHECK_EQ_INT(cfg.mqtt.port, 8883);
	CHECK(!strcmp(cfg.mqtt.client_id, "box7"));
	CHECK(!strcmp(cfg.mqtt.password, "s3cret-pw"));
	CHECK_EQ_INT(cfg.mqtt.tls, 1);
	CHECK_EQ_INT(cfg.mqtt.insecure, 1);
	CHECK(!strcmp(cfg.mqtt.key_file, "/k.pem"));
	CHECK(!strcmp(cfg.mqtt.topic_prefix, "site/tunerd"));
	CHECK_EQ_INT(cfg.mqtt.role, ROLE_VIEWER);
	CHECK_EQ_INT(cfg.mqtt.state_interval_ms, 250);
	CHECK_EQ_INT(cfg.mqtt.max_inflight, 2);
	api_config_free(&cfg);
}

static void test_mqtt_refused(void)
{
	static const struct {
		const char *text, *says;
	} bad[] = {
	    {"{\"mqtt\":true}", "must be an object"},
	    {"{\"mqtt\":{\"enabled\":true}}", "mqtt.host is needed"},
	    {"{\"mqtt\":{\"port\":0}}", "mqtt.port"},
	    {"{\"mqtt\":{\"host\":\"\"}}", "mqtt.host"},
	    {"{\"mqtt\":{\"keepalive_s\":1}}", "mqtt.keepalive_s"},
	    {"{\"mqtt\":{\"topic_prefix\":\"a/#\"}}", "topic_prefix"},
	    {"{\"mqtt\":{\"topic_prefix\":\"a/\"}}", "topic_prefix"},
	    {"{\"mqtt\":{\"role\":\"root\"}}", "mqtt.role"},
	    {"{\"mqtt\":{\"tls\":{\"cert_file\":\"/c\",\"ca_file\":\"/a\"}}}",
	     "go together"},
	    {"{\"mqtt\":{\"tls\":{}}}", "ca_file"},
	    {"{\"mqtt\":{\"tls\":{\"verify\":true}}}", "mqtt.tls.verify"},
	    {"{\"mqtt\":{\"password\":\"pw-not-shown\"}}",
	     "needs mqtt.username"},
	    {"{\"mqtt\":{\"username\":\"u\",\"password\":\"pw-not-shown\","
	     "\"max_queued\":1}}",
	     "mqtt.max_queued"},
	    {"{\"mqtt\":{\"client_id\":\"" /* 59 bytes */
	     "0123456789012345678901234567890123456789012345678901234567"
	     "8\"}}",
	     "client_id"},
	    {"{\"mqtt\":{\"hots\":\"x\"}}", "mqtt.hots"},
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
		CHECK(strstr(err, "pw-not-shown") == NULL);
	}
}

int main(void)
{
	test_mqtt_defaults();
	test_mqtt_keys();
	test_mqtt_refused();
	return check_done("test_config_mqtt");
}
