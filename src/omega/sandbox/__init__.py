"""The OS sandbox for every process Omega starts on the model's behalf (Landlock on Linux, inside
a bubblewrap namespace where one works and with a seccomp filter on new Unix sockets; Seatbelt
on macOS; a reported degraded mode elsewhere). Imports only stdlib, config, paths."""

from omega.sandbox.modes import MODES, Mode, Policy
from omega.sandbox.runner import Sandbox
from omega.sandbox.status import SandboxStatus, degraded_alert, probe
from omega.sandbox.stopping import kill_group, stop_launched

__all__ = [
    "MODES",
    "Mode",
    "Policy",
    "Sandbox",
    "SandboxStatus",
    "degraded_alert",
    "kill_group",
    "probe",
    "stop_launched",
]
