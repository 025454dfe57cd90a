// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the --config file (api_config_parse(), the text that
 * api_config_load() and a SIGHUP reload read).  A refusal must say why; an
 * accepted file must hold only tokens that could ever match (8..256
 * visible ASCII characters, no commas) and a bounded name.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_token(const struct api_token *t)
{
	if (!t->name || !t->secret || t->secret_len < 8 ||
	    t->secret_len > API_TOKEN_MAX ||
	    strlen(t->secret) != t->secret_len || !*t->name ||
	    strlen(t->name) > API_TOKEN_NAME_MAX || t->role == ROLE_NONE)
		abort();
	for (size_t i = 0; i < t->secret_len; i++)
		if ((unsigned char)t->secret[i] <= ' ' ||
		    (unsigned char)t->secret[i] >= 0x7f || t->secret[i] == ',')
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct api_config cfg;
	char err[256] = "";
	char *text = malloc(size + 1);

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0'; /* a file with a NUL ends there for jansson too */
	if (api_config_parse(text, &cfg, err, sizeof(err))) {
		if (!err[0] || cfg.tokens || cfg.name || cfg.ntokens)
			abort();
	} else {
		for (size_t i = 0; i < cfg.ntokens; i++)
			check_token(&cfg.tokens[i]);
		if (cfg.name && (!*cfg.name || strlen(cfg.name) > 64 * 4))
			abort();
		if (cfg.status_interval_ms < -1 ||
		    cfg.status_interval_ms > 3600000)
			abort();
		api_config_free(&cfg);
	}
	free(text);
	return 0;
}
