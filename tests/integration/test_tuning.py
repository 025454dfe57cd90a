# SPDX-License-Identifier: MIT
"""Kernel-side tunes through box -> daemon -> plugin -> virtual chip."""
import unittest

from harness import BoxTest

STEP = {"mt2060": 50000, "qt1010": 125000, "xc3028": 15625}


class TuneThroughEveryChip(BoxTest):
    def test_lock_on_carrier_and_not_on_empty_spectrum(self):
        for t in self.box.tuners():
            client, chip = t["client"], t["chip"]
            with self.subTest(chip=chip, client=client):
                self.assertOk(self.box.tune(client, "DVBT", 474000000,
                                            8000000))
                st = self.assertOk(self.box.status(client))["status"]
                self.assertTrue(st["lock"], st)
                self.assertAlmostEqual(st["cnr_db"], 30.0, delta=1.5)
                self.assertAlmostEqual(st["strength_dbm"], -50.0, delta=1.5)
                tuned = [x for x in self.box.tuners()
                         if x["client"] == client][0]["tuned"]
                self.assertLessEqual(abs(tuned["frequency"] - 474000000),
                                     STEP[chip], tuned)

                self.assertOk(self.box.tune(client, "DVBT", 530000000,
                                            8000000))
                st = self.assertOk(self.box.status(client))["status"]
                self.assertFalse(st.get("lock"), st)

    def test_weak_carrier_has_signal_but_no_lock(self):
        self.assertOk(self.box.tune(1, "DVBT", 506000000, 8000000))
        st = self.assertOk(self.box.status(1))["status"]
        self.assertFalse(st.get("lock"), st)
        self.assertAlmostEqual(st["strength_dbm"], -88.0, delta=1.5)

    def test_out_of_range_frequency_is_refused(self):
        r = self.box.tune(1, "DVBT", 1500000000, 8000000)
        self.assertFalse(r["ok"], r)
        self.assertEqual(r["errname"], "EINVAL")
        # the tuner still works afterwards
        self.assertOk(self.box.tune(1, "DVBT", 474000000, 8000000))

    def test_trace_records_the_mt2060_tune_bytes(self):
        self.assertOk(self.box.tune(1, "DVBT", 474000000, 8000000))
        with open(self.box.trace) as f:
            lines = f.read().splitlines()
        # regs 1..5 of a 474 MHz tune, written in one burst from reg 1
        self.assertIn("i2c-0 0x60 W 01 6e 69 03 fb 93", lines)


if __name__ == "__main__":
    unittest.main()
