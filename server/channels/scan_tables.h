/* SPDX-License-Identifier: MIT */
/*
 * scan_tables.h - what a scan learns of one multiplex from its tables:
 * the PAT (services), the SDT actual (names, types) and the NIT actual
 * (network, logical channel numbers), read from the multiplex's packets.
 *
 * The tables are parsed by libdvbv5 (dvb_table_pat_init,
 * dvb_table_sdt_init, dvb_table_nit_init and its descriptor parsers,
 * among them the logical channel descriptor 0x83); what is done here is
 * the transport layer only: collecting each section from the payloads of
 * its PID and checking its CRC.  Tables of several sections are gathered
 * until every section_number up to last_section_number was seen.
 */
#ifndef TUNERD_SCAN_TABLES_H
#define TUNERD_SCAN_TABLES_H

#include <stddef.h>
#include <stdint.h>

#define SCAN_SERVICES_MAX 128
#define SCAN_NAME_MAX     64

enum scan_service_kind {
	SCAN_KIND_OTHER = 0,
	SCAN_KIND_TV,
	SCAN_KIND_RADIO,
	SCAN_KIND_HD,
};

struct scan_service {
	uint16_t sid;
	uint8_t service_type;     /* EN 300 468 table 87; 0: no SDT entry */
	int in_pat;               /* listed in the PAT (else SDT or NIT only) */
	int lcn;                  /* -1: none in the NIT */
	char name[SCAN_NAME_MAX]; /* "" when the SDT names none */
};

struct scan_mux {
	int have_pat, have_sdt, have_nit;
	uint16_t tsid, onid, nid;
	unsigned int nservices;
	struct scan_service services[SCAN_SERVICES_MAX];
};

struct scan_tables;

struct scan_tables *scan_tables_new(void);
void scan_tables_free(struct scan_tables *t);
/* Feed n bytes of whole 188-byte packets.  Returns 1 once the PAT, SDT
 * and NIT are all complete, else 0. */
int scan_tables_feed(struct scan_tables *t, const uint8_t *pkts, size_t n);
const struct scan_mux *scan_tables_result(const struct scan_tables *t);

/* "tv", "radio", "hd" or "other" for an SDT service_type. */
enum scan_service_kind scan_service_kind_of(uint8_t service_type);
const char *scan_service_kind_name(enum scan_service_kind k);

#endif /* TUNERD_SCAN_TABLES_H */
