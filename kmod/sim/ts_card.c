// SPDX-License-Identifier: MIT
/*
 * ts_card.c - test card clips: ffmpeg makes them (one process at a time,
 * never blocking the box: the box polls for the child's exit), the cache
 * keeps them across runs, and loading turns one into ES packets with the
 * time each is due.
 *
 * Timing: ffmpeg's mpegts muxer stamps PCRs; a packet between two PCRs
 * is due where the bytes put it (the constant rate between them), the
 * way a receiver's clock would see it.  Timestamps are made relative to
 * the first PCR, so the multiplexer only adds its own time base.
 */
#define _GNU_SOURCE
#include "ts_card.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ts_pkt.h"

#define CARD_FILE_MAX (16u << 20)
#define CARD_FONT     "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"

extern char **environ;

static int card_read_file(const char *path, uint8_t **buf, size_t *len)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || st.st_size <= 0 ||
	    st.st_size > CARD_FILE_MAX || st.st_size % TS_PACKET) {
		close(fd);
		return -EINVAL;
	}
	*len = (size_t)st.st_size;
	*buf = malloc(*len);
	if (!*buf)
		rc = -ENOMEM;
	else if ((n = read(fd, *buf, *len)) != (ssize_t)*len)
		rc = n < 0 ? -errno : -EINVAL;
	close(fd);
	if (rc) {
		free(*buf);
		*buf = NULL;
	}
	return rc;
}

/* PES timestamps of a payload-start packet, moved back by shift (90 kHz). */
static void card_shift_pes(uint8_t *p, uint64_t shift)
{
	int off = ts_payload_offset(p);
	uint8_t *pes = p + off;

	if (off < 0 || !ts_payload_start(p) || off + 19 > TS_PACKET || pes[0] ||
	    pes[1] || pes[2] != 1)
		return;
	if (pes[7] & 0x80)
		ts_put_timestamp(pes + 9, (pes[7] & 0x40) ? 3 : 2,
				 ts_get_timestamp(pes + 9) - shift);
	if ((pes[7] & 0xc0) == 0xc0)
		ts_put_timestamp(pes + 14, 1,
				 ts_get_timestamp(pes + 14) - shift);
}

/* Due time of packet i from the PCRs around it (positions pos, values v). */
static uint64_t card_due(size_t i, const size_t *pos, const uint64_t *v,
			 size_t n, size_t *k)
{
	size_t a, b;

	while (*k + 2 < n && pos[*k + 1] <= i)
		(*k)++;
	a = *k;
	b = n > 1 ? a + 1 : a;
	if (b == a || pos[b] == pos[a])
		return v[a] - v[0];
	return v[a] - v[0] +
	       (uint64_t)(((double)i - (double)pos[a]) * (double)(v[b] - v[a]) /
			  (double)(pos[b] - pos[a]));
}

static int card_index(struct ts_card *card, uint8_t *all, size_t n)
{
	size_t *pos = malloc(n * sizeof(*pos)), npcr = 0, k = 0;
	uint64_t *val = malloc(n * sizeof(*val));
	int rc = -EINVAL;

	if (!pos || !val || !card->packets || !card->due) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		if (all[i * TS_PACKET] == TS_SYNC &&
		    ts_has_pcr(all + i * TS_PACKET)) {
			pos[npcr] = i;
			val[npcr++] = ts_get_pcr(all + i * TS_PACKET);
		}
	for (size_t i = 0; npcr && i < n; i++) {
		uint8_t *p = all + i * TS_PACKET;
		uint16_t pid = ts_pid(p);
		int64_t due = (int64_t)card_due(i, pos, val, npcr, &k);

		if (p[0] != TS_SYNC ||
		    (pid != TS_CARD_VIDEO_PID && pid != TS_CARD_AUDIO_PID))
			continue;
		card_shift_pes(p, val[0] / 300);
		memcpy(card->packets + card->npackets * TS_PACKET, p,
		       TS_PACKET);
		card->due[card->npackets++] = due < 0 ? 0 : (uint64_t)due;
	}
	rc = card->npackets ? 0 : -EINVAL;
out:
	free(pos);
	free(val);
	return rc;
}

