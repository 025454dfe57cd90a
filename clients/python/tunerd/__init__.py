# SPDX-License-Identifier: MIT
"""tunerd: Python client of the tunerd network API v1.

    from tunerd import Box
    box = Box("http://attic:8080", token="change-me-operator")
    tuner = box.tuner(1)
    with tuner.lease("recorder-1", ttl=30, priority=200) as lease:
        tuner.tune("DVBT", 490_000_000, bandwidth=8_000_000,
                   wait_lock=2.0, lease=lease)
        with tuner.stream(service=4164, lease=lease) as ts:
            data = ts.read(188 * 1000)

See clients/python/README.md.
"""
from . import errors
from .box import Box, Tuner
from .events import Event, EventStream, Gap
from .fleet import Fleet, FleetEvents
from .lease import Lease
from .tsstream import TsStream

__version__ = "0.1.0"
__all__ = ["Box", "Tuner", "Fleet", "FleetEvents", "Lease", "Event",
           "EventStream", "Gap", "TsStream", "errors", "__version__"]
