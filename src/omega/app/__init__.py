"""The composition root: the one place that builds Omega and runs it.

- runtime: `bootstrap` ($OMEGA_HOME, config, logging, prompts) and `pipeline_deps`
- service: `build_service` (`omega start`), `build_chat` (`omega chat`), `run_service`, `serve`
- channels: the message channels the config enables; jobs: the background jobs, as data

Names are loaded on first use: `omega ask` needs only `bootstrap`, and importing the service
(the gateway, channels, loops) would cost every one-shot command ~0.15 s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from omega.lazy import loader

if TYPE_CHECKING:
    from omega.app.channels import StartError
    from omega.app.jobs import Job
    from omega.app.runtime import Runtime, bootstrap, pipeline_deps
    from omega.app.service import Service, build_chat, build_service, run_service, serve

__all__ = [
    "Job",
    "Runtime",
    "Service",
    "StartError",
    "bootstrap",
    "build_chat",
    "build_service",
    "pipeline_deps",
    "run_service",
    "serve",
]

_HOME = {
    "StartError": "channels",
    "Job": "jobs",
    "Runtime": "runtime",
    "bootstrap": "runtime",
    "pipeline_deps": "runtime",
    "Service": "service",
    "build_chat": "service",
    "build_service": "service",
    "run_service": "service",
    "serve": "service",
}


__getattr__ = loader(__name__, _HOME)
