/* SPDX-License-Identifier: MIT */
/*
 * xc3028_fwgen.h - a synthetic XC3028 firmware file in the xc3028-v27
 * layout.  The real firmware may not be redistributed; the simulated box
 * and the tests use this one.  Payloads are deterministic pseudo-random
 * bytes, so two builds give the same file.
 */
#ifndef XC3028_FWGEN_H
#define XC3028_FWGEN_H

#include <stddef.h>
#include <stdint.h>

#define XC3028_FWGEN_NAME    "tunerd synthetic xc3028 v2.7"
#define XC3028_FWGEN_VERSION 0x0207

/* A tuner reset record after the first data record of every BASE image,
 * as the real v2.7 file has. */
#define XC3028_FWGEN_MID_RESET 0x1u

/* Build the file in memory, as the real one (XC3028_FWGEN_MID_RESET).
 * 0 or -ENOMEM; *out is malloc'ed. */
int xc3028_fwgen_build(uint8_t **out, size_t *len);
/* The same with a chosen set of XC3028_FWGEN_* layout flags. */
int xc3028_fwgen_build_flags(uint8_t **out, size_t *len, unsigned int flags);
/* Build and write it to path.  0 or a negative errno, reason in err. */
int xc3028_fwgen_write(const char *path, char *err, size_t errlen);

#endif /* XC3028_FWGEN_H */
