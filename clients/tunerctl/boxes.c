// SPDX-License-Identifier: MIT
/*
 * boxes.c - which boxes tunerctl talks to: --box, the config file
 * (boxes.json) or $TUNERD_BOX; and tuner addresses [BOX:]ID.
 */
#include "tunerctl.h"
#include "util.h"

#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int box_add(struct ctl_boxes *b, const char *name, size_t name_len,
		   const char *url, const char *token)
{
	struct ctl_box *v = realloc(b->v, (b->n + 1) * sizeof(*v));
	struct ctl_box *box;
	size_t ulen = strlen(url);

	if (!v)
		return -1;
	b->v = v;
	box = &v[b->n];
	while (ulen && url[ulen - 1] == '/')
		ulen--;
	box->url = strndup(url, ulen);
	if (!name) {
		/* unnamed: the label is host:port */
		name = strstr(box->url ? box->url : "", "://");
		name = name ? name + 3 : "";
		name_len = strcspn(name, "/");
	}
	box->name = strndup(name, name_len);
	box->token = token ? strdup(token) : NULL;
	b->n++;
	if (!box->url || !box->name || (token && !box->token))
		return -1;
	return 0;
}

int ctl_boxes_add(struct ctl_boxes *boxes, const char *name, const char *url,
		  const char *token)
{
	return box_add(boxes, name, strlen(name), url, token);
}

void ctl_boxes_free(struct ctl_boxes *b)
{
	size_t i;

	for (i = 0; i < b->n; i++) {
		free(b->v[i].name);
		free(b->v[i].url);
		free(b->v[i].token);
	}
	free(b->v);
	b->v = NULL;
	b->n = 0;
}

static bool url_ok(const char *url)
{
	return (!strncmp(url, "http://", 7) && url[7]) ||
	       (!strncmp(url, "https://", 8) && url[8]);
}

static int config_entry(struct ctl_boxes *cfg, const char *path, size_t i,
			json_t *e)
{
	json_t *name = json_object_get(e, "name");
	json_t *url = json_object_get(e, "url");
	json_t *token = json_object_get(e, "token");

	if (!json_is_string(url) || !url_ok(json_string_value(url)) ||
	    (name && !json_is_string(name)) ||
	    (token && !json_is_string(token))) {
		ctl_err("%s: boxes[%zu]: needs \"url\" (http://host:port), "
			"and \"name\" and \"token\" are strings",
			path, i);
		return -1;
	}
	return box_add(cfg, json_string_value(name),
		       name ? json_string_length(name) : 0,
		       json_string_value(url), json_string_value(token));
}

/* A missing default file is no error; a missing explicit one is. */
static int config_load(struct ctl_boxes *cfg, const char *path, bool explicit)
{
	json_error_t jerr;
	json_t *root, *list, *e;
	size_t i;
	int ret = -1;

	root = json_load_file(path, 0, &jerr);
	if (!root) {
		if (!explicit && access(path, F_OK))
			return 0;
		ctl_err("%s:%d: %s", path, jerr.line, jerr.text);
		return -1;
	}
	list = json_object_get(root, "boxes");
	if (!json_is_array(list)) {
		ctl_err("%s: needs {\"boxes\":[{\"name\":..,\"url\":..}]}",
			path);
		goto out;
	}
	json_array_foreach(list, i, e)
	{
		if (config_entry(cfg, path, i, e))
			goto out;
	}
	ret = 0;
out:
	json_decref(root);
	return ret;
}

static char *default_config_path(void)
{
	const char *xdg = getenv("XDG_CONFIG_HOME");
	const char *home = getenv("HOME");
	char path[PATH_MAX];

	if (xdg && *xdg)
		snprintf(path, sizeof(path), "%s/tunerd/boxes.json", xdg);
	else if (home && *home)
		snprintf(path, sizeof(path), "%s/.config/tunerd/boxes.json",
			 home);
	else
		return NULL;
	return strdup(path);
}

static const struct ctl_box *find_box(const struct ctl_boxes *b,
				      const char *key, size_t len)
{
	size_t i;

	for (i = 0; i < b->n; i++) {
		if (strlen(b->v[i].name) == len &&
		    !strncmp(b->v[i].name, key, len))
			return &b->v[i];
	}
	for (i = 0; i < b->n; i++) {
		if (strlen(b->v[i].url) == len &&
		    !strncmp(b->v[i].url, key, len))
			return &b->v[i];
	}
	return NULL;
}

/* "URL", "NAME=URL" or the NAME of a configured box. */
static int add_box_arg(struct ctl_boxes *out, const struct ctl_boxes *cfg,
		       const char *arg)
{
	const char *scheme = strstr(arg, "://");
	const char *eq = strchr(arg, '=');
	const struct ctl_box *known;
	const char *url = arg;

	if (!scheme) {
		known = find_box(cfg, arg, strlen(arg));
		if (!known) {
			ctl_err("no box named '%s' in the config file", arg);
			return -1;
		}
		return box_add(out, known->name, strlen(known->name),
			       known->url, known->token);
	}
	if (eq && eq < scheme)
		url = eq + 1;
	if (!url_ok(url)) {
		ctl_err("bad box URL '%s' (want http://host:port)", url);
		return -1;
	}
	known = find_box(cfg, url, strlen(url));
	if (url != arg)
		return box_add(out, arg, (size_t)(eq - arg), url,
			       known ? known->token : NULL);
	if (known)
		return box_add(out, known->name, strlen(known->name), url,
			       known->token);
	return box_add(out, NULL, 0, url, NULL);
}

