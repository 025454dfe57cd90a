// SPDX-License-Identifier: MIT
#include "tstub_codec.h"
#include "tuner.h"

json_t *tuner_params_json(const struct tstub_params *p)
{
	json_t *o =
	    json_pack("{s:s,s:I}", "delsys", tstub_delsys_name(p->delsys),
		      "frequency_hz", (json_int_t)p->frequency);

	if (!o)
		return NULL;
	if (p->bandwidth)
		json_object_set_new(o, "bandwidth_hz",
				    json_integer(p->bandwidth));
	if (p->symbol_rate)
		json_object_set_new(o, "symbol_rate",
				    json_integer(p->symbol_rate));
	if (p->std)
		json_object_set_new(o, "std", json_integer((json_int_t)p->std));
	return o;
}

json_t *tuner_status_json(const struct tstub_status *st)
{
	json_t *o = json_object();

	if (!o)
		return NULL;
	if (st->valid & TSTUB_ST_FE_STATUS) {
		json_object_set_new(o, "fe_status",
				    json_integer(st->fe_status));
		json_object_set_new(
		    o, "lock", json_boolean(st->fe_status & TSTUB_FE_HAS_LOCK));
	}
	if (st->valid & TSTUB_ST_STRENGTH_DBM)
		json_object_set_new(o, "strength_dbm",
				    json_real(st->strength_mdbm / 1000.0));
	if (st->valid & TSTUB_ST_STRENGTH_REL)
		json_object_set_new(o, "strength_rel",
				    json_integer(st->strength_rel));
	if (st->valid & TSTUB_ST_CNR_DB)
		json_object_set_new(o, "cnr_db",
				    json_real(st->cnr_mdb / 1000.0));
	if (st->valid & TSTUB_ST_CNR_REL)
		json_object_set_new(o, "cnr_rel", json_integer(st->cnr_rel));
	if (st->valid & TSTUB_ST_AFC)
		json_object_set_new(o, "afc_hz", json_integer(st->afc_hz));
	if (st->valid & TSTUB_ST_PLL_LOCK)
		json_object_set_new(o, "pll_locked",
				    json_boolean(st->pll_locked));
	if (st->frequency)
		json_object_set_new(o, "frequency_hz",
				    json_integer(st->frequency));
	if (st->bandwidth)
		json_object_set_new(o, "bandwidth_hz",
				    json_integer(st->bandwidth));
	return o;
}