int ts_card_load(const char *path, struct ts_card **out)
{
	struct ts_card *card = calloc(1, sizeof(*card));
	uint8_t *all = NULL;
	size_t len = 0;
	int rc;

	*out = NULL;
	if (!card)
		return -ENOMEM;
	rc = card_read_file(path, &all, &len);
	if (!rc) {
		card->packets = malloc(len);
		card->due = malloc(len / TS_PACKET * sizeof(*card->due));
		rc = card_index(card, all, len / TS_PACKET);
	}
	free(all);
	if (rc) {
		ts_card_free(card);
		return rc;
	}
	*out = card;
	return 0;
}

void ts_card_free(struct ts_card *card)
{
	if (!card)
		return;
	free(card->packets);
	free(card->due);
	free(card);
}

/* ------------------------------------------------------------------ */

enum card_state {
	CARD_NONE,
	CARD_WANTED,
	CARD_MAKING,
	CARD_READY,
	CARD_FAILED
};

struct card_slot {
	enum card_state state;
	struct ts_card *card;
};

struct ts_cards {
	char *dir;
	const struct sim_rf_env *env;
	int verbosity;
	bool no_ffmpeg;
	pid_t child;
	size_t making;
	struct card_slot *slots; /* one a service of env */
};

/* The cache key: the service's id, type and name (FNV-1a). */
static void card_path(const struct ts_cards *cs, size_t i, const char *ext,
		      char *out, size_t len)
{
	const struct sim_service *s = &cs->env->services[i];
	uint32_t h = 2166136261u;

	for (const char *c = s->name; *c; c++)
		h = (h ^ (uint8_t)*c) * 16777619u;
	snprintf(out, len, "%s/card1-%u-%u-%08x.%s", cs->dir, s->sid, s->type,
		 h, ext);
}

/* Per process: boxes sharing a cache directory never write one file. */
static void card_tmp_path(const struct ts_cards *cs, size_t i, char *out,
			  size_t len)
{
	char ext[32];

	snprintf(ext, sizeof(ext), "tmp%ld.ts", (long)getpid());
	card_path(cs, i, ext, out, len);
}

struct ts_cards *ts_cards_new(const char *dir, const struct sim_rf_env *env,
			      int verbosity)
{
	struct ts_cards *cs = calloc(1, sizeof(*cs));

	if (!cs)
		return NULL;
	cs->dir = strdup(dir);
	cs->env = env;
	cs->verbosity = verbosity;
	cs->slots =
	    calloc(env->nservices ? env->nservices : 1, sizeof(*cs->slots));
	if (!cs->dir || !cs->slots) {
		ts_cards_free(cs);
		return NULL;
	}
	mkdir(dir, 0755);
	return cs;
}

void ts_cards_free(struct ts_cards *cs)
{
	if (!cs)
		return;
	if (cs->child > 0) {
		char tmp[512];

		kill(cs->child, SIGTERM);
		waitpid(cs->child, NULL, 0);
		card_tmp_path(cs, cs->making, tmp, sizeof(tmp));
		unlink(tmp);
	}
	for (size_t i = 0; cs->slots && i < cs->env->nservices; i++)
		ts_card_free(cs->slots[i].card);
	free(cs->slots);
	free(cs->dir);
	free(cs);
}

/* The name goes in through a text file: no filter-syntax escaping. */
static void card_filter(const struct ts_cards *cs, size_t i, char *vf,
			size_t len)
{
	const struct sim_service *s = &cs->env->services[i];
	char txt[512];
	FILE *f;

	snprintf(vf, len, "testsrc2=size=720x576:rate=25");
	card_path(cs, i, "txt", txt, sizeof(txt));
	if (access(CARD_FONT, R_OK) || strpbrk(txt, ":,'\\[];") ||
	    !(f = fopen(txt, "we")))
		return;
	fprintf(f, "%s\nLCN %u  sid %u", s->name, s->lcn, s->sid);
	fclose(f);
	snprintf(vf, len,
		 "testsrc2=size=720x576:rate=25,drawtext=fontfile=%s:"
		 "textfile=%s:fontsize=56:fontcolor=white:box=1:"
		 "boxcolor=black@0.7:boxborderw=12:x=(w-tw)/2:y=h*0.62",
		 CARD_FONT, txt);
}