static int add_env_boxes(struct ctl_boxes *out, const struct ctl_boxes *cfg,
			 const char *env)
{
	char *copy = strdup(env), *save = NULL, *tok;
	int ret = copy ? 0 : -1;

	for (tok = copy ? strtok_r(copy, ", \t", &save) : NULL; tok && !ret;
	     tok = strtok_r(NULL, ", \t", &save))
		ret = add_box_arg(out, cfg, tok);
	free(copy);
	return ret;
}

static int copy_boxes(struct ctl_boxes *out, const struct ctl_boxes *in)
{
	size_t i;

	for (i = 0; i < in->n; i++) {
		const struct ctl_box *b = &in->v[i];

		if (box_add(out, b->name, strlen(b->name), b->url, b->token))
			return -1;
	}
	return 0;
}

static int finish_boxes(struct ctl_boxes *b, const char *token)
{
	const char *env_token = getenv("TUNERD_TOKEN");
	size_t i, j;

	for (i = 0; i < b->n; i++) {
		for (j = 0; j < i; j++) {
			if (!strcmp(b->v[i].name, b->v[j].name)) {
				ctl_err("two boxes are called '%s'",
					b->v[i].name);
				return -1;
			}
		}
		if (token || (!b->v[i].token && env_token && *env_token)) {
			free(b->v[i].token);
			b->v[i].token = strdup(token ? token : env_token);
			if (!b->v[i].token)
				return -1;
		}
	}
	return 0;
}

static int pick_boxes(struct ctl_boxes *out, const struct ctl_boxes *cfg,
		      char *const *args, size_t nargs, bool explicit_cfg,
		      const char *cfg_path)
{
	const char *env = getenv("TUNERD_BOX");
	size_t i;

	for (i = 0; i < nargs; i++) {
		if (add_box_arg(out, cfg, args[i]))
			return -1;
	}
	if (nargs)
		return 0;
	if (!explicit_cfg && env && *env)
		return add_env_boxes(out, cfg, env);
	if (copy_boxes(out, cfg))
		return -1;
	if (!out->n) {
		ctl_err("no box: give --box http://host:port, list boxes in "
			"%s, or set TUNERD_BOX",
			cfg_path ? cfg_path : "a config file");
		return -1;
	}
	return 0;
}

int ctl_boxes_load(struct ctl_boxes *boxes, char *const *box_args,
		   size_t nbox_args, const char *config, const char *token)
{
	struct ctl_boxes cfg = {0};
	char *path = config ? strdup(config) : default_config_path();
	int ret = CTL_EXIT_USAGE;

	memset(boxes, 0, sizeof(*boxes));
	if (path && config_load(&cfg, path, config != NULL))
		goto out;
	if (pick_boxes(boxes, &cfg, box_args, nbox_args, config != NULL,
		       path) ||
	    finish_boxes(boxes, token))
		goto out;
	ret = CTL_EXIT_OK;
out:
	if (ret)
		ctl_boxes_free(boxes);
	ctl_boxes_free(&cfg);
	free(path);
	return ret;
}

int ctl_target_parse(const struct ctl_boxes *boxes, const char *arg,
		     struct ctl_target *t)
{
	const char *colon = strrchr(arg, ':');
	const char *id = colon ? colon + 1 : arg;
	long v;

	if (ctl_parse_long(id, 0, INT_MAX, &v)) {
		ctl_err("bad tuner '%s' (want [BOX:]ID, ID a number)", arg);
		return -1;
	}
	t->id = (unsigned int)v;
	if (colon) {
		t->box = find_box(boxes, arg, (size_t)(colon - arg));
		if (!t->box) {
			ctl_err("no box '%.*s' (boxes are named by the config "
				"file, NAME=URL or host:port)",
				(int)(colon - arg), arg);
			return -1;
		}
		return 0;
	}
	if (boxes->n != 1) {
		ctl_err("%zu boxes: say which one, as BOX:%s", boxes->n, arg);
		return -1;
	}
	t->box = &boxes->v[0];
	return 0;
}

int ctl_box_label_width(const struct ctl_boxes *boxes)
{
	size_t i, w = 3;

	for (i = 0; i < boxes->n; i++) {
		if (strlen(boxes->v[i].name) > w)
			w = strlen(boxes->v[i].name);
	}
	return (int)w;
}

const struct ctl_box *ctl_box_pick(const struct ctl_boxes *boxes,
				   const char *name)
{
	const struct ctl_box *box;

	if (!name) {
		if (boxes->n == 1)
			return &boxes->v[0];
		ctl_err("%zu boxes: say which one", boxes->n);
		return NULL;
	}
	box = find_box(boxes, name, strlen(name));
	if (!box)
		ctl_err("no box '%s' (boxes are named by the config file, "
			"NAME=URL or host:port)",
			name);
	return box;
}