static int card_spawn(struct ts_cards *cs, size_t i)
{
	const struct sim_service *s = &cs->env->services[i];
	bool radio = s->type == SIM_SERVICE_RADIO;
	char out[512], vf[1400], sine[64];
	posix_spawn_file_actions_t fa;
	char *argv[64];
	int n = 0, rc;

	card_tmp_path(cs, i, out, sizeof(out));
	card_filter(cs, i, vf, sizeof(vf));
	snprintf(sine, sizeof(sine), "sine=frequency=%u:sample_rate=48000",
		 440u + 110u * (unsigned int)(i % 8));
	const char *head[] = {"ffmpeg",    "-nostdin", "-hide_banner",
			      "-loglevel", "error",    "-y"};
	for (size_t k = 0; k < sizeof(head) / sizeof(head[0]); k++)
		argv[n++] = (char *)head[k];
	if (!radio) {
		const char *v[] = {"-f", "lavfi", "-i", vf};
		for (size_t k = 0; k < 4; k++)
			argv[n++] = (char *)v[k];
	}
	const char *a[] = {"-f", "lavfi", "-i", sine, "-t", "2.4"};
	for (size_t k = 0; k < 6; k++)
		argv[n++] = (char *)a[k];
	if (!radio) {
		const char *v[] = {
		    "-map",      "0:v",        "-map",          "1:a",
		    "-c:v",      "mpeg2video", "-b:v",          "1500k",
		    "-maxrate",  "1500k",      "-bufsize",      "1000k",
		    "-g",        "12",         "-bf",           "2",
		    "-flags",    "+cgop",      "-sc_threshold", "1000000000",
		    "-pix_fmt",  "yuv420p",    "-streamid",     "0:256",
		    "-streamid", "1:257"};
		for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++)
			argv[n++] = (char *)v[k];
	} else {
		argv[n++] = "-streamid";
		argv[n++] = "0:257";
	}
	const char *tail[] = {"-c:a", "mp2", "-b:a",   "128k", "-ac",
			      "2",    "-f",  "mpegts", out};
	for (size_t k = 0; k < sizeof(tail) / sizeof(tail[0]); k++)
		argv[n++] = (char *)tail[k];
	argv[n] = NULL;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	rc = posix_spawnp(&cs->child, "ffmpeg", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	return -rc;
}

static void card_log(const struct ts_cards *cs, size_t i, const char *what)
{
	if (cs->verbosity >= 1)
		fprintf(stderr, "simbox: test card of %u '%s': %s\n",
			cs->env->services[i].sid, cs->env->services[i].name,
			what);
}

/* A cached clip, or start ffmpeg for the next wanted one. */
static void card_start_next(struct ts_cards *cs)
{
	char path[512];

	for (size_t i = 0; i < cs->env->nservices && cs->child <= 0; i++) {
		struct card_slot *sl = &cs->slots[i];

		if (sl->state != CARD_WANTED)
			continue;
		card_path(cs, i, "ts", path, sizeof(path));
		if (!ts_card_load(path, &sl->card)) {
			sl->state = CARD_READY;
			continue;
		}
		if (cs->no_ffmpeg || card_spawn(cs, i)) {
			if (!cs->no_ffmpeg)
				card_log(cs, i, "no ffmpeg, empty PES");
			cs->no_ffmpeg = true;
			sl->state = CARD_FAILED;
			continue;
		}
		sl->state = CARD_MAKING;
		cs->making = i;
	}
}

bool ts_cards_poll(struct ts_cards *cs)
{
	char tmp[512], path[512];
	int status;

	if (cs->child > 0) {
		struct card_slot *sl = &cs->slots[cs->making];

		if (waitpid(cs->child, &status, WNOHANG) == 0)
			return true;
		cs->child = 0;
		card_tmp_path(cs, cs->making, tmp, sizeof(tmp));
		card_path(cs, cs->making, "ts", path, sizeof(path));
		if (WIFEXITED(status) && !WEXITSTATUS(status) &&
		    !rename(tmp, path) && !ts_card_load(path, &sl->card)) {
			sl->state = CARD_READY;
			card_log(cs, cs->making, "made");
		} else {
			unlink(tmp);
			sl->state = CARD_FAILED;
			card_log(cs, cs->making, "ffmpeg failed, empty PES");
		}
	}
	card_start_next(cs);
	return cs->child > 0;
}

const struct ts_card *ts_cards_get(struct ts_cards *cs, size_t service)
{
	struct card_slot *sl;

	if (!cs || service >= cs->env->nservices)
		return NULL;
	sl = &cs->slots[service];
	if (sl->state == CARD_NONE) {
		sl->state = CARD_WANTED;
		card_start_next(cs);
	}
	return sl->state == CARD_READY ? sl->card : NULL;
}
